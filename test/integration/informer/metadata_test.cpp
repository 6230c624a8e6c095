// Metadata-only client and informer against the real cluster: the server
// answers PartialObjectMetadata(List) to our Accept header; a metadata
// informer over configmaps (and secrets) in a fresh namespace sees kubectl's
// creates, updates and deletes, caches labels, annotations and
// resourceVersions but no data, and converges to `kubectl get -o name`.
#include "support/client_support.hpp"

#include <kube/informer/informer_factory.hpp>
#include <kube/dynamic/metadata_api.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <map>
#include <mutex>
#include <numeric>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

using namespace kube_test;
namespace ki = kube::informer;
using kube::partial_object_metadata;
using namespace std::chrono_literals;

namespace {

// `kubectl get <resource> -o name` as a set of names (kube-root-ca.crt, which
// the test cluster does not create without a controller manager, is skipped).
std::set<std::string> kubectl_names(const std::string& ns, const std::string& resource) {
  std::set<std::string> out;
  std::istringstream in(sh_out(kubectl() + "-n " + ns + " get " + resource + " -o name"));
  for (std::string line; std::getline(in, line);) {
    const auto slash = line.find('/');
    const auto name = slash == std::string::npos ? line : line.substr(slash + 1);
    if (!name.empty() && name != "kube-root-ca.crt") out.insert(name);
  }
  return out;
}

// name -> resourceVersion as kubectl sees it.
std::map<std::string, std::string> kubectl_versions(const std::string& ns, const std::string& resource) {
  std::map<std::string, std::string> out;
  const auto v = boost::json::parse(sh_out(kubectl() + "-n " + ns + " get " + resource + " -o json"));
  for (const auto& item : v.at("items").as_array()) {
    const auto& md = item.at("metadata").as_object();
    const std::string name(md.at("name").as_string());
    if (name != "kube-root-ca.crt") out[name] = std::string(md.at("resourceVersion").as_string());
  }
  return out;
}

std::map<std::string, std::string> cache_versions(const ki::lister<partial_object_metadata>& l, const std::string& ns) {
  std::map<std::string, std::string> out;
  for (const auto& o : l.list(ns, {})) {
    if (o->name() != "kube-root-ca.crt") out[std::string(o->name())] = std::string(o->resource_version());
  }
  return out;
}

// Polls until the cache holds exactly what kubectl lists, at the same versions.
bool converges(const ki::lister<partial_object_metadata>& l, const std::string& ns, const std::string& resource) {
  const auto until = std::chrono::steady_clock::now() + 30s;
  while (std::chrono::steady_clock::now() < until) {
    const auto server = kubectl_versions(ns, resource);
    if (cache_versions(l, ns) == server) return true;
    std::this_thread::sleep_for(200ms);
  }
  return false;
}

// A factory running on its own thread; stopped and joined on destruction.
struct running_factory {
  asio::io_context io;
  kube::client c = kube::detail::client_access::make(io.get_executor(), admin_cert_settings());
  ki::informer_factory factory;
  asio::cancellation_signal stop;
  std::thread t;
  std::atomic<bool> done{false};

  explicit running_factory(const std::string& ns)
      : factory(c, {ns, {}, true, {}}) {}
  void start() {
    factory.async_run(asio::bind_cancellation_slot(stop.slot(), [this](kube::error_code) { done = true; }));
    t = std::thread([this] { io.run(); });
  }
  bool wait_synced() {
    std::promise<kube::error_code> synced;
    factory.async_wait_for_sync([&](kube::error_code ec) { synced.set_value(ec); });
    auto f = synced.get_future();
    return f.wait_for(30s) == std::future_status::ready && !f.get();
  }
  ~running_factory() {
    if (t.joinable()) {
      asio::post(io, [this] { stop.emit(asio::cancellation_type::terminal); });
      t.join();
    }
  }
};

}  // namespace

