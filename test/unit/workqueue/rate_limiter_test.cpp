// Rate limiters with client-go's defaults, driven by a manual clock.
#include "test_support.hpp"

#include <kube/base/manual_clock.hpp>
#include <kube/workqueue/bucket_rate_limiter.hpp>
#include <kube/workqueue/default_controller_rate_limiter.hpp>
#include <kube/workqueue/exponential_rate_limiter.hpp>
#include <kube/workqueue/fast_slow_rate_limiter.hpp>
#include <kube/workqueue/max_of_rate_limiter.hpp>
#include <kube/workqueue/max_wait_rate_limiter.hpp>
#include <kube/workqueue/rate_limited_queue.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace asio = boost::asio;
namespace wq = kube::workqueue;
using namespace std::chrono_literals;
using wq_test::settle;

TEST_CASE("exponential limiter: 5ms, 10ms, 20ms ... capped at 1000s by default", "[workqueue][limiter]") {
  kube::manual_clock clk;
  wq::exponential_rate_limiter<std::string> l;
  auto expected = std::chrono::duration_cast<kube::clock::duration>(5ms);
  for (int i = 0; i < 18; ++i) {
    CHECK(l.when("one", clk.now()) == expected);
    expected *= 2;
  }
  // 5ms * 2^18 = 1310.72s > 1000s: capped from here on, also far past overflow.
  CHECK(l.when("one", clk.now()) == 1000s);
  for (int i = 0; i < 2000; ++i) (void)l.when("one", clk.now());
  CHECK(l.when("one", clk.now()) == 1000s);
  CHECK(l.num_requeues("one") == 2020);
  CHECK(l.when("two", clk.now()) == 5ms);  // per item
  l.forget("one");
  CHECK(l.num_requeues("one") == 0);
  CHECK(l.when("one", clk.now()) == 5ms);
}

TEST_CASE("exponential limiter: custom base and cap (client-go test values)", "[workqueue][limiter]") {
  kube::manual_clock clk;
  wq::exponential_rate_limiter<std::string> l({.base_delay = 1ms, .max_delay = 1s});
  CHECK(l.when("one", clk.now()) == 1ms);
  CHECK(l.when("one", clk.now()) == 2ms);
  CHECK(l.when("one", clk.now()) == 4ms);
  CHECK(l.when("one", clk.now()) == 8ms);
  CHECK(l.when("one", clk.now()) == 16ms);
  CHECK(l.num_requeues("one") == 5);
  for (int i = 0; i < 5; ++i) (void)l.when("one", clk.now());
  CHECK(l.when("one", clk.now()) == 1s);  // 1024ms capped
}

TEST_CASE("fast-slow limiter: fast for max_fast_attempts, then slow", "[workqueue][limiter]") {
  kube::manual_clock clk;
  wq::fast_slow_rate_limiter<std::string> l({.fast_delay = 5ms, .slow_delay = 10s, .max_fast_attempts = 3});
  CHECK(l.when("one", clk.now()) == 5ms);
  CHECK(l.when("one", clk.now()) == 5ms);
  CHECK(l.when("one", clk.now()) == 5ms);
  CHECK(l.when("one", clk.now()) == 10s);
  CHECK(l.when("one", clk.now()) == 10s);
  CHECK(l.num_requeues("one") == 5);
  CHECK(l.when("two", clk.now()) == 5ms);
  l.forget("one");
  CHECK(l.num_requeues("one") == 0);
  CHECK(l.when("one", clk.now()) == 5ms);
}

TEST_CASE("bucket limiter: shared by all items, no per-item state", "[workqueue][limiter]") {
  kube::manual_clock clk;
  wq::bucket_rate_limiter<std::string> l({.qps = 1.0, .burst = 2});
  CHECK(l.when("a", clk.now()) == 0ms);
  CHECK(l.when("b", clk.now()) == 0ms);
  CHECK(l.when("c", clk.now()) == 1s);
  CHECK(l.num_requeues("a") == 0);
  l.forget("a");
  CHECK(l.when("a", clk.now()) == 2s);
}

