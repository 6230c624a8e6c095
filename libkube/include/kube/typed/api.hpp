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
#include <kube/typed/typed_watch.hpp>
#include <kube/rest/list_params.hpp>

#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace k8s::autoscaling::v1 {
struct Scale;  // <kube/api/autoscaling/v1/scale.hpp>; needed only by async_get_scale/async_replace_scale
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
class api : public detail::default_options<api<T>> {
  using options = detail::default_options<api<T>>;

public:
  using value_type = T;
  using traits = resource_traits<T>;
  using list_type = typename traits::list_type;

  /// Cluster-scoped kinds, or all namespaces for namespaced kinds.
  explicit api(client c)
      : t_(detail::make_typed_target<T>(std::move(c), {})) {}
  /// One namespace (namespaced kinds only; throws kube::error otherwise).
  api(client c, std::string namespace_name)
      : t_(detail::make_typed_target<T>(std::move(c), std::move(namespace_name))) {
    detail::check_typed_target(*t_);
  }

  [[nodiscard]] const std::string& namespace_name() const noexcept { return t_->namespace_name; }
  [[nodiscard]] const client& get_client() const noexcept { return t_->c; }

  // Token-only overloads: `async_list(token)`, `async_create(obj, token)` ...
  using options::async_list, options::async_list_all, options::async_list_shared, options::async_watch,
      options::async_create, options::async_replace, options::async_replace_status, options::async_patch,
      options::async_patch_status, options::async_apply, options::async_delete, options::async_evict;

  // ---- read -------------------------------------------------------------

  /// GET one object. Completion: void(error_code, T).
  template <class Token = use_awaitable_t>
  auto async_get(std::string_view name, Token&& token = {}) {
    return detail::typed_initiate<T>(
        [t = t_, n = std::string(name)](std::shared_ptr<T> out, detail::typed_completion h) mutable {
          detail::typed_get(std::move(t), std::move(n), {}, detail::make_decode_slot(std::move(out)), std::move(h));
        },
        std::forward<Token>(token));
  }

  /// One page (params.limit / continue_token); the list's metadata carries
  /// resourceVersion and the continue token of the next page.
  /// Completion: void(error_code, list_type).
  template <class Token = use_awaitable_t>
  auto async_list(const list_params& params = defaults<list_params>, Token&& token = {}) {
    return list_impl(params, false, std::forward<Token>(token));
  }

  /// Every page, following continue tokens (page size params.limit, default
  /// 500); each page is decoded as it arrives. If a continue token expires
  /// (410), starts over with one unpaginated list, as client-go's pager.
  /// The result's metadata is the first page's without continue/remaining
  /// count (all pages are one consistent snapshot at that resourceVersion).
  template <class Token = use_awaitable_t>
  auto async_list_all(const list_params& params = defaults<list_params>, Token&& token = {}) {
    return list_impl(params, true, std::forward<Token>(token));
  }

  /// Like async_list (one page), but each item is decoded straight into its
  /// own std::shared_ptr<T> and no list_type is built (see shared_list):
  /// for callers that keep the items shared, as informers do.
  /// Completion: void(error_code, shared_list<T>).
  template <class Token = use_awaitable_t>
  auto async_list_shared(const list_params& params = defaults<list_params>, Token&& token = {}) {
    return detail::typed_initiate<shared_list<T>>(
        [t = t_, p = params](std::shared_ptr<shared_list<T>> out, detail::typed_completion h) mutable {
          detail::typed_list(std::move(t), std::move(p), false, detail::make_shared_list_slot<T>(std::move(out)),
                             std::move(h));
        },
        std::forward<Token>(token));
  }

  /// Opens a watch (see typed_watch_stream). A refused watch (410 for a
  /// too old resourceVersion, 403) fails here with the server's Status.
  /// Completion: void(error_code, typed_watch_stream<T>).
  template <class Token = use_awaitable_t>
  auto async_watch(const watch_params& params = defaults<watch_params>, Token&& token = {}) {
    return detail::initiate<typed_watch_stream<T>>(
        [t = t_, p = params](detail::completion<typed_watch_stream<T>> h) mutable {
          auto raw = std::make_shared<watch_stream>();
          auto keep = raw;
          auto target = t;
          detail::typed_completion done(watch_deliver{{std::move(h)}, std::move(target), std::move(raw)});
          detail::typed_watch_open(std::move(t), std::move(p), std::move(keep), std::move(done));
        },
        std::forward<Token>(token));
  }

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

