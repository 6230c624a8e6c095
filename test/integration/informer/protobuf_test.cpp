// A typed informer on Pods against the real cluster: on protobuf by default
// (the trace log shows the list and the watch answered as protobuf), and
// beside it one from a json_only client. Both converge to kubectl's view
// (name -> resourceVersion, labels) through creates, label changes and
// deletes made with kubectl, and their caches hold the same objects.
#include "support/client_support.hpp"

#include <kube/k8s/core/v1/pod.hpp>
#include <kube/informer/informer_factory.hpp>
#include <kube/informer/shared_informer.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>

#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <future>
#include <map>
#include <string>
#include <thread>

using namespace kube_test;
namespace ki = kube::informer;
using namespace std::chrono_literals;
using k8s::core::v1::Pod;

namespace {

// name -> "resourceVersion labels" as kubectl (an independent client) sees it.
std::map<std::string, std::string> server_state(const std::string& ns) {
  const auto text = sh_out(kubectl() + "-n " + ns + " get pods -o json");
  const auto v = boost::json::parse(text);
  std::map<std::string, std::string> out;
  for (const auto& item : v.at("items").as_array()) {
    const auto& md = item.at("metadata").as_object();
    std::string labels;
    if (const auto* l = md.if_contains("labels")) labels = boost::json::serialize(*l);
    out[std::string(md.at("name").as_string())] = std::string(md.at("resourceVersion").as_string()) + " " + labels;
  }
  return out;
}

std::map<std::string, std::string> cache_state(const ki::shared_index_informer<Pod>& inf) {
  std::map<std::string, std::string> out;
  for (const auto& p : inf.make_lister().list()) {
    std::string labels;
    if (p->metadata.labels && !p->metadata.labels->empty()) {
      boost::json::object o;
      for (const auto& [k, v] : *p->metadata.labels) o[k] = v;
      labels = boost::json::serialize(o);
    }
    out[std::string(p->name())] = std::string(p->resource_version()) + " " + labels;
  }
  return out;
}

std::string pods_manifest(const std::string& ns, int from, int to) {
  std::string m;
  for (int i = from; i < to; ++i) {
    m += "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: p" + std::to_string(i) + "\n  namespace: " + ns +
         "\n  labels: {app: pb, n: \"" + std::to_string(i) +
         "\"}\nspec:\n  containers: [{name: app, image: busybox, resources: {limits: {cpu: 100m}}}]\n"
         "  volumes: [{name: scratch, emptyDir: {}}]\n";
  }
  return m;
}

void kubectl_apply(const std::string& manifest) {
  const auto file = "/tmp/kube-pb-informer-" + std::to_string(::getpid()) + ".yaml";
  {
    std::ofstream out(file);
    out << manifest;
  }
  REQUIRE(sh(kubectl() + "apply --validate=false -f " + file) == 0);
  std::remove(file.c_str());
}

}  // namespace

TEST_CASE("a typed Pod informer runs on protobuf by default and converges as a json_only one does",
          "[informer][protobuf]") {
  // Synced by a streaming list (the default) and by a list.
  const bool streaming = GENERATE(true, false);
  INFO((streaming ? "streaming list" : "list"));
  const auto ns = unique_name("inf-pb");
  create_namespace(ns);
  kubectl_apply(pods_manifest(ns, 0, 20));

  asio::io_context io;
  const auto mark = log_mark();
  auto c = kube::detail::client_access::make(io.get_executor(), admin_cert_settings());
  auto json_settings = admin_cert_settings();
  json_settings.json_only = true;
  auto jc = kube::detail::client_access::make(io.get_executor(), std::move(json_settings));
  ki::informer_factory_params fp;
  fp.namespace_name = ns;
  fp.streaming_list = streaming;
  ki::informer_factory pb_factory(c, fp), json_factory(jc, fp);
  auto pb = pb_factory.for_type<Pod>();
  auto js = json_factory.for_type<Pod>();
  asio::cancellation_signal stop_pb, stop_js;
  bool pb_done = false, js_done = false;
  pb_factory.async_run(asio::bind_cancellation_slot(stop_pb.slot(), [&](kube::error_code) { pb_done = true; }));
  json_factory.async_run(asio::bind_cancellation_slot(stop_js.slot(), [&](kube::error_code) { js_done = true; }));

  // The test's own steps run on a thread of their own; the io_context runs here.
  std::exception_ptr failure;
  std::thread steps([&] {
    try {
      const auto converged = [&] {
        for (int i = 0; i < 100; ++i) {
          const auto server = server_state(ns);
          std::promise<std::pair<std::map<std::string, std::string>, std::map<std::string, std::string>>> caches;
          auto seen = caches.get_future();
          asio::post(io, [&] { caches.set_value({cache_state(*pb), cache_state(*js)}); });
          const auto [a, b] = seen.get();
          if (a == server && b == server) return true;
          std::this_thread::sleep_for(200ms);
        }
        return false;
      };
      CHECK(converged());
      kubectl_apply(pods_manifest(ns, 15, 35));  // 15 more
      REQUIRE(sh(kubectl() + "-n " + ns + " label pod p1 p2 p3 tier=web") == 0);
      REQUIRE(sh(kubectl() + "-n " + ns + " delete pod p4 p5 p6 --wait=false") == 0);
      CHECK(converged());
    } catch (...) {
      failure = std::current_exception();
    }
    asio::post(io, [&] {
      stop_pb.emit(asio::cancellation_type::terminal);
      stop_js.emit(asio::cancellation_type::terminal);
    });
  });
  io.run();
  steps.join();
  if (failure) std::rethrow_exception(failure);
  CHECK(pb_done);
  CHECK(js_done);
  // The same objects in both caches.
  for (const auto& p : pb->make_lister().list()) {
    const auto other = js->make_lister().get(ns, std::string(p->name()));
    REQUIRE(other);
    CHECK(kube::to_json(*p) == kube::to_json(*other));
  }
  const auto log = logged_since(mark);
  const std::string pods = "v1 pods " + ns;
  // A list answer is logged with its size, a watch's as streaming; a
  // streaming list syncs without a list.
  const auto listed = [&](const std::string& type) {
    const std::string head = "GET " + pods + ": HTTP 200, " + type + ", ";
    for (auto at = log.find(head); at != std::string::npos; at = log.find(head, at + 1)) {
      const auto after = at + head.size();
      if (after < log.size() && std::isdigit(static_cast<unsigned char>(log[after]))) return true;  // "N bytes"
    }
    return false;
  };
  CHECK(listed("application/vnd.kubernetes.protobuf") == !streaming);
  CHECK(listed("application/json") == !streaming);
  CHECK(log.find("GET " + pods + ": HTTP 200, application/vnd.kubernetes.protobuf;stream=watch, streaming") !=
        std::string::npos);
  CHECK(log.find("GET " + pods + ": HTTP 200, application/json, streaming") != std::string::npos);
}
