// kube::api<T> over the generated types (kube::k8s target) against the real
// cluster: CRUD of Namespace, Pod, ConfigMap, Secret, Service, Deployment,
// Lease; Deployment scale through the named Scale helpers; eviction; apply
// with two managers; a wrong-UID delete; 1,200 configmaps listed across
// pages, every one exactly once.
#include "support/client_support.hpp"

#include <kube/typed/api.hpp>
#include <kube/k8s/apps/v1/deployment.hpp>
#include <kube/k8s/autoscaling/v1/scale.hpp>
#include <kube/k8s/coordination/v1/lease.hpp>
#include <kube/k8s/core/v1/config_map.hpp>
#include <kube/k8s/core/v1/namespace.hpp>
#include <kube/k8s/core/v1/pod.hpp>
#include <kube/k8s/core/v1/secret.hpp>
#include <kube/k8s/core/v1/service.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <map>
#include <set>

using namespace kube_test;
namespace v1 = k8s::core::v1;

namespace {

constexpr auto tuple = asio::as_tuple(asio::use_awaitable);

v1::PodSpec one_container() {
  v1::PodSpec spec;
  v1::Container app;
  app.name = "app";
  app.image = "busybox";
  spec.containers.push_back(app);
  return spec;
}

}  // namespace

TEST_CASE("generated Namespace: cluster-scoped create, get, delete", "[typed][generated]") {
  with_admin_client([](kube::client c) -> asio::awaitable<void> {
    kube::api<v1::Namespace> nss(c);
    v1::Namespace n;
    n.metadata.name = unique_name("gen-ns");
    auto made = co_await nss.async_create(n);
    CHECK(made.name() == *n.metadata.name);
    auto got = co_await nss.async_get(made.name());
    REQUIRE(got.status);
    CHECK(got.status->phase == "Active");
    auto d = co_await nss.async_delete(made.name());
    REQUIRE(d.object);
    CHECK(d.object->metadata.deletion_timestamp);
  });
}

TEST_CASE("generated ConfigMap, Secret, Service, Lease: CRUD with their value types", "[typed][generated]") {
  const auto ns = unique_name("gen-crud");
  create_namespace(ns);
  with_admin_client([ns](kube::client c) -> asio::awaitable<void> {
    kube::api<v1::ConfigMap> cms(c, ns);
    v1::ConfigMap cm;
    cm.metadata.name = "cm";
    cm.data.emplace()["k"] = "v";
    cm.binary_data.emplace()["bin"] = kube::bytes(std::string("\x00\x01\xff", 3));
    auto made = co_await cms.async_create(cm);
    CHECK(made.binary_data->at("bin").str() == std::string("\x00\x01\xff", 3));
    (*made.data)["k"] = "w";
    auto replaced = co_await cms.async_replace(made);
    CHECK(replaced.data->at("k") == "w");

    kube::api<v1::Secret> secrets(c, ns);
    v1::Secret s;
    s.metadata.name = "s";
    s.string_data.emplace()["password"] = "hunter2";
    auto sm = co_await secrets.async_create(s);
    REQUIRE(sm.data);
    CHECK(sm.data->at("password").str() == "hunter2");  // stringData arrives base64-decoded in data
    CHECK(sm.type == "Opaque");

    kube::api<v1::Service> svcs(c, ns);
    v1::Service svc;
    svc.metadata.name = "web";
    auto& spec = svc.spec.emplace();
    spec.selector.emplace()["app"] = "web";
    v1::ServicePort port;
    port.port = 80;
    port.target_port = kube::int_or_string("http");
    spec.ports.emplace().push_back(port);
    auto sv = co_await svcs.async_create(svc);
    REQUIRE(sv.spec);
    CHECK_FALSE(sv.spec->cluster_ip.value_or("").empty());
    CHECK(sv.spec->ports->at(0).target_port->string_value() == "http");
    auto patched = co_await svcs.async_patch("web", kube::patch_type::strategic_merge,
                                             R"({"spec":{"ports":[{"port":80,"targetPort":8080}]}})");
    CHECK(patched.spec->ports->at(0).target_port->int_value() == 8080);

    kube::api<k8s::coordination::v1::Lease> leases(c, ns);
    k8s::coordination::v1::Lease l;
    l.metadata.name = "leader";
    auto& ls = l.spec.emplace();
    ls.holder_identity = "me";
    ls.lease_duration_seconds = 15;
    ls.renew_time = kube::micro_timestamp::now();
    auto lm = co_await leases.async_create(l);
    CHECK(lm.spec->holder_identity == "me");
    CHECK(lm.spec->renew_time->time() == ls.renew_time->time());  // microseconds survive
    auto all = co_await leases.async_list_all();
    CHECK(all.items.size() == 1);
  });
}

