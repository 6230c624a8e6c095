#pragma once

// kube::informer::reflector<T>: client-go's Reflector (list, then watch from
// the list's resourceVersion; relist on 410; backoff; bookmarks; streaming
// lists). The guide is docs/guides/informer.md.
// Size: about 730 lines: a template over the object type; each of
// client-go's rules is a short member, tested one by one in
// test/unit/informer/reflector_test.cpp.

#include <kube/base/metrics.hpp>
#include <kube/informer/backoff.hpp>
#include <kube/informer/clock.hpp>
#include <kube/informer/delta_fifo.hpp>
#include <kube/async.hpp>
#include <kube/informer/key_func.hpp>
#include <kube/informer/lister_watcher.hpp>

#include <kube/diagnostics.hpp>
#include <kube/error.hpp>
#include <kube/rest/list_params.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/system/system_error.hpp>

#include <chrono>
#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace kube::informer {

/// One failed list or watch attempt, as the watch error hook sees it.
struct watch_failure {
  error_code ec;                       ///< what failed
  const diagnostics& diag;             ///< the server's Status and the client's message
  std::chrono::milliseconds retry_in;  ///< the wait (backoff) before the next attempt
  /// The next attempt lists again (and replaces the cache); false: the
  /// watch is reopened at the last resourceVersion, nothing is relisted.
  bool relist;
};

/// Called with every failed list or watch attempt (client-go's
/// WatchErrorHandler sees only those that end a cycle): a failed list, a
/// refused watch, an ERROR event (410 expired ...), a malformed event, an
/// object of the wrong kind (these relist), and also a watch that could not
/// be opened (connection refused, timeout, 429) or whose connection broke
/// (these reopen the watch). So an outage is seen as it happens, with the
/// wait before the next try. Runs on the informer's strand; must not
/// block. Exceptions it throws are swallowed.
using watch_error_handler = std::function<void(const watch_failure&)>;

/// Applied to every object before it is queued and cached (client-go's
/// TransformFunc). Must not return null.
template <class T>
using transform_func = std::function<std::shared_ptr<const T>(std::shared_ptr<const T>)>;

template <class T>
struct reflector_params {
  std::string name = "reflector";         ///< names the reflector in error messages
  std::shared_ptr<const clock> clk = {};  ///< null: default_clock() (real_clock())
  std::function<double()> random = {};    ///< uniform [0, 1); null: a seeded mt19937_64
  backoff_params backoff = {};            ///< 800 ms -> 30 s, jitter 1.0, reset after 2 min
  /// The wait between attempts while the server cannot be reached at all
  /// (connection refused or reset, no route to it): 250 ms
  /// doubling to 2 s, so [2 s, 4 s) at the cap, back to 250 ms as soon as
  /// the server answers anything. A refused connection costs the server
  /// nothing, and a server back from an outage is found within seconds
  /// however long the outage was. `backoff` is not grown by these.
  backoff_params reconnect_backoff = {.initial = std::chrono::milliseconds(250), .max = std::chrono::seconds(2)};
  /// The relist a 410 asks for (a restarted apiserver, a compaction) waits a
  /// delay drawn from [0, w), w the larger of this and `backoff`'s current
  /// step: a fleet that hears the 410 together spreads its relists over at
  /// least this long. 0: over the backoff's step only.
  std::chrono::milliseconds relist_spread{3000};
  std::chrono::seconds min_watch_timeout{300};  ///< timeoutSeconds is random in [min, max]
  std::chrono::seconds max_watch_timeout{600};
  /// A watch that receives no byte (not even a bookmark: the apiserver
  /// sends one about every minute) for this long is presumed dead, closed
  /// and reopened at the last resourceVersion, without a relist. 0: never.
  std::chrono::milliseconds watch_idle_timeout{150'000};
  long long page_size = 500;  ///< page size of "0" and "" lists; 0: no paging
  /// Try a streaming list (WatchList: a watch with sendInitialEvents=true)
  /// first and fall back to a list, as client-go 1.35 does by default.
  bool streaming_list = true;
  watch_error_handler on_watch_error = {};
  transform_func<T> transform = {};
  key_func<T> key = default_key_func<T>();   ///< for the streaming list's temporary store and the held-object lookup
  std::function<void()> after_replace = {};  ///< called after each replace into the FIFO (the informer's sync check)
  /// Called after last_sync_resource_version() moved (a list, a watch event,
  /// a bookmark), once what it covers is in the FIFO.
  std::function<void()> after_resource_version = {};
  /// Lists, watches, stalls and resourceVersions go here (null: nowhere);
  /// an informer passes its informer_params::metrics.
  std::shared_ptr<kube::metrics::informer_metrics> metrics = nullptr;
};

/// What the Reflector did so far (for tests and metrics).
struct reflector_stats {
  std::size_t lists = 0;                ///< completed lists (each possibly several pages)
  std::size_t list_requests = 0;        ///< list calls made (pages, retries)
  std::size_t watches = 0;              ///< watch calls made (incl. streaming lists)
  std::size_t streaming_syncs = 0;      ///< streaming lists that reached initial-events-end
  std::size_t streaming_fallbacks = 0;  ///< streaming lists given up for a list
  std::size_t errors = 0;               ///< failed attempts passed to the hook (relisting or not)
  std::size_t reused = 0;  ///< listed or initial-event objects that were the held state (same resourceVersion)

