// Keys and owner references: parse_key, group_of, controller_owner_key for
// generated types and for kube::unstructured.
#include <kube/k8s/apps/v1/deployment.hpp>
#include <kube/k8s/rbac/v1/cluster_role.hpp>
#include <kube/controller/owner.hpp>
#include <kube/controller/reconcile.hpp>

#include <boost/json/parse.hpp>

#include <catch2/catch.hpp>

namespace kc = kube::controller;
using Deployment = k8s::apps::v1::Deployment;

TEST_CASE("keys: namespace/name and name - malformed keys are refused", "[controller][keys]") {
  auto k = kc::parse_key("demo/web");
  REQUIRE(k);
  CHECK(k->namespace_ == "demo");
  CHECK(k->name == "web");
  CHECK(k->str() == "demo/web");
  auto c = kc::parse_key("cluster-thing");
  REQUIRE(c);
  CHECK(c->namespace_.empty());
  CHECK(c->str() == "cluster-thing");
  for (const char* bad : {"", "/", "ns/", "/name", "a/b/c", "a//b"}) {
    INFO(bad);
    CHECK_FALSE(kc::parse_key(bad));
  }
  CHECK(std::string(kc::to_string(kc::reconcile_result::action::requeue_after)) == "requeue_after");
}

TEST_CASE("owner references: group of apiVersion, controller flag, kind and group must match", "[controller][owner]") {
  CHECK(kc::group_of("apps/v1") == "apps");
  CHECK(kc::group_of("v1").empty());
  CHECK(kc::group_of("samplecontroller.k8s.io/v1alpha1") == "samplecontroller.k8s.io");

  const kc::owner_type foo{"samplecontroller.k8s.io", "Foo", true};
  CHECK(kc::is_controller_ref_to("samplecontroller.k8s.io/v1alpha1", "Foo", true, foo));
  CHECK(kc::is_controller_ref_to("samplecontroller.k8s.io/v1", "Foo", true, foo));  // another version: same owner
  CHECK_FALSE(kc::is_controller_ref_to("samplecontroller.k8s.io/v1alpha1", "Foo", false, foo));
  CHECK_FALSE(kc::is_controller_ref_to("other.io/v1alpha1", "Foo", true, foo));
  CHECK_FALSE(kc::is_controller_ref_to("samplecontroller.k8s.io/v1alpha1", "Bar", true, foo));

  const auto dep = kc::owner_type_of<Deployment>();
  CHECK(dep.group == "apps");
  CHECK(dep.kind == "Deployment");
  CHECK(dep.namespaced);
  const auto cr = kc::owner_type_of<k8s::rbac::v1::ClusterRole>();
  CHECK_FALSE(cr.namespaced);
}

TEST_CASE("owner references: the controller owner's key of a typed object", "[controller][owner]") {
  const kc::owner_type foo{"samplecontroller.k8s.io", "Foo", true};
  Deployment d;
  d.metadata.namespace_ = "demo";
  d.metadata.name = "web";
  CHECK_FALSE(kc::controller_owner_key(d, foo));  // no references

  k8s::meta::v1::OwnerReference plain;
  plain.api_version = "samplecontroller.k8s.io/v1alpha1";
  plain.kind = "Foo";
  plain.name = "not-controller";
  auto ctl = plain;
  ctl.name = "my-foo";
  ctl.controller = true;
  d.metadata.owner_references = std::vector{plain, ctl};
  auto key = kc::controller_owner_key(d, foo);
  REQUIRE(key);
  CHECK(*key == "demo/my-foo");  // the controller reference, not the first one

  // The controller reference names another kind: not ours, even if another
  // (non-controller) reference is.
  d.metadata.owner_references = std::vector{plain};
  d.metadata.owner_references->back().controller = false;
  CHECK_FALSE(kc::controller_owner_key(d, foo));
  auto rs = ctl;
  rs.api_version = "apps/v1";
  rs.kind = "ReplicaSet";
  d.metadata.owner_references = std::vector{plain, rs};
  CHECK_FALSE(kc::controller_owner_key(d, foo));

  // Cluster-scoped owner: its name alone. Namespaced owner of a
  // cluster-scoped dependent: nothing.
  const kc::owner_type node{"", "Node", false};
  auto n = ctl;
  n.api_version = "v1";
  n.kind = "Node";
  n.name = "node-1";
  d.metadata.owner_references = std::vector{n};
  CHECK(kc::controller_owner_key(d, node) == std::optional<std::string>("node-1"));
  d.metadata.namespace_.reset();
  d.metadata.owner_references = std::vector{ctl};
  CHECK_FALSE(kc::controller_owner_key(d, foo));
}

TEST_CASE("owner references: unstructured objects, and malformed references", "[controller][owner]") {
  const kc::owner_type foo{"samplecontroller.k8s.io", "Foo", true};
  auto parse = [](const char* json) { return kube::unstructured(boost::json::parse(json).as_object()); };
  auto u = parse(R"({"metadata":{"namespace":"demo","name":"web","ownerReferences":[
      {"apiVersion":"samplecontroller.k8s.io/v1alpha1","kind":"Foo","name":"a","uid":"1"},
      {"apiVersion":"samplecontroller.k8s.io/v1alpha1","kind":"Foo","name":"b","uid":"2","controller":true}]}})");
  CHECK(kc::controller_owner_key(u, foo) == std::optional<std::string>("demo/b"));
  // Garbage in ownerReferences is ignored, never a crash.
  for (const char* bad : {R"({"metadata":{"ownerReferences":"x"}})", R"({"metadata":{"ownerReferences":[1,null,"s"]}})",
                          R"({"metadata":7})", R"({})",
                          R"({"metadata":{"namespace":"d","ownerReferences":[{"controller":"yes","kind":"Foo"}]}})",
                          R"({"metadata":{"namespace":"d","ownerReferences":[{"controller":true,"kind":"Foo",
                              "apiVersion":"samplecontroller.k8s.io/v1alpha1"}]}})"}) {
    INFO(bad);
    CHECK_FALSE(kc::controller_owner_key(parse(bad), foo));
  }
}
