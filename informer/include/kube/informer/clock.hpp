#pragma once

// "Wait d" for the informer. The Reflector's backoff, watch timeouts and the
// informer's resync read the time from a kube::clock (kube/base/clock.hpp)
// and wait through sleep() below, so unit tests drive them with a
// kube::manual_clock and never sleep.

#include <kube/base/clock.hpp>
#include <kube/error.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <memory>
#include <utility>

namespace kube::informer {

/// The real clock as the informer holds it: a non-owning pointer to
/// kube::real_clock(), which lives for the whole program.
inline std::shared_ptr<const clock> default_clock() { return {std::shared_ptr<void>{}, &real_clock()}; }

namespace detail {

// One sleep on a manual clock: woken by the clock's advance or cancelled by
// the awaiting coroutine, whichever comes first.
struct manual_sleep {
  boost::asio::any_completion_handler<void(error_code)> handler;
  boost::asio::cancellation_slot slot;
  boost::asio::any_io_executor ex;
  bool done = false;

  void finish(error_code ec, bool from_slot) {
    if (done) return;
    done = true;
    // Clearing the slot from inside its own handler would destroy that handler.
    if (!from_slot && slot.is_connected()) slot.clear();
    boost::asio::post(ex, [h = std::move(handler), ec]() mutable { std::move(h)(ec); });
  }
};

template <class Handler>
void start_manual_sleep(const clock& c, clock::time_point due, Handler&& handler) {
  auto s = std::make_shared<manual_sleep>();
  s->ex = boost::asio::get_associated_executor(handler);
  // Boost 1.81's any_completion_handler move-assignment recurses forever (it
  // copies through its converting constructor): swap.
  boost::asio::any_completion_handler<void(error_code)> h(std::forward<Handler>(handler));
  h.swap(s->handler);
  // The type-erased handler forwards cancellation through its own slot.
  s->slot = s->handler.get_cancellation_slot();
  if (s->slot.is_connected()) {
    s->slot.assign([s](boost::asio::cancellation_type) { s->finish(boost::asio::error::operation_aborted, true); });
  }
  c.on_advance(
      [s, &c, due] {
        if (s->done) return false;
        if (c.now() < due) return true;
        s->finish({}, false);
        return false;
      },
      due);
}

}  // namespace detail

/// Completes after `d` by `c`, or throws
/// boost::system::system_error(operation_aborted) when the awaiting coroutine
/// is cancelled (terminal cancellation).
///
/// On a real clock this is an Asio steady_timer on the coroutine's executor.
/// On a manual clock the sleep is due at now() + d and is woken by the first
/// advance that reaches it (even for d <= 0); advance the clock from the
/// thread that runs the sleeping coroutine's executor.
inline boost::asio::awaitable<void> sleep(const clock& c, clock::duration d) {
  if (!c.is_manual()) {
    boost::asio::steady_timer t(co_await boost::asio::this_coro::executor);
    t.expires_after(d);
    co_await t.async_wait(boost::asio::use_awaitable);
    co_return;
  }
  const auto due = c.now() + d;
  co_await boost::asio::async_initiate<const boost::asio::use_awaitable_t<>&, void(error_code)>(
      [&c, due](auto handler) { detail::start_manual_sleep(c, due, std::move(handler)); }, boost::asio::use_awaitable);
}

}  // namespace kube::informer
