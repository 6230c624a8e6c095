// Fuzz target: typed decoding of a built-in type, k8s::core::v1::Pod (the
// largest common object: containers, volumes, quantities, timestamps,
// int-or-string ports, managedFields). The checks: typed_decode_check.hpp.

#include "typed_decode_check.hpp"

#include <kube/k8s/core/v1/pod.hpp>

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::check_typed_decode<k8s::core::v1::Pod>(fuzz::text(data, size), "pod_decode_fuzz");
  return 0;
}
