#pragma once

// gzip-encodes test data with zlib (one member), for the tests and fuzz
// targets of the client's gzip decoding. Throws std::runtime_error if zlib
// fails (a test failure, not an expected outcome).

#include <zlib.h>

#include <stdexcept>
#include <string>
#include <string_view>

namespace kube_test {

inline std::string gzip(std::string_view in, int level = Z_DEFAULT_COMPRESSION) {
  z_stream zs{};
  if (deflateInit2(&zs, level, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::runtime_error("zlib: deflateInit2 failed");
  std::string out(deflateBound(&zs, static_cast<uLong>(in.size())), '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  if (rc != Z_STREAM_END) throw std::runtime_error("zlib: deflate did not finish within deflateBound");
  return out;
}

}  // namespace kube_test
