#pragma once

// kube::prometheus::metrics: a kube::metrics::provider that records what the
// SDK reports in a prometheus-cpp Registry, under the names Kubernetes'
// own components use, so that dashboards and alerts written for client-go
// and controller-runtime programs work unchanged. metrics_server.hpp serves
// the registry at GET /metrics.
//
//   auto m = std::make_shared<kube::prometheus::metrics>();
//   params.metrics = m;                    // client_params: client, informers, controllers
//   kube::prometheus::metrics_server srv(ex, m, {.port = 8080});
//   co_await srv.async_run();
//
// What is recorded. Labels are listed in the order the text format writes
// them (prometheus-cpp sorts label names). "upstream" is where the name and
// labels come from; the last column says where kube differs from it.
//
// Client (one hooks object per client; label values come with each call):
//
//   rest_client_requests_total                counter    code, host, method, resource
//       every attempt (client-go counts tries, not requests). code: the HTTP
//       status, "<error>" when no answer came. upstream client-go
//       (component-base); DIFFERS: `resource` ("pods", "deployments.apps",
//       "" for other paths) is kube's addition. client-go dropped its url
//       label because it made one series per object; a resource name is one
//       of the few resources a program uses, so it stays small.
//   rest_client_request_duration_seconds      histogram  host, verb
//       a whole request, all attempts, waits and retries included.
//       buckets 0.005 0.025 0.1 0.25 0.5 1 2 4 8 15 30 60 (client-go's).
//   rest_client_request_size_bytes            histogram  host, verb
//       the body sent, per attempt. buckets 64 256 512 1Ki 4Ki 16Ki 64Ki
//       256Ki 1Mi 4Mi 16Mi (client-go's).
//   rest_client_response_size_bytes           histogram  host, verb
//       the body received (after gzip decoding), per answered attempt; a
//       stream (watch, logs) records 0. Same buckets.
//   rest_client_rate_limiter_duration_seconds histogram  host, verb
//       time waiting for the client's qps/burst limiter, also when zero.
//       Duration buckets.
//   rest_client_request_retries_total         counter    code, host, verb
//       an attempt that is tried again; code as for requests_total.
//   rest_client_exec_plugin_call_total        counter    call_status, code
//       call_status: no_error, plugin_execution_error,
//       plugin_not_found_error, client_internal_error. code: the exit code
//       ("-1" for a plugin killed by a signal, as Go's ExitCode()); a plugin
//       that could not be run (not found, internal error) is "1", client-go's
//       failureExitCode.
//
// Informers (one hooks object per informer; reflector_* labelled {name},
// informer_* labelled {group, name, resource, version}; group "" is core):
//
//   reflector_lists_total                     counter    name
//   reflector_list_duration_seconds           histogram  name   buckets 0.01 0.05 0.1 0.25 0.5 1 2.5 5 10 30 60
//   reflector_items_per_list                  histogram  name   buckets 1 10 100 1000 10000 100000 1000000
//   reflector_relists_total                   counter    name   kube's own: lists after the first
//   reflector_watches_total                   counter    name   every watch opened (reconnects too)
//   reflector_watch_duration_seconds          histogram  name   buckets 1 10 30 60 120 300 600 900 1800 3600
//   reflector_items_per_watch                 histogram  name   buckets as items_per_list
//   reflector_watch_stalls_total              counter    name   kube's own: watches presumed dead (no byte
//                                                               for watch_idle_timeout)
//   reflector_last_resource_version           gauge      name   the last resourceVersion synced to, as a
//                                                               number (a non-numeric one leaves it as it was)
//       upstream: the names of client-go's reflector metrics interface
//       (tools/cache/reflector_metrics.go). client-go never registers them,
//       so there are no upstream buckets; kube's are chosen for what a
//       reflector does (a list takes milliseconds to a minute, a watch lasts
//       minutes: the apiserver ends it after 5 to 10).
//   informer_queued_items                     gauge      group, name, resource, version   deltas in the FIFO
//   informer_processing_latency_seconds       histogram  group, name, resource, version   one popped item
//       buckets 0.001 0.005 0.01 0.025 0.05 0.1 0.25 0.5 1 2.5 5 10
//   informer_store_resource_version           gauge      group, name, resource, version
//       the 15 least significant decimal digits of the resourceVersion,
//       which a double holds exactly (as client-go 1.36 does).
//   informer_handler_duration_seconds         histogram  group, name, resource, version   kube's own: one handler
//       call; processing-latency buckets
//   informer_handler_errors_total             counter    group, name, resource, version   kube's own: handler
//       calls that threw
//       upstream (informer_*): component-base v0.36, metrics/prometheus/clientgo
//       (the FIFO metrics).
//
// Controllers (one hooks object per controller; label {controller}):
//
//   controller_runtime_reconcile_total        counter    controller, result
//       result: success, error, requeue, requeue_after; all four exist (at
//       0) from the start, as in controller-runtime.
//   controller_runtime_reconcile_errors_total counter    controller
//   controller_runtime_reconcile_time_seconds histogram  controller   controller-runtime's buckets (0.005 to 60)
//   controller_runtime_max_concurrent_reconciles gauge   controller   the worker count
//   controller_runtime_active_workers         gauge      controller   reconciles running now
//   controller_runtime_read_your_writes_wait_seconds histogram controller  kube's own: how long a reconcile
//                                                               waited for its caches to observe the key's
//                                                               last writes; reconcile-time buckets
//   controller_runtime_read_your_writes_timeouts_total counter controller kube's own: waits that ended
//                                                               before the caches caught up
//       upstream: controller-runtime (pkg/internal/controller/metrics).
//       Not recorded: controller_runtime_reconcile_panics_total and
//       controller_runtime_terminal_reconcile_errors_total (the hooks have
//       no such events).
//
// Workqueues (one hooks object per queue; label {name}):
//
//   workqueue_depth                           gauge      name
//   workqueue_adds_total                      counter    name
//   workqueue_queue_duration_seconds          histogram  name   buckets 1e-08 1e-07 ... 1 10 (client-go's)
//   workqueue_work_duration_seconds           histogram  name   same buckets
//   workqueue_unfinished_work_seconds         gauge      name
//   workqueue_longest_running_processor_seconds gauge    name
//   workqueue_retries_total                   counter    name
//       upstream: client-go's workqueue metrics as component-base registers
//       them. controller-runtime also labels its queues' series with
//       {controller}; kube's carry {name} only.
//
// Objects with the same labels share their series: two informers with the
// same name and resource, or a queue asked for twice by name, update one
// series (what a Prometheus client library does with equal labels).
//
// Thread safety: every hook may be called from any thread, concurrently;
// render() too. Hooks never throw (a failure to record, such as running
// out of memory, is dropped). Hooks objects keep the registry alive.

