#pragma once

// Internal: completing a refused operation at once: a second async_run (the
// leader elector, the event recorder, the port forwarder), an operation on
// a default-constructed stream (logs, exec, port-forward), which has no
// strand to run on.

#include <kube/detail/initiate.hpp>
#include <kube/error.hpp>

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/dispatch.hpp>

#include <utility>

namespace kube::detail {

/// Completes `handler` with `ec` on its associated executor (`ex` when it
/// has none), without running anything.
template <class Executor, class Handler>
void complete_now(const Executor& ex, Handler handler, error_code ec) {
  auto hex = boost::asio::get_associated_executor(handler, ex);
  boost::asio::dispatch(hex, [h = std::move(handler), ec]() mutable { std::move(h)(ec); });
}

/// Completes `handler` with client_errc::protocol_error and the client
/// message `what`, on its associated executor, without running anything
/// (an operation on an empty handle).
template <class T>
void complete_empty(completion<T> handler, const char* what) {
  auto hex = boost::asio::get_associated_executor(handler);
  boost::asio::dispatch(hex, [h = std::move(handler), what]() mutable {
    diagnostics d;
    d.set_client_message(what);
    std::move(h)(error_code(client_errc::protocol_error), std::move(d), T{});
  });
}

}  // namespace kube::detail
