#pragma once

// Comparing resourceVersions.
//
// Kubernetes long said a resourceVersion is opaque: compare two only for
// equality. Since 1.35 (KEP-5504) the apiserver guarantees that the
// resourceVersions of one resource type are decimal integers without
// leading zeros that grow with every change, so two may be ordered by
// comparing them as numbers. An apiserver backed by etcd has always handed
// out etcd's revision, which is such a number; other backends (an
// aggregated API server, a fake) may not. Header-only.

#include <compare>
#include <optional>
#include <string_view>

namespace kube {

/// True when `rv` is a decimal integer without leading zeros ("0" itself
/// is one): what KEP-5504 promises for resourceVersions.
[[nodiscard]] constexpr bool is_ordered_resource_version(std::string_view rv) noexcept {
  if (rv.empty() || (rv.size() > 1 && rv.front() == '0')) return false;
  for (const char c : rv) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

/// The order of two resourceVersions of one resource type as numbers (of
/// any length: no overflow); nullopt when either is not such a number
/// (is_ordered_resource_version).
[[nodiscard]] constexpr std::optional<std::strong_ordering> compare_resource_versions(std::string_view a,
                                                                                      std::string_view b) noexcept {
  if (!is_ordered_resource_version(a) || !is_ordered_resource_version(b)) return std::nullopt;
  if (a.size() != b.size()) return a.size() <=> b.size();
  const int c = a.compare(b);
  return c < 0 ? std::strong_ordering::less : c > 0 ? std::strong_ordering::greater : std::strong_ordering::equal;
}

}  // namespace kube
