#pragma once

// gzip-encodes test data with zlib (one member), for the tests of the
// client's gzip decoding.

#include <catch2/catch.hpp>
#include <zlib.h>

#include <string>

namespace kube_test {

inline std::string gzip(const std::string& in, int level = Z_DEFAULT_COMPRESSION) {
  z_stream zs{};
  REQUIRE(deflateInit2(&zs, level, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  std::string out(deflateBound(&zs, static_cast<uLong>(in.size())) + 32, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  REQUIRE(deflate(&zs, Z_FINISH) == Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

}  // namespace kube_test
