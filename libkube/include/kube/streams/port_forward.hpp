#pragma once

// Connections to a port of a pod through the apiserver (pods/portforward):
// kube::forwarded_stream, what kube::async_port_forward yields,
// and kube::port_forwarder, which listens on a local port like
// `kubectl port-forward`. The guide is docs/guides/streams.md.

#include <kube/rest/client.hpp>
#include <kube/streams/remote_command.hpp>

#include <boost/asio/any_completion_handler.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

namespace kube {

/// One TCP connection to a port of a pod, over one WebSocket connection to
/// the apiserver (subprotocol `v4.channel.k8s.io`, which the apiserver
/// passes on to the kubelet). An AsyncReadStream and AsyncWriteStream:
///
///   auto s = co_await kube::async_port_forward(pods, "web-0", 8080);
///   co_await asio::async_write(s, asio::buffer(request));
///   auto [ec, n] = co_await asio::async_read(s, asio::dynamic_buffer(reply),
///                                            asio::as_tuple(asio::use_awaitable));
///
/// async_read_some completes with the bytes the pod's port sent (what is
/// not read stays buffered; past 1 MiB the connection is not read until
/// the program catches up), then with asio::error::eof once the pod's side
/// closed and everything was read; with the connection's error if it
/// broke. If the kubelet could not connect to the port, reads complete
/// with client_errc::connection_failed and its message in the diagnostics
/// ("... dial tcp 127.0.0.1:81: connect: connection refused"), and writes
/// with broken_pipe. The protocol has no half-close: to end the
/// connection, close it (or drop the last copy).
///
/// Thread safety: copies share one connection; one read and one write at a
/// time; work runs on the client's strand. close() may be called from any
/// thread.
class forwarded_stream {
public:
  using executor_type = boost::asio::any_io_executor;

  forwarded_stream() = default;
  explicit forwarded_stream(std::shared_ptr<detail::remote_state> s)
      : state_(std::move(s)),
        reader_(state_, 0),
        writer_(state_) {}

  [[nodiscard]] executor_type get_executor() const { return detail::remote_executor(state_); }

  /// Completion: void(error_code, std::size_t).
  template <class MutableBuffers, class Token = use_awaitable_t>
  auto async_read_some(const MutableBuffers& buffers, Token&& token = {}) {
    return reader_.async_read_some(buffers, std::forward<Token>(token));
  }

  /// Completion: void(error_code, std::size_t).
  template <class ConstBuffers, class Token = use_awaitable_t>
  auto async_write_some(const ConstBuffers& buffers, Token&& token = {}) {
    return writer_.async_write_some(buffers, std::forward<Token>(token));
  }

  void close() { detail::remote_close(state_); }

private:
  std::shared_ptr<detail::remote_state> state_;
  remote_process::reader reader_{nullptr, 0};
  remote_process::writer writer_{nullptr};
};

/// Options of kube::port_forwarder.
struct port_forward_params {
  std::string address = "127.0.0.1";  ///< the local address to listen on (kubectl's default: localhost)
  std::uint16_t local_port = 0;       ///< 0: a free port, see port_forwarder::local_port()
  /// Local connections forwarded at once; more wait in the listen backlog
  /// (not accepted) until one ends. 0: no bound.
  std::size_t max_connections = 64;
};

/// Counters of a port_forwarder (read from any thread).
struct port_forwarder_stats {
  std::uint64_t accepted = 0;  ///< local connections accepted
  std::uint64_t failed = 0;    ///< of those, ended by an error (pod gone, port refused, connection broke)
  std::uint64_t open = 0;      ///< being forwarded now
};

namespace detail {
class port_forwarder_impl;
void port_forwarder_start(std::shared_ptr<port_forwarder_impl> impl,
                          boost::asio::any_completion_handler<void(error_code)> handler);
}  // namespace detail

/// Listens on a local TCP port and forwards each connection to a port of a
/// pod, each over its own forwarded_stream, like `kubectl port-forward
/// pod/<name> <local>:<port>`.
///
///   kube::port_forwarder fwd(client, "demo", "web-0", 8080);  // listening now
///   std::cout << fwd.local_port();
///   co_await fwd.async_run();                                 // until cancelled
///
/// The constructor binds and listens (close-on-exec), and throws
/// kube::error: client_errc::invalid_config for an empty namespace or pod
/// or port 0, the system's code naming the address when it cannot listen
/// (params.address is an IP address: "127.0.0.1", "::1"; not a host name).
/// async_run accepts and forwards until cancelled (terminal cancellation;
/// it then completes with operation_aborted and closes the local side of
/// every connection, also of those whose WebSocket is still opening); a
/// second concurrent async_run completes with client_errc::already_running.
/// Destroying the port_forwarder does not stop a running async_run (copies
/// share one forwarder, and the run keeps it); cancel it. A
/// At most params.max_connections local connections are forwarded at once
/// (each is its own WebSocket to the apiserver); the next is accepted when
/// one ends. The WebSocket upgrades are not counted against the client's
/// qps/burst limiter (nor are exec's and attach's), as client-go's
/// SPDY/WebSocket upgrades are not: a burst of local connections does not
/// delay the program's other requests. A
/// connection that cannot be forwarded (no such pod, nothing listening on
/// the port) is closed, logged through the client's logger as a warning
/// and counted; it does not end async_run, so a pod that comes back is
/// reached again. A local half-close ends the forwarded connection (the
/// protocol cannot carry it).
///
/// Thread safety: local_port() and stats() from any thread; the work runs
/// on the client's strand.
class port_forwarder {
public:
  port_forwarder(client c, std::string namespace_name, std::string pod, std::uint16_t pod_port,
                 const port_forward_params& params = {});

  /// The port it listens on (params.local_port, or the one the system chose).
  [[nodiscard]] std::uint16_t local_port() const;
  [[nodiscard]] port_forwarder_stats stats() const;

  /// Completion: void(error_code).
  template <class Token = use_awaitable_t>
  auto async_run(Token&& token = {}) {
    return detail::initiate_void(
        [impl = impl_](auto handler) mutable { detail::port_forwarder_start(std::move(impl), std::move(handler)); },
        std::forward<Token>(token));
  }

private:
  std::shared_ptr<detail::port_forwarder_impl> impl_;
};

}  // namespace kube
