#pragma once

// kube::informer::shared_index_informer<T>: client-go's SharedIndexInformer
// (a reflector, a DeltaFIFO, an indexer, and handlers, each with its own
// queue). The guide is docs/guides/informer.md.
// Size: about 980 lines: a template over the object type, whose listener,
// processor and informer share private state. Moving most of it behind a
// type-erased core in compiled code (as kube::api<T> does) is also what a
// controller's TU needs to compile faster (docs/building.md).

#include <kube/base/strand.hpp>
#include <kube/informer/clock.hpp>
#include <kube/informer/delta.hpp>
#include <kube/informer/delta_fifo.hpp>
#include <kube/async.hpp>
#include <kube/informer/indexer.hpp>
#include <kube/informer/lister.hpp>
#include <kube/informer/lister_watcher.hpp>
#include <kube/informer/reflector.hpp>
#include <kube/logger.hpp>
#include <kube/resource_version.hpp>
#include <kube/error.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <compare>
#include <concepts>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

namespace kube::informer {

/// What on_delete receives: the object's last state, or a tombstone when
/// the delete was missed and found by a relist (its object may be stale).
template <class T>
using deleted_object = std::variant<std::shared_ptr<const T>, deleted_final_state_unknown<T>>;

/// The last known object of a deleted_object (may be null for a tombstone).
template <class T>
const std::shared_ptr<const T>& object_of(const deleted_object<T>& d) {
  if (const auto* t = std::get_if<deleted_final_state_unknown<T>>(&d)) {
    return t->obj;
  }
  return std::get<std::shared_ptr<const T>>(d);
}

/// Notification callbacks (client-go's ResourceEventHandlerFuncs); any may
/// be empty. Each handler has its own queue and runs on its own strand
/// (handler_params::executor), one notification at a time, in order; a slow
/// handler delays only itself, never the cache or the other handlers.
/// Exceptions they throw are logged and counted (the informer goes on).
template <class T>
struct event_handler {
  std::function<void(const std::shared_ptr<const T>& obj, bool is_initial_list)> on_add;
  std::function<void(const std::shared_ptr<const T>& old_obj, const std::shared_ptr<const T>& new_obj)> on_update;
  std::function<void(const deleted_object<T>& obj)> on_delete;
};

/// How one handler is added (shared_index_informer::add_handler).
struct handler_params {
  /// Resync period (zero: none); default: informer_params::default_resync.
  std::optional<std::chrono::milliseconds> resync = {};
  /// Where the handler runs, on a strand of its own; default: the executor
  /// the informer was given. Give a handler that blocks another executor
  /// (a thread_pool's) so that it holds up no thread the SDK runs on.
  boost::asio::any_io_executor executor = {};
};

/// A handler's queue grew to informer_params::handler_backlog_warning
/// notifications (see on_handler_backlog).
struct handler_backlog {
  std::uint64_t handler_id = 0;
  std::size_t pending = 0;
};

/// What a handler's queue does once it holds
/// informer_params::handler_queue_limit notifications.
enum class handler_overflow_policy {
  /// The informer waits: it takes nothing more from its DeltaFIFO until
  /// that handler has taken from its queue. The cache and every other
  /// handler wait with it; nothing is dropped or merged. What the watch
  /// brings meanwhile waits in the DeltaFIFO (one entry per object, its
  /// changes in order).
  block,
  /// The queue is folded by object: from then on it holds one entry per
  /// object, the state the handler saw before and the latest, and the
  /// handler gets one on_add, on_update or on_delete per object for the
  /// whole change, without the states in between. The informer and the
  /// other handlers never wait, and no delete is lost (an object added and
  /// deleted within the fold is not mentioned at all; one deleted and
  /// created again comes as one update). Objects come in the order of
  /// their first change in the fold.
  coalesce,
};

template <class T>
class shared_index_informer;

/// The handle of one added handler: its sync state, its queue's length,
/// and the key to remove it. Thread-safe.
class handler_registration : public std::enable_shared_from_this<handler_registration> {
public:
  handler_registration(std::uint64_t id, boost::asio::any_io_executor strand)
      : id_(id),
        strand_(std::move(strand)),
        sync_cv_(strand_, boost::asio::steady_timer::time_point::max()) {}

  /// True once this handler has run for every object of the informer's
  /// first list (late handlers: for every object in the cache when they
  /// were added). client-go's ResourceEventHandlerRegistration.HasSynced.
  [[nodiscard]] bool has_synced() const noexcept { return synced_.load(std::memory_order_acquire); }
  [[nodiscard]] std::uint64_t id() const noexcept { return id_; }
  /// Notifications queued for this handler and not yet delivered.
  [[nodiscard]] std::size_t pending() const noexcept { return pending_.load(std::memory_order_relaxed); }
  /// The longest this handler's queue has been.
  [[nodiscard]] std::size_t max_pending() const noexcept { return max_pending_.load(std::memory_order_relaxed); }
  /// The strand the handler runs on.
  [[nodiscard]] const boost::asio::any_io_executor& get_executor() const noexcept { return strand_; }