TEST_CASE("metadata_api - get list watch patch delete answer PartialObjectMetadata without data", "[metadata]") {
  const auto ns = unique_name("meta-api");
  create_namespace(ns);
  REQUIRE(sh(kubectl() + "-n " + ns + " create configmap web --from-literal=level=payload-value-3") == 0);
  REQUIRE(sh(kubectl() + "-n " + ns + " label configmap web app=web") == 0);
  for (int i = 0; i < 5; ++i) REQUIRE(sh(kubectl() + "-n " + ns + " create configmap c" + std::to_string(i)) == 0);

  partial_object_metadata got, patched;
  kube::partial_object_metadata_list all;
  std::vector<std::size_t> page_sizes;
  std::vector<std::string> events;
  kube::delete_result<partial_object_metadata> deleted;
  kube::error_code missing_ec;
  std::string missing_reason;
  with_admin_client([&](kube::client c) -> asio::awaitable<void> {
    kube::metadata_api cms(c, {"", "v1", "configmaps"}, ns);
    got = co_await cms.async_get("web");

    kube::list_params pages;
    pages.limit = 2;
    for (;;) {
      auto page = co_await cms.async_list(pages);
      page_sizes.push_back(page.items.size());
      if (!page.metadata || page.metadata->continue_.value_or("").empty()) break;
      pages.continue_token = *page.metadata->continue_;
    }
    kube::list_params two;
    two.limit = 2;
    all = co_await cms.async_list_all(two);

    kube::watch_params wp;
    wp.resource_version = all.metadata->resource_version.value_or("");
    auto w = co_await cms.async_watch(wp);
    const std::string merge = R"({"metadata":{"labels":{"tier":"front"}}})";
    patched = co_await cms.async_patch("web", kube::patch_type::merge, merge);
    for (;;) {
      auto ev = co_await w.async_next();
      if (ev.type == kube::watch_event_type::bookmark) continue;
      events.push_back(std::string(kube::to_string(ev.type)) + " " + std::string(ev.object.name()) + " " +
                       ev.object.kind.value_or("") + " " + ev.object.labels().at("tier") + " " +
                       (ev.object.unknown_fields.empty() ? "metadata-only" : "has-more"));
      break;
    }
    w.close();

    deleted = co_await cms.async_delete("c0");
    auto [ec, none] = co_await cms.async_get("c0", asio::as_tuple(asio::use_awaitable));
    missing_ec = ec;
    try {
      co_await cms.async_get("c0");
    } catch (const kube::error& e) {
      const auto& st = e.diag().server_status();
      if (st && st->contains("reason") && st->at("reason").is_string()) missing_reason = st->at("reason").as_string();
    }
  });

  CHECK(got.kind == "PartialObjectMetadata");
  CHECK(got.api_version == "meta.k8s.io/v1");
  CHECK(got.name() == "web");
  CHECK(got.namespace_() == ns);
  CHECK(got.labels().at("app") == "web");
  CHECK(!got.resource_version().empty());
  CHECK(got.unknown_fields.empty());  // no data, nothing but apiVersion, kind, metadata
  // (managedFields still name the data keys, "f:level": only values are checked)
  CHECK(kube::to_json(got).find("payload-value-3") == std::string::npos);

  REQUIRE(page_sizes.size() >= 3);  // 6 objects, pages of 2
  CHECK(page_sizes[0] == 2);
  CHECK(std::accumulate(page_sizes.begin(), page_sizes.end(), std::size_t{0}) == 6);
  CHECK(all.kind == "PartialObjectMetadataList");
  CHECK(all.items.size() == 6);
  for (const auto& i : all.items) CHECK(i.unknown_fields.empty());

  CHECK(patched.labels().at("tier") == "front");
  CHECK(patched.kind == "PartialObjectMetadata");
  CHECK(events == std::vector<std::string>{"MODIFIED web PartialObjectMetadata front metadata-only"});

  CHECK((deleted.object || deleted.status));
  CHECK(missing_ec == kube::api_errc::not_found);
  CHECK(missing_reason == "NotFound");
  CHECK(kubectl_names(ns, "configmaps") == std::set<std::string>{"web", "c1", "c2", "c3", "c4"});
  sh(kubectl() + "delete namespace " + ns + " --wait=false");
}

