// Faults from a real proxy: Toxiproxy between the SDK and the real apiserver
// (kcluster starts it; support/toxiproxy.hpp drives its toxics). For each
// toxic an informer keeps working, or recovers once the toxic is removed, and
// its cache equals the apiserver's view read directly (not through the
// proxy); writes whose answers are lost are never sent twice; a leader whose
// renewals stall steps down within its renew deadline. The tests share the
// proxy: SERIAL.
#include "fault/fault_support.hpp"
#include "leader/support.hpp"  // eventually, pause
#include "support/informer_support.hpp"
#include "support/toxiproxy.hpp"

#include <kube/dynamic/dynamic_api.hpp>
#include <kube/k8s/core/v1/config_map.hpp>
#include <kube/informer/dynamic_lister_watcher.hpp>
#include <kube/informer/shared_informer.hpp>
#include <kube/informer/typed_lister_watcher.hpp>
#include <kube/tools/leader_election.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

using namespace kube_test;
namespace ki = kube::informer;
using namespace std::chrono_literals;

namespace {

// The lister-watcher of ConfigMaps in `ns`: dynamic (kube::unstructured,
// JSON) or typed (the generated ConfigMap, protobuf by default).
std::shared_ptr<ki::lister_watcher<kube::unstructured>> configmaps(kube::client c, const std::string& ns,
                                                                   const kube::unstructured*) {
  return std::make_shared<ki::dynamic_lister_watcher>(kube::dynamic_api(c, {"", "v1", "configmaps"}, ns),
                                                      ki::dynamic_lister_watcher_params{"ConfigMap"});
}
std::shared_ptr<ki::lister_watcher<k8s::core::v1::ConfigMap>> configmaps(kube::client c, const std::string& ns,
                                                                         const k8s::core::v1::ConfigMap*) {
  return std::make_shared<ki::typed_lister_watcher<k8s::core::v1::ConfigMap>>(
      kube::api<k8s::core::v1::ConfigMap>(c, ns));
}

// A ConfigMap informer through the proxy, on its own thread, with short
// timeouts so that a stalled connection is found within seconds. Obj:
// kube::unstructured (dynamic, JSON) or k8s::core::v1::ConfigMap (typed,
// protobuf).
template <class Obj = kube::unstructured>
struct proxied_informer {
  std::atomic<int> hook_errors{0};   // failed list or watch attempts reported to the hook
  std::atomic<int> hook_relists{0};  // of which the hook said the next attempt relists
  captured_log relist_causes;        // and why
  asio::io_context io;
  kube::client client;
  ki::shared_index_informer<Obj> inf;
  asio::cancellation_signal stop;
  std::thread runner;

  explicit proxied_informer(const std::string& ns)
      : client(kube::detail::client_access::make(io.get_executor(), settings())),
        inf(io.get_executor(), configmaps(client, ns, static_cast<const Obj*>(nullptr)),
            params(hook_errors, hook_relists, relist_causes)) {
    inf.async_run(asio::bind_cancellation_slot(stop.slot(), [](kube::error_code) {}));
    runner = std::thread([this] { io.run(); });
  }
  proxied_informer(const proxied_informer&) = delete;
  proxied_informer& operator=(const proxied_informer&) = delete;
  ~proxied_informer() {
    asio::post(io, [this] { stop.emit(asio::cancellation_type::terminal); });
    runner.join();
  }

  void wait_synced() { kube_test::require_synced(inf); }

  static transport_params settings() {
    auto s = proxied_settings();
    s.read_timeout = 2s;
    s.connect_timeout = 2s;
    return s;
  }
  static ki::informer_params<Obj> params(std::atomic<int>& errors, std::atomic<int>& relists, captured_log& causes) {
    ki::informer_params<Obj> o;
    o.reflector.watch_idle_timeout = 3s;
    o.reflector.backoff.max = 1s;  // keep the tests short; the backoff itself is unit-tested
    o.on_watch_error = [&errors, &relists, &causes](const ki::watch_failure& f) {
      ++errors;
      if (f.relist) {
        ++relists;
        std::lock_guard lk(causes.m);
        causes.text += "\n  " + f.ec.message() + " [" + f.ec.category().name() + "] " + f.diag.client_message();
      }
    };
    return o;
  }

