// The snippets of docs/guides/types.md, compiled and run. Keep them in sync.

#include <catch2/catch.hpp>

// --- snippet: build-a-deployment ---
#include <kube/k8s/apps/v1/deployment.hpp>
#include <kube/codec/codec.hpp>

k8s::apps::v1::Deployment make_deployment(const std::string& name, std::int32_t replicas) {
  k8s::apps::v1::Deployment d;
  d.metadata.name = name;
  d.metadata.labels = kube::string_map<std::string>{{"app", name}};

  auto& spec = d.spec.emplace();
  spec.replicas = replicas;
  spec.selector.match_labels = d.metadata.labels;
  spec.strategy.emplace().rolling_update.emplace().max_unavailable = kube::int_or_string("25%");

  auto& pod = spec.template_;
  pod.metadata.emplace().labels = d.metadata.labels;
  auto& c = pod.spec.emplace().containers.emplace_back();
  c.name = "web";
  c.image = "nginx:1.27";
  c.resources.emplace().requests = kube::string_map<kube::quantity>{{"cpu", kube::quantity("250m")}};
  return d;
}
// --- end snippet ---

// --- snippet: decode ---
#include <kube/k8s/core/v1/config_map.hpp>

std::string greeting(std::string_view json) {
  try {
    auto cm = kube::from_json<k8s::core::v1::ConfigMap>(json);
    if (cm.data && cm.data->contains("greeting")) return cm.data->at("greeting");
    return "(no greeting in " + std::string(cm.name()) + ")";
  } catch (const kube::decode_error& e) {
    return "bad ConfigMap at " + e.path() + ": " + e.what();
  }
}
// --- end snippet ---

TEST_CASE("docs/guides/types.md snippets", "[codegen][docs]") {
  const auto d = make_deployment("web", 3);
  const auto text = kube::to_json(d);
  CHECK(text.find(R"("replicas":3)") != std::string::npos);
  CHECK(text.find(R"("maxUnavailable":"25%")") != std::string::npos);
  CHECK(text.find(R"("cpu":"250m")") != std::string::npos);
  const auto back = kube::from_json<k8s::apps::v1::Deployment>(text);
  CHECK(back.spec->template_.spec->containers.at(0).resources->requests->at("cpu").milli_value() == 250);

  CHECK(greeting(R"({"metadata":{"name":"c"},"data":{"greeting":"hi"}})") == "hi");
  CHECK(greeting(R"({"metadata":{"name":"c"}})") == "(no greeting in c)");
  CHECK(greeting(R"({"metadata":{"name":"c"},"data":{"greeting":1}})") ==
        "bad ConfigMap at .data.greeting: .data.greeting: expected a string, got an integer");
}