TEST_CASE("metadata informer over configmaps and secrets - kubectl creates updates deletes - no data cached - "
          "converges to kubectl get -o name",
          "[metadata][informer]") {
  const auto ns = unique_name("meta-inf");
  create_namespace(ns);
  REQUIRE(sh(kubectl() + "-n " + ns + " create configmap before --from-literal=k=v") == 0);

  running_factory rf(ns);
  auto cms = rf.factory.for_metadata({"", "v1", "configmaps"});
  auto secrets = rf.factory.for_metadata({"", "v1", "secrets"});
  CHECK(rf.factory.for_metadata({"", "v1", "configmaps"}) == cms);  // one informer per resource
  std::mutex m;
  std::vector<std::string> log;  // handler calls, checked on this thread
  cms->add_handler({
      [&](const std::shared_ptr<const partial_object_metadata>& o, bool) {
        std::lock_guard lk(m);
        log.push_back("add " + std::string(o->name()));
      },
      [&](const std::shared_ptr<const partial_object_metadata>& a,
          const std::shared_ptr<const partial_object_metadata>& b) {
        std::lock_guard lk(m);
        if (a->resource_version() != b->resource_version()) log.push_back("update " + std::string(b->name()));
      },
      [&](const ki::deleted_object<partial_object_metadata>& d) {
        std::lock_guard lk(m);
        const auto& o = ki::object_of(d);
        log.push_back("delete " + (o ? std::string(o->name()) : std::string("?")));
      },
  });
  rf.start();
  REQUIRE(rf.wait_synced());
  auto lister = cms->make_lister();
  CHECK(lister.get(ns, "before"));

  // Churn with kubectl, an independent client.
  const auto k = kubectl() + "-n " + ns + " ";
  for (int i = 0; i < 10; ++i) {
    REQUIRE(sh(k + "create configmap cm-" + std::to_string(i) + " --from-literal=payload=secret-ish-" +
               std::to_string(i)) == 0);
  }
  REQUIRE(sh(k + "label configmap cm-1 cm-2 cm-3 app=web") == 0);
  REQUIRE(sh(k + "annotate configmap cm-1 owner=team-a") == 0);
  REQUIRE(sh(k + "create configmap cm-4-data --from-literal=a=b --dry-run=client -o yaml | " + kubectl() + "-n " + ns +
             " apply -f -") == 0);
  REQUIRE(sh(k + "patch configmap cm-2 --type merge -p '{\"data\":{\"payload\":\"changed\"}}'") == 0);  // data only
  REQUIRE(sh(k + "delete configmap cm-3 cm-5 before") == 0);
  REQUIRE(sh(k + "create secret generic s1 --from-literal=password=hunter2") == 0);
  REQUIRE(sh(k + "create secret generic s2 --from-literal=password=swordfish") == 0);
  REQUIRE(sh(k + "label secret s2 app=web") == 0);
  REQUIRE(sh(k + "delete secret s1") == 0);

  CHECK(converges(lister, ns, "configmaps"));
  auto secret_lister = secrets->make_lister();
  CHECK(converges(secret_lister, ns, "secrets"));

  // Exactly `kubectl get -o name`.
  std::set<std::string> cached;
  for (const auto& o : lister.list(ns, {})) cached.insert(std::string(o->name()));
  cached.erase("kube-root-ca.crt");
  CHECK(cached == kubectl_names(ns, "configmaps"));
  std::set<std::string> cached_secrets;
  for (const auto& o : secret_lister.list(ns, {})) cached_secrets.insert(std::string(o->name()));
  CHECK(cached_secrets == kubectl_names(ns, "secrets"));
  CHECK(cached_secrets == std::set<std::string>{"s2"});

  // Labels, annotations and versions, but no data and no managedFields.
  const auto web = lister.list(ns, ki::label_selector::parse("app=web"));
  std::set<std::string> web_names;
  for (const auto& o : web) web_names.insert(std::string(o->name()));
  CHECK(web_names == std::set<std::string>{"cm-1", "cm-2"});
  const auto cm1 = lister.get(ns, "cm-1");
  REQUIRE(cm1);
  CHECK(cm1->kind == "PartialObjectMetadata");
  CHECK(cm1->metadata.annotations.value_or(std::map<std::string, std::string>{}).count("owner") == 1);
  CHECK(!cm1->resource_version().empty());
  CHECK_FALSE(cm1->metadata.managed_fields);  // strip_managed_fields
  for (const auto& o : lister.list(ns, {})) {
    INFO(o->name());
    CHECK(o->unknown_fields.empty());
    const auto json = kube::to_json(*o);
    CHECK(json.find("secret-ish") == std::string::npos);
    CHECK(json.find("\"data\"") == std::string::npos);
  }
  const auto s2 = secret_lister.get(ns, "s2");
  REQUIRE(s2);
  CHECK(s2->labels().at("app") == "web");
  CHECK(kube::to_json(*s2).find("password") == std::string::npos);

  // The handlers heard every change (cm-2's data-only patch is an update too:
  // its resourceVersion moved).
  std::vector<std::string> seen;
  {
    std::lock_guard lk(m);
    seen = log;
  }
  const auto count = [&](const std::string& what) { return std::count(seen.begin(), seen.end(), what); };
  CHECK(count("add before") == 1);
  for (int i = 0; i < 10; ++i) CHECK(count("add cm-" + std::to_string(i)) == 1);
  CHECK(count("add cm-4-data") == 1);
  CHECK(count("update cm-1") == 2);  // label, annotate
  CHECK(count("update cm-2") == 2);  // label, data patch
  CHECK(count("delete cm-3") == 1);
  CHECK(count("delete cm-5") == 1);
  CHECK(count("delete before") == 1);
  sh(kubectl() + "delete namespace " + ns + " --wait=false");
}