  ki::reflector_stats stats() { return kube_test::reflector_stats_of(inf); }
};

// A fresh namespace with a few objects, and a clean proxy.
std::string prepare(toxiproxy& proxy, const std::string& what) {
  proxy.reset();
  auto name = "fault-" + what;
  std::replace(name.begin(), name.end(), '_', '-');  // a namespace name is a DNS label
  const auto ns = unique_name(name);
  create_namespace(ns);
  churn(ns, "before-", 4);
  return ns;
}

// How long one GET through the proxy takes (a fresh client: a new connection).
steady::duration proxied_get(kube::request r) {
  const auto t0 = steady::now();
  auto [ec, res] = run(proxied_settings(), std::move(r));
  REQUIRE_FALSE(ec);
  REQUIRE(res.status == 200);
  return steady::now() - t0;
}

// The typed informer's watch was answered in protobuf (its client logs each
// answer's content type at trace level); the dynamic one's in JSON.
template <class Obj>
void check_wire_format(const std::string& ns) {
  const auto watch = "GET v1 configmaps " + ns + ": HTTP 200, application/" +
                     (std::is_same_v<Obj, kube::unstructured> ? "json" : "vnd.kubernetes.protobuf;stream=watch");
  CHECK(logged_since(0).find(watch) != std::string::npos);
}

// Toxics that slow the traffic down: the informer keeps its watch (no relist,
// no error) and its cache follows the apiserver while they are active.
template <class Obj = kube::unstructured>
void check_keeps_working(const std::string& what, const std::vector<toxic_params>& toxics, int n,
                         std::size_t value_size, steady::duration limit) {
  toxiproxy proxy;
  const auto ns = prepare(proxy, what);
  proxied_informer<Obj> pi(ns);
  pi.wait_synced();
  const auto lister = pi.inf.make_lister();
  REQUIRE(converges(lister, ns, 20s));
  const auto before = pi.stats();
  {
    std::vector<std::unique_ptr<scoped_toxic>> active;
    for (const auto& t : toxics) active.push_back(std::make_unique<scoped_toxic>(proxy, t));
    const auto t0 = steady::now();
    churn(ns, "during-", n, value_size);
    REQUIRE(converges(lister, ns, limit));
    INFO(what << ": converged " << ms(steady::now() - t0) << " ms after the churn began");
    const auto during = pi.stats();
    CHECK(during.syncs() == before.syncs());
    CHECK(during.errors == before.errors);
    CHECK(pi.hook_errors == 0);
    // A write through the proxy under the toxic succeeds too.
    auto [ec, res] =
        run(proxied_settings(), kube::request{}
                                    .method(kube::http_method::post)
                                    .raw_path("/api/v1/namespaces/" + ns + "/configmaps")
                                    .body(boost::json::serialize(configmap(ns, "through-proxy", "1").object())));
    INFO(ec.message() << ": " << res.diag.client_message());
    CHECK_FALSE(ec);
    CHECK(res.status == 201);
    REQUIRE(converges(lister, ns, limit));
  }
  churn(ns, "after-", 6);
  REQUIRE(converges(lister, ns, 20s));
  CHECK(pi.stats().syncs() == before.syncs());
  check_wire_format<Obj>(ns);
}

template <class Obj>
std::string relist_causes(proxied_informer<Obj>& pi) {
  std::lock_guard lk(pi.relist_causes.m);
  return pi.relist_causes.text.empty() ? std::string() : ", relists announced after:" + pi.relist_causes.text;
}

// Toxics that break connections: while one is active the informer may fall
// behind; once it is removed the informer catches up within seconds, at its
// last resourceVersion (no relist).
template <class Obj = kube::unstructured>
void check_recovers(const std::string& what, const toxic_params& toxic, steady::duration hold, bool converges_during) {
  toxiproxy proxy;
  const auto ns = prepare(proxy, what);
  proxied_informer<Obj> pi(ns);
  pi.wait_synced();
  const auto lister = pi.inf.make_lister();
  REQUIRE(converges(lister, ns, 20s));
  // A watch younger than a second that ends without an event relists
  // (client-go's "very short watch" rule); a real informer's watch is older.
  std::this_thread::sleep_for(1500ms);
  const auto before = pi.stats();
  steady::time_point lifted;
  {
    scoped_toxic t(proxy, toxic);
    const auto t0 = steady::now();
    churn(ns, "during-", 20, 200);
    if (converges_during) {
      CHECK(converges(lister, ns, 30s));
    } else {
      std::this_thread::sleep_for(hold - (steady::now() - t0));
      // The watch broke or stalled: the cache missed the churn.
      CHECK(cache_state(lister, ns) != server_state(ns));
    }
    t.lift();
    lifted = steady::now();
  }
  REQUIRE(converges(lister, ns, 30s));
  const auto caught_up = steady::now() - lifted;
  churn(ns, "after-", 6);
  REQUIRE(converges(lister, ns, 20s));
  const auto after = pi.stats();
  INFO(what << ": caught up " << ms(caught_up) << " ms after the toxic was removed; watches " << before.watches
            << " -> " << after.watches << ", syncs " << before.syncs() << " -> " << after.syncs() << ", hook errors "
            << pi.hook_errors.load() << relist_causes(pi));
  CHECK(after.watches > before.watches);             // the broken watch was replaced
  if (!converges_during) CHECK(pi.hook_errors > 0);  // the user saw the outage through the hook
  CHECK(pi.hook_relists == 0);                       // and was told that no relist follows
  CHECK(after.syncs() == before.syncs());            // at its last resourceVersion: no relist
  CHECK(caught_up < 15s);
  check_wire_format<Obj>(ns);
}

// Creates (generateName) through the proxy, each on a reused keep-alive
// connection that the toxic hits with a chance of one half, drawn per
// connection: the server applies the POST and its answer is lost. A client
// that sent it again would, half of the time, do so on a connection the toxic
// spares, and create a second object. Each attempt carries its own label, so
// the count per attempt shows any replay.
void check_no_duplicate_writes(const std::string& what, toxic_params toxic) {
  toxiproxy proxy;
  proxy.reset();
  const auto ns = unique_name("fault-writes-" + what);
  create_namespace(ns);
  toxic.toxicity = 0.5;
  constexpr int attempts = 16;
  std::vector<bool> ok(attempts, false);
  std::vector<std::string> failures(attempts);
  auto s = proxied_settings();
  s.read_timeout = 3s;
  s.connect_timeout = 3s;
  asio::io_context io;
  auto c = kube::detail::client_access::make(io.get_executor(), s);
  std::exception_ptr failure;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        for (int i = 0; i < attempts; ++i) {
          // A GET leaves an idle pooled connection for the POST to reuse.
          for (int tries = 0;; ++tries) {
            auto [ec, res] = co_await c.async_request(kube::request{}.raw_path("/api/v1/namespaces/" + ns),
                                                      asio::as_tuple(asio::use_awaitable));
            if (!ec && res.status == 200) break;
            REQUIRE(tries < 10);
          }
          const std::string body = R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"generateName":"w-",)"
                                   R"("labels":{"fault-write":")" +
                                   std::to_string(i) + R"("}},"data":{"v":"1"}})";
          scoped_toxic t(proxy, toxic);
          auto [ec, res] = co_await c.async_request(kube::request{}
                                                        .method(kube::http_method::post)
                                                        .raw_path("/api/v1/namespaces/" + ns + "/configmaps")
                                                        .body(body),
                                                    asio::as_tuple(asio::use_awaitable));
          t.lift();
          ok[i] = !ec && res.status == 201;
          if (!ok[i]) failures[i] = ec.message() + ": " + res.diag.client_message();
        }
      },
      [&](std::exception_ptr e) { failure = e; });
  io.run();
  if (failure) std::rethrow_exception(failure);

  const auto res = direct(
      kube::request{}.raw_path("/api/v1/namespaces/" + ns + "/configmaps").param("labelSelector", "fault-write"));
  REQUIRE(res.status == 200);
  std::map<int, int> objects;  // attempt -> objects created
  const auto list = boost::json::parse(res.body);
  for (const auto& item : list.at("items").as_array())
    ++objects[std::stoi(std::string(item.at("metadata").at("labels").at("fault-write").as_string()))];
  int applied_but_failed = 0, succeeded = 0;
  for (int i = 0; i < attempts; ++i) {
    INFO(what << " attempt " << i << (ok[i] ? ": ok" : ": " + failures[i]));
    CHECK(objects[i] <= 1);  // never twice
    if (ok[i]) {
      ++succeeded;
      CHECK(objects[i] == 1);
    } else if (objects[i] == 1) {
      ++applied_but_failed;
      // The caller is told why it was not sent again.
      CHECK(failures[i].find("not sent again") != std::string::npos);
    }
  }
  INFO(what << ": " << succeeded << " succeeded, " << applied_but_failed << " applied but failed");
  CHECK(applied_but_failed > 0);  // the case a replay would double did happen
  CHECK(succeeded > 0);           // and the toxic spared some connections
}

}  // namespace

