#pragma once

// kube::metrics: what the SDK reports for metrics, as plain virtual calls.
//
// The core depends on no metrics library. A program that wants metrics
// passes a `provider` in client_params::metrics; the client, the informers
// an informer_factory builds over that client and the controllers built on
// that factory all take their hooks from it. kube::prometheus (target
// kube::prometheus, prometheus-cpp) is the provider that registers
// everything under client-go's and controller-runtime's names; implement
// the interfaces yourself to feed another library (docs/guides/metrics.md).
//
// Every hook has an empty default, so an implementation overrides only what
// it records. Hooks are called on the reporting object's own executor or
// strand, from whichever thread runs it, and concurrently across objects:
// an implementation shared by several objects must be thread-safe. A hook
// must not throw and should not block: it runs on the I/O path.

#include <kube/base/clock.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

namespace kube::metrics {

using duration = clock::duration;

// ---- the client -------------------------------------------------------------

/// One attempt of a unary request, or the opening of a streamed one (watch,
/// logs): client-go counts every try.
struct request_attempt {
  std::string_view method;         ///< "GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"
  std::string_view host;           ///< the apiserver's host[:port]
  std::string_view resource;       ///< "pods", "deployments.apps"; "" for other paths (/version)
  int code = 0;                    ///< HTTP status; 0 when no answer came (client-go's "<error>")
  std::size_t request_bytes = 0;   ///< the body sent
  std::size_t response_bytes = 0;  ///< the body received (after gzip decoding; 0 for streams)
};

/// How an exec credential plugin call ended (client-go's call_status).
enum class exec_plugin_status {
  no_error,                ///< exit 0 and a valid ExecCredential
  plugin_execution_error,  ///< ran and failed (non-zero exit, timeout, bad output)
  plugin_not_found_error,  ///< the command could not be started
  client_internal_error,   ///< anything else
};

class client_metrics {
public:
  using duration = metrics::duration;

  client_metrics() = default;
  client_metrics(const client_metrics&) = delete;
  client_metrics& operator=(const client_metrics&) = delete;
  virtual ~client_metrics() = default;

  /// Every attempt, answered or not.
  virtual void on_attempt(const request_attempt& a) { (void)a; }
  /// An attempt that is tried again (Retry-After, a dropped reused
  /// connection, a 401 with refreshed credentials).
  virtual void on_retry(const request_attempt& a) { (void)a; }
  /// A request from its start to its end, all attempts, waits and retries
  /// included (client-go's request latency).
  virtual void on_request(std::string_view method, std::string_view host, std::string_view resource, duration took) {
    (void)method, (void)host, (void)resource, (void)took;
  }
  /// Time spent waiting for the client's rate limiter (qps/burst), also
  /// when it was zero.
  virtual void on_rate_limiter_wait(std::string_view method, std::string_view host, duration waited) {
    (void)method, (void)host, (void)waited;
  }
  /// An exec credential plugin ran; `exit_code` is -1 when it did not exit.
  virtual void on_exec_plugin_call(int exit_code, exec_plugin_status status) { (void)exit_code, (void)status; }
};

// ---- informers ---------------------------------------------------------------

/// Which informer reports: its name and the resource it caches.
struct informer_id {
  std::string_view name;      ///< informer_params::name
  std::string_view group;     ///< "" for the core group
  std::string_view version;   ///< "v1"
  std::string_view resource;  ///< "pods"
};

/// One informer: its reflector, its DeltaFIFO and its handlers.
class informer_metrics {
public:
  using duration = metrics::duration;

  informer_metrics() = default;
  informer_metrics(const informer_metrics&) = delete;
  informer_metrics& operator=(const informer_metrics&) = delete;
  virtual ~informer_metrics() = default;

