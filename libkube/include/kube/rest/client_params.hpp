#pragma once

#include <kube/base/metrics.hpp>
#include <kube/logger.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string_view>

namespace kube {

/// Transport knobs that are not part of a kubeconfig. Every field has a default.
///
/// A plain value, copied into the client. The client calls `log` and
/// `on_warning` on its strand: never concurrently for one client, but from
/// whichever thread runs its executor (and concurrently across clients that
/// share them).
struct client_params {
  logger log = {};                                        ///< default: warnings and errors to stderr
  std::function<void(std::string_view)> on_warning = {};  ///< server Warning headers; default: logged at warning
  std::chrono::milliseconds timeout{0};                   ///< per unary request, ms; 0 = none (watches never time out)
  std::chrono::milliseconds connect_timeout{30'000};      ///< TCP connect + TLS handshake, ms
  /// The longest wait for the next byte of a unary response, and for the
  /// response headers of a watch or a log stream, ms; 0 = none. A server
  /// that stops answering mid-response fails the request with
  /// client_errc::timeout instead of hanging it (docs/reliability.md).
  std::chrono::milliseconds read_timeout{60'000};
  /// TCP keepalive probes on every connection after this much silence, s;
  /// 0 = off. As Go's dialer for client-go: 30 s, so a half-open connection
  /// is found by the kernel.
  std::chrono::seconds tcp_keepalive{30};
  std::chrono::seconds token_file_refresh{60};     ///< token files are re-read at least this often, s
  std::chrono::milliseconds exec_timeout{30'000};  ///< an exec credential plugin is killed after this, ms
  /// The largest body of a unary response the client accepts, in bytes,
  /// after gzip decoding; 0 = no limit. Larger bodies fail the request with
  /// client_errc::response_too_large, and a gzip body stops inflating at the
  /// limit (a small compressed body cannot make the client allocate
  /// gigabytes). The default holds a list of 100,000 pods; pass limit and
  /// continue (list_params) for more. Watch events have their own limit
  /// (64 MiB each), log streams none (they are read in pieces).
  std::size_t max_response_body = std::size_t{1} << 30;
  std::size_t max_idle_connections = 32;  ///< keep-alive pool size (connections)
  int max_retries = 10;                   ///< Retry-After answers followed at most this often
  /// Never ask for protobuf. By default the typed client (kube::api<T>, and
  /// informers built on it) asks for protobuf for every built-in type that
  /// has a protobuf codec, as client-go does, and reads whichever of
  /// protobuf and JSON comes back; writes of those types go out as
  /// protobuf. CRDs, the dynamic and the metadata clients always use JSON
  /// (docs/guides/protobuf.md).
  bool json_only = false;
  /// Where metrics go (kube/base/metrics.hpp; e.g. a kube::prometheus::metrics).
  /// The client reports its requests, retries, rate-limiter waits and exec
  /// plugin calls; informers an informer_factory builds over this client,
  /// and controllers built on that factory, take their hooks from the same
  /// provider. Null: nothing is recorded (docs/guides/metrics.md).
  std::shared_ptr<kube::metrics::provider> metrics = nullptr;
};

}  // namespace kube
