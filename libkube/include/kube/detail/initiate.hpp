#pragma once

// Internal: turns a non-template starter into an Asio initiating function.
//
// Operations are implemented in compiled sources against
// completion<T> = any_completion_handler<void(error_code, diagnostics, T)>.
// initiate<T>() adapts that to the public signature void(error_code, T) for
// any token, and to void(exception_ptr, T) for kube::use_awaitable (and
// asio::use_awaitable) so that co_await throws kube::error with the
// diagnostics, and to
// store_diagnostics for kube::with_diagnostics(diag, token). initiate_void() does
// the same for the void(error_code) operations (async_run and the like).

#include <kube/diagnostics.hpp>
#include <kube/error.hpp>
#include <kube/exception.hpp>
#include <kube/use_awaitable.hpp>
#include <kube/with_diagnostics.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/associated_allocator.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <exception>
#include <type_traits>
#include <utility>

namespace kube::detail {

template <class T>
using completion = boost::asio::any_completion_handler<void(error_code, diagnostics, T)>;

// Forwards the wrapped handler's associated executor, cancellation slot and
// allocator, so wrapping changes nothing but the arguments.
template <class Handler>
struct handler_wrapper {
  Handler handler;

  using executor_type = boost::asio::associated_executor_t<Handler>;
  executor_type get_executor() const noexcept { return boost::asio::get_associated_executor(handler); }
  using cancellation_slot_type = boost::asio::associated_cancellation_slot_t<Handler>;
  cancellation_slot_type get_cancellation_slot() const noexcept {
    return boost::asio::get_associated_cancellation_slot(handler);
  }
  using allocator_type = boost::asio::associated_allocator_t<Handler>;
  allocator_type get_allocator() const noexcept { return boost::asio::get_associated_allocator(handler); }
};

template <class Handler>
struct drop_diagnostics : handler_wrapper<Handler> {
  template <class T>
  void operator()(error_code ec, diagnostics, T value) {
    std::move(this->handler)(ec, std::move(value));
  }
};

template <class Handler>
struct store_diagnostics : handler_wrapper<Handler> {
  diagnostics* out;
  template <class T>
  void operator()(error_code ec, diagnostics diag, T value) {
    *out = std::move(diag);
    std::move(this->handler)(ec, std::move(value));
  }
};

template <class Handler>
struct throw_diagnostics : handler_wrapper<Handler> {
  template <class T>
  void operator()(error_code ec, diagnostics diag, T value) {
    std::exception_ptr e;
    if (ec) e = std::make_exception_ptr(kube::error(ec, std::move(diag)));
    std::move(this->handler)(e, std::move(value));
  }
};

// kube::use_awaitable, and Asio's own use_awaitable, which would otherwise
// throw a plain system_error without the diagnostics: both throw kube::error
// (a system_error, so handlers written for Asio's still catch it).
template <class Token>
inline constexpr bool throws_kube_error = std::is_same_v<std::decay_t<Token>, use_awaitable_t> ||
                                          std::is_same_v<std::decay_t<Token>, boost::asio::use_awaitable_t<>>;

template <class T, class Start, class Token>
auto initiate(Start start, Token&& token) {
  if constexpr (throws_kube_error<Token>) {
    return boost::asio::async_initiate<const boost::asio::use_awaitable_t<>&, void(std::exception_ptr, T)>(
        [start = std::move(start)](auto handler) mutable {
          start(completion<T>(throw_diagnostics<decltype(handler)>{{std::move(handler)}}));
        },
        boost::asio::use_awaitable);
  } else if constexpr (is_with_diagnostics<std::decay_t<Token>>::value) {
    static_assert(!std::is_same_v<std::decay_t<decltype(token.token)>, use_awaitable_t>,
                  "kube::use_awaitable already carries the diagnostics in kube::error");
    return boost::asio::async_initiate<decltype((token.token)), void(error_code, T)>(
        [start = std::move(start), out = token.diag](auto handler) mutable {
          start(completion<T>(store_diagnostics<decltype(handler)>{{std::move(handler)}, out}));
        },
        token.token);
  } else {
    return boost::asio::async_initiate<Token, void(error_code, T)>(
        [start = std::move(start)](auto handler) mutable {
          start(completion<T>(drop_diagnostics<decltype(handler)>{{std::move(handler)}}));
        },
        token);
  }
}

/// The initiating function of an operation with completion
/// void(error_code). `start(handler)` begins it. kube::use_awaitable
/// resumes the awaiting coroutine with a system_error on failure.
template <class Start, class Token>
auto initiate_void(Start start, Token&& token) {
  if constexpr (std::is_same_v<std::decay_t<Token>, use_awaitable_t>) {
    return boost::asio::async_initiate<const boost::asio::use_awaitable_t<>&, void(error_code)>(
        std::move(start), boost::asio::use_awaitable);
  } else {
    return boost::asio::async_initiate<Token, void(error_code)>(std::move(start), token);
  }
}

}  // namespace kube::detail