  /// Full syncs: lists and streaming lists that reached their end.
  [[nodiscard]] std::size_t syncs() const noexcept { return lists + streaming_syncs; }
};

/// client-go's Reflector: keeps a DeltaFIFO in step with the server by
/// listing, then watching from the list's resourceVersion.
///
/// Rules (as client-go's reflector.go):
/// - The first list is at resourceVersion "0" (any version, served from the
///   apiserver's cache); relists are at the last synced resourceVersion;
///   only when that version is unavailable (410 Expired/Gone, or "too large
///   resource version") does it list at "" (a consistent read), paginated
///   by `page_size`. Lists at a specific version are not paginated.
///   An expired continue token during paging falls back to one full list.
/// - Watches always ask for bookmarks, with timeoutSeconds random in
///   [min_watch_timeout, max_watch_timeout], from the last resourceVersion
///   seen. A watch that ends normally (or whose connection drops) is
///   reopened from there without a relist; one that lasted under 1 s with
///   no event counts as an error. A watch silent for `watch_idle_timeout`
///   is presumed dead and reopened the same way. Opening a watch that fails
///   with connection refused, 429, a timeout or a broken connection is
///   retried after a backoff, without relist. Each of these failures, and
///   each dropped or silent watch, goes to `on_watch_error` (relist false).
/// - Any other error ends the cycle: it goes to `on_watch_error` (relist
///   true), and after a backoff delay the Reflector relists. That includes ERROR events
///   (410 expired -> relist), malformed events and objects of the wrong
///   kind; the cache keeps its content until the relist replaces it.
/// - Backoff: see backoff_params (800 ms -> 30 s, jitter, reset after 2 min
///   without a delay). A delay is taken between every two cycles; after a
///   410 it is drawn from [0, max(d, relist_spread)) instead of [d, 2d)
///   (backoff::next_spread). While the server cannot be reached at all
///   (refused, reset, no route), attempts follow
///   `reconnect_backoff` instead (250 ms -> 2 s), which starts again as
///   soon as the server answers.
/// - Streaming list (`streaming_list`, on by default, as client-go 1.35): a
///   watch with sendInitialEvents=true, resourceVersionMatch=NotOlderThan;
///   events are collected in a temporary store and handed to the FIFO as
///   one replace when the bookmark annotated k8s.io/initial-events-end
///   arrives; the same stream then continues as the watch. If the server
///   refuses it (an API error), streaming is off for the rest of this
///   Reflector's life and it lists instead; other failures fall back to a
///   list for that cycle.
/// - A listed or streamed object with the resourceVersion of the state the
///   FIFO or cache holds for its key is replaced by that held object (no
///   second copy of an unchanged cache during a relist).
/// - Resource versions: added events of a watch started at "" or "0" do not
///   move the last synced version until another kind of event arrives.
///
/// Threading: `run()` and the FIFO belong to one strand (the informer's).
/// Accessors are for that strand too.
template <class T>
class reflector {
public:
  using object_ptr = std::shared_ptr<const T>;

