#pragma once

// kube::metadata_api: the metadata-only client (client-go's
// k8s.io/client-go/metadata). The server answers with meta.k8s.io/v1
// PartialObjectMetadata(List): apiVersion, kind and metadata, nothing else.
//
// Unlike the rest of libkube's headers this one names generated types
// (k8s::meta::v1::PartialObjectMetadata, ObjectMeta): link kube::api.

#include <kube/api/meta/v1/partial_object_metadata.hpp>
#include <kube/api/meta/v1/partial_object_metadata_list.hpp>
#include <kube/rest/client.hpp>
#include <kube/detail/default_options.hpp>
#include <kube/detail/typed_core.hpp>
#include <kube/discovery/group_version_resource.hpp>
#include <kube/rest/list_params.hpp>
#include <kube/typed/typed_watch.hpp>

#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace kube {

/// One object's metadata as the server sends it for a metadata-only request.
using partial_object_metadata = k8s::meta::v1::PartialObjectMetadata;
/// A page of partial_object_metadata.
using partial_object_metadata_list = k8s::meta::v1::PartialObjectMetadataList;

/// Accept header of metadata-only get, watch and writes: PartialObjectMetadata
/// as JSON, else plain JSON (the whole object; see metadata_api).
inline constexpr std::string_view partial_object_metadata_accept =
    "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json";
/// Accept header of metadata-only lists: PartialObjectMetadataList as JSON,
/// else plain JSON.
inline constexpr std::string_view partial_object_metadata_list_accept =
    "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";

/// True when `obj` is what a metadata-only request asked for (kind
/// PartialObjectMetadata), false when the server ignored the `as=` parameter
/// and sent the whole object (its other members are then in unknown_fields).
[[nodiscard]] inline bool is_partial_object_metadata(const partial_object_metadata& obj) noexcept {
  return obj.kind && *obj.kind == "PartialObjectMetadata";
}

/// Drops every member but apiVersion, kind and metadata (the body of a whole
/// object that a server sent instead of PartialObjectMetadata).
inline void keep_metadata_only(partial_object_metadata& obj) noexcept { obj.unknown_fields.clear(); }

namespace detail {
inline typed_ptr make_metadata_target(client c, const group_version_resource& gvr, std::string ns) {
  auto t = std::make_shared<typed_target>(typed_target{std::move(c), {}, {}, {}, {}, {}, true, {}, {}, {}, {}});
  t->group = gvr.group;
  t->version = gvr.version;
  t->api_version = gvr.group.empty() ? gvr.version : gvr.group + "/" + gvr.version;
  t->kind = "PartialObjectMetadata";
  t->plural = gvr.resource;
  // As dynamic_api: a namespace given addresses it; none means cluster-scoped
  // objects, or all namespaces for list and watch.
  t->namespaced = !ns.empty();
  t->namespace_name = std::move(ns);
  t->accept_object = partial_object_metadata_accept;
  t->accept_list = partial_object_metadata_list_accept;
  return t;
}
}  // namespace detail

/// The metadata-only client for one resource (group/version/resource), in
/// one namespace or cluster-wide / all namespaces: get, list (one page or
/// all pages), watch, patch and delete, answered as
/// kube::partial_object_metadata (k8s::meta::v1::PartialObjectMetadata:
/// apiVersion "meta.k8s.io/v1", kind "PartialObjectMetadata", the object's
/// ObjectMeta). Works for every resource, built-in or custom, whose objects
/// have ObjectMeta; the resource is given at run time as with dynamic_api.
///
///   kube::metadata_api cms(client, {"", "v1", "configmaps"}, "demo");
///   auto md = co_await cms.async_get("settings");   // labels, annotations, ... no data
///   auto all = co_await cms.async_list_all();       // partial_object_metadata_list
///
/// Requests carry `Accept: application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json`
/// (lists: `as=PartialObjectMetadataList`). The plain `application/json`
/// fallback is client-go's: a server that cannot convert (an aggregated API
/// server built without the conversion) then sends the whole object instead
/// of refusing with 406. Such an answer decodes too — apiVersion/kind are
/// the object's own and its other members land in unknown_fields — so
/// is_partial_object_metadata() tells the two apart and keep_metadata_only()
/// drops the rest (the metadata informer does both).
///
/// Every async_xxx is an Asio initiating function with completion signature
/// void(error_code, R), as kube::api<T>; the default token kube::use_awaitable
/// throws kube::error with the server's Status. Errors: kube.api codes with
/// the Status; client_errc::decode_error when an answer does not fit (the
/// message names the operation and the field path, e.g. `get configmaps in
/// namespace demo "x": .metadata.labels: expected an object, got an
/// array`); client_errc::invalid_config before any request for an empty
/// name or an apply without patch_params::field_manager. Names and bodies
/// are std::string_view and option structs const& defaulting to a static
/// object (see the g++ 12 caveat in docs/guides/client.md).
///
/// Thread safety: like kube::client; copies are cheap and share the client.
class metadata_api : public detail::default_options<metadata_api> {
  using options = detail::default_options<metadata_api>;

public:
  /// `namespace_name` empty: cluster-scoped objects, or all namespaces for
  /// list and watch of namespaced ones.
  metadata_api(client c, group_version_resource gvr, std::string namespace_name = {})
      : gvr_(std::move(gvr)),
        t_(detail::make_metadata_target(std::move(c), gvr_, std::move(namespace_name))) {}

  [[nodiscard]] const group_version_resource& resource() const noexcept { return gvr_; }
  [[nodiscard]] const std::string& namespace_name() const noexcept { return t_->namespace_name; }
  [[nodiscard]] const client& get_client() const noexcept { return t_->c; }

  // Token-only overloads: `async_list(token)`, `async_watch(token)` ...
  using options::async_list, options::async_list_all, options::async_watch, options::async_patch, options::async_delete;

