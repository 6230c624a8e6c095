// kube::controller against the real apiserver: a controller<ConfigMap> in a
// fresh namespace, owning Secrets. Reconcile on creates and updates,
// owned-object events enqueue the owner, errors retry with backoff,
// requeue_after, no concurrent reconcile of one key under a burst of
// updates, graceful shutdown drains an in-flight reconcile.
#include "support/client_support.hpp"

#include <kube/typed/api.hpp>
#include <kube/k8s/apps/v1/deployment.hpp>
#include <kube/k8s/core/v1/config_map.hpp>
#include <kube/k8s/core/v1/secret.hpp>
#include <kube/controller/controller.hpp>
#include <kube/informer/informer_factory.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <algorithm>
#include <map>
#include <string>
#include <vector>

using namespace kube_test;
using namespace std::chrono_literals;
namespace kc = kube::controller;
namespace ki = kube::informer;
using ConfigMap = k8s::core::v1::ConfigMap;
using Secret = k8s::core::v1::Secret;
using steady = std::chrono::steady_clock;

namespace {

// Polls `pred` (a lambda capturing by reference) every 10 ms until it holds
// or `timeout` passes.
template <class Pred>
asio::awaitable<bool> eventually(Pred pred, std::chrono::milliseconds timeout) {
  asio::steady_timer t(co_await asio::this_coro::executor);
  const auto deadline = steady::now() + timeout;
  for (;;) {
    if (pred()) co_return true;
    if (steady::now() >= deadline) co_return false;
    t.expires_after(10ms);
    co_await t.async_wait(asio::use_awaitable);
  }
}

asio::awaitable<void> pause(std::chrono::milliseconds d) {
  asio::steady_timer t(co_await asio::this_coro::executor);
  t.expires_after(d);
  co_await t.async_wait(asio::use_awaitable);
}

ConfigMap config_map(const std::string& name, const std::string& value) {
  ConfigMap cm;
  cm.metadata.name = name;
  cm.data = std::map<std::string, std::string>{{"v", value}};
  return cm;
}

std::string value_of(const ConfigMap& cm) {
  return cm.data && cm.data->contains("v") ? cm.data->at("v") : std::string("<none>");
}

// A controller<ConfigMap> owning Secrets in namespace `ns`, running on the
// test's io_context; stop() cancels it and waits for async_run to complete.
struct running_controller {
  ki::informer_factory factory;
  kc::controller<ConfigMap> ctrl;
  asio::cancellation_signal stop_ctrl, stop_factory;
  bool ctrl_done = false, factory_done = false;
  steady::time_point ctrl_done_at{};
  kube::error_code ctrl_ec;

  running_controller(const kube::client& c, const std::string& ns, unsigned workers,
                     kc::controller<ConfigMap>::reconcile_fn reconcile)
      : factory(c, options(ns)),
        ctrl(factory, ctrl_options(workers)) {
    ctrl.owns<Secret>();
    factory.async_run(
        asio::bind_cancellation_slot(stop_factory.slot(), [this](kube::error_code) { factory_done = true; }));
    ctrl.async_run(std::move(reconcile), asio::bind_cancellation_slot(stop_ctrl.slot(), [this](kube::error_code ec) {
                     ctrl_ec = ec;
                     ctrl_done = true;
                     ctrl_done_at = steady::now();
                   }));
  }
  static ki::informer_factory_params options(const std::string& ns) {
    ki::informer_factory_params o;
    o.namespace_name = ns;
    return o;
  }
  static kc::controller_params ctrl_options(unsigned workers) {
    kc::controller_params o;
    o.name = "test";
    o.workers = workers;
    return o;
  }
  asio::awaitable<void> stop() {
    stop_ctrl.emit(asio::cancellation_type::terminal);
    const bool stopped = co_await eventually([this] { return ctrl_done; }, 20000ms);
    CHECK(stopped);
    CHECK(ctrl_ec == asio::error::operation_aborted);
    stop_factory.emit(asio::cancellation_type::terminal);
    const bool factory_stopped = co_await eventually([this] { return factory_done; }, 20000ms);
    CHECK(factory_stopped);
  }
};

}  // namespace