  reflector(std::shared_ptr<lister_watcher<T>> lw, delta_fifo<T>& fifo, reflector_params<T> options = {})
      : lw_(std::move(lw)),
        fifo_(fifo),
        o_(std::move(options)),
        backoff_(o_.backoff),
        reconnect_(o_.reconnect_backoff) {
    if (!lw_) {
      throw std::invalid_argument("reflector: a lister_watcher is required");
    }
    if (!o_.clk) {
      o_.clk = default_clock();
    }
    if (!o_.random) {
      o_.random = [rng = std::mt19937_64{std::random_device{}()}]() mutable {
        return std::uniform_real_distribution<double>(0.0, 1.0)(rng);
      };
    }
    if (!o_.key) {
      o_.key = default_key_func<T>();
    }
    if (o_.max_watch_timeout < o_.min_watch_timeout) {
      throw std::invalid_argument("reflector: max_watch_timeout < min_watch_timeout");
    }
  }

  /// Lists and watches until the awaiting coroutine is cancelled; then
  /// throws system_error(operation_aborted). Never returns otherwise.
  boost::asio::awaitable<void> run() {
    for (;;) {
      auto f = co_await list_and_watch();
      co_await throw_if_cancelled();
      const auto delay = delay_after(f.ec, true);
      if (f.ec) {
        report(f.ec, f.diag, delay, true);
      }
      co_await sleep(*o_.clk, delay);
    }
  }

  /// `run()` as an Asio operation on `ex` (use the informer's strand):
  /// completion void(error_code), operation_aborted once cancelled.
  template <class Token = kube::use_awaitable_t>
  auto async_run(boost::asio::any_io_executor ex, Token&& token = {}) {
    return kube::async_spawn(
        std::move(ex), [this] { return run(); }, std::forward<Token>(token));
  }

  [[nodiscard]] const std::string& last_sync_resource_version() const noexcept { return last_rv_; }
  [[nodiscard]] bool last_sync_resource_version_unavailable() const noexcept { return unavailable_; }
  [[nodiscard]] const reflector_stats& stats() const noexcept { return stats_; }
  [[nodiscard]] bool streaming_enabled() const noexcept { return o_.streaming_list; }
  [[nodiscard]] const reflector_params<T>& options() const noexcept { return o_; }

private:
  struct failure {
    error_code ec;
    diagnostics diag;
  };

  static failure fail(error_code ec, std::string message) {
    failure f{ec, {}};
    f.diag.set_client_message(std::move(message));
    return f;
  }

  static boost::asio::awaitable<void> throw_if_cancelled() {
    auto cs = co_await boost::asio::this_coro::cancellation_state;
    if (cs.cancelled() != boost::asio::cancellation_type::none) {
      throw boost::system::system_error(boost::asio::error::operation_aborted);
    }
  }

  // The wait after a failed attempt. One the server did not answer at all
  // follows reconnect_backoff. Any answer resets that one: a 410 that asks
  // for a relist (the server is back with a fresh watch cache, or
  // compacted) waits a spread delay (backoff::next_spread), anything else
  // the backoff.
  clock::duration delay_after(const error_code& ec, bool relist) {
    const auto now = o_.clk->now();
    if (unreachable(ec)) {
      return reconnect_.next(now, o_.random());
    }
    reconnect_.reset();
    if (relist && is_resource_expired(ec)) {
      return backoff_.next_spread(now, o_.random(), o_.relist_spread);
    }
    return backoff_.next(now, o_.random());
  }

