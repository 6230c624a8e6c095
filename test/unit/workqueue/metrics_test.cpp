// Metrics hooks and their Prometheus rendering, with a manual clock.
#include "test_support.hpp"

#include <kube/workqueue/delaying_queue.hpp>
#include <kube/workqueue/manual_clock.hpp>
#include <kube/workqueue/prometheus_metrics.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <string>

namespace asio = boost::asio;
namespace wq = kube::workqueue;
using namespace std::chrono_literals;
using wq_test::settle;

TEST_CASE("metrics: depth, adds, latency, work duration, unfinished work, retries", "[workqueue][metrics]") {
  asio::io_context io;
  wq::manual_clock clk;
  auto m = std::make_shared<wq::prometheus_metrics>("test");
  wq::delaying_queue<std::string> q(io.get_executor(), {.time_source = &clk, .metrics = m});
  q.add("a");
  q.add("a");  // duplicate: not an add
  q.add("b");
  settle(io);
  CHECK(m->adds() == 2);
  CHECK(m->depth() == 2);

  clk.advance(10ms);
  std::string item;
  q.async_get([&](wq::error_code, std::string s) { item = std::move(s); });
  settle(io);
  REQUIRE(item == "a");
  CHECK(m->depth() == 1);
  CHECK(m->queue_duration().count.load() == 1);
  CHECK(m->queue_duration().sum.load() == Approx(0.010));
  CHECK(m->queue_duration().buckets[6].load() == 1);  // 10ms: the le=0.01 bucket (upper bound inclusive)

  clk.advance(2s);
  q.update_unfinished_work();
  CHECK(m->unfinished_work_seconds() == Approx(2.0));
  CHECK(m->longest_running_processor_seconds() == Approx(2.0));

  q.done("a");
  CHECK(m->work_duration().count.load() == 1);
  CHECK(m->work_duration().sum.load() == Approx(2.0));
  q.update_unfinished_work();
  CHECK(m->unfinished_work_seconds() == 0.0);

  q.add_after("c", 1s);
  q.add_after("d", 0s);
  settle(io);
  CHECK(m->retries() == 2);

  const std::string text = m->render();
  CHECK_THAT(text, Catch::Contains("# TYPE workqueue_depth gauge\nworkqueue_depth{name=\"test\"} 2\n"));
  CHECK_THAT(text, Catch::Contains("workqueue_adds_total{name=\"test\"} 3\n"));
  CHECK_THAT(text, Catch::Contains("workqueue_retries_total{name=\"test\"} 2\n"));
  CHECK_THAT(text, Catch::Contains("workqueue_queue_duration_seconds_bucket{name=\"test\",le=\"0.001\"} 0\n"));
  CHECK_THAT(text, Catch::Contains("workqueue_queue_duration_seconds_bucket{name=\"test\",le=\"0.01\"} 1\n"));
  CHECK_THAT(text, Catch::Contains("workqueue_queue_duration_seconds_bucket{name=\"test\",le=\"0.1\"} 1\n"));
  CHECK_THAT(text, Catch::Contains("workqueue_queue_duration_seconds_bucket{name=\"test\",le=\"1e-08\"} 0\n"));
  CHECK_THAT(text, Catch::Contains("workqueue_queue_duration_seconds_count{name=\"test\"} 1\n"));
  CHECK_THAT(text, Catch::Contains("workqueue_work_duration_seconds_bucket{name=\"test\",le=\"+Inf\"} 1\n"));
  CHECK_THAT(text, Catch::Contains("# TYPE workqueue_longest_running_processor_seconds gauge\n"));
  q.shutdown();
  settle(io);
}

TEST_CASE("metrics: label values are escaped", "[workqueue][metrics]") {
  wq::prometheus_metrics m("a\"b\\c");
  CHECK_THAT(m.render(), Catch::Contains("workqueue_depth{name=\"a\\\"b\\\\c\"} 0\n"));
}
