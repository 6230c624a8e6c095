#pragma once

// kube::use_awaitable: the default completion token of every kube
// operation, the client's and the workqueue's, informers', controllers' and
// the metrics server's alike.

#include <boost/asio/async_result.hpp>
#include <boost/asio/deferred.hpp>

#include <utility>

namespace kube {

/// Completion token: `co_await op(...)` in a boost::asio::awaitable
/// coroutine gives the operation's result, and a failure is thrown.
/// Operations of the client (kube::client, kube::api<T>, the dynamic and
/// metadata clients, streams, leader election, the event recorder) throw
/// kube::error carrying the server's Status and the client's message
/// (kube/error.hpp); Asio's own use_awaitable, passed to them, behaves the
/// same. Any other operation given it (the workqueue's async_get, the
/// metrics server's async_run, an Asio timer) runs as with asio::deferred
/// and throws boost::system::system_error.
struct use_awaitable_t {};
inline constexpr use_awaitable_t use_awaitable{};

}  // namespace kube

namespace boost::asio {

/// kube::use_awaitable as an Asio completion token for any operation: the
/// operation is deferred, and awaiting it in an asio::awaitable starts it
/// (no coroutine frame of its own, as asio::deferred).
template <class... Signatures>
class async_result<kube::use_awaitable_t, Signatures...> {
public:
  template <class Initiation, class... Args>
  static auto initiate(Initiation&& initiation, kube::use_awaitable_t, Args&&... args) {
    return async_initiate<const deferred_t&, Signatures...>(std::forward<Initiation>(initiation), deferred,
                                                            std::forward<Args>(args)...);
  }
};

}  // namespace boost::asio
