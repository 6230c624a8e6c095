#include <kube/discovery/group_version.hpp>
#include <kube/discovery/group_version_kind.hpp>
#include <kube/discovery/group_version_resource.hpp>

#include <catch2/catch.hpp>

using kube::group_version;

TEST_CASE("apiVersion v1 is the core group", "[gv]") {
  const auto gv = group_version::parse("v1");
  REQUIRE(gv);
  CHECK(gv->group.empty());
  CHECK(gv->version == "v1");
  CHECK(gv->str() == "v1");
}

TEST_CASE("apiVersion group/version splits at the slash and formats back", "[gv]") {
  const auto gv = group_version::parse("apps/v1");
  REQUIRE(gv);
  CHECK(*gv == group_version{"apps", "v1"});
  CHECK(gv->str() == "apps/v1");
  CHECK(group_version::parse("samplecontroller.k8s.io/v1alpha1")->group == "samplecontroller.k8s.io");
}

TEST_CASE("malformed apiVersion strings are rejected", "[gv]") {
  CHECK_FALSE(group_version::parse(""));
  CHECK_FALSE(group_version::parse("apps/"));
  CHECK_FALSE(group_version::parse("a/b/c"));
  CHECK_FALSE(group_version::parse("apps /v1"));
  CHECK_FALSE(group_version::parse("/"));
}

TEST_CASE("GVK and GVR format as client-go does", "[gv]") {
  const auto gvk = kube::group_version_kind::from_api_version("apps/v1", "Deployment");
  REQUIRE(gvk);
  CHECK(gvk->str() == "apps/v1, Kind=Deployment");
  CHECK(gvk->api_version() == "apps/v1");
  CHECK(kube::group_version_kind{"", "v1", "Pod"}.api_version() == "v1");
  CHECK(kube::group_version_resource{"", "v1", "pods"}.str() == "/v1, Resource=pods");
  CHECK_FALSE(kube::group_version_kind::from_api_version("a/b/c", "X"));
}
