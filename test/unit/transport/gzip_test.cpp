// gzip decoding of response bodies (kube::detail::gunzip): what zlib
// encodes comes back byte for byte, in one member or several; cut or
// damaged input is an error that says where, never a crash or a hang.
#include "support/gzip_encode.hpp"

#include <kube/detail/gzip.hpp>

#include <catch2/catch.hpp>
#include <zlib.h>

#include <cstdint>
#include <random>
#include <string>

namespace {

using kube_test::gzip;

std::string sample(std::size_t n, unsigned seed) {
  // JSON-like text with some randomness, so it compresses as lists do.
  std::mt19937 rng(seed);
  std::string s;
  while (s.size() < n)
    s += R"({"metadata":{"name":"pod-)" + std::to_string(rng() % 100000) + R"(","labels":{"app":"a"}}},)";
  s.resize(n);
  return s;
}

}  // namespace

TEST_CASE("gunzip returns what zlib encoded, small and large", "[gzip]") {
  for (const std::size_t n :
       {std::size_t{1}, std::size_t{100}, std::size_t{4096}, std::size_t{300000}, std::size_t{5000000}}) {
    const auto plain = sample(n, static_cast<unsigned>(n));
    std::string out, why;
    INFO(n << " bytes");
    REQUIRE(kube::detail::gunzip(gzip(plain), out, why));
    CHECK(out == plain);
  }
  // Compresses about 1,000:1, beyond what the size trailer is believed for
  // up front: the output grows while it is decoded.
  const std::string repetitive(5'000'000, 'a');
  std::string big, big_why;
  REQUIRE(kube::detail::gunzip(gzip(repetitive), big, big_why));
  CHECK(big == repetitive);

  std::string out = "stale", why;
  CHECK(kube::detail::gunzip("", out, why));
  CHECK(out.empty());
}

TEST_CASE("gunzip decodes members back to back as one body", "[gzip]") {
  const auto a = sample(70000, 1), b = sample(1000, 2);
  std::string out, why;
  REQUIRE(kube::detail::gunzip(gzip(a) + gzip(b, 1), out, why));
  CHECK(out == a + b);
}

TEST_CASE("gunzip does not believe a size trailer that lies", "[gzip]") {
  const auto plain = sample(200000, 3);
  auto z = gzip(plain);
  // The trailer's last four bytes are the size; claim 4 GiB - 1. The size
  // check of zlib then fails, but only after all of the data was decoded
  // into a buffer grown from a bounded guess.
  for (std::size_t i = z.size() - 4; i < z.size(); ++i) z[i] = '\xff';
  std::string out, why;
  CHECK_FALSE(kube::detail::gunzip(z, out, why));
  CHECK(why.find("invalid gzip data") != std::string::npos);
}

TEST_CASE("gunzip reports cut, damaged and trailing bytes with the offset", "[gzip]") {
  const auto z = gzip(sample(100000, 4));
  std::string out, why;
  CHECK_FALSE(kube::detail::gunzip(z.substr(0, z.size() / 2), out, why));
  CHECK(why.find("ends early") != std::string::npos);

  CHECK_FALSE(kube::detail::gunzip("this is not gzip at all, just text", out, why));
  CHECK(why.find("invalid gzip data near byte") != std::string::npos);

  auto damaged = z;
  for (std::size_t i = 100; i < 200; ++i) damaged[i] = static_cast<char>(damaged[i] ^ 0x5a);
  CHECK_FALSE(kube::detail::gunzip(damaged, out, why));
  CHECK(why.find("invalid gzip data near byte") != std::string::npos);

  CHECK_FALSE(kube::detail::gunzip(z + "garbage after the member", out, why));
  CHECK(why.find("invalid gzip data near byte ") != std::string::npos);
}

TEST_CASE("a gzip bomb stops at the output limit", "[gzip][limit]") {
  // 64 MiB of zeros compress to about 64 KiB: a 1,000-fold expansion.
  const std::string zeros(std::size_t{64} << 20, '\0');
  const auto bomb = gzip(zeros, Z_BEST_COMPRESSION);
  REQUIRE(bomb.size() < zeros.size() / 500);
  std::string out, why;
  constexpr std::size_t limit = std::size_t{1} << 20;
  CHECK_FALSE(kube::detail::gunzip(bomb, out, why, limit));
  CHECK(out.size() > limit);
  CHECK(out.size() <= limit + 1);
  CHECK(out.capacity() < 2 * limit);  // never allocated more than the limit allows
  CHECK(why.find("larger than the limit of 1048576 bytes") != std::string::npos);

  // Exactly at the limit is accepted; one byte less is not.
  const std::string exact(limit, 'x');
  REQUIRE(kube::detail::gunzip(gzip(exact), out, why, limit));
  CHECK(out == exact);
  CHECK_FALSE(kube::detail::gunzip(gzip(exact), out, why, limit - 1));
}
