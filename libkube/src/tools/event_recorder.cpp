// core/v1 Events with client-go's EventCorrelator (tools/record/events_cache.go)
// and a bounded, non-blocking queue in front of a writer coroutine
// (tools/record/event.go's recordToSink/recordEvent).
#include "tools/complete_now.hpp"
#include "transport/client_impl.hpp"

#include <kube/dynamic/dynamic_api.hpp>
#include <kube/tools/event_recorder.hpp>
#include <kube/exception.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/json/serialize.hpp>
#include <boost/system/system_error.hpp>

#include <atomic>
#include <cstdio>
#include <ctime>
#include <deque>
#include <list>
#include <mutex>
#include <random>
#include <set>
#include <unordered_map>

namespace kube {
namespace asio = boost::asio;
namespace json = boost::json;

object_reference object_reference::of(const unstructured& obj) {
  object_reference r;
  r.api_version = obj.api_version();
  r.kind = obj.kind();
  r.namespace_ = obj.namespace_();
  r.name = obj.name();
  r.uid = obj.uid();
  r.resource_version = obj.resource_version();
  return r;
}

const char* to_string(event_type t) noexcept { return t == event_type::warning ? "Warning" : "Normal"; }

namespace {

// A small LRU map (client-go uses golang/groupcache/lru for the same caches).
template <class V>
class lru {
public:
  explicit lru(std::size_t cap)
      : cap_(cap ? cap : 1) {}
  V* get(const std::string& k) {
    auto it = map_.find(k);
    if (it == map_.end()) return nullptr;
    order_.splice(order_.begin(), order_, it->second);
    return &it->second->second;
  }
  void put(const std::string& k, V v) {
    if (auto* existing = get(k)) {
      *existing = std::move(v);
      return;
    }
    order_.emplace_front(k, std::move(v));
    map_[k] = order_.begin();
    if (map_.size() > cap_) {
      map_.erase(order_.back().first);
      order_.pop_back();
    }
  }

private:
  std::size_t cap_;
  std::list<std::pair<std::string, V>> order_;
  std::unordered_map<std::string, typename std::list<std::pair<std::string, V>>::iterator> map_;
};

// metav1.Time: RFC 3339, seconds.
std::string rfc3339(std::chrono::system_clock::time_point t) {
  const std::time_t secs = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// Fields joined with a separator that cannot occur in them (client-go joins
// with "", which can collide; we do not).
std::string join(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (auto p : parts) {
    out.append(p);
    out.push_back('\x1f');
  }
  return out;
}

}  // namespace

struct event_correlator::impl {
  struct aggregate_record {
    std::set<std::string> local_keys;
    std::chrono::system_clock::time_point last{};
  };
  struct event_log {
    long long count = 0;
    std::string first_timestamp;
    std::string name;
  };
  struct spam_record {
    double tokens = 0;
    std::chrono::system_clock::time_point last{};
  };

  explicit impl(const event_recorder_params& o)
      : opts(o),
        aggregates(o.cache_size),
        logs(o.cache_size),
        spam(o.cache_size) {}