  /// Completes (void(error_code)) once has_synced(); operation_aborted if
  /// cancelled first.
  template <class Token = kube::use_awaitable_t>
  auto async_wait_for_sync(Token&& token = {}) {
    return kube::async_spawn(
        strand_, [self = shared_from_this()] { return self->wait_for_sync(); }, std::forward<Token>(token));
  }

private:
  template <class>
  friend class shared_index_informer;

  boost::asio::awaitable<void> wait_for_sync() {
    return kube::wait_until(sync_cv_, [this] { return has_synced(); });  // sync_cv_ cancelled by mark_synced
  }
  void mark_synced() {  // on strand_
    synced_.store(true, std::memory_order_release);
    sync_cv_.cancel();
  }

  std::uint64_t id_;
  boost::asio::any_io_executor strand_;
  boost::asio::steady_timer sync_cv_;  // strand_ only
  std::atomic<bool> synced_{false};
  std::atomic<bool> removed_{false};
  std::atomic<std::size_t> pending_{0};
  std::atomic<std::size_t> max_pending_{0};
};

template <class T>
struct informer_params {
  std::string name = "informer";
  /// Resync period of handlers added without one; also the initial resync
  /// check period. Zero: no resync unless a handler asks for one before
  /// the informer starts.
  std::chrono::milliseconds default_resync{0};
  /// Transform before caching (also see strip_managed_fields).
  transform_func<T> transform = {};
  /// Called with every failed list or watch attempt (see watch_failure).
  /// Empty: each is logged as a warning through `log` (as client-go's
  /// default handler does): "<name>: <kube::error_message>; retrying in N ms".
  watch_error_handler on_watch_error = {};
  /// Where failed attempts (unless on_watch_error is set), an exception
  /// thrown by an event handler, and a handler's backlog, are logged (with
  /// the informer's name); default: stderr. See handler_errors().
  kube::logger log = {};
  /// A handler's queue has no bound (nothing is ever dropped, the informer
  /// never waits for a handler, as client-go's processorListener). When it
  /// reaches this many notifications, on_handler_backlog is called (else a
  /// warning is logged), again only after the queue was emptied. 0: never.
  std::size_t handler_backlog_warning = 1024;
  std::function<void(const handler_backlog&)> on_handler_backlog = {};
  /// A bound on each handler's queue, and what happens at it (0: no bound,
  /// the default). The bound holds for what the informer queues; a handler
  /// added while the informer runs first gets the whole cache, whatever the
  /// bound. A handler that blocks its thread stalls everything else on
  /// that thread, whatever the policy: give it an executor of its own
  /// (handler_params::executor).
  std::size_t handler_queue_limit = 0;
  handler_overflow_policy handler_overflow = handler_overflow_policy::block;
  /// Extra indexes (the namespace index is built in).
  index_funcs<T> indexers = {};
  key_func<T> key = default_key_func<T>();
  /// Reflector tuning (clock, random, backoff, timeouts, page size,
  /// streaming list). Its transform/on_watch_error/key/after_replace/
  /// metrics are set from the fields here.
  reflector_params<T> reflector = {};
  /// The informer's metrics (kube/base/metrics.hpp): its reflector's lists,
  /// watches and resourceVersion, the FIFO's depth, processing and handler
  /// time, handler errors. informer_factory sets it from its client's
  /// metrics provider. Null: none.
  std::shared_ptr<kube::metrics::informer_metrics> metrics = nullptr;
};

/// client-go's SharedIndexInformer: a Reflector feeding a DeltaFIFO, a
/// processor coroutine applying the deltas to an Indexer and queueing a
/// notification for every handler, and a resync timer.
///
/// Data flow (on one strand of the given executor):
///   lister_watcher -> reflector (coroutine) -> delta_fifo -> processor
///   (coroutine) -> indexer (cache) -> one queue per handler
/// and each handler's queue is emptied on that handler's own strand.
///
/// Rules (as client-go's shared_informer.go):
/// - Handlers may be added and removed at any time, from any thread. A
///   handler added while the informer runs first gets on_add(obj, true)
///   for every cached object.
/// - on_add's is_initial_list is true for objects of the first list.
/// - An update whose old and new resourceVersion are equal (a resync, or a
///   relist that found the object unchanged) goes only to handlers whose
///   resync is due; other updates go to all handlers.
/// - Per-handler resync period (minimum 1 s). Before start, a shorter
///   period lowers the informer's check period; after start, periods below
///   the check period are raised to it.
/// - Deletes reach on_delete with the object, or with a
///   deleted_final_state_unknown tombstone after a relist.
/// - has_synced() once the first list is in the cache; a handler's
///   registration has_synced() once that handler has run for all of it.
/// - A handler may run after the cache moved on (it sees the object of
///   its notification, the lister the newest). When async_run ends, the
///   notifications not yet delivered are dropped (as client-go's).
///
/// Threading: everything mutable lives on the informer's strand; from
/// other threads use add_handler/remove_handler (posted to the strand),
/// has_synced (atomic), async_wait_for_sync, make_lister()/cache() (the Indexer
/// takes a shared lock per read). The informer must outlive its async_run
/// and any operation posted to it.
template <class T>
class shared_index_informer {
public:
  using object_ptr = std::shared_ptr<const T>;
  /// A strand over the executor given (kube::make_strand_executor).
  using executor_type = boost::asio::any_io_executor;