TEST_CASE("controller: reconciles creates and updates with the cached object, and deletes as gone",
          "[controller][integration]") {
  const auto ns = unique_name("ctrl-basic");
  create_namespace(ns);
  with_admin_client([&](kube::client c) -> asio::awaitable<void> {
    std::vector<std::string> seen;  // "name=value" or "name gone"
    running_controller rc(c, ns, 2, [&](kc::reconcile_request<ConfigMap> req) -> asio::awaitable<kc::reconcile_result> {
      if (req.name != "kube-root-ca.crt")
        seen.push_back(req.name + (req.gone() ? " gone" : "=" + value_of(*req.object)));
      co_return kc::reconcile_result::done();
    });
    auto saw = [&](const char* s) { return std::find(seen.begin(), seen.end(), s) != seen.end(); };
    kube::api<ConfigMap> cms(c, ns);
    const auto a1 = config_map("a", "1");
    auto created = co_await cms.async_create(a1);
    {
      const bool ok_ = co_await eventually([&] { return saw("a=1"); }, 15000ms);
      CHECK(ok_);
    }
    (*created.data)["v"] = "2";
    co_await cms.async_replace(created);
    {
      const bool ok_ = co_await eventually([&] { return saw("a=2"); }, 15000ms);
      CHECK(ok_);
    }
    co_await cms.async_delete("a");
    {
      const bool ok_ = co_await eventually([&] { return saw("a gone"); }, 15000ms);
      CHECK(ok_);
    }
    CHECK(rc.ctrl.stats().failed == 0);
    co_await rc.stop();
  });
}

TEST_CASE("controller: events on an owned Secret reconcile its controlling ConfigMap", "[controller][integration]") {
  const auto ns = unique_name("ctrl-owns");
  create_namespace(ns);
  with_admin_client([&](kube::client c) -> asio::awaitable<void> {
    std::map<std::string, int> count;
    running_controller rc(c, ns, 2, [&](kc::reconcile_request<ConfigMap> req) -> asio::awaitable<kc::reconcile_result> {
      ++count[req.name];
      co_return kc::reconcile_result::done();
    });
    kube::api<ConfigMap> cms(c, ns);
    kube::api<Secret> secrets(c, ns);
    const auto o = config_map("owner", "x");
    auto owner = co_await cms.async_create(o);
    {
      const bool ok_ = co_await eventually([&] { return count["owner"] >= 1; }, 15000ms);
      CHECK(ok_);
    }
    // Let the create's events settle, then count only what the Secret causes.
    co_await pause(300ms);
    const int before = count["owner"];

    Secret s;
    s.metadata.name = "owned";
    k8s::meta::v1::OwnerReference ref;
    ref.api_version = "v1";
    ref.kind = "ConfigMap";
    ref.name = "owner";
    ref.uid = std::string(owner.uid());
    ref.controller = true;
    s.metadata.owner_references.emplace().push_back(ref);
    s.string_data = std::map<std::string, std::string>{{"k", "v"}};
    co_await secrets.async_create(s);
    {
      const bool ok_ = co_await eventually([&] { return count["owner"] > before; }, 15000ms);
      CHECK(ok_);
    }
    const int after_create = count["owner"];
    // An update of the Secret, and its deletion, reconcile the owner again.
    co_await secrets.async_patch("owned", kube::patch_type::merge, R"({"stringData":{"k":"w"}})");
    {
      const bool ok_ = co_await eventually([&] { return count["owner"] > after_create; }, 15000ms);
      CHECK(ok_);
    }
    const int after_update = count["owner"];
    co_await secrets.async_delete("owned");
    {
      const bool ok_ = co_await eventually([&] { return count["owner"] > after_update; }, 15000ms);
      CHECK(ok_);
    }
    CHECK_FALSE(count.contains("owned"));  // the Secret's own name is never a ConfigMap key
    co_await rc.stop();
  });
}