TEST_CASE("max-of limiter: longest wait, largest count, forget in all", "[workqueue][limiter]") {
  // client-go TestMaxOfRateLimiter.
  kube::manual_clock clk;
  std::vector<std::unique_ptr<wq::rate_limiter<std::string>>> ls;
  ls.push_back(std::make_unique<wq::fast_slow_rate_limiter<std::string>>(
      wq::fast_slow_rate_limiter_params{.fast_delay = 5ms, .slow_delay = 3s, .max_fast_attempts = 3}));
  ls.push_back(std::make_unique<wq::exponential_rate_limiter<std::string>>(
      wq::exponential_rate_limiter_params{.base_delay = 1ms, .max_delay = 1s}));
  wq::max_of_rate_limiter<std::string> l(std::move(ls));
  CHECK(l.when("one", clk.now()) == 5ms);
  CHECK(l.when("one", clk.now()) == 5ms);
  CHECK(l.when("one", clk.now()) == 5ms);
  CHECK(l.when("one", clk.now()) == 3s);
  CHECK(l.when("one", clk.now()) == 3s);
  CHECK(l.num_requeues("one") == 5);
  CHECK(l.when("two", clk.now()) == 5ms);
  CHECK(l.when("two", clk.now()) == 5ms);
  CHECK(l.num_requeues("two") == 2);
  l.forget("one");
  CHECK(l.num_requeues("one") == 0);
  CHECK(l.when("one", clk.now()) == 5ms);
}

TEST_CASE("max-wait limiter caps the inner limiter", "[workqueue][limiter]") {
  kube::manual_clock clk;
  wq::max_wait_rate_limiter<std::string> l(std::make_unique<wq::exponential_rate_limiter<std::string>>(
                                               wq::exponential_rate_limiter_params{.base_delay = 1s, .max_delay = 1h}),
                                           3s);
  CHECK(l.when("a", clk.now()) == 1s);
  CHECK(l.when("a", clk.now()) == 2s);
  CHECK(l.when("a", clk.now()) == 3s);  // 4s capped
  CHECK(l.num_requeues("a") == 3);
}

TEST_CASE("default controller limiter: exponential per item, bucket across items", "[workqueue][limiter]") {
  kube::manual_clock clk;
  auto l = wq::default_controller_rate_limiter<std::string>();
  // 100 distinct first failures: exponential says 5ms, the bucket still has tokens.
  for (int i = 0; i < 100; ++i) REQUIRE(l->when("item-" + std::to_string(i), clk.now()) == 5ms);
  // The 101st reservation puts the bucket in debt: 100ms beats 5ms.
  CHECK(l->when("item-100", clk.now()) == 100ms);
  clk.advance(1h);  // the bucket refills; the per-item count does not reset
  CHECK(l->when("item-0", clk.now()) == 10ms);
  CHECK(l->when("item-0", clk.now()) == 20ms);
  CHECK(l->num_requeues("item-0") == 3);
  l->forget("item-0");
  CHECK(l->num_requeues("item-0") == 0);
  CHECK(l->when("item-0", clk.now()) == 5ms);
}

TEST_CASE("rate_limited_queue: add_rate_limited waits the limiter's delay - forget and num_requeues",
          "[workqueue][limiter][queue]") {
  // client-go TestRateLimitingQueue.
  asio::io_context io;
  kube::manual_clock clk;
  wq::rate_limited_queue<std::string> q(io.get_executor(),
                                        std::make_unique<wq::exponential_rate_limiter<std::string>>(
                                            wq::exponential_rate_limiter_params{.base_delay = 1ms, .max_delay = 1s}),
                                        {.time_source = &clk});
  q.add_rate_limited("one");
  settle(io);
  CHECK(q.waiting_for_delay() == 1);
  CHECK(q.len() == 0);
  q.add_rate_limited("one");  // 2ms later than now: the earlier 1ms stays
  settle(io);
  CHECK(q.waiting_for_delay() == 1);
  CHECK(q.num_requeues("one") == 2);
  q.add_rate_limited("two");
  settle(io);
  CHECK(q.waiting_for_delay() == 2);
  CHECK(q.num_requeues("two") == 1);
  clk.advance(1ms);
  settle(io);
  CHECK(q.len() == 2);  // both ready at now+1ms
  q.forget("one");
  CHECK(q.num_requeues("one") == 0);
  CHECK(q.num_requeues("two") == 1);
  q.shutdown();
  settle(io);
}

TEST_CASE("rate_limited_queue: defaults to the controller limiter", "[workqueue][limiter][queue]") {
  asio::io_context io;
  kube::manual_clock clk;
  wq::rate_limited_queue<std::string> q(io.get_executor(), wq::default_controller_rate_limiter<std::string>(),
                                        {.time_source = &clk});
  q.add_rate_limited("a");
  settle(io);
  clk.advance(4ms);
  settle(io);
  CHECK(q.len() == 0);
  clk.advance(1ms);
  settle(io);
  CHECK(q.len() == 1);
  q.shutdown();
  settle(io);
}
