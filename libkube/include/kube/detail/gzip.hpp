#pragma once

// Internal: gzip decoding of response bodies (RFC 1952), for responses the
// client asked to be compressed (Accept-Encoding: gzip). Exposed under
// detail/ for the unit tests.

#include <string>
#include <string_view>

namespace kube::detail {

/// Decodes the gzip text `in` (one member, or several back to back, as Go's
/// reader accepts) into `out`. On failure returns false and says why in
/// `why` (zlib's reason and the byte offset in `in`); `out` is then
/// unspecified. The output is allocated up front from the gzip trailer's
/// size, believed up to 64 times the input; beyond that it grows as data
/// is decoded (deflate can expand at most 1,032 times).
bool gunzip(std::string_view in, std::string& out, std::string& why);

}  // namespace kube::detail