TEST_CASE("controller: errors retry with growing backoff, then succeed - requeue_after comes back",
          "[controller][integration]") {
  const auto ns = unique_name("ctrl-retry");
  create_namespace(ns);
  with_admin_client([&](kube::client c) -> asio::awaitable<void> {
    std::vector<steady::time_point> flaky, periodic;
    running_controller rc(c, ns, 2, [&](kc::reconcile_request<ConfigMap> req) -> asio::awaitable<kc::reconcile_result> {
      if (req.name == "flaky" && !req.gone()) {
        flaky.push_back(steady::now());
        if (flaky.size() <= 5) throw std::runtime_error("not yet");
      }
      if (req.name == "periodic" && !req.gone()) {
        periodic.push_back(steady::now());
        if (periodic.size() < 4) co_return kc::reconcile_result::requeue_after(400ms);
      }
      co_return kc::reconcile_result::done();
    });
    kube::api<ConfigMap> cms(c, ns);
    const auto f = config_map("flaky", "1");
    co_await cms.async_create(f);
    {
      const bool ok_ = co_await eventually([&] { return flaky.size() >= 6; }, 15000ms);
      CHECK(ok_);
    }
    REQUIRE(flaky.size() >= 6);
    // The default controller limiter: 5, 10, 20, 40, 80 ms between attempts
    // (at least; a little scheduling slack above).
    auto expected = 5ms;
    for (std::size_t i = 1; i < 6; ++i, expected *= 2) {
      const auto gap = std::chrono::duration_cast<std::chrono::milliseconds>(flaky[i] - flaky[i - 1]);
      INFO("attempt " << i << " gap " << gap.count() << " ms, expected >= " << expected.count());
      CHECK(gap >= expected - 1ms);
    }
    // Success forgot the key: nothing more comes by itself.
    co_await pause(400ms);
    CHECK(flaky.size() == 6);
    CHECK(rc.ctrl.stats().failed >= 5);

    const auto p = config_map("periodic", "1");
    co_await cms.async_create(p);
    {
      const bool ok_ = co_await eventually([&] { return periodic.size() >= 4; }, 15000ms);
      CHECK(ok_);
    }
    REQUIRE(periodic.size() >= 4);
    for (std::size_t i = 1; i < 4; ++i) {
      const auto gap = std::chrono::duration_cast<std::chrono::milliseconds>(periodic[i] - periodic[i - 1]);
      INFO("requeue " << i << " gap " << gap.count() << " ms");
      CHECK(gap >= 399ms);
      CHECK(gap < 5000ms);
    }
    co_await rc.stop();
  });
}

