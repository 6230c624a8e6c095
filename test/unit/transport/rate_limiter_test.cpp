// How the client builds its rate limiter from client_config's qps and burst
// (libkube/src/transport/client_impl.hpp); the bucket itself is tested in
// test/unit/base/.
#include "transport/client_impl.hpp"

#include <catch2/catch.hpp>

#include <chrono>

using kube::detail::make_rate_limiter;
using namespace std::chrono_literals;

TEST_CASE("client rate limiter: qps <= 0 builds none, so requests are never throttled", "[limiter]") {
  CHECK_FALSE(make_rate_limiter(0, 10).has_value());
  CHECK_FALSE(make_rate_limiter(-1, 10).has_value());
}

TEST_CASE("client rate limiter: qps and burst make the bucket, a burst below 1 counts as 1", "[limiter]") {
  const auto t0 = kube::clock::time_point{} + 1h;
  auto l = make_rate_limiter(5, 2);
  REQUIRE(l.has_value());
  CHECK(l->reserve(t0) == 0ms);
  CHECK(l->reserve(t0) == 0ms);
  CHECK(l->reserve(t0) == 200ms);
  auto one = make_rate_limiter(5, 0);
  REQUIRE(one.has_value());
  CHECK(one->reserve(t0) == 0ms);
  CHECK(one->reserve(t0) == 200ms);
}
