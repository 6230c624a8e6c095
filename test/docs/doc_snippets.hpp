// What the C++ snippets of README.md and docs/ may use without declaring it
// (scripts/doc-snippets.py, docs/building.md): the headers, namespace aliases
// and types the guides assume, the types the contexts' variables have
// (VARIABLES in the script), and the helpers of the samples and tests the
// snippets are taken from, as those define them. Declarations only: the
// generated file is compiled (target doc_snippets), never linked.
#pragma once

#include <kube/async.hpp>
#include <kube/codec/codec.hpp>
#include <kube/config/client_config.hpp>
#include <kube/controller/controller.hpp>
#include <kube/detail/watch_decoder.hpp>
#include <kube/discovery/discovery_cache.hpp>
#include <kube/discovery/discovery_client.hpp>
#include <kube/discovery/discovery_planner.hpp>
#include <kube/discovery/rest_mapper.hpp>
#include <kube/dynamic/dynamic_api.hpp>
#include <kube/exception.hpp>
#include <kube/informer/delta_fifo.hpp>
#include <kube/informer/indexer.hpp>
#include <kube/informer/informer_factory.hpp>
#include <kube/prometheus/metrics.hpp>
#include <kube/prometheus/metrics_server.hpp>
#include <kube/rest/client.hpp>
#include <kube/streams/pod_streams.hpp>
#include <kube/tools/event_recorder.hpp>
#include <kube/tools/finalizer.hpp>
#include <kube/tools/leader_election.hpp>
#include <kube/tools/retry.hpp>
#include <kube/typed/api.hpp>
#include <kube/workqueue/rate_limited_queue.hpp>

#include <kube/k8s/apps/v1/deployment.hpp>
#include <kube/k8s/core/v1/config_map.hpp>
#include <kube/k8s/core/v1/pod.hpp>
#include <kube/k8s/core/v1/service.hpp>
#include <kube/k8s/discovery/v1/endpoint_slice.hpp>

#include <samplecontroller/foo.hpp>  // samples/sample-controller/crd.yaml

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/asio/write.hpp>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace doc_context {

// ---- what the guides assume ------------------------------------------------
namespace asio = boost::asio;
namespace ki = kube::informer;
namespace kc = kube::controller;
namespace wq = kube::workqueue;
using namespace std::chrono_literals;
using k8s::apps::v1::Deployment;
using k8s::core::v1::ConfigMap;
using k8s::core::v1::Pod;
using k8s::core::v1::Service;
using k8s::discovery::v1::EndpointSlice;
using Foo = samplecontroller::v1alpha1::Foo;

// ---- the samples' (samples/*/main.cpp), declared as they define them ------
/// The fields of the samples' options that the guides show: kube-get,
/// servicelookup, sample-controller (workers, metrics_address),
/// configmap-mirror (from, to), leader-election (identity, lease, ...).
struct options {
  std::string namespace_name = "default", kubeconfig, context;
  unsigned workers = 2;
  std::string metrics_address = "127.0.0.1:8080";
  std::string from, to;
  std::string identity, lease;
  long long lease_s = 15, renew_s = 10, retry_ms = 2000;
};
// kube-get
asio::awaitable<void> run(const options& o, kube::client c, std::string default_ns);
// sample-controller, configmap-mirror; leader-election
void say(const std::string& line);
void say(const std::string& identity, const std::string& line);
// sample-controller
kube::prometheus::metrics_server_params metrics_endpoint(const std::string& address);
// configmap-mirror
std::string annotation(const ConfigMap& cm, const std::string& key);
constexpr const char* source_annotation = "configmap-mirror/source";
// workqueue-basics
bool reconcile(const std::string& key, std::map<std::string, int>& attempts);
asio::awaitable<void> worker(int id, wq::rate_limited_queue<std::string>& queue, std::map<std::string, int>& attempts,
                             int& succeeded);

/// samples/sample-controller's foo_controller without the reconcile the
/// guide shows.
class foo_controller_base {
public:
  foo_controller_base(const kube::client& c, const std::string& ns, kube::event_recorder& recorder,
                      ki::lister<Deployment> deployments,
                      std::optional<std::pair<std::string, std::string>> shard_label = std::nullopt);

protected:
  static kube::object_reference ref_of(const Foo& foo);
  asio::awaitable<void> update_status(const Foo& foo, const Deployment& dep);
  asio::awaitable<void> delete_deployment(const Foo& foo);

  kube::api<Foo> foos_;
  kube::api<Deployment> deployments_api_;
  kube::event_recorder& recorder_;
  ki::lister<Deployment> deployments_;
  std::optional<std::pair<std::string, std::string>> shard_label_;
};
struct foo_controller : foo_controller_base {
  using foo_controller_base::foo_controller_base;
  asio::awaitable<kc::reconcile_result> reconcile(kc::reconcile_request<Foo> req);
};
constexpr std::string_view finalizer_name = "samplecontroller.k8s.io/cleanup";
bool owned_by(const Deployment& d, const Foo& foo);
Deployment new_deployment(const Foo& foo, const std::optional<std::pair<std::string, std::string>>& shard_label = {});

// ---- the tests' (Catch2's assertions, as test/unit/tools uses them) ------
inline void CHECK(bool) {}
inline void CHECK_FALSE(bool) {}

// ---- placeholders in the guides' sketches -----------------------------------
void reconcile(const std::string& key);  // workqueue.md
// discovery.md
struct http_reply {
  int status = 0;
  std::string content_type, body;
};
asio::awaitable<http_reply> get(std::string_view path, std::string_view accept);
void fail(kube::error_code ec, const kube::diagnostics& diag);
kube::discovery_document discover();
void use(const kube::discovery_document& doc);
// watch.md
void handle(const kube::watch_event& ev);
void report(std::string_view message);

}  // namespace doc_context
