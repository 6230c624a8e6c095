// Chaos at CI scale: rounds of ConfigMap churn (a few hundred operations in
// all) while the apiserver is killed with SIGKILL and started again, then,
// with the informer cut off, etcd compacted and the apiserver killed again so
// that its watch cache forgets the old history. After each round the
// informer's cache and its handlers' last states equal the apiserver's view,
// and every 410 costs exactly one relist. Kills the shared apiserver: SERIAL.
// KUBE_CHAOS_ROUNDS sets the number of rounds (CI: 3); the longer run is
// test/integration/fault/soak.sh.
#include "fault/fault_support.hpp"
#include "support/gated_lister_watcher.hpp"
#include "support/informer_support.hpp"

#include <kube/informer/dynamic_lister_watcher.hpp>
#include <kube/informer/shared_informer.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <mutex>
#include <thread>

using namespace kube_test;
namespace ki = kube::informer;

namespace {

void kcluster(const std::string& command) {
  const auto env = cluster_env();
  REQUIRE(sh(env.at("KUBE_TEST_KCLUSTER") + " " + command + " --dir " + env.at("KUBE_TEST_CLUSTER_DIR")) == 0);
}

// One round of churn on round-specific names: n creates, n/2 updates of this
// round's objects, n/4 deletes of the previous round's.
void churn_round(const std::string& ns, int round, int n, std::atomic<int>& done) {
  with_admin_client([&](kube::client c) -> asio::awaitable<void> {
    kube::dynamic_api cms(c, {"", "v1", "configmaps"}, ns);
    const auto name = [&](int r, int i) { return "r" + std::to_string(r) + "-" + std::to_string(i); };
    for (int i = 0; i < n; ++i) {
      const auto cm = configmap(ns, name(round, i), "0");
      co_await kube_test::retry_until_applied([&]() -> asio::awaitable<void> { co_await cms.async_create(cm); });
      ++done;
    }
    for (int i = 0; i < n / 2; ++i) {
      co_await kube_test::retry_until_applied([&]() -> asio::awaitable<void> {
        co_await cms.async_patch(name(round, i), kube::patch_type::merge, R"({"data":{"v":"1"}})");
      });
      ++done;
    }
    for (int i = 0; round > 0 && i < n / 4; ++i) {
      co_await kube_test::retry_until_applied(
          [&]() -> asio::awaitable<void> { co_await cms.async_delete(name(round - 1, i)); });
      ++done;
    }
  });
}

}  // namespace

