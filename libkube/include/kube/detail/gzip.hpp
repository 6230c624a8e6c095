#pragma once

// Internal: gzip decoding of response bodies (RFC 1952), for responses the
// client asked to be compressed (Accept-Encoding: gzip). Exposed under
// detail/ for the unit tests.

#include <cstddef>
#include <limits>
#include <string>
#include <string_view>

namespace kube::detail {

/// Decodes the gzip text `in` (one member, or several back to back, as Go's
/// reader accepts) into `out`. On failure returns false and says why in
/// `why` (zlib's reason and the byte offset in `in`); `out` is then
/// unspecified. The output is allocated up front from the gzip trailer's
/// size, believed up to 64 times the input; beyond that it grows as data
/// is decoded (deflate can expand at most 1,032 times). Decoding stops with
/// an error as soon as the output would exceed `max_out` bytes, so a small
/// body that inflates to gigabytes (a gzip bomb) costs at most `max_out`;
/// `out.size()` is then above `max_out`, which tells this failure apart.
bool gunzip(std::string_view in, std::string& out, std::string& why,
            std::size_t max_out = std::numeric_limits<std::size_t>::max());

}  // namespace kube::detail
