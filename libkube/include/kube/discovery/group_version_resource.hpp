#pragma once

// A resource (URL path segment) in a group/version ("apps/v1, Resource=deployments").

#include <kube/discovery/group_version.hpp>

#include <compare>
#include <string>

namespace kube {

/// A resource in a group and version: what a REST path names
/// (`/apis/apps/v1/namespaces/ns/deployments`).
///
/// In lookups (rest_mapper::kind_for) an empty group means "any group, the
/// core group first" and an empty version "the preferred version", as
/// client-go's RESTMapper reads a partial GroupVersionResource.
///
/// Thread safety: a plain value; distinct objects may be used concurrently.
struct group_version_resource {
  std::string group;     ///< "" for the core group (or "any" in lookups)
  std::string version;   ///< "" only in lookups
  std::string resource;  ///< the plural, lower case: "deployments"

  [[nodiscard]] group_version group_version_of() const { return {group, version}; }
  /// client-go's spelling: "apps/v1, Resource=deployments".
  [[nodiscard]] std::string str() const;

  friend bool operator==(const group_version_resource&, const group_version_resource&) = default;
  friend auto operator<=>(const group_version_resource&, const group_version_resource&) = default;
};

}  // namespace kube