  shared_index_informer(boost::asio::any_io_executor ex, std::shared_ptr<lister_watcher<T>> lw,
                        informer_params<T> options = {})
      : base_(std::move(ex)),
        strand_(kube::make_strand_executor(base_)),
        o_(std::move(options)),
        cache_(std::make_shared<indexer<T>>(o_.key, std::move(o_.indexers))),
        fifo_(o_.key, cache_.get()),
        reflector_(std::move(lw), fifo_, reflector_opts()),
        clk_(reflector_.options().clk),
        sync_cv_(strand_, boost::asio::steady_timer::time_point::max()),
        rv_cv_(strand_, boost::asio::steady_timer::time_point::max()),
        check_period_(o_.default_resync),
        delivery_(
            std::make_shared<delivery>(o_.name, o_.log, o_.handler_backlog_warning, o_.on_handler_backlog, o_.metrics)),
        room_cv_(std::make_shared<boost::asio::steady_timer>(strand_, boost::asio::steady_timer::time_point::max())) {
    delivery_->limit = o_.handler_queue_limit;
    delivery_->overflow = o_.handler_overflow;
    if (o_.handler_queue_limit != 0 && o_.handler_overflow == handler_overflow_policy::coalesce) {
      delivery_->key = o_.key;
    }
    // A blocked informer waits on room_cv_; a handler's strand wakes it
    // (the timer outlives the informer while a wake is posted).
    delivery_->wake = [room = std::weak_ptr<boost::asio::steady_timer>(room_cv_), strand = strand_] {
      boost::asio::post(strand, [room] {
        if (auto r = room.lock()) {
          r->cancel();
        }
      });
    };
  }

  shared_index_informer(const shared_index_informer&) = delete;
  shared_index_informer& operator=(const shared_index_informer&) = delete;
  ~shared_index_informer() { drop_all_pending(); }

  [[nodiscard]] const executor_type& get_executor() const noexcept { return strand_; }

  /// Adds a handler (any thread); see handler_params.
  std::shared_ptr<handler_registration> add_handler(event_handler<T> h, handler_params p = {}) {
    auto reg = std::make_shared<handler_registration>(next_id_.fetch_add(1),
                                                      kube::make_strand_executor(p.executor ? p.executor : base_));
    const auto resync = p.resync.value_or(o_.default_resync);
    boost::asio::post(strand_,
                      [this, alive = std::weak_ptr<const bool>(alive_), reg, h = std::move(h), resync]() mutable {
                        if (!alive.expired()) {
                          do_add(reg, std::move(h), resync);
                        }
                      });
    return reg;
  }
  /// Removes a handler (any thread): once this returns, the handler is
  /// called no more (one notification may still be running on its strand).
  void remove_handler(const std::shared_ptr<handler_registration>& reg) {
    if (!reg) {
      return;
    }
    reg->removed_.store(true, std::memory_order_release);
    // `alive_` guards the common case of removing a handler and then
    // destroying the informer before the strand runs this.
    boost::asio::post(strand_, [this, alive = std::weak_ptr<const bool>(alive_), id = reg->id()] {
      if (alive.expired()) {
        return;
      }
      const auto is = [id](const std::shared_ptr<listener>& l) { return l->reg->id() == id; };
      for (auto& l : listeners_) {
        if (is(l)) {
          l->drop_pending();
        }
      }
      std::erase_if(listeners_, is);
      std::erase_if(syncing_, is);
      room_cv_->cancel();  // an informer blocked on this handler goes on
    });
  }

