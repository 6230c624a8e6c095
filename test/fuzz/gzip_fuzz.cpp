// Fuzz target: the response body gzip decoder (kube::detail::gunzip). The
// checks:
//   - any input decodes or fails with a reason, never more;
//   - with an output cap, the result is the uncapped one when it fits, and a
//     failure whose output is above the cap when it does not;
//   - the input itself, compressed by zlib as one gzip member and as two
//     members back to back, decodes to exactly the input (twice).

#include "fuzz_support.hpp"
#include "support/gzip_encode.hpp"

#include <kube/detail/gzip.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace {

constexpr const char* target = "gzip_fuzz";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view in = fuzz::text(data, size);

  std::string out;
  std::string why;
  const bool ok = kube::detail::gunzip(in, out, why);
  fuzz::require(ok || !why.empty(), target, "a failure says why");

  if (ok) {
    // A cap taken from the input: sometimes above the output, sometimes below.
    const std::size_t cap = size == 0 ? 0 : out.size() * data[0] / 128;
    std::string capped;
    std::string capped_why;
    const bool capped_ok = kube::detail::gunzip(in, capped, capped_why, cap);
    if (out.size() <= cap) {
      fuzz::require(capped_ok && capped == out, target, "an output within the cap is the uncapped output");
    } else {
      fuzz::require(!capped_ok && capped.size() > cap && !capped_why.empty(), target,
                    "an output beyond the cap fails, its size above the cap");
    }
  }

  const int level = size == 0 ? Z_DEFAULT_COMPRESSION : data[size - 1] % 10;
  const std::string member = kube_test::gzip(in, level);
  out.clear();
  fuzz::require(kube::detail::gunzip(member, out, why) && out == in, target, "a gzip member decodes to its input");
  out.clear();
  fuzz::require(kube::detail::gunzip(member + member, out, why) && out.size() == 2 * in.size() &&
                    std::string_view(out).substr(0, in.size()) == in && std::string_view(out).substr(in.size()) == in,
                target, "two members decode to their inputs, one after the other");
  return 0;
}
