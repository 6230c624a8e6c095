#pragma once

// kube::metadata_api: the metadata-only client (client-go's
// k8s.io/client-go/metadata). The server answers with meta.k8s.io/v1
// PartialObjectMetadata(List): apiVersion, kind and metadata, nothing else.
//
// Unlike the rest of libkube's headers this one names generated types
// (k8s::meta::v1::PartialObjectMetadata, ObjectMeta): link kube::k8s.

#include <kube/k8s/meta/v1/partial_object_metadata.hpp>
#include <kube/k8s/meta/v1/partial_object_metadata_list.hpp>
#include <kube/rest/client.hpp>
#include <kube/detail/default_options.hpp>
#include <kube/detail/typed_core.hpp>
#include <kube/discovery/group_version_resource.hpp>
#include <kube/rest/list_params.hpp>
#include <kube/typed/typed_operations.hpp>

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
  // Watch events read straight into partial_object_metadata as the decoder
  // frames them, as api<T>'s (JSON: the Accept headers above ask for it).
  t->objects = object_reader_of<partial_object_metadata>();
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
class metadata_api : public detail::default_options<metadata_api>,
                     public detail::typed_operations<partial_object_metadata, partial_object_metadata_list> {
  using options = detail::default_options<metadata_api>;
  using operations = detail::typed_operations<partial_object_metadata, partial_object_metadata_list>;

public:
  /// `ns` empty: cluster-scoped objects, or all namespaces for list and
  /// watch of namespaced ones.
  metadata_api(client c, group_version_resource gvr, std::string ns = {})
      : operations(detail::make_metadata_target(std::move(c), gvr, std::move(ns))),
        gvr_(std::move(gvr)) {}

  [[nodiscard]] const group_version_resource& resource() const noexcept { return gvr_; }

  /// get, list (one page, every page, shared items), watch (events carry
  /// partial_object_metadata), patch (a merge patch of
  /// `{"metadata":{"labels":{...}}}` is the usual use) and delete
  /// (`delete_result<partial_object_metadata>`), as kube::api<T>'s.
  using operations::namespace_name, operations::get_client, operations::async_get, operations::async_list,
      operations::async_list_all, operations::async_list_shared, operations::async_watch, operations::async_patch,
      operations::async_delete;
  // Token-only overloads: `async_list(token)`, `async_watch(token)` ...
  using options::async_list, options::async_list_all, options::async_list_shared, options::async_watch,
      options::async_patch, options::async_delete;

private:
  group_version_resource gvr_;
};

}  // namespace kube
