#pragma once

// Internal: the SDK's one way to run a coroutine as an asynchronous
// operation. Client requests, watches, the leader elector, the event
// recorder, informers and controllers all go through spawn_operation (the
// last two through kube::async_spawn, kube/async.hpp).

#include <kube/detail/initiate.hpp>
#include <kube/error.hpp>
#include <kube/exception.hpp>

#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/prefer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>

#include <exception>
#include <tuple>
#include <utility>

namespace kube::detail {

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

/// `finish` for coroutines that return nothing: void(error_code).
struct finish_with_error_code {
  std::tuple<error_code> operator()(std::exception_ptr e) const { return {kube::error_of(e)}; }
};

}  // namespace kube::detail
