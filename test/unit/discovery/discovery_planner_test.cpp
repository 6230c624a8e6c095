#include "recorded_server.hpp"

#include <kube/discovery/discovery_planner.hpp>

#include <catch2/catch.hpp>

#include <string>

using kube::discovery_planner;
using kube::discovery_request;
using kube_test::server_mode;

namespace {
// The number of group/versions of the recorded /apis, read independently of the planner.
std::size_t recorded_group_versions() {
  std::size_t n = 0;
  for (const auto& [file, type] : kube_test::content_types())
    if (file.rfind("legacy/apis_", 0) == 0) ++n;
  return n;
}
}  // namespace

TEST_CASE("planner asks for /api and /apis with the aggregated Accept first", "[discovery][planner]") {
  discovery_planner p;
  const auto reqs = p.take_requests();
  REQUIRE(reqs.size() == 2);
  CHECK(reqs[0] == discovery_request{"/api", std::string(kube::aggregated_discovery_accept)});
  CHECK(reqs[1] == discovery_request{"/apis", std::string(kube::aggregated_discovery_accept)});
  CHECK(p.take_requests().empty());  // each request is handed out once
  CHECK_FALSE(p.done());
}

TEST_CASE("an aggregated server is discovered in two requests", "[discovery][planner]") {
  int n = 0;
  const auto doc = kube_test::discover(server_mode::aggregated, {}, &n);
  CHECK(n == 2);
  REQUIRE_FALSE(doc.groups.empty());
  CHECK(doc.groups[0].name.empty());  // core first
  CHECK(doc.find_group("apps"));
  CHECK(doc.complete());
}

TEST_CASE("a server answering legacy documents falls back to one request per group/version", "[discovery][planner]") {
  int n = 0;
  const auto doc = kube_test::discover(server_mode::legacy_only, {}, &n);
  CHECK(static_cast<std::size_t>(n) == 2 + 1 + recorded_group_versions());
  CHECK(doc.complete());
}

TEST_CASE("legacy and aggregated discovery of the same server give the same document", "[discovery][planner]") {
  const auto aggregated = kube_test::discover(server_mode::aggregated);
  const auto legacy = kube_test::discover(server_mode::legacy_only);
  REQUIRE(aggregated.groups.size() == legacy.groups.size());
  // Same groups; CRD groups of equal priority may be listed in another order.
  for (const auto& l : legacy.groups) {
    INFO("group " << l.name);
    const auto* a = aggregated.find_group(l.name);
    REQUIRE(a);
    CHECK(a->preferred_version == l.preferred_version);
    REQUIRE(a->versions.size() == l.versions.size());
    for (std::size_t j = 0; j < l.versions.size(); ++j) {
      CHECK(a->versions[j].version == l.versions[j].version);
      const auto& ar = a->versions[j].resources;
      const auto& lr = l.versions[j].resources;
      REQUIRE(ar.size() == lr.size());
      for (std::size_t k = 0; k < ar.size(); ++k) {
        INFO(ar[k].plural);
        CHECK(ar[k] == lr[k]);
      }
    }
  }
}

TEST_CASE("legacy-only params ask with the plain JSON Accept", "[discovery][planner]") {
  discovery_planner p({.aggregated = false});
  for (const auto& r : p.take_requests()) CHECK(r.accept == "application/json");
  int n = 0;
  const auto doc = kube_test::discover(server_mode::aggregated, {.aggregated = false}, &n);
  CHECK(n > 2);  // the aggregated server was never asked for the aggregated list
  CHECK(doc.find_group("samplecontroller.k8s.io"));
}

