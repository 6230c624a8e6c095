#pragma once

// Internal: completing a refused start at once (the leader elector and the
// event recorder refuse a second async_run).

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

}  // namespace kube::detail
