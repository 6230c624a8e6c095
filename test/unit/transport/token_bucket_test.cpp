// The client's rate limiter decision (libkube/src/transport/token_bucket.hpp), driven
// by explicit time points.
#include "transport/token_bucket.hpp"

#include <catch2/catch.hpp>

using kube::detail::token_bucket;
using namespace std::chrono_literals;

TEST_CASE("token bucket lets the burst through, then spaces requests at 1/qps", "[limiter]") {
  token_bucket b(5, 10);
  const auto t0 = token_bucket::clock::time_point{} + 1h;
  for (int i = 0; i < 10; ++i) CHECK(b.reserve(t0) == token_bucket::clock::duration::zero());
  // The 11th waits 200 ms, the 12th 400 ms: reservations queue in order.
  CHECK(b.reserve(t0) == std::chrono::duration_cast<token_bucket::clock::duration>(200ms));
  CHECK(b.reserve(t0) == std::chrono::duration_cast<token_bucket::clock::duration>(400ms));
}

TEST_CASE("token bucket refills at qps up to the burst", "[limiter]") {
  token_bucket b(10, 2);
  const auto t0 = token_bucket::clock::time_point{} + 1h;
  CHECK(b.reserve(t0) == token_bucket::clock::duration::zero());
  CHECK(b.reserve(t0) == token_bucket::clock::duration::zero());
  CHECK(b.reserve(t0) > token_bucket::clock::duration::zero());  // empty (now at -1)
  // One second later at most `burst` tokens are back, not 10.
  CHECK(b.reserve(t0 + 1s) == token_bucket::clock::duration::zero());
  CHECK(b.reserve(t0 + 1s) == token_bucket::clock::duration::zero());
  CHECK(b.reserve(t0 + 1s) > token_bucket::clock::duration::zero());
}

TEST_CASE("token bucket with qps <= 0 never throttles", "[limiter]") {
  token_bucket b(0, 1);
  const auto t0 = token_bucket::clock::time_point{} + 1h;
  for (int i = 0; i < 1000; ++i) CHECK(b.reserve(t0) == token_bucket::clock::duration::zero());
}
