#pragma once

#include <kube/base/strand.hpp>
#include <kube/informer/clock.hpp>
#include <kube/informer/delta.hpp>
#include <kube/informer/delta_fifo.hpp>
#include <kube/detail/spawn.hpp>
#include <kube/informer/indexer.hpp>
#include <kube/informer/lister.hpp>
#include <kube/informer/lister_watcher.hpp>
#include <kube/informer/reflector.hpp>
#include <kube/logger.hpp>

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
#include <concepts>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace kube::informer {

/// Types with a `resource_version()` accessor.
template <class T>
concept has_resource_version = requires(const T& o) {
  { o.resource_version() } -> std::convertible_to<std::string_view>;
};

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
/// be empty. They run on the informer's strand, one notification at a
/// time, in order; they must not block (hand work to a workqueue).
/// Exceptions they throw are swallowed (and do not stop the informer).
template <class T>
struct event_handler {
  std::function<void(const std::shared_ptr<const T>& obj, bool is_initial_list)> on_add;
  std::function<void(const std::shared_ptr<const T>& old_obj, const std::shared_ptr<const T>& new_obj)> on_update;
  std::function<void(const deleted_object<T>& obj)> on_delete;
};

template <class T>
class shared_index_informer;

/// The handle of one added handler: its own has_synced, and the key to
/// remove it. Thread-safe.
class handler_registration {
public:
  /// True once the informer has synced and this handler has received the
  /// cache's content (late handlers: after their replay of the cache).
  [[nodiscard]] bool has_synced() const noexcept {
    return replayed_.load(std::memory_order_acquire) && informer_synced_->load(std::memory_order_acquire);
  }
  [[nodiscard]] std::uint64_t id() const noexcept { return id_; }

  handler_registration(std::uint64_t id, std::shared_ptr<const std::atomic<bool>> informer_synced)
      : id_(id),
        informer_synced_(std::move(informer_synced)) {}

private:
  template <class>
  friend class shared_index_informer;
  std::uint64_t id_;
  std::shared_ptr<const std::atomic<bool>> informer_synced_;
  std::atomic<bool> replayed_{false};
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
  watch_error_handler on_watch_error = {};
  /// Where an exception thrown by an event handler is logged (at error,
  /// with the informer's name and the exception's message); default:
  /// stderr. See handler_errors().
  kube::logger log = {};
  /// Extra indexes (the namespace index is built in).
  index_funcs<T> indexers = {};
  key_func<T> key = default_key_func<T>();
  /// Reflector tuning (clock, random, backoff, timeouts, page size,
  /// streaming list). Its transform/on_watch_error/key/after_replace are
  /// set from the fields above.
  reflector_params<T> reflector = {};
};