  // No connection to the server at all: refused or reset, no route. Not a
  // TLS failure (a handshake costs the server), a timeout (the server may be
  // there, overloaded) nor a DNS failure (a wrong name, or a DNS server that
  // would get every informer's lookups every few seconds): those take the
  // backoff.
  static bool unreachable(const error_code& ec) {
    namespace e = boost::asio::error;
    return ec == e::connection_refused || ec == e::connection_reset || ec == e::host_unreachable ||
           ec == e::network_unreachable;
  }

  // A failed attempt that is tried again: told to the hook, then the
  // wait (delay_after). `relist`: the next attempt lists (or streams) at ""
  // after a 410, as in run().
  boost::asio::awaitable<void> retry_after(const error_code& ec, const diagnostics& diag, bool relist = false) {
    const auto delay = delay_after(ec, relist);
    report(ec, diag, delay, relist);
    co_await sleep(*o_.clk, delay);
  }

  long long watch_timeout_seconds() {
    const double lo = static_cast<double>(o_.min_watch_timeout.count());
    const double hi = static_cast<double>(o_.max_watch_timeout.count());
    return static_cast<long long>(lo + o_.random() * (hi - lo));
  }

  void report(const error_code& ec, const diagnostics& diag, clock::duration retry_in, bool relist) {
    ++stats_.errors;
    if (o_.on_watch_error) {
      try {
        o_.on_watch_error({ec, diag, std::chrono::duration_cast<std::chrono::milliseconds>(retry_in), relist});
      } catch (...) {  // NOLINT(bugprone-empty-catch): a hook must not stop the reflector
      }
    }
  }

  // A listed or initial-event object ready for the FIFO. One whose
  // resourceVersion equals that of the state the FIFO or the cache already
  // holds for its key is that state: the held object is kept, so a relist
  // does not build a second copy of an unchanged cache (the new one is
  // freed here, as the items arrive). Others go through the transform.
  object_ptr adopted(object_ptr obj, const std::string& key) {
    if (!obj) {
      throw std::invalid_argument("a listed object is null");
    }
    if constexpr (has_resource_version<T>) {
      const auto& rv = obj->resource_version();  // a reference or a kept temporary
      if (!std::string_view(rv).empty()) {
        if (auto held = fifo_.latest(key); held && std::string_view(held->resource_version()) == std::string_view(rv)) {
          ++stats_.reused;
          return held;
        }
      }
    }
    return transformed(std::move(obj));
  }

  object_ptr transformed(object_ptr obj) const {
    if (o_.transform) {
      obj = o_.transform(std::move(obj));
      if (!obj) {
        throw std::invalid_argument("the transform returned null");
      }
    }
    return obj;
  }

  // A watch that could not be opened for one of these is tried again after
  // a backoff, at the same resourceVersion, without a relist: client-go's
  // connection refused (a network error) and 429, and a server that did not
  // answer in time or whose connection broke (it may be paused or overloaded).
  static bool retriable(const error_code& ec) {
    return ec == api_errc::too_many_requests || ec == client_errc::timeout || is_network_error(ec);
  }

  // client-go's isTooLargeResourceVersionError.
  static bool too_large_rv(const error_code& ec, const diagnostics& diag) {
    const auto& st = diag.server_status();
    if (!st) {
      return false;
    }
    const auto* details = st->if_contains("details");
    const auto* causes = details && details->is_object() ? details->as_object().if_contains("causes") : nullptr;
    if (causes && causes->is_array()) {
      for (const auto& c : causes->as_array()) {
        if (!c.is_object()) {
          continue;
        }
        const auto* reason = c.as_object().if_contains("reason");
        const auto* message = c.as_object().if_contains("message");
        if (reason && reason->is_string() && reason->as_string() == "ResourceVersionTooLarge") {
          return true;
        }
        if (ec == api_errc::timeout && message && message->is_string() &&
            message->as_string() == "Too large resource version") {
          return true;
        }
      }
    }
    return ec == api_errc::timeout && diag.server_message().find("Too large resource version") != std::string::npos;
  }

