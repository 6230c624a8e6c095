#include <kube/version.hpp>

#include "kube_sdk_version.hpp"

namespace kube {

std::string_view sdk_version() noexcept { return KUBE_SDK_VERSION_STRING; }

std::string_view kubernetes_version() noexcept { return KUBE_KUBERNETES_VERSION_STRING; }

}  // namespace kube
