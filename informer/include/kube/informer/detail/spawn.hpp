#pragma once

// Internal: runs a coroutine as an Asio operation with completion
// void(error_code), forwarding the token's cancellation slot to it and
// completing on the token's executor.

#include <kube/error.hpp>

#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/multiple_exceptions.hpp>
#include <boost/system/system_error.hpp>

#include <exception>
#include <utility>

namespace kube::informer::detail {

/// The error an exception from an informer coroutine means: its code for
/// system_error (operation_aborted after cancellation), else
/// errc::state_not_recoverable.
inline error_code error_of(const std::exception_ptr& e) {
  if (!e) {
    return {};
  }
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

template <class Executor, class MakeAwaitable, class Token>
auto async_spawn(Executor ex, MakeAwaitable make, Token&& token) {
  return boost::asio::async_initiate<Token, void(error_code)>(
      [ex](auto handler, MakeAwaitable mk) {
        auto slot = boost::asio::get_associated_cancellation_slot(handler);
        auto hex = boost::asio::get_associated_executor(handler, ex);
        boost::asio::co_spawn(ex, mk(),
                              boost::asio::bind_cancellation_slot(
                                  slot, [h = std::move(handler), hex](std::exception_ptr e) mutable {
                                    const auto ec = error_of(e);
                                    boost::asio::dispatch(hex, [h = std::move(h), ec]() mutable { std::move(h)(ec); });
                                  }));
      },
      token, std::move(make));
}

} // namespace kube::informer::detail