  /// PATCH with a body in the given format: patch_type::json (RFC 6902
  /// array), merge (RFC 7386), strategic_merge (built-in kinds only), or
  /// apply (a partial object as JSON; prefer async_apply).
  template <class Token = use_awaitable_t>
  auto async_patch(std::string_view name, patch_type type, std::string_view body,
                   const patch_params& params = defaults<patch_params>, Token&& token = {}) {
    return patch_impl<T>(name, type, std::string(body), {}, params, std::forward<Token>(token));
  }

  /// PATCH .../status.
  template <class Token = use_awaitable_t>
  auto async_patch_status(std::string_view name, patch_type type, std::string_view body,
                          const patch_params& params = defaults<patch_params>, Token&& token = {}) {
    return patch_impl<T>(name, type, std::string(body), "status", params, std::forward<Token>(token));
  }

  /// Server-side apply of `obj` (the fields this manager owns; unset
  /// optionals are not sent): needs params.field_manager; params.force takes
  /// over fields other managers own (else api_errc::conflict).
  template <class Token = use_awaitable_t>
  auto async_apply(const T& obj, const patch_params& params = defaults<patch_params>, Token&& token = {}) {
    auto b = detail::encode_typed(obj, api_version(), kind());
    auto name = b.name;
    return patch_impl<T>(name, patch_type::apply, std::move(b.body), {}, params, std::forward<Token>(token));
  }

  /// Server-side apply of `obj` to the status subresource.
  template <class Token = use_awaitable_t>
  auto async_apply_status(const T& obj, const patch_params& params = defaults<patch_params>, Token&& token = {}) {
    auto b = detail::encode_typed(obj, api_version(), kind());
    auto name = b.name;
    return patch_impl<T>(name, patch_type::apply, std::move(b.body), "status", params, std::forward<Token>(token));
  }

  /// DELETE. Completion: void(error_code, delete_result<T>) holding what the
  /// server answered: the object when the deletion is not immediate (still
  /// present with a deletionTimestamp while finalizers, foreground
  /// propagation or graceful termination run) or when the kind's registry
  /// returns deleted objects; otherwise a Status "Success" whose details
  /// name the object (e.g. an immediate ConfigMap delete). Preconditions
  /// (UID, resourceVersion) that do not hold fail with api_errc::conflict;
  /// a dry run deletes nothing.
  template <class Token = use_awaitable_t>
  auto async_delete(std::string_view name, const delete_params& params = defaults<delete_params>, Token&& token = {}) {
    return detail::typed_initiate<delete_result<T>>(
        [t = t_, n = std::string(name), p = params](std::shared_ptr<delete_result<T>> out,
                                                    detail::typed_completion h) mutable {
          detail::typed_delete(std::move(t), std::move(n), std::move(p),
                               detail::make_delete_slot<T>(std::move(out), traits::kind), std::move(h));
        },
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
    return patch_impl<R>(name, type, std::string(body), subresource, params, std::forward<Token>(token));
  }

  /// `GET <name>/scale` as autoscaling/v1 Scale (include
  /// `<kube/api/autoscaling/v1/scale.hpp>`). For kinds with a scale
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
  detail::typed_ptr t_;

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

  // Completes with the opened stream wrapped as typed_watch_stream<T>.
  struct watch_deliver : detail::handler_wrapper<detail::completion<typed_watch_stream<T>>> {
    detail::typed_ptr t;
    std::shared_ptr<watch_stream> raw;
    void operator()(error_code ec, diagnostics diag, detail::typed_done) {
      if (ec) {
        std::move(this->handler)(ec, std::move(diag), typed_watch_stream<T>{});
      } else {
        std::move(this->handler)(ec, std::move(diag), typed_watch_stream<T>(std::move(t), std::move(*raw)));
      }
    }
  };

  template <class Token>
  auto list_impl(const list_params& params, bool all, Token&& token) {
    return detail::typed_initiate<list_type>(
        [t = t_, p = params, all](std::shared_ptr<list_type> out, detail::typed_completion h) mutable {
          detail::typed_list(std::move(t), std::move(p), all, detail::make_list_slot(std::move(out)), std::move(h));
        },
        std::forward<Token>(token));
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

  template <class R, class Token>
  auto patch_impl(std::string_view name, patch_type type, std::string body, std::string_view subresource,
                  const patch_params& params, Token&& token) {
    return detail::typed_initiate<R>(
        [t = t_, n = std::string(name), type, b = std::move(body), s = std::string(subresource),
         p = params](std::shared_ptr<R> out, detail::typed_completion h) mutable {
          detail::typed_patch(std::move(t), std::move(n), type, std::move(b), std::move(s), std::move(p),
                              detail::make_decode_slot(std::move(out)), std::move(h));
        },
        std::forward<Token>(token));
  }
};

}  // namespace kube