  /// Runs the reflector, the processor and the resync timer until
  /// cancelled. Completion: void(error_code): operation_aborted once
  /// cancelled; client_errc::already_running if already running.
  template <class Token = kube::use_awaitable_t>
  auto async_run(Token&& token = {}) {
    return kube::async_spawn(
        strand_, [this] { return run(); }, std::forward<Token>(token));
  }

  /// Completes (void(error_code)) once has_synced(); operation_aborted if
  /// cancelled first.
  template <class Token = kube::use_awaitable_t>
  auto async_wait_for_sync(Token&& token = {}) {
    return kube::async_spawn(
        strand_, [this] { return wait_for_sync(); }, std::forward<Token>(token));
  }

  /// Completes (void(error_code)) once the cache has observed
  /// resourceVersion `rv` of this resource, or a newer one: every change up
  /// to `rv` that this informer watches is in the cache, and was queued for
  /// the handlers. Use it after a write, with the resourceVersion the
  /// server gave the written object, before reading the cache.
  ///
  /// The cache's resourceVersion is the reflector's last one (a list, a
  /// watch event, a bookmark) once everything the reflector received has
  /// been applied to the cache: while deltas wait in the FIFO it stays
  /// where it was. resourceVersions are compared as numbers (see
  /// kube/resource_version.hpp: guaranteed since Kubernetes 1.35, always
  /// so with etcd).
  ///
  /// Errors: errc::invalid_argument when `rv` is not such a number, or the
  /// server's resourceVersions are not (checked once the informer has
  /// one); client_errc::not_running when the informer stops, or has run and
  /// stopped; operation_aborted when cancelled. Waits while the informer
  /// has not started yet. The informer must outlive the operation.
  template <class Token = kube::use_awaitable_t>
  auto async_wait_for_resource_version(std::string rv, Token&& token = {}) {
    return kube::async_spawn(
        strand_, [this, rv = std::move(rv)] { return wait_for_resource_version(rv); }, std::forward<Token>(token));
  }

  /// The resourceVersion the cache has observed (see
  /// async_wait_for_resource_version); empty before the first sync. On the
  /// informer's strand only: from elsewhere, wait instead.
  [[nodiscard]] const std::string& observed_resource_version() const noexcept { return observed_rv_; }

  /// True once the first list is in the cache (the handlers may still be
  /// running for it: see handler_registration::has_synced).
  [[nodiscard]] bool has_synced() const noexcept { return synced_.load(std::memory_order_acquire); }

  /// How many notifications ended with an exception from a handler (each is
  /// logged through informer_params::log). Safe from any thread.
  [[nodiscard]] std::uint64_t handler_errors() const noexcept {
    return delivery_->errors.load(std::memory_order_relaxed);
  }

  /// The cache; safe to read from any thread.
  [[nodiscard]] std::shared_ptr<const indexer<T>> cache() const noexcept { return cache_; }
  [[nodiscard]] lister<T> make_lister(labels_func<T> labels = {}) const { return lister<T>(cache_, std::move(labels)); }

  /// Adds indexes; only before async_run (std::logic_error after).
  void add_indexers(index_funcs<T> more) {
    if (started_.load()) {
      throw std::logic_error("shared_index_informer: add_indexers after start");
    }
    cache_->add_indexers(std::move(more));
  }

  /// The reflector (strand only): stats, last synced resourceVersion.
  [[nodiscard]] const reflector<T>& get_reflector() const noexcept { return reflector_; }
  [[nodiscard]] std::chrono::milliseconds resync_check_period() const noexcept { return check_period_; }

private:
  // What every listener shares with the informer; it outlives the informer
  // while a delivery is queued on a handler's strand.
  struct delivery {
    std::string name;
    kube::logger log;
    std::size_t backlog_warning;
    std::function<void(const handler_backlog&)> on_backlog;
    std::shared_ptr<kube::metrics::informer_metrics> metrics;
    std::atomic<std::uint64_t> errors{0};
    std::size_t limit = 0;  // informer_params::handler_queue_limit
    handler_overflow_policy overflow = handler_overflow_policy::block;
    key_func<T> key = {};             // coalesce: the object's key
    std::function<void()> wake = {};  // block: a full queue took a notification

    delivery(std::string n, kube::logger l, std::size_t w, std::function<void(const handler_backlog&)> b,
             std::shared_ptr<kube::metrics::informer_metrics> m)
        : name(std::move(n)),
          log(std::move(l)),
          backlog_warning(w),
          on_backlog(std::move(b)),
          metrics(std::move(m)) {}