  static bool is_network_error(const error_code& ec) {
    return ec && ec.category() != client_category() && ec.category() != api_category() &&
           ec != boost::asio::error::operation_aborted;
  }

  // ---- one cycle -----------------------------------------------------------
  boost::asio::awaitable<failure> list_and_watch() {
    std::unique_ptr<event_stream<T>> w;
    bool fallback = !o_.streaming_list;
    if (o_.streaming_list) {
      auto r = co_await watch_list();
      co_await throw_if_cancelled();
      if (r.f.ec) {
        ++stats_.streaming_fallbacks;
        fallback = true;
        if (r.refused) {
          o_.streaming_list = false;  // the server does not do streaming lists
        }
        // The list follows at once, as client-go falls back; the hook hears
        // why the streaming list failed.
        report(r.f.ec, r.f.diag, clock::duration::zero(), true);
      } else {
        w = std::move(r.stream);
      }
    }
    if (fallback) {
      auto f = co_await list();
      if (f.ec) {
        co_return f;
      }
    }
    co_return co_await watch_loop(std::move(w));
  }

  // ---- list ----------------------------------------------------------------
  [[nodiscard]] std::string relist_resource_version() const {
    if (unavailable_) {
      return "";
    }
    return last_rv_.empty() ? std::string("0") : last_rv_;
  }

  struct listed {
    failure f;
    std::vector<object_ptr> items;
    std::string rv;
  };

  boost::asio::awaitable<listed> paged_list(std::string rv) {
    listed out;
    list_params p;
    p.resource_version = rv;
    if (o_.page_size > 0 && (rv.empty() || rv == "0")) {
      p.limit = o_.page_size;
    }
    for (;;) {
      auto page = co_await lw_->list(p);
      ++stats_.list_requests;
      co_await throw_if_cancelled();
      if (page.ec) {
        if (is_resource_expired(page.ec) && !p.continue_token.empty()) {
          // client-go's pager: an expired continue token -> one full list,
          // after the hook and the spread wait.
          co_await retry_after(page.ec, page.diag, true);
          p = list_params{};
          out.items.clear();
          continue;
        }
        out.f = {page.ec, std::move(page.diag)};
        co_return out;
      }
      out.rv = page.result.resource_version;
      try {
        for (auto& it : page.result.items) {
          auto k = it ? o_.key(*it) : std::string();
          out.items.push_back(adopted(std::move(it), k));
        }
      } catch (const std::exception& e) {
        out.f = fail(client_errc::decode_error, o_.name + ": cannot queue the list: " + e.what());
        co_return out;
      }
      if (page.result.continue_token.empty()) {
        co_return out;
      }
      p.continue_token = std::move(page.result.continue_token);
      p.resource_version.clear();  // not allowed with continue
      p.resource_version_match.clear();
    }
  }

  boost::asio::awaitable<failure> list() {
    const auto start = o_.clk->now();
    auto r = co_await paged_list(relist_resource_version());
    if (r.f.ec && (is_resource_expired(r.f.ec) || too_large_rv(r.f.ec, r.f.diag))) {
      // The version is gone: a consistent list at "", after the hook and
      // the wait (a server that keeps answering 410 is not hammered).
      unavailable_ = true;
      co_await retry_after(r.f.ec, r.f.diag, true);
      r = co_await paged_list(relist_resource_version());
    }
    if (r.f.ec) {
      auto f = std::move(r.f);
      if (f.diag.client_message().empty()) {
        f.diag.set_client_message(o_.name + ": list failed");
      }
      co_return f;
    }
    unavailable_ = false;
    const auto items = r.items.size();
    try {
      fifo_.replace(std::move(r.items), r.rv);
      if (o_.after_replace) {
        o_.after_replace();
      }
    } catch (const std::exception& e) {
      co_return fail(client_errc::decode_error, o_.name + ": cannot queue the list: " + e.what());
    }
    synced(std::move(r.rv), items, start);
    ++stats_.lists;
    co_return failure{};
  }

