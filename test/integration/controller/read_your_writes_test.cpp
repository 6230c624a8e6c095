// Read your own writes, against the real apiserver with a slow watch: the
// controller's informers go through Toxiproxy with a latency toxic on what
// the apiserver sends, its writes go straight to the apiserver. The
// reconcile creates a child Secret when its cache shows none, and requeues
// itself every 50 ms (a burst of requeues far shorter than the watch's
// delay). With read_your_writes on, each reconcile after the create first
// waits until the Secret informer has observed it: exactly one child. Off,
// the reconciles read a cache without the child: several. kubectl counts
// the children.
#include "fault/fault_support.hpp"
#include "support/client_support.hpp"
#include "support/toxiproxy.hpp"

#include <kube/k8s/core/v1/config_map.hpp>
#include <kube/k8s/core/v1/secret.hpp>
#include <kube/controller/controller.hpp>
#include <kube/informer/informer_factory.hpp>
#include <kube/typed/api.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

using namespace kube_test;
using namespace std::chrono_literals;
namespace kc = kube::controller;
namespace ki = kube::informer;
using ConfigMap = k8s::core::v1::ConfigMap;
using Secret = k8s::core::v1::Secret;

namespace {

// Counts the controller's cache waits.
struct wait_hooks final : kube::metrics::controller_metrics {
  int waits = 0, caught_up = 0;
  duration longest{};
  void on_cache_wait(duration took, bool ok) override {
    ++waits;
    caught_up += ok ? 1 : 0;
    longest = std::max(longest, took);
  }
};
struct wait_provider final : kube::metrics::provider {
  std::shared_ptr<wait_hooks> hooks = std::make_shared<wait_hooks>();
  std::shared_ptr<kube::metrics::controller_metrics> controller(std::string_view) override { return hooks; }
};

constexpr int reconciles_per_run = 12;
constexpr auto watch_delay = 1500ms;  // the latency toxic; the requeues come every 50 ms

struct outcome {
  int children = 0;  // by kubectl
  int creates = 0;   // the reconciles that created one
  int reconciles = 0;
  int waits = 0, caught_up = 0;
  std::chrono::steady_clock::duration longest_wait{};
};

asio::awaitable<void> pause(std::chrono::milliseconds d) {
  asio::steady_timer t(co_await asio::this_coro::executor);
  t.expires_after(d);
  co_await t.async_wait(asio::use_awaitable);
}

// One async_run (a factory's or a controller's): its completion token, and
// a stop that cancels it and waits (up to 20 s) for it to complete.
struct running {
  asio::cancellation_signal signal;
  bool done = false;
  auto token() {
    return asio::bind_cancellation_slot(signal.slot(), [this](kube::error_code) { done = true; });
  }
  asio::awaitable<void> stop() {
    signal.emit(asio::cancellation_type::terminal);
    for (int i = 0; i < 400 && !done; ++i) co_await pause(50ms);
  }
};

outcome run_scenario(bool read_your_writes) {
  const auto ns = unique_name(read_your_writes ? "ryw-on" : "ryw-off");
  create_namespace(ns);
  toxiproxy proxy;
  proxy.reset();
  outcome out;
  with_admin_client([&](kube::client direct) -> asio::awaitable<void> {
    auto proxied = kube::detail::client_access::make(co_await asio::this_coro::executor, proxied_settings());
    ki::informer_factory_params fo;
    fo.namespace_name = ns;
    ki::informer_factory factory(proxied, fo);
    auto provider = std::make_shared<wait_provider>();
    kc::controller_params co;
    co.name = "ryw";
    co.workers = 2;
    co.read_your_writes = read_your_writes;
    co.metrics = provider;
    kc::controller<ConfigMap> ctrl(factory, co);
    ctrl.owns<Secret>();
    ctrl.remember_writes_of(direct);  // the reconcile writes through this one
    auto children = factory.for_type<Secret>()->make_lister();
    kube::api<Secret> secrets(direct, ns);
    kube::api<ConfigMap> cms(direct, ns);

    ConfigMap parent;
    parent.metadata.name = "parent";
    const ConfigMap stored = co_await cms.async_create(parent);

    bool started = false;
    running ctrl_run, factory_run;
    factory.async_run(factory_run.token());
    ctrl.async_run(
        [&](kc::reconcile_request<ConfigMap> req) -> asio::awaitable<kc::reconcile_result> {
          // The children's own events enqueue the parent again: after the burst, nothing.
          if (req.gone() || !started || out.reconciles >= reconciles_per_run) co_return kc::reconcile_result::done();
          ++out.reconciles;
          if (children.in_namespace(ns).list().empty()) {
            Secret s;
            s.metadata.generate_name = "child-";
            s.metadata.labels = std::map<std::string, std::string>{{"parent", "parent"}};
            k8s::meta::v1::OwnerReference ref;
            ref.api_version = "v1";
            ref.kind = "ConfigMap";
            ref.name = "parent";
            ref.uid = std::string(stored.uid());
            ref.controller = true;
            s.metadata.owner_references.emplace().push_back(ref);
            co_await secrets.async_create(s);
            ++out.creates;
          }
          if (out.reconciles >= reconciles_per_run) co_return kc::reconcile_result::done();
          co_return kc::reconcile_result::requeue_after(50ms);
        },
        ctrl_run.token());
    // Synced (and the parent reconciled once, as a no-op) before the watch slows down.
    co_await ctrl.primary()->async_wait_for_sync(asio::use_awaitable);
    co_await pause(500ms);
    {
      scoped_toxic slow(proxy, {"ryw-latency",
                                "latency",
                                "downstream",
                                1.0,
                                {{"latency", static_cast<int>(watch_delay.count())}, {"jitter", 0}}});
      started = true;
      ctrl.enqueue(ns + "/parent");
      // The burst, plus the watch's delay for what it wrote.
      for (int i = 0; i < 400 && out.reconciles < reconciles_per_run; ++i) co_await pause(50ms);
      co_await pause(watch_delay + 1000ms);
    }
    co_await ctrl_run.stop();
    co_await factory_run.stop();
    CHECK(ctrl_run.done);
    CHECK(factory_run.done);
    out.waits = provider->hooks->waits;
    out.caught_up = provider->hooks->caught_up;
    out.longest_wait = provider->hooks->longest;
  });
  const std::string listed =
      sh_out(kubectl() + " get secrets -n " + ns + " -l parent=parent -o name --no-headers | wc -l");
  out.children = std::stoi(listed);
  return out;
}

}  // namespace

