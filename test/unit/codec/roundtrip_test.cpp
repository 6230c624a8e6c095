// Every schema of the pinned OpenAPI documents: a generated sample document
// (every property filled in, plus a member no schema has) decodes into its
// C++ type and re-encodes to the same JSON.

#include "roundtrip_support.hpp"

#include <kube/k8s/apps/v1/deployment.hpp>
#include <kube/k8s/core/v1/pod.hpp>

#include <catch2/catch.hpp>

#include <fstream>
#include <set>
#include <sstream>

namespace {
boost::json::object load_samples(const char* path = KUBE_ROUNDTRIP_SAMPLES) {
  std::ifstream in(path);
  REQUIRE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  return boost::json::parse(ss.str()).as_object();
}
}  // namespace

TEST_CASE("every generated type round-trips a sample with every field set", "[codegen]") {
  const auto samples = load_samples();
  std::set<std::string_view> done;
  std::vector<std::string> failures;
  for (const auto& e : roundtrip_registry()) {
    if (!done.insert(e.schema).second) continue;
    const auto* sample = samples.if_contains(e.schema);
    if (!sample) {
      failures.push_back(std::string(e.schema) + ": no sample");
      continue;
    }
    if (auto err = roundtrip(e, *sample); !err.empty()) failures.push_back(err);
  }
  for (const auto& f : failures) UNSCOPED_INFO(f);
  CHECK(failures.empty());
  CHECK(done.size() == samples.size());
  CHECK(done.size() > 500);
}

TEST_CASE("every built-in type with a protobuf codec reads back what it wrote", "[codegen]") {
  const auto samples = load_samples();
  const auto expected = load_samples(KUBE_ROUNDTRIP_PROTO_SAMPLES);
  std::set<std::string_view> done;
  std::vector<std::string> failures;
  std::vector<std::string_view> json_only;
  for (const auto& e : roundtrip_registry()) {
    if (!done.insert(e.schema).second) continue;
    if (!e.proto_read) {
      json_only.push_back(e.schema);
      continue;
    }
    const auto* sample = samples.if_contains(e.schema);
    const auto* want = expected.if_contains(e.schema);
    if (!sample || !want) {
      failures.push_back(std::string(e.schema) + ": no sample");
      continue;
    }
    if (auto err = proto_roundtrip(e, *sample, *want); !err.empty()) failures.push_back(err);
  }
  for (const auto& f : failures) UNSCOPED_INFO(f);
  CHECK(failures.empty());
  CHECK(done.size() - json_only.size() > 500);
  // JSON only: apiextensions' JSONSchemaProps (its protobuf message nests
  // what its OpenAPI schema leaves as any JSON) and what holds it, and
  // version.Info (no message).
  for (auto schema : json_only) {
    INFO(schema);
    CHECK((schema.starts_with("io.k8s.apiextensions-apiserver.") || schema == "io.k8s.apimachinery.pkg.version.Info"));
  }
}

TEST_CASE("unknown members survive decode and encode, at every level", "[codegen]") {
  const auto pod = kube::from_json<k8s::core::v1::Pod>(R"({
    "apiVersion": "v1", "kind": "Pod", "futureTopLevel": {"a": 1},
    "metadata": {"name": "p", "namespace": "ns", "futureMeta": "m"},
    "spec": {"containers": [{"name": "c", "image": "busybox", "futureContainerField": [1, 2]}]}})");
  REQUIRE(pod.name() == "p");
  REQUIRE(pod.namespace_() == "ns");
  CHECK(pod.labels().empty());  // metadata.labels absent: an empty map
  REQUIRE(pod.spec->containers.at(0).image == "busybox");
  REQUIRE(pod.unknown_fields.find("futureTopLevel") != nullptr);
  REQUIRE(pod.metadata.unknown_fields.find("futureMeta") != nullptr);
  const auto text = kube::to_json(pod);
  CHECK(text.find(R"("futureTopLevel":{"a":1})") != std::string::npos);
  CHECK(text.find(R"("futureMeta":"m")") != std::string::npos);
  CHECK(text.find(R"("futureContainerField":[1,2])") != std::string::npos);
}

TEST_CASE("a field of the wrong JSON type is an error naming its path", "[codegen]") {
  try {
    (void)kube::from_json<k8s::core::v1::Pod>(
        R"({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}, {"name": "d", "ports": [{"containerPort": "eighty"}]}]}})");
    FAIL("no error");
  } catch (const kube::decode_error& e) {
    CHECK(e.path() == ".spec.containers[1].ports[0].containerPort");
    CHECK(std::string(e.what()) ==
          ".spec.containers[1].ports[0].containerPort: expected a 32-bit integer, got a string");
  }
  try {
    (void)kube::from_json<k8s::apps::v1::Deployment>(R"({"metadata": {"labels": {"app": 7}}})");
    FAIL("no error");
  } catch (const kube::decode_error& e) {
    CHECK(e.path() == ".metadata.labels.app");
  }
  try {
    (void)kube::from_json<k8s::core::v1::Pod>(
        R"({"spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": "lots"}}}]}})");
    FAIL("no error");
  } catch (const kube::decode_error& e) {
    // The path and the size, never the value (decode errors reach logs).
    CHECK(std::string(e.what()) == ".spec.containers[0].resources.limits.cpu: not a valid quantity (4 bytes)");
  }
  try {
    (void)kube::from_json<k8s::core::v1::Pod>(R"({"metadata": {"creationTimestamp": "yesterday"}})");
    FAIL("no error");
  } catch (const kube::decode_error& e) {
    CHECK(std::string(e.what()) == ".metadata.creationTimestamp: not an RFC 3339 time (9 bytes)");
  }
  CHECK_THROWS_AS(kube::from_json<k8s::core::v1::Pod>("{not json"), kube::decode_error);
  CHECK_THROWS_AS(kube::from_json<k8s::core::v1::Pod>("[]"), kube::decode_error);
  CHECK_THROWS_WITH(kube::from_json<k8s::core::v1::Pod>(
                        R"({"spec": {"containers": [{"name": "c", "ports": [{"containerPort": 4294967296}]}]}})"),
                    Catch::Contains("out of range"));
}

TEST_CASE("resource traits come from the API server's paths", "[codegen]") {
  using pod = kube::resource_traits<k8s::core::v1::Pod>;
  STATIC_REQUIRE(pod::plural == "pods");
  STATIC_REQUIRE(pod::namespaced);
  STATIC_REQUIRE(pod::api_version == "v1");
  using dep = kube::resource_traits<k8s::apps::v1::Deployment>;
  STATIC_REQUIRE(dep::group == "apps");
  STATIC_REQUIRE(dep::api_version == "apps/v1");
  STATIC_REQUIRE(std::is_same_v<dep::list_type, k8s::apps::v1::DeploymentList>);
  STATIC_REQUIRE(kube::resource<k8s::core::v1::Pod>);
  STATIC_REQUIRE(!kube::resource<k8s::core::v1::PodSpec>);
}
