#include "recorded_server.hpp"

#include <kube/discovery/discovery_document.hpp>

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

using kube::api_group;
using kube::client_errc;
using kube::discovery_document;
using kube_test::read_data;

namespace {

discovery_document parse_aggregated_file(const std::string& rel) {
  std::vector<api_group> groups;
  kube::diagnostics diag;
  const auto ec = discovery_document::parse_aggregated(read_data(rel), rel, groups, diag);
  INFO(diag.client_message());
  REQUIRE_FALSE(ec);
  return discovery_document{std::move(groups)};
}

// Top-level resources of a legacy APIResourceList, counted with plain Boost.JSON.
std::size_t count_top_level(const std::string& body) {
  std::size_t n = 0;
  const auto doc = boost::json::parse(body);
  for (const auto& r : doc.at("resources").as_array())
    if (r.at("name").as_string().find('/') == boost::json::string::npos) ++n;
  return n;
}

std::string decode_error_message(std::string_view body) {
  std::vector<api_group> groups;
  kube::diagnostics diag;
  const auto ec = discovery_document::parse_aggregated(body, "/apis", groups, diag);
  CHECK(ec == client_errc::decode_error);
  return diag.client_message();
}

}  // namespace

TEST_CASE("recorded aggregated /api decodes to the core group with pods and namespaces", "[discovery][aggregated]") {
  const auto doc = parse_aggregated_file("aggregated/api.json");
  REQUIRE(doc.groups.size() == 1);
  const auto& core = doc.groups[0];
  CHECK(core.name.empty());
  CHECK(core.preferred_version == "v1");
  const auto* v1 = doc.resources_of({"", "v1"});
  REQUIRE(v1);
  const auto pods = std::find_if(v1->begin(), v1->end(), [](const auto& r) { return r.plural == "pods"; });
  REQUIRE(pods != v1->end());
  CHECK(pods->kind == "Pod");
  CHECK(pods->singular == "pod");
  CHECK(pods->namespaced);
  CHECK(pods->short_names == std::vector<std::string>{"po"});
  CHECK(pods->supports("watch"));
  const auto* status = pods->subresource("status");
  REQUIRE(status);
  CHECK(status->response_kind == kube::group_version_kind{"", "v1", "Pod"});  // empty in the document: filled
  const auto* eviction = pods->subresource("eviction");
  REQUIRE(eviction);
  CHECK(eviction->response_kind == kube::group_version_kind{"policy", "v1", "Eviction"});
  const auto ns = std::find_if(v1->begin(), v1->end(), [](const auto& r) { return r.plural == "namespaces"; });
  REQUIRE(ns != v1->end());
  CHECK_FALSE(ns->namespaced);
}

TEST_CASE("recorded aggregated /apis decodes every group of the legacy group list", "[discovery][aggregated]") {
  const auto doc = parse_aggregated_file("aggregated/apis.json");
  std::vector<api_group> legacy;
  kube::diagnostics diag;
  REQUIRE_FALSE(discovery_document::parse_group_list(read_data("legacy/apis.json"), "/apis", legacy, diag));
  REQUIRE(doc.groups.size() == legacy.size());
  // The server orders built-in groups alike in both; CRD groups of equal
  // priority may come in another order, so compare by name.
  for (const auto& l : legacy) {
    INFO(l.name);
    const auto* g = doc.find_group(l.name);
    REQUIRE(g);
    CHECK(g->preferred_version == l.preferred_version);
    REQUIRE(g->versions.size() == l.versions.size());
    for (std::size_t j = 0; j < l.versions.size(); ++j) CHECK(g->versions[j].version == l.versions[j].version);
  }
  CHECK(doc.groups.front().name == legacy.front().name);
  const auto* apps = doc.resources_of({"apps", "v1"});
  REQUIRE(apps);
  const auto d = std::find_if(apps->begin(), apps->end(), [](const auto& r) { return r.plural == "deployments"; });
  REQUIRE(d != apps->end());
  CHECK(d->kind == "Deployment");
  CHECK(d->short_names == std::vector<std::string>{"deploy"});
  CHECK(d->categories == std::vector<std::string>{"all"});
  REQUIRE(d->subresource("scale"));
  CHECK(d->subresource("scale")->response_kind == kube::group_version_kind{"autoscaling", "v1", "Scale"});
}