TEST_CASE("a failing group/version is recorded and the rest is still discovered", "[discovery][planner]") {
  discovery_planner p({.aggregated = false});
  bool failed_one = false;
  while (!p.done())
    for (const auto& req : p.take_requests()) {
      kube::diagnostics diag;
      if (req.path == "/apis/example.com/v1beta1") {
        failed_one = true;
        const std::string status =
            R"({"kind":"Status","apiVersion":"v1","status":"Failure","message":"service unavailable","reason":"ServiceUnavailable","code":503})";
        REQUIRE_FALSE(p.on_response(req, {503, "application/json", status}, diag));
      } else if (req.path == "/apis/autoscaling/v1") {
        REQUIRE_FALSE(p.on_transport_error(req, kube::client_errc::connection_failed, diag));
      } else {
        const auto a = kube_test::answer(req, server_mode::legacy_only);
        REQUIRE_FALSE(p.on_response(req, {a.status, a.content_type, a.body}, diag));
      }
    }
  REQUIRE(failed_one);
  const auto doc = std::move(p).result();
  CHECK_FALSE(doc.complete());
  const auto* ex = doc.find_group("example.com");
  REQUIRE(ex);
  CHECK(ex->versions[0].failure == kube::api_errc::service_unavailable);
  CHECK_THAT(ex->versions[0].failure_message,
             Catch::Contains("/apis/example.com/v1beta1") && Catch::Contains("service unavailable"));
  const auto* as = doc.find_group("autoscaling");
  REQUIRE(as);
  CHECK(as->find_version("v1")->failure == kube::client_errc::connection_failed);
  CHECK_FALSE(as->find_version("v2")->failure);
  CHECK_FALSE(doc.resources_of({"apps", "v1"})->empty());
}

TEST_CASE("a root answered with a server error ends discovery with the Status", "[discovery][planner]") {
  discovery_planner p;
  const auto reqs = p.take_requests();
  kube::diagnostics diag;
  const std::string status =
      R"({"kind":"Status","apiVersion":"v1","status":"Failure","message":"etcd is down","reason":"InternalError","code":500})";
  const auto ec = p.on_response(reqs[1], {500, "application/json", status}, diag);
  CHECK(ec == kube::api_errc::internal_error);
  CHECK(diag.server_message() == "etcd is down");
  CHECK_THAT(diag.client_message(), Catch::Contains("/apis"));
  CHECK(p.done());
  CHECK(p.take_requests().empty());
}

TEST_CASE("a root answered 404 or 403 means no groups there as in client-go", "[discovery][planner]") {
  discovery_planner p;
  const auto reqs = p.take_requests();
  kube::diagnostics diag;
  REQUIRE_FALSE(p.on_response(reqs[0], {404, "application/json", "{}"}, diag));
  const auto a = kube_test::answer(reqs[1], server_mode::aggregated);
  REQUIRE_FALSE(p.on_response(reqs[1], {a.status, a.content_type, a.body}, diag));
  REQUIRE(p.done());
  const auto doc = std::move(p).result();
  CHECK_FALSE(doc.find_group(""));
  CHECK(doc.find_group("apps"));
}

TEST_CASE("a non-JSON content type on a root is a decode error naming it", "[discovery][planner]") {
  discovery_planner p;
  const auto reqs = p.take_requests();
  kube::diagnostics diag;
  const auto ec = p.on_response(reqs[0], {200, "application/vnd.kubernetes.protobuf", "k8s\0"}, diag);
  CHECK(ec == kube::client_errc::decode_error);
  CHECK_THAT(diag.client_message(), Catch::Contains("application/vnd.kubernetes.protobuf") && Catch::Contains("/api"));
}

TEST_CASE("an aggregated body under a plain JSON content type is still read as aggregated", "[discovery][planner]") {
  discovery_planner p;
  int n = 0;
  while (!p.done())
    for (const auto& req : p.take_requests()) {
      ++n;
      auto a = kube_test::answer(req, server_mode::aggregated);
      kube::diagnostics diag;
      REQUIRE_FALSE(p.on_response(req, {a.status, "application/json", a.body}, diag));
    }
  CHECK(n == 2);
  CHECK(p.used_aggregated());
}

TEST_CASE("an answer to a request never made is a protocol error", "[discovery][planner]") {
  discovery_planner p;
  (void)p.take_requests();
  kube::diagnostics diag;
  const auto ec = p.on_response({"/apis/evil/v1", "application/json"}, {200, "application/json", "{}"}, diag);
  CHECK(ec == kube::client_errc::protocol_error);
  CHECK_THAT(diag.client_message(), Catch::Contains("/apis/evil/v1"));
}
