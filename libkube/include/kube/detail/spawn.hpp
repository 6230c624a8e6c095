#pragma once

// Internal: the SDK's one way to run a coroutine as an asynchronous
// operation. Client requests, watches, the leader elector, the event
// recorder, informers and controllers all go through spawn_operation.

#include <kube/detail/initiate.hpp>
#include <kube/error.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/multiple_exceptions.hpp>
#include <boost/asio/prefer.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>

#include <exception>
#include <tuple>
#include <utility>

namespace kube::detail {

/// The error an exception escaping a spawned coroutine means: a
/// system_error's code (operation_aborted after cancellation), the first of
/// several from a parallel group, else errc::state_not_recoverable.
inline error_code error_of(const std::exception_ptr& e) {
  if (!e) return {};
  try {
    std::rethrow_exception(e);
  } catch (const boost::system::system_error& se) {
    return se.code();
  } catch (const boost::asio::multiple_exceptions& me) {
    return error_of(me.first_exception());
  } catch (...) {
    return make_error_code(boost::system::errc::state_not_recoverable);
  }
}

/// Runs `body` (an awaitable, or a function returning one) on `ex` as the
/// operation of `handler`: the handler's cancellation slot reaches the
/// coroutine, its executor (default `ex`) is kept busy until it completes.
/// When the coroutine ends, `finish(std::exception_ptr, R...)` runs on `ex`
/// (it may touch state confined there) and returns the handler's arguments
/// as a tuple; the handler is then called on its own executor.
template <class Executor, class Body, class Handler, class Finish>
void spawn_operation(const Executor& ex, Body body, Handler handler, Finish finish) {
  auto slot = boost::asio::get_associated_cancellation_slot(handler);
  auto work = boost::asio::prefer(boost::asio::get_associated_executor(handler, ex),
                                  boost::asio::execution::outstanding_work.tracked);
  boost::asio::co_spawn(
      ex, std::move(body),
      boost::asio::bind_cancellation_slot(slot, [h = std::move(handler), work = std::move(work),
                                                 f = std::move(finish)](std::exception_ptr e, auto&&... r) mutable {
        auto args = f(std::move(e), std::move(r)...);
        boost::asio::dispatch(
            work, [h = std::move(h), args = std::move(args)]() mutable { std::apply(std::move(h), std::move(args)); });
      }));
}

/// Waits until `ready()`, on `cv`'s strand: `cv` is a timer that never
/// expires, used as a condition variable (whoever may make ready() true
/// cancels it). Throws operation_aborted if the waiter is cancelled.
template <class Ready>
boost::asio::awaitable<void> wait_until(boost::asio::steady_timer& cv, Ready ready) {
  while (!ready()) {
    auto [ec] = co_await cv.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
    (void)ec;  // cancelled by the notifier, or our own cancellation (checked below)
    auto cs = co_await boost::asio::this_coro::cancellation_state;
    if (cs.cancelled() != boost::asio::cancellation_type::none) {
      throw boost::system::system_error(boost::asio::error::operation_aborted);
    }
  }
}

/// `finish` for coroutines that return nothing: void(error_code).
struct finish_with_error_code {
  std::tuple<error_code> operator()(std::exception_ptr e) const { return {error_of(e)}; }
};

/// Runs the coroutine `make()` on `ex` as an operation with completion
/// void(error_code): operation_aborted once cancelled.
template <class Executor, class MakeAwaitable, class Token>
auto async_spawn(Executor ex, MakeAwaitable make, Token&& token) {
  return initiate_void(
      [ex = std::move(ex), make = std::move(make)](auto handler) mutable {
        spawn_operation(ex, make(), std::move(handler), finish_with_error_code{});
      },
      std::forward<Token>(token));
}

}  // namespace kube::detail