  event_recorder_params opts;
  lru<aggregate_record> aggregates;
  lru<event_log> logs;
  lru<spam_record> spam;
};

event_correlator::event_correlator(const event_recorder_params& options)
    : impl_(std::make_unique<impl>(options)) {}
event_correlator::~event_correlator() = default;
event_correlator::event_correlator(event_correlator&&) noexcept = default;
event_correlator& event_correlator::operator=(event_correlator&&) noexcept = default;

event_correlator::result event_correlator::correlate(const event_record& e, std::chrono::system_clock::time_point now) {
  auto& s = *impl_;
  const auto& o = e.object;
  const std::string type = to_string(e.type);
  const std::string& component = s.opts.component;
  const std::string& host = s.opts.host;
  result r;

  // 1. Aggregation (EventAggregatorByReasonFunc): same source, object, type
  // and reason; the message is the local key.
  const auto aggregate_key =
      join({component, host, o.kind, o.namespace_, o.name, o.uid, o.api_version, type, e.reason});
  const auto event_key = join(
      {component, host, o.kind, o.namespace_, o.name, o.field_path, o.uid, o.api_version, type, e.reason, e.message});
  impl::aggregate_record agg;
  if (auto* found = s.aggregates.get(aggregate_key)) agg = *found;
  if (now - agg.last > s.opts.aggregate_window) agg = {};
  agg.local_keys.insert(e.message);
  agg.last = now;
  r.message = e.message;
  r.key = event_key;
  if (agg.local_keys.size() >= s.opts.aggregate_max_events) {
    agg.local_keys.erase(agg.local_keys.begin());  // do not grow beyond max
    r.message = "(combined from similar events): " + e.message;
    r.key = aggregate_key;
  }
  s.aggregates.put(aggregate_key, std::move(agg));

  // 2. Deduplication (eventLogger.eventObserve): a hit means patch the count.
  const auto now_str = rfc3339(now);
  std::string first = now_str;
  if (const auto* last = s.logs.get(r.key); last && last->count > 0) {
    r.update = true;
    r.name = last->name;
    r.count = last->count + 1;
    first = last->first_timestamp;
  } else {
    char hex[32];
    const auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count();
    std::snprintf(hex, sizeof hex, "%llx", static_cast<unsigned long long>(nanos));
    r.name = o.name + "." + hex;
    r.count = 1;
  }
  s.logs.put(r.key, impl::event_log{r.count, first, r.name});

  // 3. Spam filter (EventSourceObjectSpamFilter): a token bucket per source,
  // object and type, burst spam_burst, refill one per spam_refill.
  const auto spam_key = join({component, host, o.kind, o.namespace_, o.name, o.uid, o.api_version, type});
  impl::spam_record bucket{static_cast<double>(s.opts.spam_burst), now};
  if (auto* found = s.spam.get(spam_key)) bucket = *found;
  const double per_second = 1.0 / static_cast<double>(std::max<long long>(1, s.opts.spam_refill.count()));
  const double elapsed = std::chrono::duration<double>(now - bucket.last).count();
  if (elapsed > 0) {
    bucket.tokens = std::min<double>(s.opts.spam_burst, bucket.tokens + elapsed * per_second);
    bucket.last = now;
  }
  if (bucket.tokens >= 1.0) {
    bucket.tokens -= 1.0;
  } else {
    r.skip = true;
  }
  s.spam.put(spam_key, bucket);

  // The Event (makeEvent): in the object's namespace, "default" for cluster-scoped objects.
  r.namespace_ = o.namespace_.empty() ? "default" : o.namespace_;
  json::object involved{{"kind", o.kind}, {"name", o.name}, {"apiVersion", o.api_version}};
  if (!o.namespace_.empty()) involved["namespace"] = o.namespace_;
  if (!o.uid.empty()) involved["uid"] = o.uid;
  if (!o.resource_version.empty()) involved["resourceVersion"] = o.resource_version;
  if (!o.field_path.empty()) involved["fieldPath"] = o.field_path;
  json::object source{{"component", component}};
  if (!host.empty()) source["host"] = host;
  r.event = json::object{{"apiVersion", "v1"},
                         {"kind", "Event"},
                         {"metadata", json::object{{"name", r.name}, {"namespace", r.namespace_}}},
                         {"involvedObject", std::move(involved)},
                         {"reason", e.reason},
                         {"message", r.message},
                         {"source", std::move(source)},
                         {"firstTimestamp", first},
                         {"lastTimestamp", now_str},
                         {"count", r.count},
                         {"type", type}};
  if (r.update) {
    r.patch = json::serialize(json::object{{"count", r.count}, {"lastTimestamp", now_str}, {"message", r.message}});
  }
  return r;
}

void event_correlator::update_state(const std::string& key, const std::string& name, long long count) {
  auto* last = impl_->logs.get(key);
  if (!last) return;  // evicted meanwhile
  last->name = name;
  if (count > last->count) last->count = count;
}

// ---- the recorder ---------------------------------------------------------------

namespace detail {

class event_recorder_impl : public std::enable_shared_from_this<event_recorder_impl> {
public:
  event_recorder_impl(client c, event_recorder_params o)
      : client_(std::move(c)),
        opts_(std::move(o)),
        ex_(detail::client_access::impl(client_)->strand),
        correlator_(opts_),
        rng_(std::random_device{}()) {}

  client client_;
  event_recorder_params opts_;
  asio::strand<asio::any_io_executor> ex_;
  event_correlator correlator_;  // run coroutine only
  std::minstd_rand rng_;
  std::unique_ptr<asio::steady_timer> wake_;  // run coroutine only (on ex_)

  mutable std::mutex m_;
  std::deque<event_record> queue_;  // guarded by m_
  bool waiting_ = false;            // guarded by m_: the runner sleeps on wake_

  std::atomic<bool> running_{false};
  std::atomic<std::uint64_t> recorded_{0}, dropped_{0}, filtered_{0}, created_{0}, patched_{0}, failed_{0};

  std::chrono::system_clock::time_point now() const {
    return opts_.now ? opts_.now() : std::chrono::system_clock::now();
  }

  void log(log_level l, const std::string& line) const {
    const auto& lg = detail::client_access::impl(client_)->settings.log;
    if (lg.enabled(l)) lg.log(l, "event recorder (" + opts_.component + "): " + line);
  }

  void push(event_record e) {
    bool wake = false;
    {
      std::lock_guard lk(m_);
      if (queue_.size() >= opts_.queue_capacity) {
        ++dropped_;
        return;
      }
      queue_.push_back(std::move(e));
      ++recorded_;
      wake = waiting_;
      waiting_ = false;
    }
    if (wake) {
      asio::post(ex_, [self = shared_from_this()] {
        if (self->wake_) self->wake_->cancel();
      });
    }
  }