/// client-go's SharedIndexInformer: a Reflector feeding a DeltaFIFO, a
/// processor coroutine applying the deltas to an Indexer and telling every
/// handler, and a resync timer.
///
/// Data flow (all on one strand of the given executor):
///   lister_watcher -> reflector (coroutine) -> delta_fifo -> processor
///   (coroutine) -> indexer (cache) + handlers
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
/// - has_synced() once the first list is in the cache and was delivered.
///
/// Threading: everything mutable lives on the informer's strand; from
/// other threads use add_handler/remove_handler (posted to the strand),
/// has_synced (atomic), async_wait_for_sync, lister()/cache() (the Indexer
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
      : strand_(kube::make_strand_executor(ex)),
        o_(std::move(options)),
        cache_(std::make_shared<indexer<T>>(o_.key, std::move(o_.indexers))),
        fifo_(o_.key, cache_.get()),
        reflector_(std::move(lw), fifo_, reflector_opts()),
        clk_(reflector_.options().clk),
        sync_cv_(strand_, boost::asio::steady_timer::time_point::max()),
        check_period_(o_.default_resync) {}

  shared_index_informer(const shared_index_informer&) = delete;
  shared_index_informer& operator=(const shared_index_informer&) = delete;

  [[nodiscard]] const executor_type& get_executor() const noexcept { return strand_; }

  /// Adds a handler (any thread). Resync period: `resync` (zero: none),
  /// default: informer_params::default_resync.
  std::shared_ptr<handler_registration> add_handler(event_handler<T> h) {
    return add_handler(std::move(h), o_.default_resync);
  }
  std::shared_ptr<handler_registration> add_handler(event_handler<T> h, std::chrono::milliseconds resync) {
    auto reg = std::make_shared<handler_registration>(next_id_.fetch_add(1), synced_);
    boost::asio::post(strand_,
                      [this, alive = std::weak_ptr<const bool>(alive_), reg, h = std::move(h), resync]() mutable {
                        if (!alive.expired()) {
                          do_add(reg, std::move(h), resync);
                        }
                      });
    return reg;
  }
  /// Removes a handler (any thread); no notification reaches it once the
  /// strand has processed the removal.
  void remove_handler(const std::shared_ptr<handler_registration>& reg) {
    if (!reg) {
      return;
    }
    // `alive_` guards the common case of removing a handler and then
    // destroying the informer before the strand runs this.
    boost::asio::post(strand_, [this, alive = std::weak_ptr<const bool>(alive_), id = reg->id()] {
      if (alive.expired()) {
        return;
      }
      std::erase_if(listeners_, [id](const std::shared_ptr<listener>& l) { return l->reg->id() == id; });
    });
  }

  /// Runs the reflector, the processor and the resync timer until
  /// cancelled. Completion: void(error_code): operation_aborted once
  /// cancelled; client_errc::already_running if already running.
  template <class Token = kube::use_awaitable_t>
  auto async_run(Token&& token = {}) {
    return kube::detail::async_spawn(
        strand_, [this] { return run(); }, std::forward<Token>(token));
  }

  /// Completes (void(error_code)) once has_synced(); operation_aborted if
  /// cancelled first.
  template <class Token = kube::use_awaitable_t>
  auto async_wait_for_sync(Token&& token = {}) {
    return kube::detail::async_spawn(
        strand_, [this] { return wait_for_sync(); }, std::forward<Token>(token));
  }

  [[nodiscard]] bool has_synced() const noexcept { return synced_->load(std::memory_order_acquire); }

  /// How many notifications ended with an exception from a handler (each is
  /// logged through informer_params::log). Safe from any thread.
  [[nodiscard]] std::uint64_t handler_errors() const noexcept {
    return handler_errors_.load(std::memory_order_relaxed);
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
  struct listener {
    std::shared_ptr<handler_registration> reg;
    event_handler<T> h;
    clock::duration resync{};
    clock::time_point next_resync{};
  };

  reflector_params<T> reflector_opts() {
    auto r = o_.reflector;
    r.name = o_.name;
    r.transform = o_.transform;
    r.on_watch_error = o_.on_watch_error;
    r.key = o_.key;
    r.after_replace = [this] { check_synced(); };
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
    auto l = std::make_shared<listener>(listener{reg, std::move(h), resync, clk_->now() + resync});
    listeners_.push_back(l);
    if (running_ && l->h.on_add) {
      for (auto& obj : cache_->list()) {
        call([&] { l->h.on_add(obj, true); });
      }
    }
    reg->replayed_.store(true, std::memory_order_release);
  }

  // A handler that throws loses that one notification: the exception is
  // logged and counted, and the informer and the other handlers go on
  // (client-go lets the panic crash the process; docs/guides/informer.md).
  template <class F>
  void call(F&& f) {
    std::string what;
    try {
      std::forward<F>(f)();
      return;
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
      what = "an exception not derived from std::exception";
    }
    handler_errors_.fetch_add(1, std::memory_order_relaxed);
    o_.log.log(log_level::error, o_.name + ": an event handler threw (the notification is dropped for it): " + what);
  }

  boost::asio::awaitable<void> run() {
    if (running_) {
      throw boost::system::system_error(make_error_code(client_errc::already_running));
    }
    running_ = true;
    started_.store(true);
    struct reset {
      shared_index_informer* self;
      ~reset() { self->running_ = false; }
    } r{this};
    using namespace boost::asio::experimental::awaitable_operators;
    co_await (reflector_.run() && process_loop() && resync_loop());
  }

  boost::asio::awaitable<void> process_loop() {
    for (;;) {
      auto dl = fifo_.try_pop();
      if (!dl) {
        auto [ec, popped] = co_await fifo_.async_pop(boost::asio::as_tuple(boost::asio::use_awaitable));
        if (ec) {
          throw boost::system::system_error(ec);
        }
        dl = std::move(popped);
      }
      process(*dl);
      check_synced();
    }
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
    if (!synced_->load(std::memory_order_relaxed) && fifo_.has_synced()) {
      synced_->store(true, std::memory_order_release);
      sync_cv_.cancel();
    }
  }

  boost::asio::awaitable<void> wait_for_sync() {
    while (!has_synced()) {
      auto [ec] = co_await sync_cv_.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
      (void)ec;  // cancel() by check_synced, or our own cancellation (checked below)
      auto cs = co_await boost::asio::this_coro::cancellation_state;
      if (cs.cancelled() != boost::asio::cancellation_type::none) {
        throw boost::system::system_error(boost::asio::error::operation_aborted);
      }
    }
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
          distribute(is_sync, [&](listener& l) {
            if (l.h.on_update) {
              l.h.on_update(old, obj);
            }
          });
        } else {
          cache_->add(obj);
          distribute(false, [&](listener& l) {
            if (l.h.on_add) {
              l.h.on_add(obj, dl.is_in_initial_list);
            }
          });
        }
        break;
      }
      case delta_type::deleted: {
        cache_->remove_by_key(dl.key);
        distribute(false, [&](listener& l) {
          if (l.h.on_delete) {
            l.h.on_delete(d.object);
          }
        });
        break;
      }
      }
    }
  }

  template <class F>
  void distribute(bool is_sync, F&& f) {
    // No copy: a handler that adds or removes handlers only posts the
    // change to this strand, so neither list changes while it is walked.
    for (const auto& l : is_sync ? syncing_ : listeners_) {
      call([&] { f(*l); });
    }
  }

  std::shared_ptr<const bool> alive_ = std::make_shared<const bool>(true);  // see remove_handler
  executor_type strand_;
  informer_params<T> o_;
  std::shared_ptr<indexer<T>> cache_;
  delta_fifo<T> fifo_;
  reflector<T> reflector_;
  std::shared_ptr<const clock> clk_;
  boost::asio::steady_timer sync_cv_;
  std::chrono::milliseconds check_period_;
  std::vector<std::shared_ptr<listener>> listeners_;
  std::vector<std::shared_ptr<listener>> syncing_;
  std::shared_ptr<std::atomic<bool>> synced_ = std::make_shared<std::atomic<bool>>(false);
  std::atomic<bool> started_{false};
  std::atomic<std::uint64_t> next_id_{1};
  std::atomic<std::uint64_t> handler_errors_{0};
  bool running_ = false;
};

}  // namespace kube::informer
