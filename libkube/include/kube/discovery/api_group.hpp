#pragma once

// One API group with its served versions and their resources.

#include <kube/discovery/api_resource.hpp>
#include <kube/error.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace kube {

/// An API group as discovery reports it: its versions in the server's
/// preference order and, per version, the resources served there.
///
/// Thread safety: a plain value; distinct objects may be used concurrently.
struct api_group {
  /// One served version of the group.
  struct version_entry {
    std::string version;                  ///< "v1"
    std::vector<api_resource> resources;  ///< top-level resources (subresources are folded in)
    /// Set when this version's resources could not be discovered: stale in
    /// aggregated discovery, or its legacy APIResourceList failed (e.g. an
    /// aggregated APIService that is down). Its resources are then empty and
    /// the rest of discovery is still usable, as in client-go.
    error_code failure{};
    std::string failure_message;  ///< why, when failure is set (never holds credentials)

    friend bool operator==(const version_entry&, const version_entry&) = default;
  };

  std::string name;                     ///< "" for the core group
  std::string preferred_version;        ///< the server's preferred version ("" if none is usable)
  std::vector<version_entry> versions;  ///< server order (preferred first on real servers)

  /// The entry for `version`, or nullptr.
  [[nodiscard]] const version_entry* find_version(std::string_view v) const {
    for (const auto& e : versions)
      if (e.version == v) return &e;
    return nullptr;
  }

  friend bool operator==(const api_group&, const api_group&) = default;
};

}  // namespace kube
