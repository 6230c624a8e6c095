#pragma once

// Two helpers for writing long-lived asynchronous objects the way kube's own
// are written (informers, controllers, the leader elector): a coroutine run
// as an Asio operation, and a timer used as a condition variable. See
// docs/guides/async.md.
//
//   template <class Token = kube::use_awaitable_t>
//   auto async_run(Token&& token = {}) {
//     return kube::async_spawn(ex_, [this] { return run(); }, std::forward<Token>(token));
//   }

#include <kube/detail/spawn.hpp>
#include <kube/use_awaitable.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/system/system_error.hpp>

#include <memory>
#include <utility>

namespace kube {

namespace detail {

// Awaits `a`, which `*make` returned, keeping `*make` alive meanwhile: a
// lambda coroutine's captures live in the lambda object, not in its frame.
template <class MakeAwaitable>
boost::asio::awaitable<void> run_owned(std::shared_ptr<MakeAwaitable> make, boost::asio::awaitable<void> a) {
  (void)make;
  co_await std::move(a);
}

}  // namespace detail

/// Runs the coroutine `make()` (a callable returning
/// asio::awaitable<void>) on `ex` as an asynchronous operation with
/// completion void(error_code):
/// - the token's cancellation slot reaches the coroutine (its co_awaits
///   fail with operation_aborted);
/// - the completion handler's executor is kept busy until it completes;
/// - an exception escaping the coroutine completes the operation with its
///   code: a system_error's (kube::error is one), operation_aborted after
///   cancellation, else errc::state_not_recoverable.
/// With kube::use_awaitable (the default) a failure is thrown as
/// boost::system::system_error. `make` is kept until the coroutine ends, so
/// it may be a lambda coroutine with captures.
template <class Executor, class MakeAwaitable, class Token = use_awaitable_t>
auto async_spawn(Executor ex, MakeAwaitable make, Token&& token = {}) {
  return detail::initiate_void(
      [ex = std::move(ex), make = std::move(make)](auto handler) mutable {
        // make() is called now, when the operation starts (its checks run
        // before the initiating function returns), on an object that stays put.
        auto owned = std::make_shared<MakeAwaitable>(std::move(make));
        auto a = (*owned)();
        detail::spawn_operation(ex, detail::run_owned(std::move(owned), std::move(a)), std::move(handler),
                                detail::finish_with_error_code{});
      },
      std::forward<Token>(token));
}

/// Waits until `ready()` is true. `cv` is a timer that never expires, used
/// as a condition variable: whoever may make ready() true cancels it
/// (`cv.cancel()`), on `cv`'s executor, which the waiter also runs on.
/// Throws system_error(operation_aborted) if the waiting coroutine is
/// cancelled.
///
///   boost::asio::steady_timer cv(ex, boost::asio::steady_timer::time_point::max());
///   co_await kube::wait_until(cv, [&] { return done; });   // waiter
///   done = true; cv.cancel();                              // notifier
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

}  // namespace kube