  // ---- streaming list -----------------------------------------------------
  struct streamed {
    failure f;
    bool refused = false;
    std::unique_ptr<event_stream<T>> stream;
  };

  boost::asio::awaitable<streamed> watch_list() {
    streamed out;
    const auto start = o_.clk->now();
    for (;;) {
      watch_params p;
      p.resource_version = unavailable_ ? std::string() : last_rv_;
      p.allow_bookmarks = true;
      p.send_initial_events = true;
      p.resource_version_match = "NotOlderThan";
      p.timeout_seconds = watch_timeout_seconds();
      p.idle_timeout = o_.watch_idle_timeout;
      auto o = co_await lw_->watch(p);
      ++stats_.watches;
      co_await throw_if_cancelled();
      if (o.ec) {
        if (retriable(o.ec)) {
          co_await retry_after(o.ec, o.diag);
          continue;
        }
        if (is_resource_expired(o.ec) || too_large_rv(o.ec, o.diag)) {
          unavailable_ = true;
          co_await retry_after(o.ec, o.diag, true);
          continue;
        }
        out.refused = o.ec.category() == api_category();
        out.f = {o.ec, std::move(o.diag)};
        co_return out;
      }
      if (o_.metrics) {
        o_.metrics->on_watch();
      }
      std::unordered_map<std::string, object_ptr> temp;
      std::string rv;
      std::optional<failure> expired;  // a 410 ERROR event: again at "", after the wait
      for (;;) {
        auto ev = co_await o.stream->next();
        co_await throw_if_cancelled();
        if (!ev) {
          out.f = fail(client_errc::watch_stream_error,
                       o_.name + ": the streaming list ended before the initial-events-end bookmark");
          co_return out;
        }
        if (ev->type == event_type::error) {
          if (is_resource_expired(ev->ec)) {
            unavailable_ = true;
            expired = failure{ev->ec, std::move(ev->diag)};
            break;
          }
          out.refused = ev->ec.category() == api_category();
          out.f = {ev->ec, std::move(ev->diag)};
          co_return out;
        }
        if (ev->type == event_type::bookmark) {
          rv = ev->resource_version;
          if (!ev->initial_events_end) {
            continue;
          }
          std::vector<object_ptr> items;
          const auto count = temp.size();
          items.reserve(count);
          for (auto& [k, obj] : temp) {
            items.push_back(std::move(obj));
          }
          try {
            fifo_.replace(std::move(items), rv);
            if (o_.after_replace) {
              o_.after_replace();
            }
          } catch (const std::exception& e) {
            out.f = fail(client_errc::decode_error, o_.name + ": cannot queue the streamed list: " + e.what());
            co_return out;
          }
          synced(std::move(rv), count, start);
          unavailable_ = false;
          ++stats_.streaming_syncs;
          out.stream = std::move(o.stream);
          co_return out;
        }
        if (!ev->object) {
          out.f = fail(client_errc::decode_error, o_.name + ": a watch event without an object");
          co_return out;
        }
        try {
          auto k = o_.key(*ev->object);
          if (ev->type == event_type::deleted) {
            temp.erase(k);
          } else {
            auto obj = adopted(std::move(ev->object), k);
            temp.insert_or_assign(std::move(k), std::move(obj));
          }
        } catch (const std::exception& e) {
          out.f = fail(client_errc::decode_error, o_.name + ": bad object in the streamed list: " + e.what());
          co_return out;
        }
      }
      if (expired) {
        co_await retry_after(expired->ec, expired->diag, true);
        continue;
      }
    }
  }

  // ---- watch ---------------------------------------------------------------
  struct handled {
    failure f;
    std::size_t events = 0;
  };

