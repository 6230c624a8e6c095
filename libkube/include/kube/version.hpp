#pragma once

#include <string_view>

namespace kube {

/// The SDK's version ("major.minor.patch"), as built. Thread safe.
[[nodiscard]] std::string_view sdk_version() noexcept;

/// The Kubernetes version whose API this SDK's generated types and tests
/// target ("v1.34.4"). Thread safe.
[[nodiscard]] std::string_view kubernetes_version() noexcept;

}  // namespace kube