TEST_CASE("fault: latency: the informer keeps its watch and follows the apiserver", "[fault][latency]") {
  const std::vector<toxic_params> toxics{
      {"latency-down", "latency", "downstream", 1.0, {{"latency", 300}, {"jitter", 100}}},
      {"latency-up", "latency", "upstream", 1.0, {{"latency", 100}}}};
  check_keeps_working("latency", toxics, 20, 8, 30s);
  toxiproxy proxy;
  scoped_toxic t(proxy, toxics.front());
  CHECK(proxied_get(kube::request{}.raw_path("/version")) >= 200ms);  // the toxic is on the path
}

TEST_CASE("fault: bandwidth: the informer keeps its watch and follows the apiserver", "[fault][bandwidth]") {
  const toxic_params toxic{"bandwidth", "bandwidth", "downstream", 1.0, {{"rate", 16}}};  // KB/s
  check_keeps_working("bandwidth", {toxic}, 30, 2048, 40s);
  // The toxic is on the path: a list of about 80 KB takes seconds.
  toxiproxy proxy;
  scoped_toxic t(proxy, toxic);
  CHECK(proxied_get(kube::request{}.raw_path("/api/v1/configmaps").param("limit", "40")) >= 1s);
}

TEST_CASE("fault: slicer: tiny TCP segments both ways, the informer keeps its watch", "[fault][slicer]") {
  check_keeps_working(
      "slicer",
      {{"slicer-down", "slicer", "downstream", 1.0, {{"average_size", 16}, {"size_variation", 12}, {"delay", 100}}},
       {"slicer-up", "slicer", "upstream", 1.0, {{"average_size", 8}, {"size_variation", 6}, {"delay", 100}}}},
      20, 300, 30s);
}

