#include "recorded_server.hpp"

#include <kube/exception.hpp>
#include <kube/discovery/rest_mapper.hpp>

#include <catch2/catch.hpp>

#include <string>

using kube::group_version_resource;
using kube::rest_mapper;
using kube_test::server_mode;

namespace {

const rest_mapper& mapper_for(server_mode mode) {
  static const rest_mapper aggregated(kube_test::discover(server_mode::aggregated));
  static const rest_mapper legacy(kube_test::discover(server_mode::legacy_only));
  return mode == server_mode::aggregated ? aggregated : legacy;
}

struct expectation {
  const char* type;
  group_version_resource gvr;
  bool namespaced;
};

// What kubectl v1.32 requested for `kubectl get TYPE` against the recorded
// server (from `kubectl get TYPE -v=6`).
const expectation kubectl_answers[] = {
    {"pods", {"", "v1", "pods"}, true},
    {"po", {"", "v1", "pods"}, true},
    {"pod", {"", "v1", "pods"}, true},
    {"Pod", {"", "v1", "pods"}, true},
    {"PODS", {"", "v1", "pods"}, true},
    {"deploy", {"apps", "v1", "deployments"}, true},
    {"deployment", {"apps", "v1", "deployments"}, true},
    {"deployments.apps", {"apps", "v1", "deployments"}, true},
    {"deploy.apps", {"apps", "v1", "deployments"}, true},
    {"deployments.v1.apps", {"apps", "v1", "deployments"}, true},
    {"deploy.v1.apps", {"apps", "v1", "deployments"}, true},
    {"Deployment.apps", {"apps", "v1", "deployments"}, true},
    {"deployment.v1.apps", {"apps", "v1", "deployments"}, true},
    {"cm", {"", "v1", "configmaps"}, true},
    {"ns", {"", "v1", "namespaces"}, false},
    {"crd", {"apiextensions.k8s.io", "v1", "customresourcedefinitions"}, false},
    {"crds", {"apiextensions.k8s.io", "v1", "customresourcedefinitions"}, false},
    {"fo", {"samplecontroller.k8s.io", "v1", "foos"}, true},
    {"foo", {"samplecontroller.k8s.io", "v1", "foos"}, true},
    {"foos", {"samplecontroller.k8s.io", "v1", "foos"}, true},
    {"Foo", {"samplecontroller.k8s.io", "v1", "foos"}, true},
    {"foos.samplecontroller.k8s.io", {"samplecontroller.k8s.io", "v1", "foos"}, true},
    {"foos.v1alpha1.samplecontroller.k8s.io", {"samplecontroller.k8s.io", "v1alpha1", "foos"}, true},
    {"foo.v1alpha1.samplecontroller.k8s.io", {"samplecontroller.k8s.io", "v1alpha1", "foos"}, true},
    {"Foo.v1alpha1.samplecontroller.k8s.io", {"samplecontroller.k8s.io", "v1alpha1", "foos"}, true},
    {"fo.samplecontroller", {"samplecontroller.k8s.io", "v1", "foos"}, true},
    {"br", {"example.com", "v1beta1", "bars"}, false},
    {"events", {"", "v1", "events"}, true},
    {"ev", {"", "v1", "events"}, true},
    {"event", {"", "v1", "events"}, true},
    {"events.events.k8s.io", {"events.k8s.io", "v1", "events"}, true},
    {"event.events.k8s.io", {"events.k8s.io", "v1", "events"}, true},
    {"EVENTS.events.k8s.io", {"events.k8s.io", "v1", "events"}, true},
    {"ev.events.k8s.io", {"events.k8s.io", "v1", "events"}, true},
    {"hpa", {"autoscaling", "v2", "horizontalpodautoscalers"}, true},
    {"horizontalpodautoscalers.v1.autoscaling", {"autoscaling", "v1", "horizontalpodautoscalers"}, true},
    {"hpa.autoscal", {"autoscaling", "v2", "horizontalpodautoscalers"}, true},
    {"csr", {"certificates.k8s.io", "v1", "certificatesigningrequests"}, false},
};

}  // namespace

