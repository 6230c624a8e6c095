#pragma once

// Helpers shared by the fuzz targets: a failed check aborts, which libFuzzer
// reports as a crash and the replay ctest as a failure.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace fuzz {

/// Aborts with "<target>: broken promise: <what>" unless `ok`.
inline void require(bool ok, const char* target, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "%s: broken promise: %s\n", target, what);
    std::abort();
  }
}

/// The fuzzer's bytes as text.
inline std::string_view text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

}  // namespace fuzz