TEST_CASE("controller: a key is never reconciled twice at once under a burst of updates", "[controller][integration]") {
  const auto ns = unique_name("ctrl-conc");
  create_namespace(ns);
  with_admin_client([&](kube::client c) -> asio::awaitable<void> {
    std::map<std::string, int> running, most, count;
    int running_total = 0, most_total = 0;
    running_controller rc(c, ns, 4, [&](kc::reconcile_request<ConfigMap> req) -> asio::awaitable<kc::reconcile_result> {
      const std::string key = req.key;
      most[key] = std::max(most[key], ++running[key]);
      most_total = std::max(most_total, ++running_total);
      ++count[key];
      co_await pause(30ms);  // slow reconcile: updates arrive while it runs
      --running[key];
      --running_total;
      co_return kc::reconcile_result::done();
    });
    kube::api<ConfigMap> cms(c, ns);
    for (const char* n : {"hot", "other-1", "other-2", "other-3"}) {
      const auto cm = config_map(n, "0");
      co_await cms.async_create(cm);
    }
    // 40 updates of "hot" while the others are updated too.
    for (int i = 1; i <= 40; ++i) {
      const std::string body = R"({"data":{"v":")" + std::to_string(i) + R"("}})";
      co_await cms.async_patch("hot", kube::patch_type::merge, body);
      if (i % 10 == 0) {
        for (const char* n : {"other-1", "other-2", "other-3"})
          co_await cms.async_patch(n, kube::patch_type::merge, body);
      }
    }
    const std::string hot = ns + "/hot";
    // The last update is reconciled (the cache holds v=40 when it runs).
    {
      const bool ok_ = co_await eventually([&] { return running[hot] == 0 && count[hot] >= 2; }, 15000ms);
      CHECK(ok_);
    }
    co_await pause(300ms);
    INFO("hot reconciled " << count[hot] << " times; most at once overall " << most_total);
    CHECK(most[hot] == 1);
    for (const auto& [k, m] : most) CHECK(m == 1);
    CHECK(most_total >= 2);  // different keys did run in parallel (the check above could fail)
    CHECK(count[hot] < 41);  // updates during a reconcile were coalesced
    co_await rc.stop();
  });
}

TEST_CASE("controller: shutdown waits for the in-flight reconcile to finish", "[controller][integration]") {
  const auto ns = unique_name("ctrl-drain");
  create_namespace(ns);
  with_admin_client([&](kube::client c) -> asio::awaitable<void> {
    bool started = false, finished = false;
    steady::time_point finished_at{};
    std::vector<std::string> names;
    running_controller rc(c, ns, 2, [&](kc::reconcile_request<ConfigMap> req) -> asio::awaitable<kc::reconcile_result> {
      names.push_back(req.name);
      if (req.name != "slow") co_return kc::reconcile_result::done();
      started = true;
      co_await pause(700ms);
      finished = true;
      finished_at = steady::now();
      co_return kc::reconcile_result::done();
    });
    kube::api<ConfigMap> cms(c, ns);
    const auto s = config_map("slow", "1");
    co_await cms.async_create(s);
    {
      const bool ok_ = co_await eventually([&] { return started; }, 15000ms);
      CHECK(ok_);
    }
    REQUIRE(started);
    rc.stop_ctrl.emit(asio::cancellation_type::terminal);
    co_await pause(100ms);
    CHECK_FALSE(rc.ctrl_done);  // still draining
    {
      const bool ok_ = co_await eventually([&] { return rc.ctrl_done; }, 10000ms);
      CHECK(ok_);
    }
    CHECK(finished);
    CHECK(finished_at <= rc.ctrl_done_at);  // async_run completed after the reconcile finished
    CHECK(rc.ctrl_ec == asio::error::operation_aborted);
    // A change after the stop is not reconciled.
    const auto later = config_map("after-stop", "1");
    co_await cms.async_create(later);
    co_await pause(500ms);
    CHECK(std::find(names.begin(), names.end(), "after-stop") == names.end());
    CHECK(rc.ctrl.stats().in_flight == 0);
    rc.stop_factory.emit(asio::cancellation_type::terminal);
    {
      const bool ok_ = co_await eventually([&] { return rc.factory_done; }, 20000ms);
      CHECK(ok_);
    }
  });
}

namespace {
using Deployment = k8s::apps::v1::Deployment;

Deployment deployment(const std::string& name) {
  Deployment d;
  d.metadata.name = name;
  auto& spec = d.spec.emplace();
  spec.replicas = 1;
  spec.selector.match_labels.emplace()["app"] = name;
  spec.template_.metadata.emplace().labels.emplace()["app"] = name;
  k8s::core::v1::Container app;
  app.name = "app";
  app.image = "busybox";
  spec.template_.spec.emplace().containers.push_back(app);
  return d;
}
}  // namespace