TEST_CASE("the recorded CRD is served at two versions with v1 preferred and its names", "[discovery][aggregated]") {
  const auto doc = parse_aggregated_file("aggregated/apis.json");
  const auto* g = doc.find_group("samplecontroller.k8s.io");
  REQUIRE(g);
  CHECK(g->preferred_version == "v1");
  REQUIRE(g->versions.size() == 2);
  const auto& foo = g->versions[1].resources.at(0);
  CHECK(g->versions[1].version == "v1alpha1");
  CHECK(foo.gvk() == kube::group_version_kind{"samplecontroller.k8s.io", "v1alpha1", "Foo"});
  CHECK(foo.short_names == std::vector<std::string>{"fo"});
  CHECK(foo.categories == std::vector<std::string>{"all", "samples"});
  CHECK(foo.subresources.empty());  // only v1 declares status and scale
  CHECK(g->versions[0].resources.at(0).subresources.size() == 2);
}

TEST_CASE("every recorded legacy APIResourceList decodes with all its top-level resources", "[discovery][legacy]") {
  std::vector<api_group> groups;
  kube::diagnostics diag;
  REQUIRE_FALSE(discovery_document::parse_group_list(read_data("legacy/apis.json"), "/apis", groups, diag));
  REQUIRE(groups.size() > 10);
  std::vector<std::pair<kube::group_version, std::string>> lists{{{"", "v1"}, "legacy/api_v1.json"}};
  for (const auto& g : groups)
    for (const auto& v : g.versions)
      lists.push_back({{g.name, v.version}, "legacy/apis_" + g.name + "_" + v.version + ".json"});
  for (const auto& [gv, file] : lists) {
    INFO(file);
    const auto body = read_data(file);
    std::vector<kube::api_resource> out;
    const auto ec = discovery_document::parse_resource_list(body, file, gv, out, diag);
    INFO(diag.client_message());
    REQUIRE_FALSE(ec);
    CHECK(out.size() == count_top_level(body));
    for (const auto& r : out) CHECK(r.group_version_of() == gv);
  }
}

TEST_CASE("legacy /api decodes its versions", "[discovery][legacy]") {
  std::vector<std::string> versions;
  kube::diagnostics diag;
  REQUIRE_FALSE(discovery_document::parse_api_versions(read_data("legacy/api.json"), "/api", versions, diag));
  CHECK(versions == std::vector<std::string>{"v1"});
}

TEST_CASE("legacy subresource entries fold into their parent", "[discovery][legacy]") {
  std::vector<kube::api_resource> out;
  kube::diagnostics diag;
  REQUIRE_FALSE(discovery_document::parse_resource_list(read_data("legacy/apis_apps_v1.json"), "/apis/apps/v1",
                                                        {"apps", "v1"}, out, diag));
  for (const auto& r : out) CHECK(r.plural.find('/') == std::string::npos);
  const auto d = std::find_if(out.begin(), out.end(), [](const auto& r) { return r.plural == "deployments"; });
  REQUIRE(d != out.end());
  REQUIRE(d->subresource("status"));
  CHECK(d->subresource("status")->response_kind == kube::group_version_kind{"apps", "v1", "Deployment"});
  REQUIRE(d->subresource("scale"));
  CHECK(d->subresource("scale")->response_kind == kube::group_version_kind{"autoscaling", "v1", "Scale"});
}

TEST_CASE("an APIResourceList for another group/version is a decode error naming groupVersion", "[discovery][errors]") {
  std::vector<kube::api_resource> out;
  kube::diagnostics diag;
  const auto ec = discovery_document::parse_resource_list(read_data("legacy/apis_apps_v1.json"), "/apis/batch/v1",
                                                          {"batch", "v1"}, out, diag);
  CHECK(ec == client_errc::decode_error);
  CHECK_THAT(diag.client_message(), Catch::Contains("/apis/batch/v1") && Catch::Contains("groupVersion") &&
                                        Catch::Contains("\"batch/v1\"") && Catch::Contains("\"apps/v1\""));
}

TEST_CASE("malformed JSON is a decode error with the byte offset", "[discovery][errors]") {
  const auto m = decode_error_message(R"({"kind": "APIGroupDiscoveryList", "items": [)");
  CHECK_THAT(m, Catch::Contains("/apis") && Catch::Contains("not valid JSON") && Catch::Contains("byte offset"));
}

