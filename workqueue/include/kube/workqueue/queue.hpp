#pragma once

// queue<T>: client-go's work queue (util/workqueue Typed[T]) for worker
// coroutines.
//
// Rules (the same as client-go):
//   - an item added while it waits is stored once;
//   - an item added while a worker holds it is not handed to another worker;
//     it is queued again when that worker calls done();
//   - items are handed out in the order they became ready;
//   - after shutdown(), add() is ignored, async_get() still hands out what is
//     queued, then completes with errc::shut_down; done() keeps working;
//   - async_shutdown_with_drain() also waits until no item is being processed.
//
// Threads. Workers are coroutines on the queue's executor, which must not run
// two handlers at once (an io_context run by one thread, or a strand).
//   - any thread: add(), shutdown(), async_shutdown_with_drain(), len(),
//     shutting_down();
//   - the executor only: async_get(), done() (and, in the derived queues,
//     add_rate_limited(), forget(), num_requeues()).
// add() called on the executor updates the queue directly. From any other
// thread it pushes onto a lock-free stack (one compare-and-swap); the first
// push onto an empty stack posts one drain to the executor, which applies
// all pending adds in call order; shutdown() applies them first. So nothing
// on the consumer path takes a mutex. "On the executor" is asked through
// public Asio (running_in_this_thread() of an io_context executor or a
// strand); any other executor is treated as another thread.
//
// async_get completes with (error_code, T): an item, errc::shut_down, or
// asio::error::operation_aborted when cancelled through its cancellation slot
// (any cancellation type). An item is only taken at the moment the operation
// completes successfully, so a cancelled async_get never loses one. Once
// async_get has completed with an item, that item is the caller's until done().
// Completions are posted (never invoked inside async_get) to the token's
// associated executor. Default token: kube::use_awaitable, the SDK's one
// default (here an asio::deferred operation), so `co_await q.async_get()`
// works in an asio::awaitable and `q.async_get(token)` with any other token
// (as_tuple(...), callbacks, use_future).
//
// A parked async_get counts as outstanding work on the executor, like a
// pending socket read: io_context::run() returns once the queue is shut down
// and the workers have left.

#include <kube/workqueue/detail/queue_impl.hpp>
#include <kube/workqueue/queue_params.hpp>
#include <kube/use_awaitable.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>

#include <concepts>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <utility>

namespace kube::workqueue {

/// What an item must be: a value that is hashed and compared (a key such as
/// "namespace/name"), copyable, and default-constructible (the value that
/// accompanies an error).
template <class T, class Hash, class KeyEqual>
concept queue_item = std::copy_constructible<T> && std::default_initializable<T> &&
    std::is_invocable_r_v<std::size_t, const Hash&, const T&> &&
    std::is_invocable_r_v<bool, const KeyEqual&, const T&, const T&>;

template <class T, class Hash = std::hash<T>, class KeyEqual = std::equal_to<T>>
  requires queue_item<T, Hash, KeyEqual>
class queue {
public:
  using executor_type = boost::asio::any_io_executor;
  using value_type = T;
  using duration = clock::duration;

  explicit queue(executor_type ex, queue_params params = {})
      : impl_(std::make_shared<impl_type>(std::move(ex), std::move(params))) {
    impl_->start();
  }

  queue(const queue&) = delete;
  queue& operator=(const queue&) = delete;
  queue(queue&&) noexcept = default;
  queue& operator=(queue&&) noexcept = default;

  /// Shuts the queue down: parked workers get errc::shut_down.
  ~queue() {
    if (impl_) impl_->shutdown();
  }

  [[nodiscard]] executor_type get_executor() const noexcept { return impl_->executor(); }
  [[nodiscard]] const clock& time_source() const noexcept { return impl_->time_source(); }

  /// Marks `item` as needing processing. Any thread. Ignored after shutdown.
  /// On the executor the item is copied only if it is not queued or held
  /// already.
  void add(const T& item) { impl_->add(item); }
  void add(T&& item) { impl_->add(std::move(item)); }

  /// The next ready item, synchronously: if one is queued it is taken (the
  /// caller holds it until done()) and returned; otherwise nullopt (nothing
  /// queued, or shut down and drained) and nothing changes. Executor only.
  /// Not a completion: a worker loop calls it first and awaits async_get()
  /// only when it returns nullopt, so a busy queue never round-trips through
  /// the executor's handler queue:
  ///
  ///   for (;;) {
  ///     std::optional<T> item = q.try_get();
  ///     if (!item) {
  ///       auto [ec, got] = co_await q.async_get(asio::as_tuple(asio::deferred));
  ///       if (ec) break;  // shut down (or cancelled)
  ///       item = std::move(got);
  ///     }
  ///     ... process *item ...; q.done(*item);
  ///   }
  ///
  /// A worker that processes without suspending in between keeps the
  /// executor until the queue is empty, as a Go worker keeps its thread.
  [[nodiscard]] std::optional<T> try_get() { return impl_->try_get(); }

  /// Waits for an item. Executor only. Signature void(error_code, T).
  template <boost::asio::completion_token_for<void(error_code, T)> Token = kube::use_awaitable_t>
  auto async_get(Token&& token = {}) {
    return boost::asio::async_initiate<Token, void(error_code, T)>(
        [](auto handler, impl_type* impl) { impl->initiate_get(std::move(handler)); }, token, impl_.get());
  }

  /// The worker is finished with `item` (got from async_get). If it was
  /// added again meanwhile, it is queued again now. Executor only. An item
  /// not held by a worker is ignored.
  void done(const T& item) { impl_->done(item); }

  /// Items waiting to be handed out (not those being processed, nor those
  /// waiting for a delay). Exact on the executor; from other threads a
  /// recent value.
  [[nodiscard]] std::size_t len() const noexcept { return impl_->len(); }

  /// Stops accepting items; parked workers get errc::shut_down; queued items
  /// are still handed out. Releases async_shutdown_with_drain waiters.
  /// Any thread (takes effect on the executor; add() is refused at once).
  void shutdown() { impl_->shutdown(); }

  /// shutdown(), then completes (void(error_code)) once no item is being
  /// processed, or when shutdown() is called. Workers must keep calling
  /// done(). Any thread. The wait is not cancellable (as in client-go).
  template <boost::asio::completion_token_for<void(error_code)> Token = kube::use_awaitable_t>
  auto async_shutdown_with_drain(Token&& token = {}) {
    return boost::asio::async_initiate<Token, void(error_code)>(
        [](auto handler, impl_type* impl) {
          impl->shutdown_with_drain(typename impl_type::drain_handler(std::move(handler)));
        },
        token, impl_.get());
  }

  /// Any thread.
  [[nodiscard]] bool shutting_down() const noexcept { return impl_->shutting_down(); }

  /// Reports unfinished work to the metrics hooks now. Executor only.
  void update_unfinished_work() { impl_->update_unfinished_work(); }

protected:
  using impl_type = detail::queue_impl<T, Hash, KeyEqual>;
  std::shared_ptr<impl_type> impl_;
};

}  // namespace kube::workqueue
