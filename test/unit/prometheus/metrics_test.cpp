// kube::prometheus::metrics: each hook drives its series, checked in the
// rendered text format (label names sorted, as prometheus-cpp writes them).
#include <kube/prometheus/metrics.hpp>

#include <prometheus/registry.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace kp = kube::prometheus;
namespace km = kube::metrics;
using namespace std::chrono_literals;

namespace {

// The rendered text with a newline in front, so that every sample line is
// found as "\n<line>\n".
std::string text(const kp::metrics& m) { return "\n" + m.render(); }

Catch::Matchers::StdString::ContainsMatcher has_line(const std::string& line) {
  return Catch::Contains("\n" + line + "\n");
}

std::size_t count(const std::string& haystack, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("client: requests by code, method, host and resource, <error> when no answer came", "[prometheus]") {
  kp::metrics m;
  auto c = m.client();
  REQUIRE(c);
  for (int i = 0; i < 3; ++i) {
    c->on_attempt({.method = "POST",
                   .host = "h:6443",
                   .resource = "configmaps",
                   .code = 201,
                   .request_bytes = 100,
                   .response_bytes = 300});
  }
  c->on_attempt({.method = "GET", .host = "h:6443", .resource = "pods", .code = 0, .request_bytes = 0});
  c->on_attempt({.method = "GET", .host = "h:6443", .resource = "", .code = 200, .response_bytes = 70000});

  const auto t = text(m);
  CHECK_THAT(t,
             has_line(R"(rest_client_requests_total{code="201",host="h:6443",method="POST",resource="configmaps"} 3)"));
  CHECK_THAT(t, has_line(R"(rest_client_requests_total{code="<error>",host="h:6443",method="GET",resource="pods"} 1)"));
  CHECK_THAT(t, has_line(R"(rest_client_requests_total{code="200",host="h:6443",method="GET",resource=""} 1)"));
  CHECK_THAT(t, Catch::Contains("# TYPE rest_client_requests_total counter\n"));

  // request sizes: every attempt; response sizes: answered attempts only
  CHECK_THAT(t, Catch::Contains("# TYPE rest_client_request_size_bytes histogram\n"));
  CHECK_THAT(t, has_line(R"(rest_client_request_size_bytes_count{host="h:6443",verb="POST"} 3)"));
  CHECK_THAT(t, has_line(R"(rest_client_request_size_bytes_sum{host="h:6443",verb="POST"} 300)"));
  CHECK_THAT(t, has_line(R"(rest_client_request_size_bytes_bucket{host="h:6443",verb="POST",le="64"} 0)"));
  CHECK_THAT(t, has_line(R"(rest_client_request_size_bytes_bucket{host="h:6443",verb="POST",le="256"} 3)"));
  CHECK_THAT(t, has_line(R"(rest_client_request_size_bytes_bucket{host="h:6443",verb="POST",le="16777216"} 3)"));
  CHECK_THAT(t, has_line(R"(rest_client_request_size_bytes_count{host="h:6443",verb="GET"} 2)"));
  CHECK_THAT(t, has_line(R"(rest_client_request_size_bytes_bucket{host="h:6443",verb="GET",le="64"} 2)"));
  CHECK_THAT(t, has_line(R"(rest_client_response_size_bytes_count{host="h:6443",verb="POST"} 3)"));
  CHECK_THAT(t, has_line(R"(rest_client_response_size_bytes_sum{host="h:6443",verb="POST"} 900)"));
  CHECK_THAT(t, has_line(R"(rest_client_response_size_bytes_bucket{host="h:6443",verb="POST",le="256"} 0)"));
  CHECK_THAT(t, has_line(R"(rest_client_response_size_bytes_bucket{host="h:6443",verb="POST",le="512"} 3)"));
  CHECK_THAT(t, has_line(R"(rest_client_response_size_bytes_count{host="h:6443",verb="GET"} 1)"));
  CHECK_THAT(t, has_line(R"(rest_client_response_size_bytes_bucket{host="h:6443",verb="GET",le="65536"} 0)"));
  CHECK_THAT(t, has_line(R"(rest_client_response_size_bytes_bucket{host="h:6443",verb="GET",le="262144"} 1)"));
}

TEST_CASE("client: request latency, rate limiter waits, retries", "[prometheus]") {
  kp::metrics m;
  auto c = m.client();
  c->on_request("POST", "h:6443", "configmaps", 300ms);
  c->on_request("POST", "h:6443", "secrets", 2s);
  c->on_rate_limiter_wait("GET", "h:6443", 0ns);
  c->on_rate_limiter_wait("GET", "h:6443", 50ms);
  c->on_retry({.method = "GET", .host = "h:6443", .resource = "pods", .code = 429});
  c->on_retry({.method = "GET", .host = "h:6443", .resource = "nodes", .code = 429});
  c->on_retry({.method = "PUT", .host = "h:6443", .resource = "pods", .code = 0});

  const auto t = text(m);
  CHECK_THAT(t, Catch::Contains("# TYPE rest_client_request_duration_seconds histogram\n"));
  CHECK_THAT(t, has_line(R"(rest_client_request_duration_seconds_bucket{host="h:6443",verb="POST",le="0.25"} 0)"));
  CHECK_THAT(t, has_line(R"(rest_client_request_duration_seconds_bucket{host="h:6443",verb="POST",le="0.5"} 1)"));
  CHECK_THAT(t, has_line(R"(rest_client_request_duration_seconds_bucket{host="h:6443",verb="POST",le="2"} 2)"));
  CHECK_THAT(t, has_line(R"(rest_client_request_duration_seconds_bucket{host="h:6443",verb="POST",le="60"} 2)"));
  CHECK_THAT(t, has_line(R"(rest_client_request_duration_seconds_bucket{host="h:6443",verb="POST",le="+Inf"} 2)"));
  CHECK_THAT(t, has_line(R"(rest_client_request_duration_seconds_sum{host="h:6443",verb="POST"} 2.3)"));
  CHECK_THAT(t, has_line(R"(rest_client_request_duration_seconds_count{host="h:6443",verb="POST"} 2)"));

  CHECK_THAT(t, has_line(R"(rest_client_rate_limiter_duration_seconds_bucket{host="h:6443",verb="GET",le="0.005"} 1)"));
  CHECK_THAT(t, has_line(R"(rest_client_rate_limiter_duration_seconds_bucket{host="h:6443",verb="GET",le="0.1"} 2)"));
  CHECK_THAT(t, has_line(R"(rest_client_rate_limiter_duration_seconds_count{host="h:6443",verb="GET"} 2)"));
  // no latency series for a verb only the rate limiter saw
  CHECK_THAT(t, !Catch::Contains(R"(rest_client_request_duration_seconds_count{host="h:6443",verb="GET"})"));

  // retries have no resource label: pods and nodes add up
  CHECK_THAT(t, has_line(R"(rest_client_request_retries_total{code="429",host="h:6443",verb="GET"} 2)"));
  CHECK_THAT(t, has_line(R"(rest_client_request_retries_total{code="<error>",host="h:6443",verb="PUT"} 1)"));
}

TEST_CASE("client: exec plugin calls by exit code and call_status", "[prometheus]") {
  kp::metrics m;
  auto c = m.client();
  c->on_exec_plugin_call(0, km::exec_plugin_status::no_error);
  c->on_exec_plugin_call(0, km::exec_plugin_status::no_error);
  c->on_exec_plugin_call(3, km::exec_plugin_status::plugin_execution_error);
  c->on_exec_plugin_call(-1, km::exec_plugin_status::plugin_execution_error);  // killed (a timeout)
  c->on_exec_plugin_call(-1, km::exec_plugin_status::plugin_not_found_error);
  c->on_exec_plugin_call(-1, km::exec_plugin_status::client_internal_error);

  const auto t = text(m);
  CHECK_THAT(t, has_line(R"(rest_client_exec_plugin_call_total{call_status="no_error",code="0"} 2)"));
  CHECK_THAT(t, has_line(R"(rest_client_exec_plugin_call_total{call_status="plugin_execution_error",code="3"} 1)"));
  CHECK_THAT(t, has_line(R"(rest_client_exec_plugin_call_total{call_status="plugin_execution_error",code="-1"} 1)"));
  // not run: client-go's failureExitCode, 1
  CHECK_THAT(t, has_line(R"(rest_client_exec_plugin_call_total{call_status="plugin_not_found_error",code="1"} 1)"));
  CHECK_THAT(t, has_line(R"(rest_client_exec_plugin_call_total{call_status="client_internal_error",code="1"} 1)"));
}

TEST_CASE("informer: reflector lists, watches, stalls and resource versions", "[prometheus]") {
  kp::metrics m;
  auto inf = m.informer({.name = "pods", .group = "", .version = "v1", .resource = "pods"});
  REQUIRE(inf);
  inf->on_list(5, 1500ms, false);
  inf->on_list(7, 500ms, true);
  inf->on_watch();
  inf->on_watch();
  inf->on_watch_end(10, 300s);
  inf->on_watch_stall();

  auto t = text(m);
  CHECK_THAT(t, Catch::Contains("# TYPE reflector_lists_total counter\n"));
  CHECK_THAT(t, has_line(R"(reflector_lists_total{name="pods"} 2)"));
  CHECK_THAT(t, has_line(R"(reflector_relists_total{name="pods"} 1)"));
  CHECK_THAT(t, has_line(R"(reflector_list_duration_seconds_bucket{name="pods",le="0.5"} 1)"));
  CHECK_THAT(t, has_line(R"(reflector_list_duration_seconds_bucket{name="pods",le="1"} 1)"));
  CHECK_THAT(t, has_line(R"(reflector_list_duration_seconds_bucket{name="pods",le="2.5"} 2)"));
  CHECK_THAT(t, has_line(R"(reflector_list_duration_seconds_sum{name="pods"} 2)"));
  CHECK_THAT(t, has_line(R"(reflector_list_duration_seconds_count{name="pods"} 2)"));
  CHECK_THAT(t, has_line(R"(reflector_items_per_list_bucket{name="pods",le="1"} 0)"));
  CHECK_THAT(t, has_line(R"(reflector_items_per_list_bucket{name="pods",le="10"} 2)"));
  CHECK_THAT(t, has_line(R"(reflector_items_per_list_sum{name="pods"} 12)"));
  CHECK_THAT(t, has_line(R"(reflector_watches_total{name="pods"} 2)"));
  CHECK_THAT(t, has_line(R"(reflector_watch_duration_seconds_bucket{name="pods",le="120"} 0)"));
  CHECK_THAT(t, has_line(R"(reflector_watch_duration_seconds_bucket{name="pods",le="300"} 1)"));
  CHECK_THAT(t, has_line(R"(reflector_watch_duration_seconds_sum{name="pods"} 300)"));
  CHECK_THAT(t, has_line(R"(reflector_items_per_watch_bucket{name="pods",le="10"} 1)"));
  CHECK_THAT(t, has_line(R"(reflector_items_per_watch_count{name="pods"} 1)"));
  CHECK_THAT(t, has_line(R"(reflector_watch_stalls_total{name="pods"} 1)"));

  const std::string store = R"(informer_store_resource_version{group="",name="pods",resource="pods",version="v1"})";
  CHECK_THAT(t, has_line(R"(reflector_last_resource_version{name="pods"} 0)"));
  CHECK_THAT(t, has_line(store + " 0"));
  inf->on_resource_version("12345");
  t = text(m);
  CHECK_THAT(t, Catch::Contains("# TYPE reflector_last_resource_version gauge\n"));
  CHECK_THAT(t, has_line(R"(reflector_last_resource_version{name="pods"} 12345)"));
  CHECK_THAT(t, has_line(store + " 12345"));
  for (const char* not_a_number : {"", "abc", "12a", "-5", " 7", "1.5"}) {
    inf->on_resource_version(not_a_number);  // left as it was
  }
  t = text(m);
  CHECK_THAT(t, has_line(R"(reflector_last_resource_version{name="pods"} 12345)"));
  CHECK_THAT(t, has_line(store + " 12345"));

  // 19 digits: a double cannot hold them; the store's gauge keeps the 15
  // least significant ones, exactly
  inf->on_resource_version("1234567890123456789");
  t = text(m);
  CHECK_THAT(t, has_line(R"(reflector_last_resource_version{name="pods"} 1.234567890123457e+18)"));
  CHECK_THAT(t, has_line(store + " 567890123456789"));
  inf->on_resource_version("999999999999999");  // exactly 15
  CHECK_THAT(text(m), has_line(store + " 999999999999999"));
  inf->on_resource_version("1000000000000042");  // 16: the leading 1 goes
  CHECK_THAT(text(m), has_line(store + " 42"));
}

TEST_CASE("informer: queue, processing latency, handlers", "[prometheus]") {
  kp::metrics m;
  auto inf = m.informer({.name = "deploys", .group = "apps", .version = "v1", .resource = "deployments"});
  inf->on_queued(4);
  inf->on_processed(20ms);
  inf->on_handler(2ms, false);
  inf->on_handler(3ms, true);

  const auto t = text(m);
  const std::string labels = R"(group="apps",name="deploys",resource="deployments",version="v1")";
  CHECK_THAT(t, Catch::Contains("# TYPE informer_queued_items gauge\n"));
  CHECK_THAT(t, has_line("informer_queued_items{" + labels + "} 4"));
  CHECK_THAT(t, has_line("informer_processing_latency_seconds_bucket{" + labels + ",le=\"0.01\"} 0"));
  CHECK_THAT(t, has_line("informer_processing_latency_seconds_bucket{" + labels + ",le=\"0.025\"} 1"));
  CHECK_THAT(t, has_line("informer_processing_latency_seconds_bucket{" + labels + ",le=\"10\"} 1"));
  CHECK_THAT(t, has_line("informer_processing_latency_seconds_count{" + labels + "} 1"));
  CHECK_THAT(t, has_line("informer_handler_duration_seconds_bucket{" + labels + ",le=\"0.001\"} 0"));
  CHECK_THAT(t, has_line("informer_handler_duration_seconds_bucket{" + labels + ",le=\"0.005\"} 2"));
  CHECK_THAT(t, has_line("informer_handler_duration_seconds_sum{" + labels + "} 0.005"));
  CHECK_THAT(t, has_line("informer_handler_errors_total{" + labels + "} 1"));
  CHECK_THAT(t, has_line(R"(reflector_lists_total{name="deploys"} 0)"));  // reflector_*: {name} only

  inf->on_queued(0);
  CHECK_THAT(text(m), has_line("informer_queued_items{" + labels + "} 0"));

  // One series per handler, by its id.
  inf->on_handler_queue(1, 7);
  inf->on_handler_queue(2, 300);
  inf->on_handler_queue(1, 0);
  const auto q = text(m);
  CHECK_THAT(q, Catch::Contains("# TYPE informer_handler_queue_length gauge\n"));
  CHECK_THAT(
      q,
      has_line(
          R"(informer_handler_queue_length{group="apps",handler="1",name="deploys",resource="deployments",version="v1"} 0)"));
  CHECK_THAT(
      q,
      has_line(
          R"(informer_handler_queue_length{group="apps",handler="2",name="deploys",resource="deployments",version="v1"} 300)"));
}

TEST_CASE("controller: reconciles by result (all four from the start), errors, time, workers", "[prometheus]") {
  kp::metrics m;
  auto c = m.controller("foo");
  REQUIRE(c);
  auto t = text(m);
  for (const char* result : {"success", "error", "requeue", "requeue_after"}) {
    CHECK_THAT(
        t, has_line(std::string(R"(controller_runtime_reconcile_total{controller="foo",result=")") + result + "\"} 0"));
  }
  CHECK_THAT(t, has_line(R"(controller_runtime_reconcile_errors_total{controller="foo"} 0)"));

  c->on_workers(4);
  c->on_active(2);
  c->on_reconcile(km::reconcile_label::success, 10ms);
  c->on_reconcile(km::reconcile_label::error, 20ms);
  c->on_reconcile(km::reconcile_label::requeue_after, 1s);
  c->on_reconcile(km::reconcile_label::success, 70s);
  t = text(m);
  CHECK_THAT(t, has_line(R"(controller_runtime_reconcile_total{controller="foo",result="success"} 2)"));
  CHECK_THAT(t, has_line(R"(controller_runtime_reconcile_total{controller="foo",result="error"} 1)"));
  CHECK_THAT(t, has_line(R"(controller_runtime_reconcile_total{controller="foo",result="requeue"} 0)"));
  CHECK_THAT(t, has_line(R"(controller_runtime_reconcile_total{controller="foo",result="requeue_after"} 1)"));
  CHECK_THAT(t, has_line(R"(controller_runtime_reconcile_errors_total{controller="foo"} 1)"));
  CHECK_THAT(t, Catch::Contains("# TYPE controller_runtime_reconcile_time_seconds histogram\n"));
  CHECK_THAT(t, has_line(R"(controller_runtime_reconcile_time_seconds_bucket{controller="foo",le="0.005"} 0)"));
  CHECK_THAT(t, has_line(R"(controller_runtime_reconcile_time_seconds_bucket{controller="foo",le="0.01"} 1)"));
  CHECK_THAT(t, has_line(R"(controller_runtime_reconcile_time_seconds_bucket{controller="foo",le="0.025"} 2)"));
  CHECK_THAT(t, has_line(R"(controller_runtime_reconcile_time_seconds_bucket{controller="foo",le="1"} 3)"));
  CHECK_THAT(t, has_line(R"(controller_runtime_reconcile_time_seconds_bucket{controller="foo",le="1.25"} 3)"));
  CHECK_THAT(t, has_line(R"(controller_runtime_reconcile_time_seconds_bucket{controller="foo",le="60"} 3)"));
  CHECK_THAT(t, has_line(R"(controller_runtime_reconcile_time_seconds_bucket{controller="foo",le="+Inf"} 4)"));
  CHECK_THAT(t, has_line(R"(controller_runtime_reconcile_time_seconds_count{controller="foo"} 4)"));
  CHECK(count(t, "controller_runtime_reconcile_time_seconds_bucket{controller=\"foo\"") == 41);  // 40 bounds and +Inf
  CHECK_THAT(t, Catch::Contains("# TYPE controller_runtime_max_concurrent_reconciles gauge\n"));
  CHECK_THAT(t, has_line(R"(controller_runtime_max_concurrent_reconciles{controller="foo"} 4)"));
  CHECK_THAT(t, has_line(R"(controller_runtime_active_workers{controller="foo"} 2)"));
}

// The events a queue reports for: add a, add b, get a after 10 ms, 2 s of
// work on it, done, then two delayed adds of which one is ready at once
// (what the workqueue's own metrics test did with a manual clock).
TEST_CASE("workqueue: depth, adds, latency, work duration, unfinished work, retries", "[prometheus]") {
  kp::metrics m;
  auto q = m.workqueue("test");
  REQUIRE(q);
  q->on_add();
  q->on_add();
  auto t = text(m);
  CHECK_THAT(t, Catch::Contains("# TYPE workqueue_depth gauge\nworkqueue_depth{name=\"test\"} 2\n"));
  CHECK_THAT(t, has_line(R"(workqueue_adds_total{name="test"} 2)"));

  q->on_get(10ms);
  t = text(m);
  CHECK_THAT(t, has_line(R"(workqueue_depth{name="test"} 1)"));
  CHECK_THAT(t, has_line(R"(workqueue_queue_duration_seconds_count{name="test"} 1)"));
  CHECK_THAT(t, has_line(R"(workqueue_queue_duration_seconds_sum{name="test"} 0.01)"));
  CHECK_THAT(t, has_line(R"(workqueue_queue_duration_seconds_bucket{name="test",le="1e-08"} 0)"));
  CHECK_THAT(t, has_line(R"(workqueue_queue_duration_seconds_bucket{name="test",le="0.001"} 0)"));
  // 10 ms falls in le="0.01": the upper bound is inclusive
  CHECK_THAT(t, has_line(R"(workqueue_queue_duration_seconds_bucket{name="test",le="0.01"} 1)"));
  CHECK_THAT(t, has_line(R"(workqueue_queue_duration_seconds_bucket{name="test",le="0.1"} 1)"));
  CHECK_THAT(t, has_line(R"(workqueue_queue_duration_seconds_bucket{name="test",le="10"} 1)"));
  CHECK(count(t, "workqueue_queue_duration_seconds_bucket{name=\"test\"") == 11);  // ten bounds and +Inf

  q->on_unfinished_work(2s, 2s);
  t = text(m);
  CHECK_THAT(t, has_line(R"(workqueue_unfinished_work_seconds{name="test"} 2)"));
  CHECK_THAT(t, Catch::Contains("# TYPE workqueue_longest_running_processor_seconds gauge\n"));
  CHECK_THAT(t, has_line(R"(workqueue_longest_running_processor_seconds{name="test"} 2)"));

  q->on_done(2s);
  q->on_unfinished_work(0s, 0s);
  q->on_retry();
  q->on_retry();
  q->on_add();
  t = text(m);
  CHECK_THAT(t, has_line(R"(workqueue_work_duration_seconds_count{name="test"} 1)"));
  CHECK_THAT(t, has_line(R"(workqueue_work_duration_seconds_sum{name="test"} 2)"));
  CHECK_THAT(t, has_line(R"(workqueue_work_duration_seconds_bucket{name="test",le="1"} 0)"));
  CHECK_THAT(t, has_line(R"(workqueue_work_duration_seconds_bucket{name="test",le="+Inf"} 1)"));
  CHECK_THAT(t, has_line(R"(workqueue_unfinished_work_seconds{name="test"} 0)"));
  CHECK_THAT(t, has_line(R"(workqueue_longest_running_processor_seconds{name="test"} 0)"));
  CHECK_THAT(t, has_line(R"(workqueue_retries_total{name="test"} 2)"));
  CHECK_THAT(t, has_line(R"(workqueue_adds_total{name="test"} 3)"));
  CHECK_THAT(t, has_line(R"(workqueue_depth{name="test"} 2)"));
}

TEST_CASE("label values are escaped", "[prometheus]") {
  kp::metrics m;
  auto q = m.workqueue("a\"b\\c");
  auto inf = m.informer({.name = "x\ny", .group = "", .version = "v1", .resource = "pods"});
  const auto t = text(m);
  CHECK_THAT(t, has_line(R"(workqueue_depth{name="a\"b\\c"} 0)"));
  CHECK_THAT(t, has_line(R"(reflector_lists_total{name="x\ny"} 0)"));
}

TEST_CASE("the same name asked twice updates the same series", "[prometheus]") {
  kp::metrics m;
  auto q1 = m.workqueue("q");
  auto q2 = m.workqueue("q");
  q1->on_add();
  q2->on_add();
  q2->on_get(1ms);
  const km::informer_id id{.name = "pods", .group = "", .version = "v1", .resource = "pods"};
  auto i1 = m.informer(id);
  auto i2 = m.informer(id);
  i1->on_list(1, 1ms, false);
  i2->on_list(1, 1ms, true);
  i2->on_handler(1ms, true);
  auto c1 = m.controller("c");
  auto c2 = m.controller("c");
  c1->on_reconcile(km::reconcile_label::success, 1ms);
  c2->on_reconcile(km::reconcile_label::success, 1ms);
  auto k1 = m.client();
  auto k2 = m.client();
  k1->on_attempt({.method = "GET", .host = "h", .resource = "pods", .code = 200});
  k2->on_attempt({.method = "GET", .host = "h", .resource = "pods", .code = 200});

  const auto t = text(m);
  CHECK_THAT(t, has_line(R"(workqueue_adds_total{name="q"} 2)"));
  CHECK_THAT(t, has_line(R"(workqueue_depth{name="q"} 1)"));
  CHECK(count(t, "\nworkqueue_adds_total{") == 1);
  CHECK_THAT(t, has_line(R"(reflector_lists_total{name="pods"} 2)"));
  CHECK(count(t, "\nreflector_lists_total{") == 1);
  CHECK_THAT(t, has_line(R"(informer_handler_errors_total{group="",name="pods",resource="pods",version="v1"} 1)"));
  CHECK_THAT(t, has_line(R"(controller_runtime_reconcile_total{controller="c",result="success"} 2)"));
  CHECK(count(t, "\ncontroller_runtime_reconcile_total{") == 4);
  CHECK_THAT(t, has_line(R"(rest_client_requests_total{code="200",host="h",method="GET",resource="pods"} 2)"));
}

TEST_CASE("two providers over one registry share its families", "[prometheus]") {
  auto registry = std::make_shared<::prometheus::Registry>();
  kp::metrics a(registry);
  kp::metrics b(registry);
  CHECK(a.registry() == registry);
  a.workqueue("x")->on_add();
  b.workqueue("x")->on_add();
  CHECK_THAT(text(a), has_line(R"(workqueue_adds_total{name="x"} 2)"));
  CHECK(a.render() == b.render());
  CHECK(count(a.render(), "# TYPE workqueue_adds_total counter\n") == 1);

  CHECK_THROWS_AS(kp::metrics(nullptr), std::invalid_argument);
}

TEST_CASE("hooks outlive their provider", "[prometheus]") {
  std::shared_ptr<km::workqueue_metrics> q;
  std::shared_ptr<km::client_metrics> c;
  {
    kp::metrics m;
    q = m.workqueue("late");
    c = m.client();
  }
  q->on_add();  // the registry is still alive: nothing dangles (ASan)
  c->on_attempt({.method = "GET", .host = "h", .resource = "pods", .code = 200});
  c->on_request("GET", "h", "pods", 1ms);
}

TEST_CASE("hooks and render from several threads", "[prometheus][threads]") {
  kp::metrics m;
  auto q = m.workqueue("shared");
  constexpr int threads = 4;
  constexpr int rounds = 500;
  std::vector<std::thread> pool;
  for (int i = 0; i < threads; ++i) {
    pool.emplace_back([&m, &q, i] {
      auto c = m.client();  // one client per thread, and one shared by all through the families
      const std::string resource = "r" + std::to_string(i % 2);
      for (int n = 0; n < rounds; ++n) {
        c->on_attempt({.method = "GET", .host = "h", .resource = resource, .code = n % 2 ? 200 : 0});
        c->on_request("GET", "h", resource, 1ms);
        c->on_retry({.method = "GET", .host = "h", .resource = resource, .code = 503});
        q->on_add();
        q->on_get(1us);
        if (n % 100 == 0) (void)m.render();
      }
    });
  }
  for (auto& t : pool) t.join();
  const auto t = text(m);
  CHECK_THAT(t, has_line(R"(rest_client_requests_total{code="200",host="h",method="GET",resource="r0"} 500)"));
  CHECK_THAT(t, has_line(R"(rest_client_requests_total{code="<error>",host="h",method="GET",resource="r1"} 500)"));
  CHECK_THAT(t, has_line(R"(rest_client_request_duration_seconds_count{host="h",verb="GET"} 2000)"));
  CHECK_THAT(t, has_line(R"(rest_client_request_retries_total{code="503",host="h",verb="GET"} 2000)"));
  CHECK_THAT(t, has_line(R"(workqueue_adds_total{name="shared"} 2000)"));
  CHECK_THAT(t, has_line(R"(workqueue_depth{name="shared"} 0)"));
}