TEST_CASE("read your own writes: a burst of requeues under a slow watch creates exactly one child",
          "[controller][integration][fault]") {
  const outcome on = run_scenario(true);
  WARN("on: reconciles " << on.reconciles << ", creates " << on.creates << ", children " << on.children << ", waits "
                         << on.waits << " (caught up " << on.caught_up << "), longest wait "
                         << std::chrono::duration_cast<std::chrono::milliseconds>(on.longest_wait).count() << " ms");
  CHECK(on.reconciles == reconciles_per_run);
  CHECK(on.children == 1);
  CHECK(on.creates == 1);
  // The reconcile after the create waited for the watch to bring it: about the toxic's delay.
  CHECK(on.waits >= 1);
  CHECK(on.caught_up == on.waits);
  CHECK(on.longest_wait >= watch_delay / 2);
}

TEST_CASE("read your own writes off: the same burst reads a stale cache and creates duplicates",
          "[controller][integration][fault]") {
  const outcome off = run_scenario(false);
  WARN("off: reconciles " << off.reconciles << ", creates " << off.creates << ", children " << off.children);
  CHECK(off.reconciles == reconciles_per_run);
  CHECK(off.children > 1);  // what the feature prevents
  CHECK(off.children == off.creates);
  CHECK(off.waits == 0);
}

