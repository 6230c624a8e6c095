#pragma once

// A kind at a group/version ("apps/v1, Kind=Deployment").

#include <kube/discovery/group_version.hpp>

#include <compare>
#include <optional>
#include <string>
#include <string_view>

namespace kube {

/// A kind in a group and version: what an object's `apiVersion` + `kind` say.
///
/// Lookups (rest_mapper::resource_for) accept an empty version, meaning "the
/// server's preferred version of this group".
///
/// Thread safety: a plain value; distinct objects may be used concurrently.
struct group_version_kind {
  std::string group;    ///< "" for the core group
  std::string version;  ///< "" only in lookups: "any, preferred first"
  std::string kind;     ///< as the API spells it: "Deployment"

  /// From an object's `apiVersion` and `kind`; nullopt if apiVersion is malformed.
  [[nodiscard]] static std::optional<group_version_kind> from_api_version(std::string_view api_version,
                                                                          std::string_view kind);

  [[nodiscard]] group_version group_version_of() const { return {group, version}; }
  /// "v1" or "apps/v1".
  [[nodiscard]] std::string api_version() const { return group_version_of().str(); }
  /// client-go's spelling: "apps/v1, Kind=Deployment" (core: "/v1, Kind=Pod").
  [[nodiscard]] std::string str() const;

  friend bool operator==(const group_version_kind&, const group_version_kind&) = default;
  friend auto operator<=>(const group_version_kind&, const group_version_kind&) = default;
};

}  // namespace kube