TEST_CASE("the mapper resolves kubectl TYPE names as kubectl does from either discovery", "[discovery][mapper]") {
  const auto mode = GENERATE(server_mode::aggregated, server_mode::legacy_only);
  const auto& m = mapper_for(mode);
  for (const auto& e : kubectl_answers) {
    INFO((mode == server_mode::aggregated ? "aggregated: " : "legacy: ") << e.type);
    kube::error_code ec;
    kube::diagnostics diag;
    const auto* r = m.resolve(e.type, ec, diag);
    INFO(diag.client_message());
    REQUIRE(r);
    CHECK(r->gvr() == e.gvr);
    CHECK(r->namespaced == e.namespaced);
  }
}

TEST_CASE("a short name with a version keeps the version (kubectl drops it)", "[discovery][mapper]") {
  // kubectl lists v1 for this; we keep what the user wrote.
  CHECK(mapper_for(server_mode::aggregated).resolve("fo.v1alpha1.samplecontroller.k8s.io").version == "v1alpha1");
}

TEST_CASE("unknown types give not_found naming the type", "[discovery][mapper]") {
  const auto& m = mapper_for(server_mode::aggregated);
  for (const char* type : {"nosuch", "pods.v2", "cm.apps", "", "deployments.v9.apps"}) {
    INFO(type);
    kube::error_code ec;
    kube::diagnostics diag;
    CHECK(m.resolve(type, ec, diag) == nullptr);
    CHECK(ec == kube::api_errc::not_found);
    CHECK_THAT(diag.client_message(), Catch::Contains(std::string("\"") + type + "\""));
  }
  try {
    (void)m.resolve("nosuch");
    FAIL("resolve did not throw");
  } catch (const kube::error& e) {
    CHECK(e.code() == kube::api_errc::not_found);
    CHECK_THAT(std::string(e.what()), Catch::Contains("the server doesn't have a resource type \"nosuch\""));
  }
}

TEST_CASE("resource_for maps a kind to its resource and an empty version takes the preferred", "[discovery][mapper]") {
  const auto& m = mapper_for(server_mode::aggregated);
  CHECK(m.resource_for({"apps", "v1", "Deployment"}).gvr() == group_version_resource{"apps", "v1", "deployments"});
  CHECK(m.resource_for({"", "v1", "Pod"}).plural == "pods");
  CHECK(m.resource_for({"", "", "Namespace"}).namespaced == false);
  CHECK(m.resource_for({"samplecontroller.k8s.io", "", "Foo"}).version == "v1");
  CHECK(m.resource_for({"samplecontroller.k8s.io", "v1alpha1", "Foo"}).version == "v1alpha1");
  CHECK(m.resource_for({"autoscaling", "", "HorizontalPodAutoscaler"}).version == "v2");
  CHECK(m.resource_for({"events.k8s.io", "v1", "Event"}).group == "events.k8s.io");
  CHECK(m.resource_for({"", "v1", "Event"}).group.empty());
  kube::error_code ec;
  kube::diagnostics diag;
  // The group is exact: Deployment is not in the core group.
  CHECK(m.resource_for({"", "v1", "Deployment"}, ec, diag) == nullptr);
  CHECK(ec == kube::api_errc::not_found);
  CHECK_THAT(diag.client_message(), Catch::Contains("\"Deployment\"") && Catch::Contains("core group"));
  CHECK(m.resource_for({"apps", "v2", "Deployment"}, ec, diag) == nullptr);
  CHECK_THAT(diag.client_message(), Catch::Contains("\"apps\"") && Catch::Contains("\"v2\""));
}

TEST_CASE("kind_for maps a partial resource to its kind", "[discovery][mapper]") {
  const auto& m = mapper_for(server_mode::legacy_only);
  CHECK(m.kind_for({"apps", "v1", "deployments"}).gvk() == kube::group_version_kind{"apps", "v1", "Deployment"});
  CHECK(m.kind_for({"", "", "events"}).gvk() == kube::group_version_kind{"", "v1", "Event"});  // any group, core first
  CHECK(m.kind_for({"events.k8s.io", "", "events"}).group == "events.k8s.io");
  CHECK(m.kind_for({"", "", "fo"}).kind == "Foo");
  CHECK(m.kind_for({"", "v1alpha1", "foos"}).version == "v1alpha1");
  kube::error_code ec;
  kube::diagnostics diag;
  CHECK(m.kind_for({"apps", "", "pods"}, ec, diag) == nullptr);
  CHECK_THAT(diag.client_message(), Catch::Contains("\"pods\"") && Catch::Contains("\"apps\""));
}

