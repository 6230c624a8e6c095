#pragma once

// An API group and version ("apps/v1", or "v1" for the core group).

#include <compare>
#include <optional>
#include <string>
#include <string_view>

namespace kube {

/// An API group and version, as an object's `apiVersion` names it.
///
/// The core group is the empty string: `apiVersion: v1` is {"", "v1"}.
///
/// Thread safety: a plain value; distinct objects may be used concurrently.
struct group_version {
  std::string group;    ///< "" for the core group ("apps", "example.com", ...)
  std::string version;  ///< "v1", "v1beta2", ...

  /// Parses an `apiVersion` string: "v1" -> {"", "v1"}, "apps/v1" -> {"apps", "v1"}.
  /// Returns nullopt for text that is not a group/version: empty, an empty
  /// version ("apps/"), more than one '/', or whitespace.
  [[nodiscard]] static std::optional<group_version> parse(std::string_view api_version);

  /// The `apiVersion` spelling: "v1" for the core group, else "group/version".
  [[nodiscard]] std::string str() const;

  friend bool operator==(const group_version&, const group_version&) = default;
  friend auto operator<=>(const group_version&, const group_version&) = default;
};

}  // namespace kube
