#pragma once

// What discovery knows about one resource at one group/version.

#include <kube/discovery/group_version_kind.hpp>
#include <kube/discovery/group_version_resource.hpp>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace kube {

/// A subresource of an api_resource ("status", "scale", "log", ...).
///
/// Thread safety: a plain value.
struct api_subresource {
  std::string name;                  ///< "status" (the part after '/')
  group_version_kind response_kind;  ///< what the subresource returns; group/version filled
                                     ///< with the parent's when the server leaves them empty
  std::vector<std::string> verbs;    ///< server order

  friend bool operator==(const api_subresource&, const api_subresource&) = default;
};

/// One resource as served at one group/version, from aggregated or legacy
/// discovery (both decode to the same value).
///
/// Thread safety: a plain value; distinct objects may be used concurrently.
struct api_resource {
  std::string group;                     ///< the group it is served in ("" = core)
  std::string version;                   ///< the version it is served at
  std::string kind;                      ///< "Deployment"
  std::string plural;                    ///< the resource name in URLs: "deployments"
  std::string singular;                  ///< "deployment"; guessed from the kind (lower case) if the server gives none
  bool namespaced = false;               ///< false: cluster-scoped (namespaces, nodes, CRDs)
  std::vector<std::string> verbs;        ///< "get", "list", "watch", ... in server order
  std::vector<std::string> short_names;  ///< "deploy"
  std::vector<std::string> categories;   ///< "all"
  std::vector<api_subresource> subresources;

  [[nodiscard]] group_version group_version_of() const { return {group, version}; }
  [[nodiscard]] group_version_resource gvr() const { return {group, version, plural}; }
  [[nodiscard]] group_version_kind gvk() const { return {group, version, kind}; }

  /// True if the server lists `verb` for this resource ("watch", "patch", ...).
  [[nodiscard]] bool supports(std::string_view verb) const {
    return std::find(verbs.begin(), verbs.end(), verb) != verbs.end();
  }
  /// The subresource called `name`, or nullptr.
  [[nodiscard]] const api_subresource* subresource(std::string_view name) const {
    for (const auto& s : subresources)
      if (s.name == name) return &s;
    return nullptr;
  }

  friend bool operator==(const api_resource&, const api_resource&) = default;
};

}  // namespace kube