  /// A full list (all pages) or a streaming list reached its end with
  /// `items` objects. `relist`: not the informer's first.
  virtual void on_list(std::size_t items, duration took, bool relist) { (void)items, (void)took, (void)relist; }
  /// A watch was opened (the first one and every reconnect).
  virtual void on_watch() {}
  /// A watch ended after `took` with `events` events.
  virtual void on_watch_end(std::size_t events, duration took) { (void)events, (void)took; }
  /// A watch received no byte for watch_idle_timeout and was presumed dead.
  virtual void on_watch_stall() {}
  /// The last resourceVersion the reflector synced to.
  virtual void on_resource_version(std::string_view rv) { (void)rv; }
  /// Deltas waiting in the FIFO after a change (items, not keys' deltas).
  virtual void on_queued(std::size_t items) { (void)items; }
  /// One item was popped and processed: cache updated, handlers notified.
  virtual void on_processed(duration took) { (void)took; }
  /// One handler call; `failed` when it threw.
  virtual void on_handler(duration took, bool failed) { (void)took, (void)failed; }
  /// The queue of handler `handler` (handler_registration::id) holds
  /// `length` notifications: after each one queued, and after each turn of
  /// the handler's strand. From the informer's and the handler's strands.
  virtual void on_handler_queue(std::uint64_t handler, std::size_t length) { (void)handler, (void)length; }
};

// ---- controllers -------------------------------------------------------------

/// controller-runtime's result label.
enum class reconcile_label { success, error, requeue, requeue_after };

class controller_metrics {
public:
  using duration = metrics::duration;

  controller_metrics() = default;
  controller_metrics(const controller_metrics&) = delete;
  controller_metrics& operator=(const controller_metrics&) = delete;
  virtual ~controller_metrics() = default;

  /// The controller's worker count, once when it starts.
  virtual void on_workers(unsigned count) { (void)count; }
  /// Reconciles running now, after each change.
  virtual void on_active(unsigned active) { (void)active; }
  /// One reconcile finished.
  virtual void on_reconcile(reconcile_label result, duration took) { (void)result, (void)took; }
  /// Before a reconcile, the controller waited `took` for its caches to
  /// observe what the key's previous reconcile wrote (read your own
  /// writes); `caught_up` is false when it stopped waiting first (the
  /// bound passed, or an informer stopped).
  virtual void on_cache_wait(duration took, bool caught_up) { (void)took, (void)caught_up; }
};

// ---- the workqueue -----------------------------------------------------------

/// One queue, the events client-go's workqueue reports
/// (k8s.io/client-go/util/workqueue/metrics.go). A queue calls them on its
/// executor, in the order the events happen.
class workqueue_metrics {
public:
  using duration = metrics::duration;

  workqueue_metrics() = default;
  workqueue_metrics(const workqueue_metrics&) = delete;
  workqueue_metrics& operator=(const workqueue_metrics&) = delete;
  virtual ~workqueue_metrics() = default;

  /// An item became dirty (a new add, not a duplicate): adds +1, depth +1.
  virtual void on_add() {}
  /// A worker took an item that waited `queued` since it was first added: depth -1.
  virtual void on_get(duration queued) { (void)queued; }
  /// A worker finished an item it held for `worked`.
  virtual void on_done(duration worked) { (void)worked; }
  /// add_after / add_rate_limited was called (client-go counts every call).
  virtual void on_retry() {}
  /// Periodic: summed and longest age of the items being processed now.
  virtual void on_unfinished_work(duration total, duration longest) { (void)total, (void)longest; }
};

// ---- the provider ------------------------------------------------------------

/// Makes the hooks of each object that reports. Called once per object (a
/// client, an informer, a controller, a queue) when it is built; null means
/// "record nothing" for that object.
class provider {
public:
  provider() = default;
  provider(const provider&) = delete;
  provider& operator=(const provider&) = delete;
  virtual ~provider() = default;

  virtual std::shared_ptr<client_metrics> client() { return nullptr; }
  virtual std::shared_ptr<informer_metrics> informer(const informer_id& id) {
    (void)id;
    return nullptr;
  }
  virtual std::shared_ptr<controller_metrics> controller(std::string_view name) {
    (void)name;
    return nullptr;
  }
  virtual std::shared_ptr<workqueue_metrics> workqueue(std::string_view name) {
    (void)name;
    return nullptr;
  }
};

}  // namespace kube::metrics
