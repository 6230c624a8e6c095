// CRD types (kube_add_crd_types on test/data/crd/widgets.yaml) against the
// real cluster, with a NEWER release of the CRD installed
// (widgets-server.yaml adds spec.color and spec.owner): a typed
// get-modify-replace keeps the fields the C++ type does not know; typed CRUD,
// status, scale and a second served version.
#include "support/client_support.hpp"

#include <kube/typed/api.hpp>
#include <kube/k8s/autoscaling/v1/scale.hpp>
#include <kube/test/widgets.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/json.hpp>

using namespace kube_test;
using Widget = codegen::v1::Widget;

namespace {
void install_crd() {
  static bool done = false;
  if (done) return;
  // ctest runs this file's cases as parallel processes: two applies can
  // both find no CRD and both create it; the loser applies again.
  const std::string apply = kubectl() + "apply -f " KUBE_TEST_DATA "/crd/widgets-server.yaml";
  if (sh(apply) != 0) sh_out(apply);
  sh_out(kubectl() + "wait --for condition=established --timeout=60s crd/widgets.codegen.kube.test");
  done = true;
}

boost::json::object kubectl_json(const std::string& args) {
  return boost::json::parse(sh_out(kubectl() + args + " -o json")).as_object();
}
}  // namespace

TEST_CASE("a typed update keeps the fields a newer CRD added", "[codegen][crd]") {
  install_crd();
  const auto ns = unique_name("crd");
  create_namespace(ns);
  sh_out("printf '%s' '{\"apiVersion\":\"codegen.kube.test/v1\",\"kind\":\"Widget\",\"metadata\":{\"name\":\"w1\"},"
         "\"spec\":{\"size\":1,\"color\":\"blue\",\"owner\":{\"team\":\"a\",\"email\":\"a@example.com\"}}}' | " +
         kubectl() + "-n " + ns + " create -f -");
  with_admin_client([ns](kube::client c) -> asio::awaitable<void> {
    kube::api<Widget> widgets(c, ns);
    auto w = co_await widgets.async_get("w1");
    REQUIRE(w.spec);
    CHECK(w.spec->size == 1);
    REQUIRE(w.spec->unknown_fields.find("color") != nullptr);  // not in the C++ type
    w.spec->size = 2;
    auto updated = co_await widgets.async_replace(w);
    CHECK(updated.spec->size == 2);
  });
  const auto obj = kubectl_json("-n " + ns + " get widget w1");
  const auto& spec = obj.at("spec").as_object();
  CHECK(spec.at("size").as_int64() == 2);
  CHECK(spec.at("color").as_string() == "blue");
  CHECK(spec.at("owner").at("team").as_string() == "a");
  CHECK(spec.at("owner").at("email").as_string() == "a@example.com");
  sh(kubectl() + "delete namespace " + ns + " --wait=false");
}

TEST_CASE("typed CRUD with status and scale of a CRD and its other served version", "[codegen][crd]") {
  install_crd();
  const auto ns = unique_name("crd");
  create_namespace(ns);
  with_admin_client([ns](kube::client c) -> asio::awaitable<void> {
    kube::api<Widget> widgets(c, ns);
    Widget w;
    w.metadata.name = "w2";
    w.metadata.labels = std::map<std::string, std::string>{{"app", "demo"}};
    auto& spec = w.spec.emplace();
    spec.size = 3;
    spec.replicas = 1;
    spec.port = kube::int_or_string("http");
    spec.ports = std::vector<codegen::v1::WidgetSpecPortsItem>(1);
    spec.ports->at(0).name = "http";
    spec.ports->at(0).number = 8080;
    spec.template_ = kube::raw_json::parse(R"({"anything":{"goes":[1,2,3]}})");
    auto created = co_await widgets.async_create(w);
    CHECK(created.metadata.uid);
    CHECK(created.spec->ports->at(0).number == 8080);
    CHECK(created.spec->template_->dump() == R"({"anything":{"goes":[1,2,3]}})");

    const kube::list_params demo{.label_selector = "app=demo"};  // named: g++ 12 and temporaries in co_await
    auto list = co_await widgets.async_list_all(demo);
    REQUIRE(list.items.size() == 1);
    CHECK(list.items[0].name() == "w2");

    auto& st = created.status.emplace();
    st.phase = "Ready";
    st.replicas = 1;
    auto& cond = st.conditions.emplace().emplace_back();
    cond.type = "Available";
    cond.status = "True";
    cond.last_transition_time = "2024-05-01T10:00:00Z";
    auto with_status = co_await widgets.async_replace_status(created);
    CHECK(with_status.status->phase == "Ready");

    auto scale = co_await widgets.async_get_scale("w2");
    CHECK(scale.spec->replicas == 1);
    scale.spec->replicas = 4;
    co_await widgets.async_replace_scale("w2", scale);
    auto after = co_await widgets.async_get("w2");
    CHECK(after.spec->replicas == 4);

    kube::api<codegen::v1beta1::Widget> beta(c, ns);
    auto b = co_await beta.async_get("w2");
    CHECK(b.spec->size == 3);
    CHECK(b.spec->unknown_fields.empty());  // the server prunes what v1beta1's schema lacks (ports, ...)

    co_await widgets.async_delete("w2");
    auto [ec, gone] = co_await widgets.async_get("w2", asio::as_tuple(asio::use_awaitable));
    CHECK(ec == kube::api_errc::not_found);
  });
  sh(kubectl() + "delete namespace " + ns + " --wait=false");
}
