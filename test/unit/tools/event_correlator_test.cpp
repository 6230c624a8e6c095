// client-go's EventCorrelator rules (dedup by count, aggregation by reason,
// spam token bucket) on explicit times; and the recorder's bounded queue.
#include <kube/tools/event_recorder.hpp>
#include <kube/exception.hpp>

#include <boost/json.hpp>
#include <catch2/catch.hpp>

using namespace std::chrono_literals;
using sys = std::chrono::system_clock;
namespace json = boost::json;

namespace {

kube::event_recorder_params opts() {
  kube::event_recorder_params o;
  o.component = "test-controller";
  return o;
}

kube::object_reference pod(const std::string& name = "web-1") { return {"v1", "Pod", "demo", name, "uid-" + name}; }

kube::event_record ev(const kube::object_reference& o, const std::string& reason, const std::string& message,
                      kube::event_type t = kube::event_type::normal) {
  return {o, t, reason, message};
}

const sys::time_point t0 = sys::time_point{} + std::chrono::seconds(1714557600);

}  // namespace

TEST_CASE("a first event is created and an identical one patches its count", "[events][correlator]") {
  kube::event_correlator c(opts());
  auto r1 = c.correlate(ev(pod(), "Synced", "synced ok"), t0);
  CHECK_FALSE(r1.skip);
  CHECK_FALSE(r1.update);
  CHECK(r1.count == 1);
  CHECK(r1.namespace_ == "demo");
  CHECK(r1.name.rfind("web-1.", 0) == 0);
  const auto& e = r1.event;
  CHECK(e.at("kind").as_string() == "Event");
  CHECK(e.at("reason").as_string() == "Synced");
  CHECK(e.at("message").as_string() == "synced ok");
  CHECK(e.at("type").as_string() == "Normal");
  CHECK(e.at("count").as_int64() == 1);
  CHECK(e.at("source").at("component").as_string() == "test-controller");
  CHECK(e.at("involvedObject").at("uid").as_string() == "uid-web-1");
  CHECK(e.at("involvedObject").at("namespace").as_string() == "demo");
  CHECK(e.at("firstTimestamp").as_string() == "2024-05-01T10:00:00Z");
  c.update_state(r1.key, r1.name, 1);

  auto r2 = c.correlate(ev(pod(), "Synced", "synced ok"), t0 + 5s);
  CHECK(r2.update);
  CHECK(r2.name == r1.name);
  CHECK(r2.count == 2);
  const auto patch = json::parse(r2.patch).as_object();
  CHECK(patch.at("count").as_int64() == 2);
  CHECK(patch.at("lastTimestamp").as_string() == "2024-05-01T10:00:05Z");
  CHECK(r2.event.at("firstTimestamp").as_string() == "2024-05-01T10:00:00Z");

  auto r3 = c.correlate(ev(pod(), "Synced", "synced ok"), t0 + 6s);
  CHECK(r3.count == 3);
}

TEST_CASE("events differing in message, type, or object are distinct events", "[events][correlator]") {
  kube::event_correlator c(opts());
  const auto a = c.correlate(ev(pod(), "Synced", "one"), t0);
  const auto b = c.correlate(ev(pod(), "Synced", "two"), t0);
  const auto w = c.correlate(ev(pod(), "Synced", "one", kube::event_type::warning), t0);
  const auto other = c.correlate(ev(pod("web-2"), "Synced", "one"), t0);
  for (const auto* r : {&b, &w, &other}) {
    CHECK_FALSE(r->update);
    CHECK(r->key != a.key);
  }
  CHECK(w.event.at("type").as_string() == "Warning");
}

TEST_CASE("the server's name wins after update_state", "[events][correlator]") {
  kube::event_correlator c(opts());
  const auto r1 = c.correlate(ev(pod(), "Synced", "x"), t0);
  c.update_state(r1.key, "server-name", 1);
  const auto r2 = c.correlate(ev(pod(), "Synced", "x"), t0 + 1s);
  CHECK(r2.update);
  CHECK(r2.name == "server-name");
}