TEST_CASE("fault: reset_peer: the informer recovers at its resourceVersion once resets stop", "[fault][reset_peer]") {
  check_recovers("reset_peer", {"reset", "reset_peer", "downstream", 1.0, {{"timeout", 0}}}, 4s, false);
}

TEST_CASE("fault: timeout (stall): the informer finds the silent watch and recovers once data flows",
          "[fault][timeout]") {
  check_recovers("timeout", {"stall", "timeout", "downstream", 1.0, {{"timeout", 0}}}, 6s, false);
}

TEST_CASE("fault: limit_data: connections cut after a few KB, the informer keeps up by reopening its watch",
          "[fault][limit_data]") {
  check_recovers("limit_data", {"limit", "limit_data", "downstream", 1.0, {{"bytes", 8000}}}, 0s, true);
}

// The same through a typed informer, whose list and watch are protobuf:
// its framing across tiny segments, cut streams and resets.
TEST_CASE("fault: slicer: tiny TCP segments both ways, a protobuf informer keeps its watch",
          "[fault][slicer][protobuf]") {
  check_keeps_working<k8s::core::v1::ConfigMap>(
      "slicer-protobuf",
      {{"slicer-down", "slicer", "downstream", 1.0, {{"average_size", 16}, {"size_variation", 12}, {"delay", 100}}},
       {"slicer-up", "slicer", "upstream", 1.0, {{"average_size", 8}, {"size_variation", 6}, {"delay", 100}}}},
      20, 300, 30s);
}

