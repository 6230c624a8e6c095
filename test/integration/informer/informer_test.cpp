// The informer against the real cluster: convergence after concurrent churn
// by kubectl and the C++ client with an apiserver restart mid-churn, then
// deletes the informer missed (seen as tombstones) and a 410 after etcd
// compaction that costs exactly one relist. Restarts the shared apiserver:
// SERIAL.
#include "support/client_support.hpp"
#include "support/gated_lister_watcher.hpp"
#include "support/informer_support.hpp"

#include <kube/dynamic/dynamic_api.hpp>
#include <kube/informer/dynamic_lister_watcher.hpp>
#include <kube/informer/informer_factory.hpp>
#include <kube/informer/shared_informer.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/json.hpp>

#include <atomic>
#include <chrono>
#include <fstream>
#include <future>
#include <map>
#include <set>
#include <thread>

using namespace kube_test;
namespace ki = kube::informer;
using namespace std::chrono_literals;

namespace {

void kcluster(const std::string& command) {
  const auto env = cluster_env();
  REQUIRE(sh(env.at("KUBE_TEST_KCLUSTER") + " " + command + " --dir " + env.at("KUBE_TEST_CLUSTER_DIR")) == 0);
}

std::string capture(const std::string& cmd) {
  std::string out;
  FILE* p = ::popen(cmd.c_str(), "r");
  REQUIRE(p);
  char buf[65536];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  ::pclose(p);
  return out;
}

// name -> resourceVersion, as kubectl (an independent client) sees it.
std::map<std::string, std::string> server_state(const std::string& ns) {
  for (int attempt = 0; attempt < 20; ++attempt) {
    const auto text = capture(kubectl() + "-n " + ns + " get configmaps -o json 2>/dev/null");
    boost::system::error_code ec;
    auto v = boost::json::parse(text, ec);
    if (ec || !v.is_object()) {
      std::this_thread::sleep_for(500ms);  // apiserver not answering yet
      continue;
    }
    std::map<std::string, std::string> out;
    for (const auto& item : v.at("items").as_array()) {
      const auto& md = item.at("metadata").as_object();
      const std::string name(md.at("name").as_string());
      if (name == "kube-root-ca.crt") continue;
      out[name] = std::string(md.at("resourceVersion").as_string());
    }
    return out;
  }
  FAIL("kubectl get configmaps never answered");
  return {};
}

std::map<std::string, std::string> cache_state(const ki::lister<kube::unstructured>& l, const std::string& ns) {
  std::map<std::string, std::string> out;
  for (const auto& o : l.in_namespace(ns).list()) {
    if (o->name() == "kube-root-ca.crt") continue;
    out[o->name()] = o->resource_version();
  }
  return out;
}

// Converged = the cache equals kubectl's view. Polls (integration only).
bool converges(const ki::lister<kube::unstructured>& l, const std::string& ns, std::chrono::seconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    const auto server = server_state(ns);
    if (cache_state(l, ns) == server) return true;
    std::this_thread::sleep_for(300ms);
  }
  INFO("cache " << cache_state(l, ns).size() << " server " << server_state(ns).size());
  return false;
}

kube::unstructured configmap(const std::string& ns, const std::string& name, const std::string& v) {
  kube::unstructured u;
  u.set_api_version("v1").set_kind("ConfigMap").set_namespace(ns).set_name(name);
  u.object()["data"] = boost::json::object{{"v", v}};
  return u;
}

}  // namespace

