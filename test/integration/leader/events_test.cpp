// kube::event_recorder against the real apiserver, checked with kubectl:
// repeats become one Event with a count, the spam filter caps a burst at 25,
// and cluster-scoped objects get their Events in "default".
#include "support.hpp"

#include <kube/dynamic/dynamic_api.hpp>
#include <kube/tools/event_recorder.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/json.hpp>

using namespace kube_test;
using namespace std::chrono_literals;
namespace json = boost::json;

namespace {

// The core/v1 Events about `name` in `ns`, read with kubectl.
std::vector<json::object> events_about(const std::string& ns, const std::string& name) {
  const auto out = capture(kubectl() + "get events -n " + ns + " -o json");
  std::vector<json::object> found;
  auto v = json::parse(out);
  for (auto& item : v.as_object().at("items").as_array()) {
    auto& o = item.as_object();
    if (o.at("involvedObject").at("name").as_string() == name) found.push_back(o);
  }
  return found;
}

const json::object* with_reason(const std::vector<json::object>& evs, const std::string& reason) {
  for (const auto& e : evs)
    if (e.at("reason").as_string() == reason) return &e;
  return nullptr;
}

struct running_recorder {
  kube::event_recorder rec;
  asio::cancellation_signal stop;
  bool done = false;
  kube::error_code result;

  running_recorder(kube::client c, kube::event_recorder_params o)
      : rec(std::move(c), std::move(o)) {
    rec.async_run(asio::bind_cancellation_slot(stop.slot(), [this](kube::error_code ec) {
      result = ec;
      done = true;
    }));
  }
  asio::awaitable<void> drain(std::uint64_t expected_writes) {
    const bool ok = co_await eventually(
        [&] {
          const auto s = rec.stats();
          return s.created + s.patched + s.failed + s.filtered >= expected_writes;
        },
        30s);
    REQUIRE(ok);
  }
  asio::awaitable<void> shutdown() {
    stop.emit(asio::cancellation_type::terminal);
    REQUIRE(co_await eventually([&] { return done; }, 10s));
    CHECK(result == asio::error::operation_aborted);
  }
};

kube::unstructured configmap(const std::string& name) {
  kube::unstructured u;
  u.set_api_version("v1").set_kind("ConfigMap").set_name(name);
  u.object()["data"] = json::object{{"k", "v"}};
  return u;
}

}  // namespace

TEST_CASE("repeated events become one Event whose count kubectl sees", "[events][integration]") {
  const auto ns = unique_name("events");
  create_namespace(ns);
  run_test([&](kube::client c) -> asio::awaitable<void> {
    kube::dynamic_api cms(c, {"", "v1", "configmaps"}, ns);
    auto cm = co_await cms.async_create(configmap("subject"));
    kube::event_recorder_params o;
    o.component = "events-test";
    running_recorder r(c, o);
    const auto ref = kube::object_reference::of(cm);
    for (int i = 0; i < 4; ++i) r.rec.record(ref, kube::event_type::normal, "Synced", "configmap synced");
    r.rec.record(ref, kube::event_type::warning, "Failed", "could not frobnicate");
    co_await r.drain(5);
    const auto st = r.rec.stats();
    CHECK(st.created == 2);
    CHECK(st.patched == 3);
    CHECK(st.failed == 0);

    const auto evs = events_about(ns, "subject");
    CHECK(evs.size() == 2);
    const auto* synced = with_reason(evs, "Synced");
    REQUIRE(synced);
    CHECK(synced->at("count").as_int64() == 4);
    CHECK(synced->at("type").as_string() == "Normal");
    CHECK(synced->at("message").as_string() == "configmap synced");
    CHECK(synced->at("source").at("component").as_string() == "events-test");
    CHECK(synced->at("involvedObject").at("uid").as_string() == cm.uid());
    CHECK(synced->at("involvedObject").at("kind").as_string() == "ConfigMap");
    const auto* failed = with_reason(evs, "Failed");
    REQUIRE(failed);
    CHECK(failed->at("count").as_int64() == 1);
    CHECK(failed->at("type").as_string() == "Warning");

    // Later repeats keep counting on the same Event.
    r.rec.record(ref, kube::event_type::normal, "Synced", "configmap synced");
    co_await r.drain(6);
    const auto again = events_about(ns, "subject");
    const auto* synced2 = with_reason(again, "Synced");
    REQUIRE(synced2);
    CHECK(synced2->at("count").as_int64() == 5);
    CHECK(synced2->at("metadata").at("name") == synced->at("metadata").at("name"));
    co_await r.shutdown();
  });
}

TEST_CASE("the spam filter caps a burst about one object at 25", "[events][integration][spam]") {
  const auto ns = unique_name("events-spam");
  create_namespace(ns);
  run_test([&](kube::client c) -> asio::awaitable<void> {
    kube::dynamic_api cms(c, {"", "v1", "configmaps"}, ns);
    auto cm = co_await cms.async_create(configmap("noisy"));
    kube::event_recorder_params o;
    o.component = "events-test";
    running_recorder r(c, o);
    const auto ref = kube::object_reference::of(cm);
    for (int i = 0; i < 40; ++i) r.rec.record(ref, kube::event_type::normal, "Tick", "tick");
    co_await r.drain(40);
    CHECK(r.rec.stats().filtered == 15);
    const auto evs = events_about(ns, "noisy");
    REQUIRE(evs.size() == 1);
    CHECK(evs[0].at("count").as_int64() == 25);
    co_await r.shutdown();
  });
}

TEST_CASE("an event about a cluster-scoped object lands in default", "[events][integration]") {
  const auto ns = unique_name("events-cluster");
  create_namespace(ns);
  run_test([&](kube::client c) -> asio::awaitable<void> {
    kube::dynamic_api namespaces(c, {"", "v1", "namespaces"});
    auto nsobj = co_await namespaces.async_get(ns);
    kube::event_recorder_params o;
    o.component = "events-test";
    running_recorder r(c, o);
    r.rec.record(kube::object_reference::of(nsobj), kube::event_type::normal, "Checked", "namespace checked");
    co_await r.drain(1);
    CHECK(r.rec.stats().created == 1);
    const auto evs = events_about("default", ns);
    REQUIRE(evs.size() == 1);
    CHECK(evs[0].at("involvedObject").at("kind").as_string() == "Namespace");
    co_await r.shutdown();
  });
}
