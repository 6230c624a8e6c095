#pragma once

// Shared helpers of the fault and chaos tests: the apiserver read directly
// (the independent view), a ConfigMap informer's cache compared with it, and
// churn made directly.

#include "support/client_support.hpp"

#include <kube/dynamic/dynamic_api.hpp>
#include <kube/informer/lister.hpp>

#include <boost/json.hpp>

#include <chrono>
#include <map>
#include <string>
#include <thread>

namespace kube_test {
using steady = std::chrono::steady_clock;
using namespace std::chrono_literals;

inline long long ms(steady::duration d) { return std::chrono::duration_cast<std::chrono::milliseconds>(d).count(); }

// The admin identity, through Toxiproxy: same CA, verification on (the
// serving certificate's SANs include 127.0.0.1, whatever the port).
inline transport_params proxied_settings() {
  auto s = admin_cert_settings();
  s.server = cluster_env().at("KUBE_TEST_PROXY_SERVER");
  return s;
}

// A request straight to the apiserver, the independent view.
inline kube::response direct(kube::request r) {
  auto answer = run(admin_cert_settings(), std::move(r));
  INFO(answer.first.message() << ": " << answer.second.diag.client_message());
  REQUIRE_FALSE(answer.first);
  return std::move(answer.second);
}

// name -> resourceVersion of the namespace's ConfigMaps, read directly.
inline std::map<std::string, std::string> server_state(const std::string& ns) {
  const auto res = direct(kube::request{}.raw_path("/api/v1/namespaces/" + ns + "/configmaps"));
  REQUIRE(res.status == 200);
  std::map<std::string, std::string> out;
  const auto list = boost::json::parse(res.body);
  for (const auto& item : list.at("items").as_array()) {
    const auto& md = item.at("metadata").as_object();
    const std::string name(md.at("name").as_string());
    if (name != "kube-root-ca.crt") out[name] = std::string(md.at("resourceVersion").as_string());
  }
  return out;
}

// Of a dynamic (kube::unstructured) or a typed (generated ConfigMap) cache.
template <class Obj>
std::map<std::string, std::string> cache_state(const kube::informer::lister<Obj>& l, const std::string& ns) {
  std::map<std::string, std::string> out;
  for (const auto& o : l.in_namespace(ns).list()) {
    if (o->name() != "kube-root-ca.crt") out[std::string(o->name())] = std::string(o->resource_version());
  }
  return out;
}

// Polls until the cache equals the apiserver's view, at most `limit`.
template <class Obj>
bool converges(const kube::informer::lister<Obj>& l, const std::string& ns, steady::duration limit) {
  const auto until = steady::now() + limit;
  for (;;) {
    const auto server = server_state(ns);
    const auto cache = cache_state(l, ns);
    if (cache == server) return true;
    if (steady::now() >= until) {
      UNSCOPED_INFO("cache " << cache.size() << " objects, server " << server.size());
      return false;
    }
    std::this_thread::sleep_for(200ms);
  }
}

inline kube::unstructured configmap(const std::string& ns, const std::string& name, const std::string& v) {
  kube::unstructured u;
  u.set_api_version("v1").set_kind("ConfigMap").set_namespace(ns).set_name(name);
  u.object()["data"] = boost::json::object{{"v", v}};
  return u;
}

// n creates, n/2 updates, n/4 deletes, straight to the apiserver.
inline void churn(const std::string& ns, const std::string& prefix, int n, std::size_t value_size = 8) {
  with_admin_client([&](kube::client c) -> asio::awaitable<void> {
    kube::dynamic_api cms(c, {"", "v1", "configmaps"}, ns);
    for (int i = 0; i < n; ++i)
      co_await cms.async_create(configmap(ns, prefix + std::to_string(i), std::string(value_size, 'x')));
    for (int i = 0; i < n / 2; ++i)
      co_await cms.async_patch(prefix + std::to_string(i), kube::patch_type::merge, R"({"data":{"v":"updated"}})");
    for (int i = n - n / 4; i < n; ++i) co_await cms.async_delete(prefix + std::to_string(i));
  });
}

}  // namespace kube_test