  // One write, with client-go's retry rules. Returns when done or given up.
  asio::awaitable<void> write(const event_record& e) {
    auto r = correlator_.correlate(e, now());
    if (r.skip) {
      ++filtered_;
      log(log_level::debug, "spam filter dropped " + e.reason + " for " + e.object.kind + " " + e.object.name);
      co_return;
    }
    dynamic_api events(client_, {"", "v1", "events"}, r.namespace_);
    const unstructured body(r.event);
    for (unsigned attempt = 1;; ++attempt) {
      error_code ec;
      unstructured written;
      bool patched = false;
      if (r.update) {
        std::tie(ec, written) =
            co_await events.async_patch(r.name, patch_type::merge, r.patch, asio::as_tuple(asio::use_awaitable));
        patched = !ec;
      }
      if (!r.update || ec == api_errc::not_found) {
        // The Event is new, or it expired on the server (TTL): create it.
        std::tie(ec, written) = co_await events.async_create(body, asio::as_tuple(asio::use_awaitable));
      }
      if (!ec) {
        ++(patched ? patched_ : created_);
        long long count = r.count;
        if (const auto* c = written.object().if_contains("count"); c && c->is_int64()) count = c->as_int64();
        correlator_.update_state(r.key, written.name().empty() ? r.name : written.name(), count);
        co_return;
      }
      if (ec.category() == api_category()) {
        // The server refused this event; sending it again will not help.
        ++failed_;
        log(ec == api_errc::already_exists ? log_level::debug : log_level::warning,
            "server rejected event " + r.name + " (will not retry): " + ec.message());
        co_return;
      }
      if (ec == asio::error::operation_aborted) throw boost::system::system_error(ec);
      if (attempt >= opts_.max_tries) {
        ++failed_;
        log(log_level::error,
            "giving up on event " + r.name + " after " + std::to_string(attempt) + " tries: " + ec.message());
        co_return;
      }
      log(log_level::warning, "unable to write event " + r.name + " (will retry): " + ec.message());
      auto pause = std::chrono::duration_cast<asio::steady_timer::duration>(opts_.retry_interval);
      if (attempt == 1) {
        std::uniform_real_distribution<double> u(0.0, 1.0);
        pause = std::chrono::duration_cast<asio::steady_timer::duration>(pause * u(rng_));
      }
      asio::steady_timer t(co_await asio::this_coro::executor);
      t.expires_after(pause);
      co_await t.async_wait(asio::use_awaitable);
    }
  }

  asio::awaitable<void> run() {
    wake_ = std::make_unique<asio::steady_timer>(ex_);
    for (;;) {
      std::deque<event_record> batch;
      {
        std::lock_guard lk(m_);
        batch.swap(queue_);
        waiting_ = batch.empty();
      }
      if (batch.empty()) {
        wake_->expires_at(asio::steady_timer::time_point::max());
        co_await wake_->async_wait(asio::as_tuple(asio::use_awaitable));
        const auto cs = co_await asio::this_coro::cancellation_state;
        if (cs.cancelled() != asio::cancellation_type::none)
          throw boost::system::system_error(asio::error::operation_aborted);
        continue;
      }
      for (const auto& e : batch) co_await write(e);
    }
  }
};

void event_recorder_start(std::shared_ptr<event_recorder_impl> impl,
                          asio::any_completion_handler<void(error_code)> handler) {
  start_once(std::move(impl), std::move(handler), [](event_recorder_impl& r) {
    {
      std::lock_guard lk(r.m_);
      r.waiting_ = false;
    }
    r.wake_.reset();
  });
}

}  // namespace detail

event_recorder::event_recorder(client c, event_recorder_params options) {
  if (options.component.empty())
    throw kube::error(client_errc::invalid_config,
                      "event recorder: options.component (the reporting controller) is empty");
  if (options.queue_capacity == 0)
    throw kube::error(client_errc::invalid_config, "event recorder: options.queue_capacity must be at least 1");
  impl_ = std::make_shared<detail::event_recorder_impl>(std::move(c), std::move(options));
}

void event_recorder::record(const object_reference& object, event_type type, std::string_view reason,
                            std::string_view message) {
  if (reason.empty() || object.name.empty() || object.kind.empty()) {
    ++impl_->dropped_;  // not logged here: the logger is called on the client's strand only
    return;
  }
  impl_->push(event_record{object, type, std::string(reason), std::string(message)});
}

event_recorder_stats event_recorder::stats() const {
  event_recorder_stats s;
  s.recorded = impl_->recorded_;
  s.dropped = impl_->dropped_;
  s.filtered = impl_->filtered_;
  s.created = impl_->created_;
  s.patched = impl_->patched_;
  s.failed = impl_->failed_;
  return s;
}

std::size_t event_recorder::queued() const {
  std::lock_guard lk(impl_->m_);
  return impl_->queue_.size();
}

}  // namespace kube
