#pragma once

// kube::api<T>: the typed client for one resource kind T (a generated type,
// or a CRD type from kube_add_crd_types), in one namespace, all namespaces,
// or cluster-wide. The guide is docs/guides/typed.md.
//
// This header brings in only the client and light headers; every response
// is decoded in compiled code (libkube) through the codec functions of T.

#include <kube/codec/codec.hpp>
#include <kube/typed/resource.hpp>
#include <kube/rest/client.hpp>
#include <kube/detail/default_options.hpp>
#include <kube/detail/typed_core.hpp>
#include <kube/typed/typed_operations.hpp>
#include <kube/typed/typed_watch.hpp>
#include <kube/rest/list_params.hpp>

#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace k8s::autoscaling::v1 {
struct Scale;  // <kube/k8s/autoscaling/v1/scale.hpp>; needed only by async_get_scale/async_replace_scale
}  // namespace k8s::autoscaling::v1

namespace kube {

namespace detail {
void typed_evict(typed_ptr t, std::string name, delete_params p, std::shared_ptr<api_status> out, typed_completion h);
}  // namespace detail

/// The typed client for resource kind T.
///
///   kube::api<k8s::core::v1::ConfigMap> cms(client, "demo");
///   auto cm = co_await cms.async_get("settings");          // k8s::core::v1::ConfigMap
///   auto all = co_await cms.async_list_all();              // k8s::core::v1::ConfigMapList
///
/// Construction: api(client) is cluster-wide for cluster-scoped kinds and
/// "all namespaces" for namespaced ones; api(client, ns) is bound to a
/// namespace (for a cluster-scoped kind it throws kube::error with
/// client_errc::invalid_config). An all-namespaces api can list and watch;
/// create/replace/apply use the object's metadata.namespace; operations by
/// name (get, patch, delete, subresources, logs) need a namespace and
/// complete with client_errc::invalid_config.
///
/// Every async_xxx is an Asio initiating function with completion signature
/// void(error_code, R); the default token kube::use_awaitable throws
/// kube::error carrying the server's Status. Tokens, executors and
/// cancellation are as kube::client's; async_list_all stops at the page in
/// flight. As in dynamic_api, names and bodies are std::string_view and
/// option structs const& defaulting to a static object, with token-only
/// overloads (see the g++ 12 caveat in docs/guides/client.md).
///
/// Writes (create, replace, apply, subresources) encode the object when the
/// call is made (the caller's object may go away before the operation
/// starts) and fill apiVersion and kind from resource_traits<T> when the
/// object leaves them empty.
///
/// Errors: kube.api codes with the server's Status; client_errc::decode_error
/// when a response does not fit the C++ type: the message names the
/// operation, the object and the field path ("get configmaps in namespace
/// demo \"a\": .data.k: expected a string, got an integer");
/// client_errc::invalid_config before any request for an empty name, a
/// missing namespace, or an apply without patch_params::field_manager.
///
/// Thread safety: like kube::client; copies are cheap and share the client.
template <class T>
  requires resource<T>
class api : public detail::default_options<api<T>>,
            public detail::typed_operations<T, typename resource_traits<T>::list_type> {
  using options = detail::default_options<api<T>>;
  using operations = detail::typed_operations<T, typename resource_traits<T>::list_type>;
  using operations::t_;

public:
  using value_type = T;
  using traits = resource_traits<T>;
  using list_type = typename traits::list_type;

  /// Cluster-scoped kinds, or all namespaces for namespaced kinds.
  explicit api(client c)
      : operations(detail::make_typed_target<T>(std::move(c), {})) {}
  /// One namespace (namespaced kinds only; throws kube::error otherwise).
  api(client c, std::string ns)
      : operations(detail::make_typed_target<T>(std::move(c), std::move(ns))) {
    detail::check_typed_target(*t_);
  }

  // get, list, list_all, list_shared, watch, patch, delete (typed_operations)
  using operations::namespace_name, operations::get_client, operations::async_get, operations::async_list,
      operations::async_list_all, operations::async_list_shared, operations::async_watch, operations::async_patch,
      operations::async_delete;

  // Token-only overloads: `async_list(token)`, `async_create(obj, token)` ...
  using options::async_list, options::async_list_all, options::async_list_shared, options::async_watch,
      options::async_create, options::async_replace, options::async_replace_status, options::async_patch,
      options::async_patch_status, options::async_apply, options::async_delete, options::async_evict;

  // ---- write ------------------------------------------------------------

  /// POST. Completion: void(error_code, T) — the object as stored.
  template <class Token = use_awaitable_t>
  auto async_create(const T& obj, const write_params& params = defaults<write_params>, Token&& token = {}) {
    return write_impl<T>(&detail::typed_create, detail::encode_write(*t_, obj, api_version(), kind()), {}, {}, params,
                         std::forward<Token>(token));
  }

  /// PUT; metadata.name names the target and metadata.resourceVersion makes
  /// it conditional (api_errc::conflict when someone else wrote first).
  template <class Token = use_awaitable_t>
  auto async_replace(const T& obj, const write_params& params = defaults<write_params>, Token&& token = {}) {
    return write_impl<T>(&detail::typed_replace, detail::encode_write(*t_, obj, api_version(), kind()), {}, {}, params,
                         std::forward<Token>(token));
  }

  /// PUT .../status: only the status is written (spec changes are ignored).
  template <class Token = use_awaitable_t>
  auto async_replace_status(const T& obj, const write_params& params = defaults<write_params>, Token&& token = {}) {
    return write_impl<T>(&detail::typed_replace, detail::encode_write(*t_, obj, api_version(), kind()), {}, "status",
                         params, std::forward<Token>(token));
  }

  /// PATCH .../status.
  template <class Token = use_awaitable_t>
  auto async_patch_status(std::string_view name, patch_type type, std::string_view body,
                          const patch_params& params = defaults<patch_params>, Token&& token = {}) {
    return this->template patch_impl<T>(name, type, std::string(body), "status", params, std::forward<Token>(token));
  }

  /// Server-side apply of `obj` (the fields this manager owns; unset
  /// optionals are not sent): needs params.field_manager; params.force takes
  /// over fields other managers own (else api_errc::conflict).
  template <class Token = use_awaitable_t>
  auto async_apply(const T& obj, const patch_params& params = defaults<patch_params>, Token&& token = {}) {
    auto b = detail::encode_typed(obj, api_version(), kind());
    auto name = b.name;
    return this->template patch_impl<T>(name, patch_type::apply, std::move(b.body), {}, params,
                                        std::forward<Token>(token));
  }

  /// Server-side apply of `obj` to the status subresource.
  template <class Token = use_awaitable_t>
  auto async_apply_status(const T& obj, const patch_params& params = defaults<patch_params>, Token&& token = {}) {
    auto b = detail::encode_typed(obj, api_version(), kind());
    auto name = b.name;
    return this->template patch_impl<T>(name, patch_type::apply, std::move(b.body), "status", params,
                                        std::forward<Token>(token));
  }

  /// DELETE of every object the selector matches (label/field selectors of
  /// `selector`). Completion: void(error_code, delete_result<list_type>):
  /// the list of deleted objects, or a Status.
  template <class Token = use_awaitable_t>
  auto async_delete_collection(const list_params& selector = defaults<list_params>,
                               const delete_params& params = defaults<delete_params>, Token&& token = {}) {
    return detail::typed_initiate<delete_result<list_type>>(
        [t = t_, s = selector, p = params](std::shared_ptr<delete_result<list_type>> out,
                                           detail::typed_completion h) mutable {
          detail::typed_delete_collection(std::move(t), std::move(s), std::move(p),
                                          detail::make_delete_slot<list_type>(std::move(out), {}), std::move(h));
        },
        std::forward<Token>(token));
  }

  // ---- subresources -------------------------------------------------------

  /// `GET <name>/<subresource>` decoded as U (a type with the codec functions).
  template <class U, class Token = use_awaitable_t>
  auto async_get_subresource(std::string_view subresource, std::string_view name, Token&& token = {}) {
    return detail::typed_initiate<U>(
        [t = t_, n = std::string(name), s = std::string(subresource)](std::shared_ptr<U> out,
                                                                      detail::typed_completion h) mutable {
          detail::typed_get(std::move(t), std::move(n), std::move(s), detail::make_decode_slot(std::move(out)),
                            std::move(h));
        },
        std::forward<Token>(token));
  }

  /// `PUT <name>/<subresource>` with body U; completes with the answer as U.
  /// apiVersion/kind are filled from `resource_traits<U>` when U has them.
  template <class U, class Token = use_awaitable_t>
  auto async_replace_subresource(std::string_view subresource, std::string_view name, const U& body,
                                 const write_params& params = defaults<write_params>, Token&& token = {}) {
    return write_impl<U>(&detail::typed_replace, encode_sub(body), name, subresource, params,
                         std::forward<Token>(token));
  }

  /// `POST <name>/<subresource>` with body U; completes with the answer as R
  /// (e.g. api_status for an eviction).
  template <class R, class U, class Token = use_awaitable_t>
  auto async_create_subresource(std::string_view subresource, std::string_view name, const U& body,
                                const write_params& params = defaults<write_params>, Token&& token = {}) {
    return write_impl<R>(&detail::typed_create, encode_sub(body), name, subresource, params,
                         std::forward<Token>(token));
  }

  /// `PATCH <name>/<subresource>`; completes with the answer as R.
  template <class R, class Token = use_awaitable_t>
  auto async_patch_subresource(std::string_view subresource, std::string_view name, patch_type type,
                               std::string_view body, const patch_params& params = defaults<patch_params>,
                               Token&& token = {}) {
    return this->template patch_impl<R>(name, type, std::string(body), subresource, params, std::forward<Token>(token));
  }

  /// `GET <name>/scale` as autoscaling/v1 Scale (include
  /// `<kube/k8s/autoscaling/v1/scale.hpp>`). For kinds with a scale
  /// subresource (Deployment, ReplicaSet, StatefulSet, CRDs declaring one).
  template <class S = k8s::autoscaling::v1::Scale, class Token = use_awaitable_t>
  auto async_get_scale(std::string_view name, Token&& token = {}) {
    return async_get_subresource<S>("scale", name, std::forward<Token>(token));
  }

  /// `PUT <name>/scale` (spec.replicas; metadata.resourceVersion makes it
  /// conditional).
  template <class S = k8s::autoscaling::v1::Scale, class Token = use_awaitable_t>
  auto async_replace_scale(std::string_view name, const S& scale, const write_params& params = defaults<write_params>,
                           Token&& token = {}) {
    return write_impl<S>(&detail::typed_replace, detail::encode_typed(scale, "autoscaling/v1", "Scale"), name, "scale",
                         params, std::forward<Token>(token));
  }

  /// `POST <name>/eviction` (policy/v1 Eviction; pods only): deletes the pod
  /// unless a PodDisruptionBudget forbids it (then api_errc::too_many_requests).
  /// `params` become the eviction's deleteOptions. Completion:
  /// void(error_code, api_status).
  template <class Token = use_awaitable_t>
  auto async_evict(std::string_view name, const delete_params& params = defaults<delete_params>, Token&& token = {}) {
    static_assert(is_pod(), "eviction is a subresource of core/v1 pods");
    return detail::typed_initiate<api_status>(
        [t = t_, n = std::string(name), p = params](std::shared_ptr<api_status> out,
                                                    detail::typed_completion h) mutable {
          detail::typed_evict(std::move(t), std::move(n), std::move(p), std::move(out), std::move(h));
        },
        std::forward<Token>(token));
  }

  // Token-only overloads of the subresource writes (the others: default_options).
  template <class U, class Token>
    requires(!std::is_convertible_v<Token, const write_params&>)
  auto async_replace_subresource(std::string_view subresource, std::string_view name, const U& body, Token&& token) {
    return async_replace_subresource(subresource, name, body, defaults<write_params>, std::forward<Token>(token));
  }
  template <class R, class U, class Token>
    requires(!std::is_convertible_v<Token, const write_params&>)
  auto async_create_subresource(std::string_view subresource, std::string_view name, const U& body, Token&& token) {
    return async_create_subresource<R>(subresource, name, body, defaults<write_params>, std::forward<Token>(token));
  }

private:
  static constexpr bool is_pod() {
    return traits::group == std::string_view() && traits::plural == std::string_view("pods");
  }
  std::string_view api_version() const noexcept { return t_->api_version; }
  static constexpr std::string_view kind() noexcept { return traits::kind; }

  template <class U>
  static detail::typed_body encode_sub(const U& body) {
    if constexpr (resource<U>) {
      using ut = resource_traits<U>;
      const std::string av = ut::group == std::string_view() ? std::string(ut::version)
                                                             : std::string(ut::group) + "/" + std::string(ut::version);
      return detail::encode_typed(body, av, ut::kind);
    } else {
      return detail::encode_typed(body);
    }
  }

  using write_fn = void (*)(detail::typed_ptr, detail::typed_body, std::string, std::string, write_params,
                            detail::decode_slot, detail::typed_completion);

  template <class R, class Token>
  auto write_impl(write_fn fn, detail::typed_body body, std::string_view name, std::string_view subresource,
                  const write_params& params, Token&& token) {
    return detail::typed_initiate<R>(
        [fn, t = t_, b = std::move(body), n = std::string(name), s = std::string(subresource),
         p = params](std::shared_ptr<R> out, detail::typed_completion h) mutable {
          fn(std::move(t), std::move(b), std::move(n), std::move(s), std::move(p),
             detail::make_decode_slot(std::move(out)), std::move(h));
        },
        std::forward<Token>(token));
  }
};

}  // namespace kube