    // A handler that throws loses that one notification: the exception is
    // logged and counted, and the informer and the other handlers go on
    // (client-go lets the panic crash the process; docs/guides/informer.md).
    template <class F>
    void call(F&& f) {
      if (metrics) {
        const auto start = std::chrono::steady_clock::now();
        const bool ok = try_call(std::forward<F>(f));
        metrics->on_handler(std::chrono::steady_clock::now() - start, !ok);
      } else {
        try_call(std::forward<F>(f));
      }
    }

    template <class F>
    bool try_call(F&& f) {
      std::string what;
      try {
        std::forward<F>(f)();
        return true;
      } catch (const std::exception& e) {
        what = e.what();
      } catch (...) {
        what = "an exception not derived from std::exception";
      }
      errors.fetch_add(1, std::memory_order_relaxed);
      log.log(log_level::error, name + ": an event handler threw (the notification is dropped for it): " + what);
      return false;
    }
  };

  struct add_note {
    object_ptr obj;
    bool is_initial_list;
  };
  struct update_note {
    object_ptr old_obj, new_obj;
  };
  struct synced_note {};  // every notification before it was delivered
  using note = std::variant<add_note, update_note, deleted_object<T>, synced_note>;

  // One handler and its queue (client-go's processorListener). The queue
  // is filled on the informer's strand and emptied on the handler's.
  struct listener : std::enable_shared_from_this<listener> {
    static constexpr int batch = 64;  // notifications per turn on the strand

    std::shared_ptr<handler_registration> reg;
    event_handler<T> h;
    std::shared_ptr<delivery> d;
    clock::duration resync{};         // informer strand
    clock::time_point next_resync{};  // informer strand
    // One object's change folded (handler_overflow_policy::coalesce).
    struct folded_change {
      object_ptr seen;                           // the state the handler knew before; null: none
      object_ptr latest;                         // null once deleted
      std::optional<deleted_object<T>> delete_;  // the latest change was this delete
      bool initial = false;                      // an add of the initial list
    };

    std::mutex mu;
    std::deque<note> q;      // mu
    bool scheduled = false;  // mu: a drain is posted or running
    bool warned = false;     // mu: the backlog warning was given since the queue was last empty
    bool full = false;       // mu: block: the queue reached the limit, the informer may wait
    // coalesce: while not empty, every notification is folded here (q is
    // then empty); the drain takes them all at once.
    std::vector<std::string> fold_order;                    // mu: keys, by first change
    std::unordered_map<std::string, folded_change> folded;  // mu
    bool fold_synced = false;                               // mu: a synced_note was folded

    [[nodiscard]] std::size_t length() const noexcept { return q.size() + fold_order.size(); }  // mu
    // The informer's strand: this queue holds the limit (block).
    [[nodiscard]] bool is_full() const noexcept {
      return d->limit != 0 && !reg->removed_.load(std::memory_order_acquire) &&
             reg->pending_.load(std::memory_order_relaxed) >= d->limit;
    }

    void fold(note&& n) {  // mu
      if (std::holds_alternative<synced_note>(n)) {
        fold_synced = true;
        return;
      }
      std::string key;
      if (const auto* a = std::get_if<add_note>(&n)) {
        key = d->key(*a->obj);
      } else if (const auto* u = std::get_if<update_note>(&n)) {
        key = d->key(*u->new_obj);
      } else {
        const auto& del = std::get<deleted_object<T>>(n);
        if (const auto* t = std::get_if<deleted_final_state_unknown<T>>(&del)) {
          key = t->key;
        } else {
          key = d->key(*object_of(del));
        }
      }
      auto [it, fresh] = folded.try_emplace(key);
      if (fresh) {
        fold_order.push_back(std::move(key));
      }
      auto& c = it->second;
      if (auto* a = std::get_if<add_note>(&n)) {
        if (fresh) {
          c.initial = a->is_initial_list;
        }
        c.latest = std::move(a->obj);
        c.delete_.reset();
      } else if (auto* u = std::get_if<update_note>(&n)) {
        if (fresh) {
          c.seen = std::move(u->old_obj);
        }
        c.latest = std::move(u->new_obj);
        c.delete_.reset();
      } else {
        auto& del = std::get<deleted_object<T>>(n);
        if (fresh) {
          c.seen = object_of(del);
        }
        c.latest.reset();
        c.delete_ = std::move(del);
      }
    }

    listener(std::shared_ptr<handler_registration> r, event_handler<T> hh, std::shared_ptr<delivery> dd,
             clock::duration rs, clock::time_point next)
        : reg(std::move(r)),
          h(std::move(hh)),
          d(std::move(dd)),
          resync(rs),
          next_resync(next) {}