// A controller whose primary informer watches namespace src (selector
// sync=true) and writes a copy of each object into namespace dst, where a
// second informer watches the copies and maps them back to their source.
// The copy is a write the src informer can never show: the next reconcile
// of the key waits only on the dst informer, which shows it within the
// watch's usual delay. (Before, it also waited on the src informer until
// the 10 s timeout, or until an unrelated event arrived in src.) Timed by
// the reconciles themselves.
TEST_CASE("read your own writes waits only on the informers that can show the write: a copy into another namespace",
          "[controller][integration]") {
  const auto src = unique_name("ryw-src");
  const auto dst = unique_name("ryw-dst");
  create_namespace(src);
  create_namespace(dst);
  std::vector<std::chrono::steady_clock::time_point> starts;  // of the reconciles of src/a
  with_admin_client([&](kube::client c) -> asio::awaitable<void> {
    ki::informer_factory_params so;
    so.namespace_name = src;
    so.label_selector = "sync=true";
    ki::informer_factory src_factory(c, so);
    ki::informer_factory_params dp;
    dp.namespace_name = dst;
    ki::informer_factory dst_factory(c, dp);
    auto provider = std::make_shared<wait_provider>();
    kc::controller_params co;
    co.name = "ryw-copy";
    co.metrics = provider;
    kc::controller<ConfigMap> ctrl(src_factory, co);
    // The copies' events bring back the source of the same name.
    ctrl.watches<ConfigMap>(dst_factory.for_type<ConfigMap>(), [src](const ConfigMap& m) {
      return std::vector<std::string>{src + "/" + std::string(m.name())};
    });
    kube::api<ConfigMap> in_src(c, src);
    kube::api<ConfigMap> in_dst(c, dst);
    running ctrl_run, src_run, dst_run;
    src_factory.async_run(src_run.token());
    dst_factory.async_run(dst_run.token());
    ctrl.async_run(
        [&](kc::reconcile_request<ConfigMap> req) -> asio::awaitable<kc::reconcile_result> {
          if (req.gone() || req.name != "a") co_return kc::reconcile_result::done();
          starts.push_back(std::chrono::steady_clock::now());
          ConfigMap copy;
          copy.metadata.name = "a";
          copy.data = req.object->data;
          // Apply: creates the copy the first time, updates it after.
          kube::patch_params ap;
          ap.field_manager = "ryw-copy";
          ap.force = true;
          co_await in_dst.async_apply(copy, ap);
          co_return kc::reconcile_result::done();
        },
        ctrl_run.token());
    ConfigMap a;
    a.metadata.name = "a";
    a.metadata.labels = std::map<std::string, std::string>{{"sync", "true"}};
    a.data = std::map<std::string, std::string>{{"v", "1"}};
    co_await in_src.async_create(a);
    // The first reconcile writes the copy; the copy's event (mapped back to
    // src/a) brings the second, which must not wait for the src informer:
    // nothing happens in src meanwhile.
    for (int i = 0; i < 300 && starts.size() < 2; ++i) co_await pause(50ms);
    REQUIRE(starts.size() >= 2);
    const auto took = starts[1] - starts[0];
    WARN("first to second reconcile: " << std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
                                       << " ms; cache waits " << provider->hooks->waits << " (caught up "
                                       << provider->hooks->caught_up << ")");
    CHECK(took < 3s);  // the read_your_writes_timeout is 10 s
    CHECK(provider->hooks->waits >= 1);
    CHECK(provider->hooks->caught_up == provider->hooks->waits);
    co_await ctrl_run.stop();
    co_await src_run.stop();
    co_await dst_run.stop();
    CHECK(ctrl_run.done);
  });
}

