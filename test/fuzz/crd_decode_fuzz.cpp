// Fuzz target: typed decoding of a CRD type, the Widget that
// kube_add_crd_types generates from test/data/crd/widgets.yaml (integers,
// numbers, int-or-string, string maps, arrays of objects, a field that
// keeps unknown JSON). The checks: typed_decode_check.hpp.

#include "typed_decode_check.hpp"

#include <kube/fuzz/widgets.hpp>

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::check_typed_decode<codegen::v1::Widget>(fuzz::text(data, size), "crd_decode_fuzz");
  return 0;
}
