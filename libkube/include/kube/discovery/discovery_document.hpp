#pragma once

// Everything a server's discovery reports, and the decoders of the documents
// it is built from (aggregated apidiscovery.k8s.io/v2 and legacy discovery).

#include <kube/discovery/api_group.hpp>
#include <kube/diagnostics.hpp>
#include <kube/error.hpp>
#include <kube/discovery/group_version.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace kube {

/// What a server serves: its API groups (the core group "" first, then the
/// groups of `/apis` in the server's order), their versions and resources.
///
/// Built by discovery_planner from the server's answers, or read back from
/// discovery_cache. rest_mapper answers kind <-> resource questions from it.
///
/// Decoders: the static parse_* functions take one document's bytes and a
/// `source` (the URL path, used only in messages). On malformed input they
/// return client_errc::decode_error and put in `diag` a message naming the
/// source, the document kind and the field path ("/apis: APIGroupDiscoveryList:
/// items[3].versions[0].resources[2].scope: expected \"Namespaced\" or
/// \"Cluster\", got \"Global\""). Unknown fields are ignored (newer servers add
/// fields); a resource without a responseKind is skipped, as client-go does.
///
/// Thread safety: a plain value; concurrent const use is safe.
struct discovery_document {
  std::vector<api_group> groups;

  /// The group called `name` ("" = core), or nullptr.
  [[nodiscard]] const api_group* find_group(std::string_view name) const;

  /// The resources served at `gv`, or nullptr if that group/version is not served.
  [[nodiscard]] const std::vector<api_resource>* resources_of(const group_version& gv) const;

  /// False if some group/version's resources could not be discovered
  /// (api_group::version_entry::failure is set).
  [[nodiscard]] bool complete() const;

  /// Writes the whole document as one apidiscovery.k8s.io/v2
  /// APIGroupDiscoveryList (the core group is the item with an empty name);
  /// failed versions are written with freshness "Stale". parse_aggregated
  /// reads it back to an equal document (except that failures read back as
  /// api_errc::service_unavailable). Used by discovery_cache.
  [[nodiscard]] std::string to_json() const;

  /// Aggregated discovery: an APIGroupDiscoveryList (apidiscovery.k8s.io/v2 or
  /// v2beta1) from `/api` or `/apis`. Appends its groups to `out`. A version
  /// with freshness "Stale" is kept with no resources and failure set to
  /// api_errc::service_unavailable, and is never the preferred version.
  [[nodiscard]] static error_code parse_aggregated(std::string_view body, std::string_view source,
                                                   std::vector<api_group>& out, diagnostics& diag);

  /// Legacy `/api`: an APIVersions document. Sets `out` to its versions.
  [[nodiscard]] static error_code parse_api_versions(std::string_view body, std::string_view source,
                                                     std::vector<std::string>& out, diagnostics& diag);

  /// Legacy `/apis`: an APIGroupList. Appends its groups to `out`, with
  /// versions and preferred version but no resources yet.
  [[nodiscard]] static error_code parse_group_list(std::string_view body, std::string_view source,
                                                   std::vector<api_group>& out, diagnostics& diag);

  /// Legacy `/api/v1` or `/apis/<group>/<version>`: an APIResourceList whose
  /// groupVersion must be `expected`. Sets `out` to its resources, with the
  /// "parent/sub" entries folded into the parents' subresources.
  [[nodiscard]] static error_code parse_resource_list(std::string_view body, std::string_view source,
                                                      const group_version& expected, std::vector<api_resource>& out,
                                                      diagnostics& diag);

  friend bool operator==(const discovery_document&, const discovery_document&) = default;
};

}  // namespace kube