// A sharded replica admits a key while its last Lease renewal is within
// renew_deadline; the read-your-writes wait that follows can last longer
// than the margin the others leave it (lease_duration - renew_deadline).
// One replica whose sharding clock the test moves, behind a latency toxic
// of 3 s: its reconcile creates a child Secret, so the next reconcile of
// the key waits about 3 s for the Secret informer. 1 s into that wait the
// clock jumps past renew_deadline: the replica renews at once, but hears
// the answer only 3 s later, after the wait ended. Every reconcile body
// must run while the replica's admission holds; the key comes back once
// the renewal is in. Before the admission was checked again after the
// wait, the second body ran with the renewal 55 s old.
TEST_CASE("sharding: a key admitted before a read-your-writes wait does not start if the renewal fell behind during it",
          "[controller][integration][fault][sharding]") {
  const auto ns = unique_name("ryw-shard");
  create_namespace(ns);
  toxiproxy proxy;
  proxy.reset();
  int bodies = 0;        // reconciles of ns/parent that ran their body after `started`
  int not_admitted = 0;  // of them, those that ran while the replica's admission did not hold
  bool jumped = false;
  int bodies_after_jump = 0;
  with_admin_client([&](kube::client direct) -> asio::awaitable<void> {
    auto proxied = kube::detail::client_access::make(co_await asio::this_coro::executor, proxied_settings());
    ki::informer_factory_params fo;
    fo.namespace_name = ns;
    ki::informer_factory factory(proxied, fo);
    auto skew = std::make_shared<std::atomic<long long>>(0);  // ms added to the sharding clock
    kc::sharding_params sp;
    sp.ring = "ryw-shard";
    sp.lease_namespace = ns;
    sp.identity = "a";
    sp.lease_duration = 60s;
    sp.renew_deadline = 50s;
    sp.retry_period = 40s;
    sp.now = [skew] { return std::chrono::steady_clock::now() + std::chrono::milliseconds(skew->load()); };
    kc::controller_params co;
    co.name = "ryw-shard";
    co.read_your_writes = true;
    co.sharding = sp;
    kc::controller<ConfigMap> ctrl(factory, co);
    ctrl.owns<Secret>();
    ctrl.remember_writes_of(direct);
    auto children = factory.for_type<Secret>()->make_lister();
    kube::api<Secret> secrets(direct, ns);
    kube::api<ConfigMap> cms(direct, ns);
    bool started = false;
    running ctrl_run, factory_run;
    factory.async_run(factory_run.token());
    ctrl.async_run(
        [&](kc::reconcile_request<ConfigMap> req) -> asio::awaitable<kc::reconcile_result> {
          if (req.gone() || !started) co_return kc::reconcile_result::done();
          ++bodies;
          bodies_after_jump += jumped ? 1 : 0;
          not_admitted += ctrl.shard()->decide(req.key) == kc::shard_decision::mine ? 0 : 1;
          if (children.in_namespace(ns).list().empty()) {
            Secret s;
            s.metadata.name = "child";
            co_await secrets.async_create(s);
            co_return kc::reconcile_result::requeue_after(50ms);
          }
          co_return kc::reconcile_result::done();
        },
        ctrl_run.token());
    co_await ctrl.shard()->async_wait_joined(asio::use_awaitable);
    ConfigMap parent;
    parent.metadata.name = "parent";
    co_await cms.async_create(parent);
    // Agreed once the replica acknowledged its one-member view.
    for (int i = 0; i < 200 && ctrl.shard()->decide(ns + "/parent") != kc::shard_decision::mine; ++i) {
      co_await pause(50ms);
    }
    REQUIRE(ctrl.shard()->decide(ns + "/parent") == kc::shard_decision::mine);
    {
      scoped_toxic slow(proxy, {"ryw-shard-latency", "latency", "downstream", 1.0, {{"latency", 3000}, {"jitter", 0}}});
      started = true;
      ctrl.enqueue(ns + "/parent");
      for (int i = 0; i < 100 && bodies < 1; ++i) co_await pause(50ms);
      REQUIRE(bodies == 1);  // it created the child; the next reconcile waits for the Secret informer
      co_await pause(1000ms);
      *skew = 55'000;  // the last renewal now looks 55 s old: past renew_deadline
      jumped = true;
      // The wait ends about 2 s later, the renewal's answer about 3 s later.
      for (int i = 0; i < 200 && bodies < 2; ++i) co_await pause(50ms);
    }
    CHECK(bodies_after_jump >= 1);  // the key came back once the renewal was in
    CHECK(not_admitted == 0);
    co_await ctrl_run.stop();
    co_await factory_run.stop();
    CHECK(ctrl_run.done);
    CHECK(factory_run.done);
  });
}