    void push(note n) {
      if (reg->removed_.load(std::memory_order_acquire)) {
        return;
      }
      bool post = false;
      std::size_t warn_at = 0;
      std::size_t size = 0;
      {
        const std::lock_guard lock(mu);
        if (!fold_order.empty()) {
          fold(std::move(n));
        } else {
          q.push_back(std::move(n));
          if (d->limit != 0 && q.size() >= d->limit) {
            if (d->overflow == handler_overflow_policy::coalesce) {
              for (auto& queued : q) {
                fold(std::move(queued));
              }
              q.clear();
            } else {
              full = true;
            }
          }
        }
        size = length();
        reg->pending_.store(size, std::memory_order_relaxed);
        if (size > reg->max_pending_.load(std::memory_order_relaxed)) {
          reg->max_pending_.store(size, std::memory_order_relaxed);
        }
        if (!warned && d->backlog_warning != 0 && size >= d->backlog_warning) {
          warned = true;
          warn_at = size;
        }
        post = !scheduled;
        scheduled = true;
        report_length(size);
      }
      if (warn_at != 0) {
        backlog(warn_at);
      }
      if (post) {
        boost::asio::post(reg->strand_, [self = this->shared_from_this()] { self->drain(); });
      }
    }

    // The queue's length to the metrics, under `mu`: reports from the
    // informer's strand and the handler's then reach the gauge in the order
    // the queue changed (else a push's report could land after the drain's
    // 0 and leave a stale length).
    void report_length(std::size_t n) {  // mu
      if (d->metrics) {
        d->metrics->on_handler_queue(reg->id(), n);
      }
    }

    void backlog(std::size_t pending) {
      if (d->on_backlog) {
        d->call([&] { d->on_backlog(handler_backlog{reg->id(), pending}); });
      } else {
        d->log.log(log_level::warning, d->name + ": event handler " + std::to_string(reg->id()) + " has " +
                                           std::to_string(pending) +
                                           " notifications waiting (it is slower than the events; none is dropped)");
      }
    }

    void drop_pending() {
      const std::lock_guard lock(mu);
      q.clear();
      fold_order.clear();
      folded.clear();
      fold_synced = false;
      reg->pending_.store(0, std::memory_order_relaxed);
      report_length(0);
    }

    // On the handler's strand.
    void drain() {
      for (int i = 0; i < batch; ++i) {
        note n;
        std::vector<std::string> order;
        std::unordered_map<std::string, folded_change> changes;
        bool synced = false;
        bool room = false;
        {
          const std::lock_guard lock(mu);
          if (!fold_order.empty()) {
            order.swap(fold_order);
            changes.swap(folded);
            synced = std::exchange(fold_synced, false);
          } else if (q.empty()) {
            scheduled = false;
            warned = false;
            report_length(0);
            return;
          } else {
            n = std::move(q.front());
            q.pop_front();
            if (full && q.size() < d->limit) {
              full = false;
              room = true;
            }
          }
          reg->pending_.store(length(), std::memory_order_relaxed);
        }
        if (room) {
          d->wake();
        }
        if (reg->removed_.load(std::memory_order_acquire)) {
          continue;
        }
        if (order.empty()) {
          deliver(n);
          continue;
        }
        for (const auto& key : order) {
          deliver_folded(changes.at(key));
        }
        if (synced) {
          reg->mark_synced();
        }
      }
      {
        const std::lock_guard lock(mu);
        report_length(length());
      }
      boost::asio::post(reg->strand_, [self = this->shared_from_this()] { self->drain(); });
    }

    void deliver_folded(const folded_change& c) {
      if (c.delete_) {
        if (c.seen && h.on_delete) {  // else added and deleted within the fold: nothing to say
          d->call([&] { h.on_delete(*c.delete_); });
        }
      } else if (!c.seen) {
        if (h.on_add) {
          d->call([&] { h.on_add(c.latest, c.initial); });
        }
      } else if (h.on_update) {
        d->call([&] { h.on_update(c.seen, c.latest); });
      }
    }

    void deliver(const note& n) {
      if (const auto* a = std::get_if<add_note>(&n)) {
        if (h.on_add) {
          d->call([&] { h.on_add(a->obj, a->is_initial_list); });
        }
      } else if (const auto* u = std::get_if<update_note>(&n)) {
        if (h.on_update) {
          d->call([&] { h.on_update(u->old_obj, u->new_obj); });
        }
      } else if (const auto* del = std::get_if<deleted_object<T>>(&n)) {
        if (h.on_delete) {
          d->call([&] { h.on_delete(*del); });
        }
      } else {
        reg->mark_synced();
      }
    }
  };

  void drop_all_pending() {
    for (auto& l : listeners_) {
      l->drop_pending();
    }
  }

