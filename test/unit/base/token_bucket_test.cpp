// kube::token_bucket (golang.org/x/time/rate's arithmetic), the one bucket
// behind the client's QPS limit and the workqueue's bucket rate limiter,
// driven by explicit time points.
#include <kube/base/token_bucket.hpp>

#include <catch2/catch.hpp>

#include <chrono>

using kube::token_bucket;
using namespace std::chrono_literals;

namespace {
const token_bucket::time_point t0 = token_bucket::time_point{} + 1h;
}

TEST_CASE("token bucket lets the burst through, then spaces requests at 1/qps", "[base][token_bucket]") {
  token_bucket b({.qps = 5, .burst = 10});
  for (int i = 0; i < 10; ++i) CHECK(b.reserve(t0) == 0ms);
  // The 11th waits 200 ms, the 12th 400 ms: reservations queue in order.
  CHECK(b.reserve(t0) == 200ms);
  CHECK(b.reserve(t0) == 400ms);
  CHECK(b.tokens() == -2.0);
}

TEST_CASE("token bucket refill pays the debt first, then stops at the burst", "[base][token_bucket]") {
  token_bucket b;  // defaults: 10 qps, burst 100
  for (int i = 0; i < 100; ++i) REQUIRE(b.reserve(t0) == 0ms);
  CHECK(b.reserve(t0) == 100ms);  // in debt: one token per 100ms
  CHECK(b.reserve(t0) == 200ms);
  // One second refills 10 tokens, 2 of them pay the debt.
  for (int i = 0; i < 8; ++i) REQUIRE(b.reserve(t0 + 1s) == 0ms);
  CHECK(b.reserve(t0 + 1s) == 100ms);
  // An hour would be 36000 tokens without the cap.
  for (int i = 0; i < 100; ++i) REQUIRE(b.reserve(t0 + 1h) == 0ms);
  CHECK(b.reserve(t0 + 1h) == 100ms);
}

TEST_CASE("token bucket waits are truncated to whole nanoseconds, as x/time/rate's", "[base][token_bucket]") {
  token_bucket b({.qps = 3, .burst = 1});
  CHECK(b.reserve(t0) == 0ns);
  CHECK(b.reserve(t0) == 333'333'333ns);
}

TEST_CASE("token bucket: a time before the last one refills nothing and becomes the last", "[base][token_bucket]") {
  token_bucket b({.qps = 1, .burst = 1});
  CHECK(b.reserve(t0) == 0s);
  CHECK(b.reserve(t0 - 10s) == 1s);  // no refill for going back
  // x/time/rate counts the refill from the earlier time: 2 s pay the debt
  // and refill the one token.
  CHECK(b.reserve(t0 - 8s) == 0s);
}

TEST_CASE("token bucket refuses qps <= 0 and burst < 1", "[base][token_bucket]") {
  CHECK_THROWS_WITH(token_bucket({.qps = 0.0, .burst = 1}), Catch::Contains("qps must be > 0"));
  CHECK_THROWS_WITH(token_bucket({.qps = -1.0, .burst = 1}), Catch::Contains("qps must be > 0"));
  CHECK_THROWS_WITH(token_bucket({.qps = 1.0, .burst = 0}), Catch::Contains("burst must be >= 1"));
}