TEST_CASE("fault: reset_peer: a protobuf informer recovers at its resourceVersion once resets stop",
          "[fault][reset_peer][protobuf]") {
  check_recovers<k8s::core::v1::ConfigMap>("reset_peer-protobuf",
                                           {"reset", "reset_peer", "downstream", 1.0, {{"timeout", 0}}}, 4s, false);
}

TEST_CASE("fault: limit_data: connections cut after a few KB, a protobuf informer keeps up by reopening its watch",
          "[fault][limit_data][protobuf]") {
  check_recovers<k8s::core::v1::ConfigMap>("limit_data-protobuf",
                                           {"limit", "limit_data", "downstream", 1.0, {{"bytes", 8000}}}, 0s, true);
}

TEST_CASE("fault: reset_peer: a POST whose answer is reset is not sent again", "[fault][reset_peer][writes]") {
  check_no_duplicate_writes("reset", {"reset", "reset_peer", "downstream", 1.0, {{"timeout", 0}}});
}

TEST_CASE("fault: timeout: a POST whose answer is dropped is not sent again", "[fault][timeout][writes]") {
  check_no_duplicate_writes("timeout", {"stall", "timeout", "downstream", 1.0, {{"timeout", 500}}});
}

TEST_CASE("fault: limit_data: a POST whose answer is cut short is not sent again", "[fault][limit_data][writes]") {
  check_no_duplicate_writes("limit", {"limit", "limit_data", "downstream", 1.0, {{"bytes", 20}}});
}

TEST_CASE("fault: a leader whose renewals stall behind a timeout toxic steps down within its renew deadline",
          "[fault][leader]") {
  toxiproxy proxy;
  proxy.reset();
  const auto ns = unique_name("fault-leader");
  create_namespace(ns);
  // The client's defaults (read timeout 60 s): the deadline must come from the elector.
  asio::io_context io;
  auto c = kube::detail::client_access::make(io.get_executor(), proxied_settings());
  kube::leader_elector_params cfg;
  cfg.lease_namespace = ns;
  cfg.lease_name = "lock";
  cfg.identity = "stalled";
  cfg.lease_duration = 3s;
  cfg.renew_deadline = 2s;
  cfg.retry_period = 500ms;
  cfg.release_on_cancel = false;
  int started = 0, stopped = 0, work_cancelled = 0;
  cfg.on_started_leading = [&]() -> asio::awaitable<void> {
    ++started;
    asio::steady_timer forever(co_await asio::this_coro::executor, steady::time_point::max());
    auto [ec] = co_await forever.async_wait(asio::as_tuple(asio::use_awaitable));
    if (ec) ++work_cancelled;
  };
  cfg.on_stopped_leading = [&]() -> asio::awaitable<void> {
    ++stopped;
    co_return;
  };
  kube::leader_elector elector(c, std::move(cfg));
  asio::cancellation_signal stop;
  bool done = false;
  elector.async_run(asio::bind_cancellation_slot(stop.slot(), [&](kube::error_code) { done = true; }));
  std::exception_ptr failure;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        REQUIRE(co_await eventually([&] { return elector.is_leader(); }, 10s));
        co_await pause(1500ms);  // a few renewals through the proxy
        REQUIRE(elector.is_leader());
        {
          scoped_toxic t(proxy, {"stall", "timeout", "downstream", 1.0, {{"timeout", 0}}});
          const auto t0 = steady::now();
          const bool stepped_down = co_await eventually([&] { return !elector.is_leader(); }, 20s);
          const auto took = steady::now() - t0;
          INFO("stepped down " << ms(took) << " ms after the renewals began to stall");
          REQUIRE(stepped_down);
          // The last renewal succeeded at most one retry period (+20 % jitter)
          // before the stall; then renew_deadline; plus slack for ASan.
          CHECK(took <= 2s + 600ms + 1s);
          CHECK(co_await eventually([&] { return stopped == 1; }, 2s));
          CHECK(work_cancelled == 1);
          CHECK(started == 1);
        }
        stop.emit(asio::cancellation_type::terminal);
        CHECK(co_await eventually([&] { return done; }, 20s));
      },
      [&](std::exception_ptr e) {
        failure = e;
        if (!done) stop.emit(asio::cancellation_type::terminal);
      });
  io.run();
  if (failure) std::rethrow_exception(failure);
}