  reflector_params<T> reflector_opts() {
    auto r = o_.reflector;
    r.name = o_.name;
    r.transform = o_.transform;
    r.on_watch_error = o_.on_watch_error;
    if (!r.on_watch_error) {
      // As client-go's default handler: every failed attempt is logged,
      // so an outage or a refusal (RBAC, a bad certificate) is not silent.
      r.on_watch_error = [log = o_.log, name = o_.name](const watch_failure& f) {
        if (!log.enabled(log_level::warning)) return;
        log.log(log_level::warning, name + ": " + kube::error_message(f.ec, f.diag) + "; retrying in " +
                                        std::to_string(f.retry_in.count()) + " ms" +
                                        (f.relist ? " with a relist" : ""));
      };
    }
    r.key = o_.key;
    r.after_replace = [this] {
      if (o_.metrics) {
        o_.metrics->on_queued(fifo_.size());
      }
      check_synced();
    };
    r.after_resource_version = [this] { advance_observed(); };  // a bookmark with nothing queued
    r.metrics = o_.metrics;
    if (!r.clk) {
      r.clk = default_clock();
    }
    return r;
  }

  void do_add(const std::shared_ptr<handler_registration>& reg, event_handler<T> h, std::chrono::milliseconds resync) {
    if (resync.count() > 0) {
      resync = std::max(resync, std::chrono::milliseconds(std::chrono::seconds(1)));
      if (!running_) {
        if (check_period_.count() == 0 || resync < check_period_) {
          check_period_ = resync;
        }
      } else if (resync < check_period_) {
        resync = check_period_;
      }
    }
    auto l = std::make_shared<listener>(reg, std::move(h), delivery_, resync, clk_->now() + resync);
    listeners_.push_back(l);
    if (running_) {
      for (auto& obj : cache_->list()) {
        l->push(add_note{std::move(obj), true});
      }
    }
    if (has_synced()) {
      l->push(synced_note{});
    }
  }

  boost::asio::awaitable<void> run() {
    if (running_) {
      throw boost::system::system_error(make_error_code(client_errc::already_running));
    }
    running_ = true;
    started_.store(true);
    struct reset {
      shared_index_informer* self;
      ~reset() {
        self->running_ = false;
        self->drop_all_pending();
        self->rv_cv_.cancel();  // its waiters fail: not running
      }
    } r{this};
    using namespace boost::asio::experimental::awaitable_operators;
    co_await (reflector_.run() && process_loop() && resync_loop());
  }

  boost::asio::awaitable<void> process_loop() {
    // Yields the strand's thread after this many deltas in a row, so that
    // handlers sharing the thread drain their queues during a burst (an
    // initial list) instead of after it. Never between a pop and its
    // processing: the reflector's replace reads the cache.
    constexpr std::size_t turn = 64;
    std::size_t in_turn = 0;
    for (;;) {
      if (in_turn >= turn) {
        in_turn = 0;
        co_await boost::asio::post(strand_, boost::asio::use_awaitable);
      }
      auto dl = fifo_.try_pop();
      if (!dl) {
        in_turn = 0;
        auto [ec, popped] = co_await fifo_.async_pop(boost::asio::as_tuple(boost::asio::use_awaitable));
        if (ec) {
          throw boost::system::system_error(ec);
        }
        dl = std::move(popped);
      }
      in_turn += dl->deltas.size();
      if (o_.metrics) {
        const auto start = std::chrono::steady_clock::now();
        process(*dl);
        o_.metrics->on_processed(std::chrono::steady_clock::now() - start);
        o_.metrics->on_queued(fifo_.size());
      } else {
        process(*dl);
      }
      check_synced();
      advance_observed();
      if (o_.handler_queue_limit != 0 && o_.handler_overflow == handler_overflow_policy::block) {
        // Blocked: a handler's queue holds the limit. room_cv_ is cancelled
        // when such a queue gives one up, or a handler is removed.
        co_await kube::wait_until(*room_cv_, [this] {
          return std::none_of(listeners_.begin(), listeners_.end(), [](const auto& l) { return l->is_full(); });
        });
      }
    }
  }

  // The cache covers the reflector's resourceVersion once the FIFO is
  // empty (each pop is processed before anything else runs on the strand).
  void advance_observed() {
    if (!fifo_.empty()) {
      return;
    }
    const std::string& last = reflector_.last_sync_resource_version();
    if (last.empty() || last == observed_rv_) {
      return;
    }
    // Never backwards (a relist may come back with an older list).
    const auto order = compare_resource_versions(last, observed_rv_);
    if (observed_rv_.empty() || !order || *order == std::strong_ordering::greater) {
      observed_rv_ = last;
      rv_cv_.cancel();
    }
  }