TEST_CASE("categories expand to one resource per group in priority order", "[discovery][mapper]") {
  const auto& m = mapper_for(server_mode::aggregated);
  const auto samples = m.resources_for_category("samples");
  REQUIRE(samples.size() == 1);  // foos at v1 only, not again at v1alpha1
  CHECK(samples[0]->gvr() == group_version_resource{"samplecontroller.k8s.io", "v1", "foos"});
  const auto all = m.resources_for_category("all");
  REQUIRE(all.size() >= 3);
  CHECK(all.front()->plural == "pods");  // kubectl get all starts with pods
  CHECK(std::any_of(all.begin(), all.end(), [](auto* r) { return r->plural == "foos"; }));
  CHECK(std::none_of(all.begin(), all.end(), [](auto* r) { return r->plural == "configmaps"; }));
  CHECK(m.resources_for_category("nosuch").empty());
}

namespace {

kube::api_resource res(std::string group, std::string version, std::string kind, std::string plural,
                       std::string singular, std::vector<std::string> short_names = {}) {
  kube::api_resource r;
  r.group = std::move(group);
  r.version = std::move(version);
  r.kind = std::move(kind);
  r.plural = std::move(plural);
  r.singular = std::move(singular);
  r.namespaced = true;
  r.short_names = std::move(short_names);
  return r;
}

}  // namespace

TEST_CASE("the preferred version wins even when the server lists it second", "[discovery][mapper]") {
  kube::discovery_document doc;
  doc.groups.push_back({"x.io",
                        "v1beta1",
                        {{"v1", {res("x.io", "v1", "Widget", "widgets", "widget")}, {}, {}},
                         {"v1beta1", {res("x.io", "v1beta1", "Widget", "widgets", "widget")}, {}, {}}}});
  const rest_mapper m(doc);
  CHECK(m.resolve("widgets").version == "v1beta1");
  CHECK(m.resource_for({"x.io", "", "Widget"}).version == "v1beta1");
  CHECK(m.resolve("widgets.v1.x.io").version == "v1");
}

TEST_CASE("within one group/version an exact plural beats a singular", "[discovery][mapper]") {
  kube::discovery_document doc;
  // "x" is the singular of "xs" (listed first) and the plural of another resource.
  doc.groups.push_back(
      {"x.io", "v1", {{"v1", {res("x.io", "v1", "X", "xs", "x"), res("x.io", "v1", "Ex", "x", "ex")}, {}, {}}}});
  const rest_mapper m(doc);
  CHECK(m.resolve("x").kind == "Ex");
  CHECK(m.resolve("xs").kind == "X");
}

TEST_CASE("a short name declared twice resolves to the earlier group and a long name is never expanded",
          "[discovery][mapper]") {
  kube::discovery_document doc;
  doc.groups.push_back(
      {"first.io", "v1", {{"v1", {res("first.io", "v1", "Alpha", "alphas", "alpha", {"a", "beta"})}, {}, {}}}});
  doc.groups.push_back({"second.io",
                        "v1",
                        {{"v1",
                          {res("second.io", "v1", "Aardvark", "aardvarks", "aardvark", {"a"}),
                           res("second.io", "v1", "Beta", "betas", "beta")},
                          {},
                          {}}}});
  const rest_mapper m(doc);
  CHECK(m.resolve("a").group == "first.io");
  CHECK(m.resolve("a.second.io").group == "second.io");
  // "beta" is a short name of alphas but the singular of betas: the singular wins.
  CHECK(m.resolve("beta").kind == "Beta");
}

TEST_CASE("a failed group/version contributes nothing to the mapper", "[discovery][mapper]") {
  kube::discovery_document doc;
  doc.groups.push_back({"x.io",
                        "v2",
                        {{"v2", {}, kube::api_errc::service_unavailable, "stale"},
                         {"v1", {res("x.io", "v1", "Widget", "widgets", "widget")}, {}, {}}}});
  const rest_mapper m(doc);
  CHECK(m.resolve("widgets").version == "v1");
  kube::error_code ec;
  kube::diagnostics diag;
  CHECK(m.resource_for({"x.io", "v2", "Widget"}, ec, diag) == nullptr);
  CHECK(ec == kube::api_errc::not_found);
}