TEST_CASE("chaos: churn across SIGKILLed apiservers and compactions: the cache and the handlers converge, one relist "
          "per 410",
          "[chaos]") {
  const auto ns = unique_name("chaos");
  create_namespace(ns);
  auto settings = admin_cert_settings();
  settings.read_timeout = 5s;
  settings.connect_timeout = 5s;

  asio::io_context io;
  auto client = kube::detail::client_access::make(io.get_executor(), settings);
  auto gate = std::make_shared<gated_lister_watcher>(std::make_shared<ki::dynamic_lister_watcher>(
      kube::dynamic_api(client, {"", "v1", "configmaps"}, ns), ki::dynamic_lister_watcher_params{"ConfigMap"}));
  std::atomic<int> expired{0};
  ki::informer_params<kube::unstructured> o;
  o.reflector.backoff.max = 1s;
  std::atomic<int> short_watches{0};  // client-go's "very short watch" rule: relists
  std::mutex relists_m;
  std::vector<std::string> relist_causes;  // every failure after which the hook announced a relist
  o.on_watch_error = [&](const ki::watch_failure& f) {
    if (kube::is_resource_expired(f.ec)) ++expired;
    if (f.ec == kube::client_errc::watch_stream_error) ++short_watches;
    if (f.relist) {
      std::lock_guard lk(relists_m);
      relist_causes.push_back(f.ec.message() + " (" + f.diag.client_message() + ")");
    }
  };
  ki::shared_index_informer<kube::unstructured> inf(io.get_executor(), gate, std::move(o));
  // The handlers' last states: name -> resourceVersion, deletes remove.
  std::mutex m;
  std::map<std::string, std::string> handled;
  auto record = [&](const std::shared_ptr<const kube::unstructured>& obj) {
    std::lock_guard lk(m);
    if (obj->name() != "kube-root-ca.crt") handled[obj->name()] = obj->resource_version();
  };
  using object_ptr = std::shared_ptr<const kube::unstructured>;
  inf.add_handler({[&](const object_ptr& obj, bool) { record(obj); },
                   [&](const object_ptr&, const object_ptr& obj) { record(obj); },
                   [&](const ki::deleted_object<kube::unstructured>& d) {
                     const auto& obj = ki::object_of(d);
                     std::lock_guard lk(m);
                     if (obj) handled.erase(obj->name());
                   }});
  asio::cancellation_signal stop;
  inf.async_run(asio::bind_cancellation_slot(stop.slot(), [](kube::error_code) {}));
  std::thread runner([&] { io.run(); });
  kube_test::joiner join{runner, io, stop};
  auto stats = [&] { return kube_test::reflector_stats_of(inf); };
  kube_test::require_synced(inf);
  const auto lister = inf.make_lister();
  const auto handlers_converge = [&](steady::duration limit) {
    const auto until = steady::now() + limit;
    for (;;) {
      const auto server = server_state(ns);
      {
        std::lock_guard lk(m);
        if (handled == server) return true;
      }
      if (steady::now() >= until) return false;
      std::this_thread::sleep_for(200ms);
    }
  };

  const char* rounds_env = std::getenv("KUBE_CHAOS_ROUNDS");
  const int rounds = rounds_env != nullptr ? std::max(1, std::atoi(rounds_env)) : 3;
  constexpr int per_round = 80;
  int total_ops = 0;
  const auto lists_at_start = stats().syncs();
  for (int round = 0; round < rounds; ++round) {
    INFO("round " << round);
    // Churn, with the apiserver killed and started again in the middle.
    std::atomic<int> done{0};
    std::thread writer([&] { churn_round(ns, round, per_round, done); });
    while (done < per_round / 2) std::this_thread::sleep_for(10ms);
    kcluster("kill-apiserver");
    std::this_thread::sleep_for(500ms);
    kcluster("start-apiserver");
    writer.join();
    total_ops += done;
    REQUIRE(converges(lister, ns, 60s));
    REQUIRE(handlers_converge(10s));

    // Cut off: the informer misses deletes and updates, etcd is compacted,
    // the apiserver killed again (its watch cache forgets the history).
    // A watch younger than a second that ends without an event relists
    // (client-go's "very short watch" rule): cut off an older one.
    std::this_thread::sleep_for(1500ms);
    const int expired_before = expired;
    const auto lists_before = stats().syncs();
    gate->pause();
    with_admin_client([&](kube::client c) -> asio::awaitable<void> {
      kube::dynamic_api cms(c, {"", "v1", "configmaps"}, ns);
      for (int i = per_round / 2; i < per_round / 2 + 10; ++i)
        co_await cms.async_delete("r" + std::to_string(round) + "-" + std::to_string(i));
      co_await cms.async_patch("r" + std::to_string(round) + "-0", kube::patch_type::merge,
                               R"({"data":{"v":"cut-off"}})");
    });
    total_ops += 11;
    kcluster("compact");
    kcluster("kill-apiserver");
    kcluster("start-apiserver");
    gate->resume();
    REQUIRE(converges(lister, ns, 60s));
    REQUIRE(handlers_converge(10s));
    INFO("410s " << expired - expired_before << ", lists " << stats().syncs() - lists_before);
    CHECK(expired - expired_before >= 1);                                            // the compaction was seen
    CHECK(stats().syncs() - lists_before == std::size_t(expired - expired_before));  // one relist per 410
  }
  std::string causes;
  {
    std::lock_guard lk(relists_m);
    for (const auto& c : relist_causes) causes += "\n  " + c;
  }
  INFO("operations " << total_ops << ", 410s " << expired.load() << ", lists " << stats().syncs() - lists_at_start
                     << ", relists announced by the hook:" << causes);
  CHECK(total_ops >= rounds * per_round);
  // Over the whole run, every relist was for a 410 (one each) or for a watch
  // the apiserver's kill ended within its first second, with no event.
  CHECK(stats().syncs() - lists_at_start == std::size_t(expired.load() + short_watches.load()));
  CHECK(expired.load() >= rounds);
  CHECK(server_state(ns).size() == std::size_t(rounds * per_round - (rounds - 1) * (per_round / 4) - rounds * 10));
  std::printf("CHAOS rounds=%d operations=%d expired=%d lists=%zu short_watches=%d\n", rounds, total_ops,
              expired.load(), static_cast<std::size_t>(stats().syncs() - lists_at_start), short_watches.load());
}
