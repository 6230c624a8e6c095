#pragma once

#include <kube/config/client_config.hpp>
#include <kube/rest/client_params.hpp>
#include <kube/detail/initiate.hpp>
#include <kube/detail/transport_params.hpp>
#include <kube/error.hpp>
#include <kube/transport/request.hpp>
#include <kube/transport/response.hpp>
#include <kube/watch/watch_stream.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <memory>

namespace kube {

namespace detail {
class client_impl;
struct client_access;
void start_request(const std::shared_ptr<client_impl>& impl, request req, completion<response> handler);
void start_watch(const std::shared_ptr<client_impl>& impl, request req, std::chrono::milliseconds idle_timeout,
                 completion<watch_stream> handler);
}  // namespace detail

/// A connection to one apiserver: TLS, authentication, a keep-alive pool for
/// unary requests, the client-side rate limiter (token bucket, QPS/burst),
/// and retries (429/5xx with Retry-After, connection reset on GET).
///
/// Async operations are Asio initiating functions. The completion signature
/// is `void(kube::error_code, T)`; they accept any completion token
/// (`asio::use_awaitable`, `asio::deferred`, callbacks, `asio::use_future`).
/// The default token, `kube::use_awaitable`, makes `co_await` throw
/// `kube::error`, which carries the server's Status as diagnostics.
///
/// Cancellation: per operation, through the cancellation slot associated
/// with the token (e.g. `asio::bind_cancellation_slot`, or awaitable
/// operators `||`). Only terminal cancellation is acted on (a signal of
/// type `terminal` or `all`); partial or total alone are filtered out,
/// because each operation runs as a coroutine with Asio's default filter.
/// A cancelled operation completes with `asio::error::operation_aborted`
/// and its connection is closed, not returned to the pool.
/// Deadlines are not cancellation: client_params::timeout and
/// connect_timeout expire with client_errc::timeout.
///
/// Executors: internal work runs on a strand of the client's executor; the
/// final handler runs on the token's associated executor. The logger and
/// the on_warning hook of client_params are called on that strand.
///
/// Thread safety: a client may be shared by coroutines on any threads (all
/// shared state is touched on the strand); copies share one connection pool
/// and one rate limiter. Distinct operations may run concurrently.
///
/// Errors: kube.api codes for non-2xx answers (response.diag holds the
/// Status), kube.client codes for client-side failures (timeout,
/// too_many_retries, tls_error, auth_failed, exec_plugin_failed, ...),
/// Asio/system codes for network failures. Client messages name the
/// request (`GET apps/v1 deployments demo/web`) or the host:port at fault,
/// never a body or query.
/// Messages never contain credentials.
class client {
public:
  using executor_type = boost::asio::any_io_executor;

  /// Connects as `config` says (kubeconfig, in-cluster: see client_config).
  /// Throws kube::error (client_errc::invalid_config / tls_error) when the
  /// settings cannot work, e.g. a server URL that is not http(s) or a client
  /// key that does not match its certificate; the message names the field.
  client(executor_type ex, const client_config& config, client_params options = {});

  [[nodiscard]] executor_type get_executor() const noexcept;

  /// Sends one request and reads the whole response.
  /// Completion: void(error_code, kube::response).
  template <class CompletionToken = use_awaitable_t>
  auto async_request(request req, CompletionToken&& token = {}) {
    return detail::initiate<response>(
        [impl = impl_, req = std::move(req)](detail::completion<response> h) mutable {
          detail::start_request(impl, std::move(req), std::move(h));
        },
        std::forward<CompletionToken>(token));
  }

  /// Opens a watch on a dedicated connection. The request should carry
  /// `watch=true` (and usually resourceVersion, allowWatchBookmarks,
  /// timeoutSeconds); watches are not throttled by the rate limiter.
  /// Completes once the response headers arrived: a refused watch (403,
  /// 410 ...) fails here with the server's Status.
  /// Completion: void(error_code, kube::watch_stream).
  template <class CompletionToken = use_awaitable_t>
  auto async_watch(request req, CompletionToken&& token = {}) {
    return detail::initiate<watch_stream>(
        [impl = impl_, req = std::move(req)](detail::completion<watch_stream> h) mutable {
          detail::start_watch(impl, std::move(req), {}, std::move(h));
        },
        std::forward<CompletionToken>(token));
  }

  /// Connections opened so far (keep-alive reuse keeps this low). Thread safe.
  [[nodiscard]] std::size_t connections_opened() const noexcept;

  /// client_params::metrics (null when none): informer_factory and the
  /// controller take their hooks from it.
  [[nodiscard]] const std::shared_ptr<metrics::provider>& metrics_provider() const noexcept;

private:
  friend struct detail::client_access;

  // From already resolved transport settings (detail::client_access::make).
  client(executor_type ex, detail::transport_params settings);

  std::shared_ptr<detail::client_impl> impl_;
};

namespace detail {
/// The library's way to a client's internals (its tests use it too).
struct client_access {
  /// A client from already resolved transport settings.
  static client make(client::executor_type ex, transport_params settings) {
    return client(std::move(ex), std::move(settings));
  }
  /// The state shared by copies (used by watch streams and typed APIs).
  static const std::shared_ptr<client_impl>& impl(const client& c) noexcept { return c.impl_; }
};
}  // namespace detail

}  // namespace kube