  boost::asio::awaitable<handled> handle_watch(event_stream<T>& s, bool propagate_from_start) {
    handled out;
    bool besides_added = false;
    for (;;) {
      auto ev = co_await s.next();
      co_await throw_if_cancelled();
      if (!ev) {
        co_return out;
      }
      switch (ev->type) {
      case event_type::error:
        out.f = {ev->ec, std::move(ev->diag)};
        co_return out;
      case event_type::bookmark:
        besides_added = true;
        break;
      case event_type::added:
      case event_type::modified:
      case event_type::deleted: {
        if (!ev->object) {
          out.f = fail(client_errc::decode_error, o_.name + ": a watch event without an object");
          co_return out;
        }
        try {
          auto obj = transformed(std::move(ev->object));
          if (ev->type == event_type::added) {
            fifo_.add(std::move(obj));
          } else if (ev->type == event_type::modified) {
            besides_added = true;
            fifo_.update(std::move(obj));
          } else {
            besides_added = true;
            fifo_.remove(std::move(obj));
          }
        } catch (const std::exception& e) {
          out.f = fail(client_errc::decode_error, o_.name + ": cannot queue a watch event: " + e.what());
          co_return out;
        }
        break;
      }
      }
      if ((propagate_from_start || besides_added) && !ev->resource_version.empty()) {
        last_rv_ = ev->resource_version;
        if (o_.metrics) {
          o_.metrics->on_resource_version(last_rv_);
        }
        if (o_.after_resource_version) {
          o_.after_resource_version();
        }
      }
      ++out.events;
    }
  }

  boost::asio::awaitable<failure> watch_loop(std::unique_ptr<event_stream<T>> w) {
    for (;;) {
      const auto start = o_.clk->now();
      bool propagate = true;
      if (!w) {
        watch_params p;
        p.resource_version = last_rv_;
        p.allow_bookmarks = true;
        p.timeout_seconds = watch_timeout_seconds();
        p.idle_timeout = o_.watch_idle_timeout;
        if (p.resource_version.empty() || p.resource_version == "0") {
          propagate = false;
        }
        auto o = co_await lw_->watch(p);
        ++stats_.watches;
        co_await throw_if_cancelled();
        if (o.ec) {
          if (retriable(o.ec)) {
            co_await retry_after(o.ec, o.diag);
            continue;
          }
          co_return failure{o.ec, std::move(o.diag)};
        }
        w = std::move(o.stream);
        reconnect_.reset();  // the server answered
        if (o_.metrics) {
          o_.metrics->on_watch();
        }
      }
      auto h = co_await handle_watch(*w, propagate);
      w.reset();
      if (o_.metrics) {
        o_.metrics->on_watch_end(h.events, o_.clk->now() - start);
        if (h.f.ec == boost::asio::error::timed_out) {
          o_.metrics->on_watch_stall();  // watch_idle_timeout
        }
      }
      if (h.f.ec) {
        if (h.f.ec == api_errc::too_many_requests) {
          co_await retry_after(h.f.ec, h.f.diag);
          continue;
        }
        if (!is_network_error(h.f.ec)) {
          co_return std::move(h.f);
        }
        // A dropped connection ends the watch like a normal close, reopened
        // at once; the hook hears of it.
        report(h.f.ec, h.f.diag, clock::duration::zero(), false);
      }
      if (h.events == 0 && o_.clk->now() - start < std::chrono::seconds(1)) {
        co_return fail(client_errc::watch_stream_error,
                       o_.name + ": very short watch: it lasted less than a second and delivered no event");
      }
    }
  }

  // A full list or streaming list ended at `rv` with `items` objects.
  void synced(std::string rv, std::size_t items, clock::time_point start) {
    reconnect_.reset();  // the server answered
    last_rv_ = std::move(rv);
    if (o_.metrics) {
      o_.metrics->on_list(items, o_.clk->now() - start, stats_.syncs() > 0);
      o_.metrics->on_resource_version(last_rv_);
    }
    if (o_.after_resource_version) {
      o_.after_resource_version();
    }
  }

  std::shared_ptr<lister_watcher<T>> lw_;
  delta_fifo<T>& fifo_;
  reflector_params<T> o_;
  backoff_manager backoff_;
  backoff_manager reconnect_;
  std::string last_rv_;
  bool unavailable_ = false;
  reflector_stats stats_;
};

}  // namespace kube::informer