TEST_CASE("generated Pod and Deployment: scale helpers, status, eviction", "[typed][generated]") {
  const auto ns = unique_name("gen-workloads");
  create_namespace(ns);
  with_admin_client([ns](kube::client c) -> asio::awaitable<void> {
    kube::api<k8s::apps::v1::Deployment> deps(c, ns);
    k8s::apps::v1::Deployment d;
    d.metadata.name = "web";
    auto& spec = d.spec.emplace();
    spec.replicas = 1;
    spec.selector.match_labels.emplace()["app"] = "web";
    spec.template_.metadata.emplace().labels.emplace()["app"] = "web";
    spec.template_.spec = one_container();
    co_await deps.async_create(d);
    auto scale = co_await deps.async_get_scale("web");
    CHECK(scale.spec->replicas == 1);
    scale.spec->replicas = 4;
    auto scaled = co_await deps.async_replace_scale("web", scale);
    CHECK(scaled.spec->replicas == 4);
    auto got = co_await deps.async_get("web");
    CHECK(got.spec->replicas == 4);
    got.status.emplace().observed_generation = got.metadata.generation;
    auto withstatus = co_await deps.async_replace_status(got);
    CHECK(withstatus.status->observed_generation == got.metadata.generation);

    kube::api<v1::Pod> pods(c, ns);
    v1::Pod p;
    p.metadata.name = "p";
    p.spec = one_container();
    auto pm = co_await pods.async_create(p);
    CHECK(pm.status->phase == "Pending");
    auto st = co_await pods.async_evict("p");
    CHECK(st.status == "Success");
    auto [ec, gone] = co_await pods.async_get("p", tuple);
    CHECK(ec == kube::api_errc::not_found);
  });
}

TEST_CASE("generated ConfigMap: apply by two managers, conflict without force, wrong-UID delete",
          "[typed][generated]") {
  const auto ns = unique_name("gen-apply");
  create_namespace(ns);
  with_admin_client([ns](kube::client c) -> asio::awaitable<void> {
    kube::api<v1::ConfigMap> cms(c, ns);
    v1::ConfigMap a;
    a.metadata.name = "ssa";
    a.data.emplace()["k"] = "alice";
    kube::patch_params alice;
    alice.field_manager = "alice";
    auto first = co_await cms.async_apply(a, alice);
    auto again = co_await cms.async_apply(a, alice);
    CHECK(again.resource_version() == first.resource_version());
    v1::ConfigMap b;
    b.metadata.name = "ssa";
    b.data.emplace()["k"] = "bob";
    kube::patch_params bob;
    bob.field_manager = "bob";
    auto [ec, r] = co_await cms.async_apply(b, bob, tuple);
    CHECK(ec == kube::api_errc::conflict);
    bob.force = true;
    auto forced = co_await cms.async_apply(b, bob);
    CHECK(forced.data->at("k") == "bob");

    kube::delete_params wrong;
    wrong.precondition_uid = "00000000-0000-0000-0000-000000000000";
    auto [ec2, r2] = co_await cms.async_delete("ssa", wrong, tuple);
    CHECK(ec2 == kube::api_errc::conflict);
    kube::delete_params right;
    right.precondition_uid = std::string(forced.uid());
    co_await cms.async_delete("ssa", right);
  });
}

TEST_CASE("1,200 configmaps listed across pages: every one exactly once", "[typed][generated][list]") {
  const auto ns = unique_name("gen-1200");
  create_namespace(ns);
  with_admin_client([ns](kube::client c) -> asio::awaitable<void> {
    using namespace boost::asio::experimental::awaitable_operators;
    kube::api<v1::ConfigMap> cms(c, ns);
    constexpr int total = 1200;
    // Four writers in parallel, each creating a quarter.
    auto writer = [&](int part) -> asio::awaitable<void> {
      for (int i = part; i < total; i += 4) {
        v1::ConfigMap cm;
        cm.metadata.name = "cm-" + std::to_string(i);
        cm.data.emplace()["i"] = std::to_string(i);
        co_await cms.async_create(cm);
      }
    };
    co_await (writer(0) && writer(1) && writer(2) && writer(3));

    kube::list_params p;
    p.limit = 250;
    std::map<std::string, int> seen;
    int pages = 0;
    // By hand, page by page...
    for (;;) {
      auto page = co_await cms.async_list(p);
      ++pages;
      for (const auto& cm : page.items) ++seen[std::string(cm.name())];
      if (!page.metadata || !page.metadata->continue_ || page.metadata->continue_->empty()) break;
      p.continue_token = *page.metadata->continue_;
    }
    CHECK(pages == 5);
    CHECK(seen.size() == static_cast<std::size_t>(total));
    bool once = true;
    for (const auto& [name, n] : seen) once = once && n == 1;
    CHECK(once);
    // ... and with list_all (default page size 500: three requests).
    auto all = co_await cms.async_list_all();
    std::set<std::string> names;
    for (const auto& cm : all.items) names.insert(std::string(cm.name()));
    CHECK(all.items.size() == static_cast<std::size_t>(total));
    CHECK(names.size() == static_cast<std::size_t>(total));
  });
}