// The classic loop: a controller that writes its own object's status sees
// that write as an update and reconciles again, and again. Filtered on
// generation_changed(), it reconciles once per create and per spec change.
// The cluster runs no Deployment controller, so only this test writes the
// status (status.collisionCount := the number of reconciles so far).
TEST_CASE("controller: a generation filter stops a status-writing controller from waking itself",
          "[controller][integration][predicate]") {
  const auto ns = unique_name("ctrl-filter");
  create_namespace(ns);
  with_admin_client([&](kube::client c) -> asio::awaitable<void> {
    kube::api<Deployment> deps(c, ns);
    ki::informer_factory factory(c, running_controller::options(ns));
    // A controller that reconciles only the Deployment `only` and counts.
    auto run = [&](kc::predicate filter, std::string only, int& count, asio::cancellation_signal& stop, bool& done) {
      kc::controller_params o;
      o.name = "filter-test";
      o.primary_filter = std::move(filter);
      auto ctrl = std::make_shared<kc::controller<Deployment>>(factory, o);
      ctrl->async_run(
          [&count, &deps, only](kc::reconcile_request<Deployment> req) -> asio::awaitable<kc::reconcile_result> {
            if (req.gone() || req.name != only) co_return kc::reconcile_result::done();
            const int n = ++count;
            if (n <= 6) {  // the unfiltered controller's loop ends here
              const std::string body = R"({"status":{"collisionCount":)" + std::to_string(n) + "}}";
              co_await deps.async_patch_status(req.name, kube::patch_type::merge, body);
            }
            co_return kc::reconcile_result::done();
          },
          asio::bind_cancellation_slot(stop.slot(), [ctrl, &done](kube::error_code) { done = true; }));
    };
    // Two controllers on one factory: the filtered one reconciles "calm",
    // the unfiltered one "loop" (each ignores the other's object).
    int filtered = 0, unfiltered = 0;
    asio::cancellation_signal stop_filtered, stop_unfiltered, stop_factory;
    bool filtered_done = false, unfiltered_done = false, factory_done = false;
    run(kc::generation_changed(), "calm", filtered, stop_filtered, filtered_done);
    run(kc::predicate(), "loop", unfiltered, stop_unfiltered, unfiltered_done);
    factory.async_run(
        asio::bind_cancellation_slot(stop_factory.slot(), [&](kube::error_code) { factory_done = true; }));

    co_await deps.async_create(deployment("calm"));
    co_await deps.async_create(deployment("loop"));
    // Without the filter, each status write brings the next reconcile.
    {
      const bool looped = co_await eventually([&] { return unfiltered >= 6; }, 30000ms);
      CHECK(looped);
    }
    // With it: one reconcile for the create, whose status write (seen by the
    // same informer) brings none.
    {
      const bool once = co_await eventually([&] { return filtered >= 1; }, 15000ms);
      CHECK(once);
    }
    auto calm = co_await deps.async_get("calm");
    CHECK(calm.status);
    if (calm.status) CHECK(calm.status->collision_count == 1);
    co_await pause(2000ms);
    CHECK(filtered == 1);
    // A spec change bumps metadata.generation: one more reconcile.
    co_await deps.async_patch("calm", kube::patch_type::merge, R"({"spec":{"replicas":2}})");
    {
      const bool twice = co_await eventually([&] { return filtered >= 2; }, 15000ms);
      CHECK(twice);
    }
    co_await pause(2000ms);
    CHECK(filtered == 2);

    stop_filtered.emit(asio::cancellation_type::terminal);
    stop_unfiltered.emit(asio::cancellation_type::terminal);
    {
      const bool stopped = co_await eventually([&] { return filtered_done && unfiltered_done; }, 20000ms);
      CHECK(stopped);
    }
    stop_factory.emit(asio::cancellation_type::terminal);
    {
      const bool stopped = co_await eventually([&] { return factory_done; }, 20000ms);
      CHECK(stopped);
    }
  });
}