TEST_CASE("informer converges after concurrent churn across apiserver restarts, sees missed deletes as tombstones, "
          "and relists once after a 410 from compaction",
          "[informer][restart]") {
  const auto ns = unique_name("informer");
  create_namespace(ns);
  const auto settings = admin_cert_settings();

  // ---- the informer, on its own thread ----------------------------------------------------
  asio::io_context inf_io;
  auto inf_client = kube::detail::client_access::make(inf_io.get_executor(), settings);
  std::shared_ptr<gated_lister_watcher> gate;
  ki::informer_factory factory(inf_client, {ns, {}, true, {}});
  std::mutex m;
  std::set<std::string> tombstones, deletes;
  std::vector<kube::error_code> hook_errors;
  auto inf = factory.informer<kube::unstructured>("configmaps", [&] {
    auto inner = std::make_shared<ki::dynamic_lister_watcher>(
        kube::dynamic_api(inf_client, {"", "v1", "configmaps"}, ns), ki::dynamic_lister_watcher_params{"ConfigMap"});
    gate = std::make_shared<gated_lister_watcher>(inner);
    ki::informer_params<kube::unstructured> o;
    o.transform = ki::strip_managed_fields();
    o.reflector.backoff.max = 2s;  // keep the test short; the rule itself is unit-tested
    o.on_watch_error = [&](const ki::watch_failure& f) {
      std::lock_guard lk(m);
      hook_errors.push_back(f.ec);
    };
    return std::pair{std::shared_ptr<ki::lister_watcher<kube::unstructured>>(gate), std::move(o)};
  });
  inf->add_handler({nullptr, nullptr, [&](const ki::deleted_object<kube::unstructured>& d) {
                      std::lock_guard lk(m);
                      const auto& o = ki::object_of(d);
                      (std::holds_alternative<ki::deleted_final_state_unknown<kube::unstructured>>(d) ? tombstones
                                                                                                      : deletes)
                          .insert(o ? o->name() : "?");
                    }});
  asio::cancellation_signal stop;
  std::atomic<bool> inf_done{false};
  factory.async_run(asio::bind_cancellation_slot(stop.slot(), [&](kube::error_code) { inf_done = true; }));
  std::thread inf_thread([&] { inf_io.run(); });
  kube_test::joiner join_inf{inf_thread, inf_io, stop};

  kube_test::require_synced(factory);
  REQUIRE(factory.has_synced());
  auto lister = inf->make_lister();

  // ---- phase 1: 2,000 mixed operations by kubectl and the C++ client, apiserver restart mid-way ----
  std::atomic<int> cpp_ops{0}, kubectl_ops{0};
  std::thread cpp([&] {
    asio::io_context io;
    auto c = kube::detail::client_access::make(io.get_executor(), settings);
    kube::dynamic_api cms(c, {"", "v1", "configmaps"}, ns);
    asio::co_spawn(
        io,
        [&]() -> asio::awaitable<void> {
          for (int i = 0; i < 800; ++i) {  // 800 creates
            const auto cm = configmap(ns, "c-" + std::to_string(i), "0");
            co_await kube_test::retry_until_applied([&]() -> asio::awaitable<void> { co_await cms.async_create(cm); });
            ++cpp_ops;
          }
          for (int i = 0; i < 500; ++i) {  // 500 updates
            const auto name = "c-" + std::to_string(i);
            const std::string body = R"({"data":{"v":")" + std::to_string(i + 1) + R"("}})";
            co_await kube_test::retry_until_applied(
                [&]() -> asio::awaitable<void> { co_await cms.async_patch(name, kube::patch_type::merge, body); });
            ++cpp_ops;
          }
          for (int i = 500; i < 800; ++i) {  // 300 deletes
            const auto name = "c-" + std::to_string(i);
            co_await kube_test::retry_until_applied(
                [&]() -> asio::awaitable<void> { co_await cms.async_delete(name); });
            ++cpp_ops;
          }
        },
        [](std::exception_ptr e) {
          if (e) std::rethrow_exception(e);
        });
    io.run();
  });
  std::thread kc([&] {
    // 200 creates in one apply, 100 label updates, 100 deletes: 400 operations.
    const auto file = "/tmp/" + ns + "-kubectl.yaml";
    {
      std::ofstream out(file);
      for (int i = 0; i < 200; ++i)
        out << "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: k-" << i << "\n  labels:\n    batch: \""
            << (i < 100 ? "first" : "second") << "\"\ndata:\n  v: \"0\"\n";
    }
    auto until_ok = [&](const std::string& cmd) {
      for (int i = 0; i < 100 && sh(cmd) != 0; ++i) std::this_thread::sleep_for(300ms);
    };
    until_ok(kubectl() + "-n " + ns + " apply --validate=false -f " + file);
    kubectl_ops += 200;
    {
      // The labels as a second apply: one kubectl run, where `kubectl label`
      // of 100 names took 18 s under ASan.
      std::ofstream out(file);
      for (int i = 100; i < 200; ++i)
        out << "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: k-" << i
            << "\n  labels:\n    batch: \"second\"\n    touched: \"yes\"\ndata:\n  v: \"0\"\n";
    }
    until_ok(kubectl() + "-n " + ns + " apply --validate=false -f " + file);
    kubectl_ops += 100;
    // One DELETE of the collection (the server deletes k-0..99, the informer
    // sees 100 deletes): `kubectl delete` of 100 names sends them one by one
    // behind kubectl's client-side rate limit, about 18 s.
    until_ok(kubectl() + "delete --raw '/api/v1/namespaces/" + ns + "/configmaps?labelSelector=batch%3Dfirst'");
    kubectl_ops += 100;
    std::remove(file.c_str());
  });
  while (cpp_ops < 700) std::this_thread::sleep_for(20ms);
  kcluster("restart-apiserver");  // mid-churn
  cpp.join();
  kc.join();
  CHECK(cpp_ops + kubectl_ops == 2000);
  REQUIRE(converges(lister, ns, 60s));
  CHECK(server_state(ns).size() == 500 + 100);
  const auto lists_before_outage = gate->list_requests.load();

  // ---- phase 2: the informer is cut off; deletes happen; etcd is compacted ----------------
  gate->pause();
  kcluster("stop-apiserver");
  kcluster("start-apiserver");
  std::set<std::string> missed;
  {
    asio::io_context io;
    auto c = kube::detail::client_access::make(io.get_executor(), settings);
    kube::dynamic_api cms(c, {"", "v1", "configmaps"}, ns);
    asio::co_spawn(
        io,
        [&]() -> asio::awaitable<void> {
          for (int i = 0; i < 50; ++i) {
            const auto name = "c-" + std::to_string(i);
            co_await kube_test::retry_until_applied(
                [&]() -> asio::awaitable<void> { co_await cms.async_delete(name); });
            missed.insert(name);
          }
          for (int i = 50; i < 70; ++i) {
            const auto name = "c-" + std::to_string(i);
            co_await kube_test::retry_until_applied([&]() -> asio::awaitable<void> {
              co_await cms.async_patch(name, kube::patch_type::merge, R"({"data":{"v":"outage"}})");
            });
          }
        },
        [](std::exception_ptr e) {
          if (e) std::rethrow_exception(e);
        });
    io.run();
  }
  kcluster("compact");
  kcluster("restart-apiserver");  // the watch cache forgets the old history too
  const auto lists_at_resume = gate->list_requests.load();
  CHECK(lists_at_resume == lists_before_outage);  // no list got through while cut off
  gate->resume();
  REQUIRE(converges(lister, ns, 60s));

  std::lock_guard lk(m);
  CHECK(tombstones == missed);  // every delete made behind its back arrives as a tombstone
  INFO("list requests after resume: " << gate->list_requests.load() - lists_at_resume);
  CHECK(gate->list_requests.load() - lists_at_resume == 1);  // one relist, not a storm
  CHECK(std::any_of(hook_errors.begin(), hook_errors.end(),
                    [](const auto& ec) { return kube::is_resource_expired(ec); }));
  for (const auto& name : lister.in_namespace(ns).list()) {
    CHECK_FALSE(name->object().at("metadata").as_object().contains("managedFields"));
  }
}