TEST_CASE("a number too large for a double is a decode error, not infinity", "[discovery][errors]") {
  const auto m = decode_error_message(R"({"kind":"APIGroupDiscoveryList","items":[],"x":1E400})");
  CHECK_THAT(m, Catch::Contains("/apis") && Catch::Contains("a number too large for a double"));
}

TEST_CASE("a legacy document where aggregated was expected names both kinds", "[discovery][errors]") {
  const auto m = decode_error_message(read_data("legacy/apis.json"));
  CHECK_THAT(m, Catch::Contains("kind") && Catch::Contains("APIGroupDiscoveryList") && Catch::Contains("APIGroupList"));
}

TEST_CASE("an unknown apidiscovery version is rejected by name", "[discovery][errors]") {
  const auto m =
      decode_error_message(R"({"kind":"APIGroupDiscoveryList","apiVersion":"apidiscovery.k8s.io/v3","items":[]})");
  CHECK_THAT(m, Catch::Contains("apiVersion") && Catch::Contains("apidiscovery.k8s.io/v3"));
}

TEST_CASE("a bad field is named by its full path", "[discovery][errors]") {
  const auto m = decode_error_message(R"({"kind":"APIGroupDiscoveryList","apiVersion":"apidiscovery.k8s.io/v2","items":[
    {"metadata":{"name":"x.io"},"versions":[{"version":"v1","resources":[
      {"resource":"as","responseKind":{"kind":"A"},"scope":"Namespaced","verbs":["get"]},
      {"resource":"bs","responseKind":{"kind":"B"},"scope":"Global","verbs":["get"]}]}]}]})");
  CHECK_THAT(m, Catch::Contains("items[0].versions[0].resources[1].scope") && Catch::Contains("\"Global\""));
  const auto m2 =
      decode_error_message(R"({"kind":"APIGroupDiscoveryList","apiVersion":"apidiscovery.k8s.io/v2","items":[
    {"metadata":{"name":"x.io"},"versions":[{"version":"v1","resources":[
      {"resource":"as","responseKind":{"kind":"A"},"scope":"Namespaced","verbs":"get"}]}]}]})");
  CHECK_THAT(m2, Catch::Contains("items[0].versions[0].resources[0].verbs") && Catch::Contains("expected an array"));
}

TEST_CASE("stale versions are failures and never preferred and resources without a kind are skipped",
          "[discovery][aggregated]") {
  std::vector<api_group> groups;
  kube::diagnostics diag;
  REQUIRE_FALSE(discovery_document::parse_aggregated(
      R"({"kind":"APIGroupDiscoveryList","apiVersion":"apidiscovery.k8s.io/v2beta1","items":[
    {"metadata":{"name":"metrics.k8s.io"},"versions":[
      {"version":"v1beta2","freshness":"Stale"},
      {"version":"v1beta1","freshness":"Current","resources":[
        {"resource":"pods","responseKind":{"kind":"PodMetrics"},"scope":"Namespaced","verbs":["get"]},
        {"resource":"ghosts","scope":"Namespaced","verbs":["get"]}]}]}]})",
      "/apis", groups, diag));
  REQUIRE(groups.size() == 1);
  const auto& g = groups[0];
  CHECK(g.preferred_version == "v1beta1");
  REQUIRE(g.versions.size() == 2);
  CHECK(g.versions[0].failure == kube::api_errc::service_unavailable);
  CHECK(g.versions[0].resources.empty());
  REQUIRE(g.versions[1].resources.size() == 1);
  CHECK(g.versions[1].resources[0].singular == "podmetrics");  // no singularResource: the kind, lower case
}

TEST_CASE("to_json writes a document that parses back equal", "[discovery][aggregated]") {
  auto doc = parse_aggregated_file("aggregated/api.json");
  const auto apis = parse_aggregated_file("aggregated/apis.json");
  doc.groups.insert(doc.groups.end(), apis.groups.begin(), apis.groups.end());
  std::vector<api_group> back;
  kube::diagnostics diag;
  REQUIRE_FALSE(discovery_document::parse_aggregated(doc.to_json(), "cache", back, diag));
  CHECK(discovery_document{back} == doc);
}