#include <kube/base/metrics.hpp>

#include <prometheus/registry.h>

#include <memory>
#include <string>
#include <string_view>

namespace kube::prometheus {

namespace detail {
struct families;
}  // namespace detail

/// The provider to pass in client_params::metrics (and to the workqueues a
/// program builds itself). Registers its metric families in `registry` when
/// constructed; several `metrics` over one registry share them. Throws
/// std::invalid_argument for a null registry, and what prometheus-cpp
/// throws when the registry already has one of these names with another type.
class metrics : public kube::metrics::provider {
public:
  explicit metrics(std::shared_ptr<::prometheus::Registry> registry = std::make_shared<::prometheus::Registry>());
  ~metrics() override;

  /// Where the families live: register the program's own metrics here to
  /// serve them on the same endpoint.
  [[nodiscard]] const std::shared_ptr<::prometheus::Registry>& registry() const noexcept { return registry_; }

  /// Everything in the registry, in the Prometheus text format 0.0.4.
  [[nodiscard]] std::string render() const;

  std::shared_ptr<kube::metrics::client_metrics> client() override;
  std::shared_ptr<kube::metrics::informer_metrics> informer(const kube::metrics::informer_id& id) override;
  std::shared_ptr<kube::metrics::controller_metrics> controller(std::string_view name) override;
  std::shared_ptr<kube::metrics::workqueue_metrics> workqueue(std::string_view name) override;

private:
  std::shared_ptr<::prometheus::Registry> registry_;
  std::shared_ptr<const detail::families> families_;
};

}  // namespace kube::prometheus