TEST_CASE("10 distinct messages for one reason within 10 minutes are combined", "[events][correlator]") {
  kube::event_correlator c(opts());
  for (int i = 1; i <= 9; ++i) {
    const auto r = c.correlate(ev(pod(), "Failed", "attempt " + std::to_string(i)), t0 + std::chrono::seconds(i));
    CHECK_FALSE(r.update);
    CHECK(r.message == "attempt " + std::to_string(i));
  }
  const auto tenth = c.correlate(ev(pod(), "Failed", "attempt 10"), t0 + 10s);
  CHECK_FALSE(tenth.update);
  CHECK(tenth.message == "(combined from similar events): attempt 10");
  const auto eleventh = c.correlate(ev(pod(), "Failed", "attempt 11"), t0 + 11s);
  CHECK(eleventh.update);  // the combined Event's count goes up
  CHECK(eleventh.name == tenth.name);
  CHECK(eleventh.count == 2);
  CHECK(eleventh.message == "(combined from similar events): attempt 11");
  // Another reason on the same object is not affected.
  CHECK(c.correlate(ev(pod(), "Other", "attempt 12"), t0 + 12s).message == "attempt 12");
}

TEST_CASE("the aggregation window restarts after 10 quiet minutes", "[events][correlator]") {
  kube::event_correlator c(opts());
  for (int i = 1; i <= 9; ++i) (void)c.correlate(ev(pod(), "Failed", "m" + std::to_string(i)), t0);
  // 10 min + 1 s after the last similar event: a fresh set, no combining.
  const auto r = c.correlate(ev(pod(), "Failed", "m10"), t0 + 10min + 1s);
  CHECK(r.message == "m10");
  // Within the window, it would have been the 10th.
  kube::event_correlator d(opts());
  for (int i = 1; i <= 9; ++i) (void)d.correlate(ev(pod(), "Failed", "m" + std::to_string(i)), t0);
  CHECK(d.correlate(ev(pod(), "Failed", "m10"), t0 + 10min).message == "(combined from similar events): m10");
}

TEST_CASE("spam filter: burst 25 per object and type, then one per 5 minutes", "[events][correlator][spam]") {
  kube::event_correlator c(opts());
  int passed = 0;
  for (int i = 0; i < 30; ++i) passed += c.correlate(ev(pod(), "Synced", "same"), t0).skip ? 0 : 1;
  CHECK(passed == 25);
  // Other objects and other types have their own buckets.
  CHECK_FALSE(c.correlate(ev(pod("web-2"), "Synced", "same"), t0).skip);
  CHECK_FALSE(c.correlate(ev(pod(), "Synced", "same", kube::event_type::warning), t0).skip);
  // Refill: nothing before 5 minutes, one token at 5 minutes, two at 10.
  CHECK(c.correlate(ev(pod(), "Synced", "same"), t0 + 4min + 59s).skip);
  CHECK_FALSE(c.correlate(ev(pod(), "Synced", "same"), t0 + 5min + 1s).skip);
  CHECK(c.correlate(ev(pod(), "Synced", "same"), t0 + 5min + 2s).skip);
  CHECK_FALSE(c.correlate(ev(pod(), "Synced", "same"), t0 + 15min + 2s).skip);
  CHECK_FALSE(c.correlate(ev(pod(), "Synced", "same"), t0 + 15min + 2s).skip);
  CHECK(c.correlate(ev(pod(), "Synced", "same"), t0 + 15min + 2s).skip);
}

TEST_CASE("spam limits are options", "[events][correlator][spam]") {
  auto o = opts();
  o.spam_burst = 2;
  o.spam_refill = 10s;
  kube::event_correlator c(o);
  CHECK_FALSE(c.correlate(ev(pod(), "R", "m"), t0).skip);
  CHECK_FALSE(c.correlate(ev(pod(), "R", "m"), t0).skip);
  CHECK(c.correlate(ev(pod(), "R", "m"), t0).skip);
  CHECK_FALSE(c.correlate(ev(pod(), "R", "m"), t0 + 10s).skip);
}

TEST_CASE("events about cluster-scoped objects go to the default namespace", "[events][correlator]") {
  kube::event_correlator c(opts());
  const auto r = c.correlate(ev({"v1", "Node", "", "node-1", "u1"}, "Ready", "up"), t0);
  CHECK(r.namespace_ == "default");
  CHECK_FALSE(r.event.at("involvedObject").as_object().contains("namespace"));
}

TEST_CASE("object_reference from an unstructured object", "[events]") {
  kube::unstructured u;
  u.set_api_version("apps/v1").set_kind("Deployment").set_name("web").set_namespace("demo").set_resource_version("42");
  u.metadata()["uid"] = "u-1";
  const auto r = kube::object_reference::of(u);
  CHECK(r.api_version == "apps/v1");
  CHECK(r.kind == "Deployment");
  CHECK(r.namespace_ == "demo");
  CHECK(r.name == "web");
  CHECK(r.uid == "u-1");
  CHECK(r.resource_version == "42");
}
