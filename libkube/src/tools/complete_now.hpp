#pragma once

// Internal: completing a refused operation at once: a second async_run (the
// leader elector, the event recorder, the port forwarder), an operation on
// a default-constructed stream (logs, exec, port-forward), which has no
// strand to run on; and the one run of a long-lived object (start_once).

#include <kube/detail/initiate.hpp>
#include <kube/detail/spawn.hpp>
#include <kube/exception.hpp>
#include <kube/error.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/dispatch.hpp>

#include <exception>
#include <memory>
#include <tuple>
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

/// The async_run of a long-lived object (the leader elector, the event
/// recorder): `impl->run()` on `impl->ex_`, refused with
/// client_errc::already_running while a run is in progress. When it ends,
/// `ended(*impl)` resets the object's state, then the handler gets the
/// run's error (operation_aborted once cancelled). `impl` lives as long as
/// the run.
template <class Impl, class Ended>
void start_once(std::shared_ptr<Impl> impl, boost::asio::any_completion_handler<void(error_code)> handler,
                Ended ended) {
  if (impl->running_.exchange(true)) {
    complete_now(impl->ex_, std::move(handler), make_error_code(client_errc::already_running));
    return;
  }
  auto ex = impl->ex_;
  auto run = impl->run();  // before `impl` moves into the finisher (arguments have no order)
  spawn_operation(ex, std::move(run), std::move(handler),
                  [impl = std::move(impl), ended = std::move(ended)](std::exception_ptr e) mutable {
                    ended(*impl);
                    impl->running_ = false;
                    return std::tuple{error_of(e)};
                  });
}

}  // namespace kube::detail