  boost::asio::awaitable<void> wait_for_resource_version(std::string rv) {
    if (!is_ordered_resource_version(rv)) {
      throw boost::system::system_error(make_error_code(boost::system::errc::invalid_argument),
                                        o_.name + ": resourceVersion \"" + rv + "\" is not a decimal number");
    }
    co_await kube::wait_until(rv_cv_, [this, &rv] {  // rv_cv_ cancelled by advance_observed and at the stop
      if (!running_ && started_.load()) {
        throw boost::system::system_error(make_error_code(client_errc::not_running),
                                          o_.name + ": the informer stopped");
      }
      if (observed_rv_.empty()) {
        return false;
      }
      const auto order = compare_resource_versions(observed_rv_, rv);
      if (!order) {
        throw boost::system::system_error(make_error_code(boost::system::errc::invalid_argument),
                                          o_.name + ": the server's resourceVersion \"" + observed_rv_ +
                                              "\" is not a number; it cannot be ordered");
      }
      return *order != std::strong_ordering::less;
    });
  }

  boost::asio::awaitable<void> resync_loop() {
    if (check_period_.count() == 0) {
      co_return;
    }
    for (;;) {
      co_await sleep(*clk_, check_period_);
      if (should_resync()) {
        fifo_.resync();
      }
    }
  }

  bool should_resync() {
    syncing_.clear();
    const auto now = clk_->now();
    bool any = false;
    for (auto& l : listeners_) {
      if (l->resync.count() > 0 && now >= l->next_resync) {
        any = true;
        syncing_.push_back(l);
        l->next_resync = now + l->resync;
      }
    }
    return any;
  }

  void check_synced() {
    if (!synced_.load(std::memory_order_relaxed) && fifo_.has_synced()) {
      synced_.store(true, std::memory_order_release);
      sync_cv_.cancel();
      for (auto& l : listeners_) {
        l->push(synced_note{});
      }
    }
  }

  boost::asio::awaitable<void> wait_for_sync() {
    return kube::wait_until(sync_cv_, [this] { return has_synced(); });  // sync_cv_ cancelled by check_synced
  }

  static bool same_version(const T& a, const T& b) {
    if constexpr (has_resource_version<T>) {
      const auto ra = a.resource_version();
      const auto rb = b.resource_version();
      return std::string_view(ra) == std::string_view(rb);
    } else {
      return false;
    }
  }

  // client-go's processDeltas + sharedIndexInformer.OnAdd/OnUpdate/OnDelete.
  void process(const delta_list<T>& dl) {
    for (const auto& d : dl.deltas) {
      switch (d.type) {
      case delta_type::sync:
      case delta_type::replaced:
      case delta_type::added:
      case delta_type::updated: {
        const auto& obj = d.obj();
        auto old = cache_->get_by_key(dl.key);
        if (old) {
          cache_->update(obj);
          const bool is_sync = same_version(*old, *obj);
          distribute(is_sync, update_note{std::move(old), obj});
        } else {
          cache_->add(obj);
          distribute(false, add_note{obj, dl.is_in_initial_list});
        }
        break;
      }
      case delta_type::deleted: {
        cache_->remove_by_key(dl.key);
        distribute(false, note(std::in_place_type<deleted_object<T>>, d.object));
        break;
      }
      }
    }
  }

  void distribute(bool is_sync, const note& n) {
    // No copy of the list: add_handler and remove_handler only post their
    // change to this strand, so it does not change while it is walked.
    for (const auto& l : is_sync ? syncing_ : listeners_) {
      l->push(n);
    }
  }

  std::shared_ptr<const bool> alive_ = std::make_shared<const bool>(true);  // see remove_handler
  boost::asio::any_io_executor base_;
  executor_type strand_;
  informer_params<T> o_;
  std::shared_ptr<indexer<T>> cache_;
  delta_fifo<T> fifo_;
  reflector<T> reflector_;
  std::shared_ptr<const clock> clk_;
  boost::asio::steady_timer sync_cv_;
  boost::asio::steady_timer rv_cv_;  // cancelled when observed_rv_ moves or the informer stops
  std::string observed_rv_;          // see async_wait_for_resource_version
  std::chrono::milliseconds check_period_;
  std::shared_ptr<delivery> delivery_;
  std::shared_ptr<boost::asio::steady_timer> room_cv_;  // see process_loop (block)
  std::vector<std::shared_ptr<listener>> listeners_;
  std::vector<std::shared_ptr<listener>> syncing_;
  std::atomic<bool> synced_{false};
  std::atomic<bool> started_{false};
  std::atomic<std::uint64_t> next_id_{1};
  bool running_ = false;
};

}  // namespace kube::informer