  /// GET one object's metadata. Completion: void(error_code, partial_object_metadata).
  template <class Token = use_awaitable_t>
  auto async_get(std::string_view name, Token&& token = {}) {
    return detail::typed_initiate<partial_object_metadata>(
        [t = t_, n = std::string(name)](std::shared_ptr<partial_object_metadata> out,
                                        detail::typed_completion h) mutable {
          detail::typed_get(std::move(t), std::move(n), {}, detail::make_decode_slot(std::move(out)), std::move(h));
        },
        std::forward<Token>(token));
  }

  /// One page (params.limit / continue_token); the list's metadata carries
  /// resourceVersion and the next page's continue token.
  /// Completion: void(error_code, partial_object_metadata_list).
  template <class Token = use_awaitable_t>
  auto async_list(const list_params& params = defaults<list_params>, Token&& token = {}) {
    return list_impl(params, false, std::forward<Token>(token));
  }

  /// Every page, following continue tokens (page size params.limit, default
  /// 500); an expired continue token starts over with one full list, as
  /// client-go's pager.
  template <class Token = use_awaitable_t>
  auto async_list_all(const list_params& params = defaults<list_params>, Token&& token = {}) {
    return list_impl(params, true, std::forward<Token>(token));
  }

  /// One page, each item decoded straight into its own shared_ptr (see
  /// api<T>::async_list_shared). Completion:
  /// void(error_code, shared_list<partial_object_metadata>).
  template <class Token = use_awaitable_t>
  auto async_list_shared(const list_params& params = defaults<list_params>, Token&& token = {}) {
    using L = shared_list<partial_object_metadata>;
    return detail::typed_initiate<L>(
        [t = t_, p = params](std::shared_ptr<L> out, detail::typed_completion h) mutable {
          detail::typed_list(std::move(t), std::move(p), false,
                             detail::make_shared_list_slot<partial_object_metadata>(std::move(out)), std::move(h));
        },
        std::forward<Token>(token));
  }

  /// Opens a watch whose events carry partial_object_metadata (see
  /// typed_watch_stream). Completion:
  /// `void(error_code, typed_watch_stream<partial_object_metadata>)`.
  template <class Token = use_awaitable_t>
  auto async_watch(const watch_params& params = defaults<watch_params>, Token&& token = {}) {
    using stream = typed_watch_stream<partial_object_metadata>;
    return detail::initiate<stream>(
        [t = t_, p = params](detail::completion<stream> h) mutable {
          auto raw = std::make_shared<watch_stream>();
          auto keep = raw;
          auto target = t;
          detail::typed_completion done(watch_deliver{{std::move(h)}, std::move(target), std::move(raw)});
          detail::typed_watch_open(std::move(t), std::move(p), std::move(keep), std::move(done));
        },
        std::forward<Token>(token));
  }

  /// PATCH (JSON, merge or apply; strategic merge for built-in kinds only);
  /// completes with the patched object's metadata. A merge patch of
  /// `{"metadata":{"labels":{...}}}` is the usual use.
  template <class Token = use_awaitable_t>
  auto async_patch(std::string_view name, patch_type type, std::string_view body,
                   const patch_params& params = defaults<patch_params>, Token&& token = {}) {
    return detail::typed_initiate<partial_object_metadata>(
        [t = t_, n = std::string(name), type, b = std::string(body),
         p = params](std::shared_ptr<partial_object_metadata> out, detail::typed_completion h) mutable {
          detail::typed_patch(std::move(t), std::move(n), type, std::move(b), {}, std::move(p),
                              detail::make_decode_slot(std::move(out)), std::move(h));
        },
        std::forward<Token>(token));
  }

  /// DELETE. Completion: `void(error_code, delete_result<partial_object_metadata>)`:
  /// the object's metadata when the deletion is not immediate (finalizers,
  /// foreground propagation) or the server returns the deleted object, else
  /// the Status "Success".
  template <class Token = use_awaitable_t>
  auto async_delete(std::string_view name, const delete_params& params = defaults<delete_params>, Token&& token = {}) {
    using result_type = delete_result<partial_object_metadata>;
    return detail::typed_initiate<result_type>(
        [t = t_, n = std::string(name), p = params](std::shared_ptr<result_type> out,
                                                    detail::typed_completion h) mutable {
          detail::typed_delete(
              std::move(t), std::move(n), std::move(p),
              detail::make_delete_slot<partial_object_metadata>(std::move(out), "PartialObjectMetadata"), std::move(h));
        },
        std::forward<Token>(token));
  }

private:
  // Completes with the opened stream wrapped as a typed stream.
  struct watch_deliver : detail::handler_wrapper<detail::completion<typed_watch_stream<partial_object_metadata>>> {
    detail::typed_ptr t;
    std::shared_ptr<watch_stream> raw;
    void operator()(error_code ec, diagnostics diag, detail::typed_done) {
      using stream = typed_watch_stream<partial_object_metadata>;
      if (ec) {
        std::move(this->handler)(ec, std::move(diag), stream{});
      } else {
        std::move(this->handler)(ec, std::move(diag), stream(std::move(t), std::move(*raw)));
      }
    }
  };

  template <class Token>
  auto list_impl(const list_params& params, bool all, Token&& token) {
    return detail::typed_initiate<partial_object_metadata_list>(
        [t = t_, p = params, all](std::shared_ptr<partial_object_metadata_list> out,
                                  detail::typed_completion h) mutable {
          detail::typed_list(std::move(t), std::move(p), all, detail::make_list_slot(std::move(out)), std::move(h));
        },
        std::forward<Token>(token));
  }

  group_version_resource gvr_;
  detail::typed_ptr t_;
};

}  // namespace kube
