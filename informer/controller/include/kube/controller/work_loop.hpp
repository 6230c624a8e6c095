#pragma once

// work_loop: N worker coroutines over a rate-limited workqueue of string
// keys, each running a reconcile coroutine and applying its answer
// (client-go's controller loop, controller-runtime's processNextWorkItem).
// It knows nothing about Kubernetes objects: controller<T> puts informers in
// front of it, and unit tests drive it alone with a manual clock.
//
// Per key, after its reconcile:
//   done            -> forget(key)
//   requeue_after d -> forget(key); add_after(key, d)        (d <= 0: as requeue)
//   requeue         -> add_rate_limited(key)
//   error / throw   -> add_rate_limited(key)  (default controller limiter:
//                      5 ms doubling per key up to 1000 s, 10 qps / burst 100 overall)
//   and always done(key), so a key added during its reconcile runs again after.
// A key is never reconciled by two workers at once: the workqueue hands a key
// to one worker until done(key) (a key added meanwhile is held back).
//
// async_run(reconcile, ready, token): awaits `ready` (e.g. "every informer
// has synced") before the first reconcile, then runs the workers until
// cancelled (terminal cancellation through the token's slot). Shutdown is
// graceful: no new reconcile starts, the queue is shut down (queued and
// delayed keys are dropped; the next start finds them again through the
// informers' initial list), and async_run completes — with
// asio::error::operation_aborted — only after every in-flight reconcile has
// finished. Reconciles are not cancelled. One-shot: a second async_run
// completes with client_errc::already_running.
//
// Threads: the workers and the queue live on one strand of the executor
// given to the constructor; reconciles run there too (their I/O completes
// back on it), so reconciles interleave at co_await points and must not
// block. enqueue()/enqueue_after() and stats() may be called from any
// thread. The work_loop must outlive its async_run.

#include <kube/base/metrics.hpp>
#include <kube/controller/reconcile.hpp>
#include <kube/base/strand.hpp>
#include <kube/async.hpp>
#include <kube/workqueue/rate_limited_queue.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace kube::controller {

/// What one reconcile did (for logs, metrics and tests).
struct reconcile_outcome {
  std::string key;
  reconcile_result::action action = reconcile_result::action::done;
  std::chrono::steady_clock::duration requeue_after{};  ///< for action::requeue_after
  std::string error;  ///< for action::error: the exception's what(), or the result's message / code
  int retries = 0;    ///< the key's failures since its last success (after this reconcile)
  std::chrono::steady_clock::duration took{};  ///< by the queue's clock
  unsigned worker = 0;                         ///< 1-based
};

/// Counters (read from any thread).
struct work_loop_stats {
  std::uint64_t reconciles = 0;  ///< finished reconciles
  std::uint64_t succeeded = 0;   ///< done / requeue / requeue_after
  std::uint64_t failed = 0;      ///< error or exception
  std::uint64_t requeued = 0;    ///< requeue or requeue_after
  unsigned in_flight = 0;        ///< reconciles running now
  unsigned max_in_flight = 0;    ///< the most ever running at once
};

struct work_loop_params {
  std::string name = "controller";
  /// Worker coroutines (>= 1; std::invalid_argument otherwise).
  unsigned workers = 1;
  /// Makes the queue's rate limiter; empty: the default controller limiter.
  std::function<std::unique_ptr<workqueue::rate_limiter<std::string>>()> rate_limiter = {};
  /// The queue's clock (tests: a kube::manual_clock) and metrics hooks.
  workqueue::queue_params queue = {};
  /// Called on the strand after every reconcile (logging). Must not throw
  /// (exceptions are swallowed).
  std::function<void(const reconcile_outcome&)> on_reconciled = {};
  /// Where the reconciles (controller(name)) and the queue
  /// (workqueue(name), unless queue.metrics is set) are reported
  /// (kube/base/metrics.hpp). controller<T> built on an informer_factory
  /// takes its client's provider when this is null. Null: none.
  std::shared_ptr<kube::metrics::provider> metrics = nullptr;
};

class work_loop {
public:
  using reconcile_fn = std::function<boost::asio::awaitable<reconcile_result>(const std::string& key)>;
  using ready_fn = std::function<boost::asio::awaitable<void>()>;
  /// A strand over the executor given (kube::make_strand_executor).
  using executor_type = boost::asio::any_io_executor;

  explicit work_loop(const boost::asio::any_io_executor& ex, work_loop_params options = {});
  work_loop(const work_loop&) = delete;
  work_loop& operator=(const work_loop&) = delete;
  ~work_loop();

  [[nodiscard]] const executor_type& get_executor() const noexcept { return strand_; }
  [[nodiscard]] const work_loop_params& options() const noexcept { return opts_; }

  /// Queues `key` (any thread; ignored after shutdown).
  void enqueue(const std::string& key) { queue_->add(key); }
  /// Queues `key` once `d` has passed (any thread).
  void enqueue_after(const std::string& key, std::chrono::steady_clock::duration d) { queue_->add_after(key, d); }

  /// The queue (its executor-only calls only from the strand).
  [[nodiscard]] workqueue::rate_limited_queue<std::string>& queue() noexcept { return *queue_; }

  [[nodiscard]] work_loop_stats stats() const noexcept;
  /// The controller's metrics hooks (null: none).
  [[nodiscard]] const std::shared_ptr<kube::metrics::controller_metrics>& metrics() const noexcept { return metrics_; }
  /// True once the workers run (ready completed).
  [[nodiscard]] bool started() const noexcept { return workers_started_.load(std::memory_order_acquire); }

  /// Runs until cancelled; see the header comment. Completion void(error_code).
  template <class Token = kube::use_awaitable_t>
  auto async_run(reconcile_fn reconcile, ready_fn ready, Token&& token = {}) {
    return kube::async_spawn(
        strand_,
        [this, r = std::move(reconcile), w = std::move(ready)]() mutable { return run(std::move(r), std::move(w)); },
        std::forward<Token>(token));
  }

private:
  boost::asio::awaitable<void> run(reconcile_fn reconcile, ready_fn ready);
  boost::asio::awaitable<void> worker(unsigned id, const reconcile_fn& reconcile);
  void finish(const std::string& key, reconcile_outcome& out, const reconcile_result* r, const std::string& what);

  executor_type strand_;
  work_loop_params opts_;
  std::unique_ptr<workqueue::rate_limited_queue<std::string>> queue_;
  boost::asio::steady_timer cv_;  // wakes run() when a worker leaves
  unsigned active_ = 0;           // workers running (strand only)
  bool running_ = false;          // strand only
  bool stopping_ = false;         // strand only
  std::atomic<bool> workers_started_{false};
  std::shared_ptr<kube::metrics::controller_metrics> metrics_;  // null: none
  std::atomic<std::uint64_t> reconciles_{0}, succeeded_{0}, failed_{0}, requeued_{0};
  std::atomic<unsigned> in_flight_{0}, max_in_flight_{0};
};

}  // namespace kube::controller