TEST_CASE("an informer whose apiserver is paused finds its silent watch and catches up without a relist once resumed",
          "[informer][stall]") {
  const auto ns = unique_name("informer-stall");
  create_namespace(ns);
  for (int i = 0; i < 3; ++i)
    REQUIRE(sh(kubectl() + "-n " + ns + " create configmap before-" + std::to_string(i) + " --from-literal=v=0") == 0);

  auto settings = admin_cert_settings();
  settings.read_timeout = 2s;     // a paused apiserver answers nothing: find it fast
  settings.connect_timeout = 2s;  // the kernel accepts, the TLS handshake never ends
  asio::io_context io;
  auto c = kube::detail::client_access::make(io.get_executor(), settings);
  ki::informer_params<kube::unstructured> o;
  o.reflector.watch_idle_timeout = 3s;
  o.reflector.backoff.max = 2s;
  std::atomic<int> hook_errors{0};
  std::atomic<int> hook_relists{0};
  o.on_watch_error = [&](const ki::watch_failure& f) {
    ++hook_errors;
    if (f.relist) ++hook_relists;
  };
  ki::shared_index_informer<kube::unstructured> inf(
      io.get_executor(),
      std::make_shared<ki::dynamic_lister_watcher>(kube::dynamic_api(c, {"", "v1", "configmaps"}, ns),
                                                   ki::dynamic_lister_watcher_params{"ConfigMap"}),
      std::move(o));
  asio::cancellation_signal stop;
  inf.async_run(asio::bind_cancellation_slot(stop.slot(), [](kube::error_code) {}));
  std::thread runner([&] { io.run(); });
  kube_test::joiner join{runner, io, stop};
  auto stats = [&] { return kube_test::reflector_stats_of(inf); };
  kube_test::require_synced(inf);
  const auto lister = inf.make_lister();
  REQUIRE(converges(lister, ns, 30s));
  const auto before = stats();

  // Pause the real apiserver (SIGSTOP through the launcher): connections
  // stay open and accepted, nothing is answered.
  kcluster("pause-apiserver");
  std::this_thread::sleep_for(8s);  // past the idle timeout, a few reopen attempts
  const auto during = stats();
  kcluster("resume-apiserver");
  const auto resumed = std::chrono::steady_clock::now();

  // Changes after the resume reach the cache through the reopened watch.
  REQUIRE(sh(kubectl() + "-n " + ns + " create configmap after --from-literal=v=1") == 0);
  REQUIRE(sh(kubectl() + "-n " + ns + " label configmap before-0 touched=yes") == 0);
  REQUIRE(sh(kubectl() + "-n " + ns + " delete configmap before-1") == 0);
  REQUIRE(converges(lister, ns, 30s));
  const auto caught_up = std::chrono::steady_clock::now() - resumed;
  const auto after = stats();
  INFO("watches before/during/after " << before.watches << "/" << during.watches << "/" << after.watches
                                      << ", caught up in "
                                      << std::chrono::duration_cast<std::chrono::milliseconds>(caught_up).count()
                                      << " ms");
  CHECK(during.watches > before.watches);  // the silent watch was closed, reopening was tried
  CHECK(after.watches > during.watches);   // and it reopened after the resume
  CHECK(after.syncs() == before.syncs());  // at the last resourceVersion: no relist
  CHECK(hook_errors.load() > 0);           // the user saw the outage as it happened
  CHECK(hook_relists.load() == 0);         // and was told every time that no relist follows
  CHECK(caught_up < 30s);
  const auto state = server_state(ns);
  CHECK(state.count("after") == 1);
  CHECK(state.count("before-1") == 0);
}
