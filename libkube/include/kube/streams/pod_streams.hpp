#pragma once

// The streams of a pod through the apiserver: its logs, exec and attach
// (WebSocket), port-forward. Free functions over the pods client, as
// client-go keeps them on the Pods client; their own header, so that a user
// of kube::api<T> does not compile the stream types:
//
//   kube::api<k8s::core::v1::Pod> pods(client, "default");
//   auto log = co_await kube::async_logs(pods, "web-0", {.follow = true});
//   auto p = co_await kube::async_exec(pods, "web-0", {"ls", "/"});
//   auto s = co_await kube::async_port_forward(pods, "web-0", 8080);
//
// `pods` is a kube::api<k8s::core::v1::Pod> bound to a namespace (only its
// client and namespace are used; they are copied when the call starts).
// The guide is docs/guides/streams.md.

#include <kube/detail/initiate.hpp>
#include <kube/rest/client.hpp>
#include <kube/rest/list_params.hpp>
#include <kube/streams/log_stream.hpp>
#include <kube/streams/port_forward.hpp>
#include <kube/streams/remote_command.hpp>
#include <kube/use_awaitable.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace kube {

namespace detail {

void start_pod_logs(client c, std::string ns, std::string name, log_params p, completion<log_stream> h);
void start_pod_command(client c, std::string ns, std::string name, std::vector<std::string> command,
                       remote_command_params p, completion<remote_process> h);
void start_pod_port_forward(client c, std::string ns, std::string name, std::uint16_t port,
                            completion<forwarded_stream> h);

/// A client of core/v1 pods: kube::api<k8s::core::v1::Pod>.
template <class PodApi>
concept pod_api = requires(const PodApi& a) {
  { a.get_client() } -> std::convertible_to<const client&>;
  { a.namespace_name() } -> std::convertible_to<const std::string&>;
  typename PodApi::traits;
}
&&std::string_view(PodApi::traits::group).empty() && std::string_view(PodApi::traits::plural) == "pods";

template <class Token, class Params>
inline constexpr bool is_token_for = !std::is_convertible_v<Token, const Params&>;

}  // namespace detail

/// `GET pods/<name>/log` as a line stream (see kube::log_stream). The
/// request's errors (no such pod or container, a pod with no node yet,
/// forbidden) complete this call, with the server's Status.
/// Completion: void(error_code, log_stream).
template <detail::pod_api PodApi, class Token = use_awaitable_t>
auto async_logs(const PodApi& pods, std::string_view name, const log_params& params = defaults<log_params>,
                Token&& token = {}) {
  return detail::initiate<log_stream>(
      [c = pods.get_client(), ns = pods.namespace_name(), n = std::string(name),
       p = params](detail::completion<log_stream> h) mutable {
        detail::start_pod_logs(std::move(c), std::move(ns), std::move(n), std::move(p), std::move(h));
      },
      std::forward<Token>(token));
}

/// `pods/<name>/exec`: runs `command` (not empty) in the pod's container,
/// over a WebSocket (see kube::remote_process). The request's errors (no
/// such pod or container, the container not running, forbidden) complete
/// this call, with the server's Status.
/// Completion: void(error_code, remote_process).
template <detail::pod_api PodApi, class Token = use_awaitable_t>
auto async_exec(const PodApi& pods, std::string_view name, std::vector<std::string> command,
                const remote_command_params& params = defaults<remote_command_params>, Token&& token = {}) {
  return detail::initiate<remote_process>(
      [c = pods.get_client(), ns = pods.namespace_name(), n = std::string(name), cmd = std::move(command),
       p = params](detail::completion<remote_process> h) mutable {
        if (cmd.empty()) cmd.emplace_back();  // an empty command is refused by the server, not taken for attach
        detail::start_pod_command(std::move(c), std::move(ns), std::move(n), std::move(cmd), std::move(p),
                                  std::move(h));
      },
      std::forward<Token>(token));
}

/// `pods/<name>/attach`: the streams of the container's main process, as
/// async_exec gives them. Completion: void(error_code, remote_process).
template <detail::pod_api PodApi, class Token = use_awaitable_t>
auto async_attach(const PodApi& pods, std::string_view name,
                  const remote_command_params& params = defaults<remote_command_params>, Token&& token = {}) {
  return detail::initiate<remote_process>(
      [c = pods.get_client(), ns = pods.namespace_name(), n = std::string(name),
       p = params](detail::completion<remote_process> h) mutable {
        detail::start_pod_command(std::move(c), std::move(ns), std::move(n), {}, std::move(p), std::move(h));
      },
      std::forward<Token>(token));
}

/// `pods/<name>/portforward`: one TCP connection to `port` of the pod (see
/// kube::forwarded_stream; kube::port_forwarder listens locally like
/// kubectl port-forward). The request's errors (no such pod, a pod not
/// running, forbidden) complete this call, with the server's Status; a port
/// nothing listens on shows on the stream's first read.
/// Completion: void(error_code, forwarded_stream).
template <detail::pod_api PodApi, class Token = use_awaitable_t>
auto async_port_forward(const PodApi& pods, std::string_view name, std::uint16_t port, Token&& token = {}) {
  return detail::initiate<forwarded_stream>(
      [c = pods.get_client(), ns = pods.namespace_name(), n = std::string(name),
       port](detail::completion<forwarded_stream> h) mutable {
        detail::start_pod_port_forward(std::move(c), std::move(ns), std::move(n), port, std::move(h));
      },
      std::forward<Token>(token));
}

// Token-only overloads: `async_logs(pods, name, token)` ...
template <detail::pod_api PodApi, class Token>
  requires detail::is_token_for<Token, log_params>
auto async_logs(const PodApi& pods, std::string_view name, Token&& token) {
  return kube::async_logs(pods, name, defaults<log_params>, std::forward<Token>(token));
}
template <detail::pod_api PodApi, class Token>
  requires detail::is_token_for<Token, remote_command_params>
auto async_exec(const PodApi& pods, std::string_view name, std::vector<std::string> command, Token&& token) {
  return kube::async_exec(pods, name, std::move(command), defaults<remote_command_params>, std::forward<Token>(token));
}
template <detail::pod_api PodApi, class Token>
  requires detail::is_token_for<Token, remote_command_params>
auto async_attach(const PodApi& pods, std::string_view name, Token&& token) {
  return kube::async_attach(pods, name, defaults<remote_command_params>, std::forward<Token>(token));
}

}  // namespace kube