namespace {

v1::Pod rich_pod(const std::string& name) {
  v1::Pod p;
  p.metadata.name = name;
  p.metadata.labels.emplace()["app"] = "pb";
  p.spec = one_container();
  auto& c = p.spec->containers[0];
  c.resources.emplace().limits.emplace()["cpu"] = kube::quantity("250m");
  c.liveness_probe.emplace().exec.emplace().command = std::vector<std::string>{"true"};  // an inlined Go struct
  c.ports.emplace().push_back({});
  c.ports->back().container_port = 8080;
  v1::Volume scratch;
  scratch.name = "scratch";
  scratch.empty_dir.emplace();  // present and empty: must stay present
  p.spec->volumes.emplace().push_back(std::move(scratch));
  p.spec->termination_grace_period_seconds = 0;  // a pointer field holding zero
  return p;
}

}  // namespace

TEST_CASE("generated Pod: protobuf on the wire by default, the same objects as JSON with json_only",
          "[typed][generated][protobuf]") {
  const auto ns = unique_name("gen-pb");
  create_namespace(ns);
  with_admin_client([ns](kube::client c) -> asio::awaitable<void> {
    auto json_settings = admin_cert_settings();
    json_settings.json_only = true;
    auto jc = kube::detail::client_access::make(co_await asio::this_coro::executor, std::move(json_settings));
    kube::api<v1::Pod> pods(c, ns);
    kube::api<v1::Pod> json_pods(jc, ns);
    const std::string path = "v1 pods " + ns;  // as request::describe() names them
    const std::string pb = "application/vnd.kubernetes.protobuf";

    auto mark = log_mark();
    auto made = co_await pods.async_create(rich_pod("p1"));
    CHECK(logged_since(mark).find("POST " + path + ": HTTP 201, " + pb) != std::string::npos);
    REQUIRE(made.spec->volumes);
    CHECK(made.spec->volumes->at(0).empty_dir);
    CHECK(made.spec->termination_grace_period_seconds == 0);
    CHECK(made.kind == "Pod");
    CHECK(made.api_version == "v1");

    mark = log_mark();
    auto got = co_await pods.async_get("p1");
    auto got_json = co_await json_pods.async_get("p1");
    const auto lines = logged_since(mark);
    CHECK(lines.find("GET " + path + "/p1: HTTP 200, " + pb) != std::string::npos);
    CHECK(lines.find("GET " + path + "/p1: HTTP 200, application/json") != std::string::npos);
    CHECK(kube::to_json(got) == kube::to_json(got_json));

    (*got.metadata.labels)["changed"] = "yes";
    auto replaced = co_await pods.async_replace(got);
    CHECK(replaced.metadata.labels->at("changed") == "yes");
    CHECK(kube::to_json(replaced) == kube::to_json(co_await json_pods.async_get("p1")));

    (void)co_await pods.async_create(rich_pod("p2"));
    mark = log_mark();
    auto list = co_await pods.async_list();
    auto list_json = co_await json_pods.async_list();
    CHECK(logged_since(mark).find("GET " + path + ": HTTP 200, " + pb) != std::string::npos);
    REQUIRE(list.items.size() == 2);
    REQUIRE(list_json.items.size() == 2);
    CHECK(list.kind == "PodList");
    for (std::size_t i = 0; i < 2; ++i) CHECK(kube::to_json(list.items[i]) == kube::to_json(list_json.items[i]));

    // The Status of an error comes as protobuf too.
    auto [ec, missing] = co_await pods.async_get("no-such-pod", tuple);
    CHECK(ec == kube::api_errc::not_found);

    // A watch reads protobuf events into the type.
    kube::watch_params wp;
    wp.resource_version = list.metadata->resource_version.value_or("");
    mark = log_mark();
    auto w = co_await pods.async_watch(wp);
    CHECK(logged_since(mark).find(pb + ";stream=watch") != std::string::npos);
    (void)co_await pods.async_delete("p2");
    bool deleted = false;
    while (!deleted) {
      auto ev = co_await w.async_next();
      if (ev.type == kube::watch_event_type::deleted) {
        CHECK(ev.object.name() == "p2");
        CHECK(ev.object.kind == "Pod");
        CHECK(!ev.resource_version.empty());
        deleted = true;
      }
    }
    auto d = co_await pods.async_delete("p1");
    CHECK((d.object || d.status));
  });
}
