// A client older than the server: ConfigMap generated without its immutable
// field (CMakeLists.txt, trimmed_spec.py). The server sends immutable: true
// in every answer; get -> change a label -> replace must send it back, over
// protobuf (the default) and over JSON (json_only). Were it dropped, the
// server would refuse the replace (an immutable ConfigMap cannot become
// mutable), and kubectl, the independent client, would not see it.
#include "support/client_support.hpp"

#include <kube/k8s/core/v1/config_map.hpp>
#include <kube/typed/api.hpp>

#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>

using namespace kube_test;
using k8s::core::v1::ConfigMap;

template <class T>
concept has_immutable = requires(T c) {
  c.immutable;
};

TEST_CASE("a field this client does not know survives get, change, replace over protobuf and over JSON",
          "[typed][protobuf][unknown]") {
  const auto ns = unique_name("unknown-fields");
  create_namespace(ns);
  for (const std::string name : {"over-protobuf", "over-json"}) {
    REQUIRE(sh("printf '%s' '{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"" + name +
               "\"},\"data\":{\"k\":\"v\"},\"immutable\":true}' | " + kubectl() + "-n " + ns + " create -f -") == 0);
  }
  STATIC_REQUIRE(kube::has_protobuf<ConfigMap>);
  STATIC_REQUIRE_FALSE(has_immutable<ConfigMap>);

  with_admin_client([ns](kube::client c) -> asio::awaitable<void> {
    auto json_settings = admin_cert_settings();
    json_settings.json_only = true;
    auto jc = kube::detail::client_access::make(co_await asio::this_coro::executor, std::move(json_settings));
    kube::api<ConfigMap> over_protobuf(c, ns);
    kube::api<ConfigMap> over_json(jc, ns);

    auto cm = co_await over_protobuf.async_get("over-protobuf");
    CHECK_FALSE(cm.unknown_fields.protobuf().empty());  // field 4, immutable
    cm.metadata.labels.emplace()["changed"] = "protobuf";
    auto replaced = co_await over_protobuf.async_replace(cm);
    CHECK(replaced.metadata.labels->at("changed") == "protobuf");
    CHECK(replaced.unknown_fields.protobuf() == cm.unknown_fields.protobuf());

    auto j = co_await over_json.async_get("over-json");
    REQUIRE(j.unknown_fields.find("immutable") != nullptr);
    j.metadata.labels.emplace()["changed"] = "json";
    auto jr = co_await over_json.async_replace(j);
    CHECK(jr.metadata.labels->at("changed") == "json");

    // Read from JSON, written by a protobuf client: sent as JSON, so the
    // unknown member is not lost either.
    auto k = co_await over_json.async_get("over-json");
    (*k.metadata.labels)["changed"] = "json-then-protobuf";
    auto kr = co_await over_protobuf.async_replace(k);
    CHECK(kr.metadata.labels->at("changed") == "json-then-protobuf");
  });

  for (const std::string name : {"over-protobuf", "over-json"}) {
    const auto v = boost::json::parse(sh_out(kubectl() + "-n " + ns + " get configmap " + name + " -o json"));
    CHECK(v.at("immutable") == true);
    CHECK(v.at("data").at("k") == "v");
  }
  const auto p = boost::json::parse(sh_out(kubectl() + "-n " + ns + " get configmap over-protobuf -o json"));
  CHECK(p.at("metadata").at("labels").at("changed") == "protobuf");
}
