#pragma once

// Metrics hooks of a queue, the same events client-go's workqueue reports
// (k8s.io/client-go/util/workqueue/metrics.go).
//
// A queue calls its hooks on its executor, in the order the events happen.
// prometheus_metrics implements them and renders Prometheus text; implement
// the interface yourself to feed another metrics library.

#include <kube/base/clock.hpp>

namespace kube::workqueue {

class metrics_hooks {
public:
  using duration = clock::duration;

  metrics_hooks() = default;
  metrics_hooks(const metrics_hooks&) = delete;
  metrics_hooks& operator=(const metrics_hooks&) = delete;
  virtual ~metrics_hooks() = default;

  /// An item became dirty (a new add, not a duplicate): adds +1, depth +1.
  virtual void on_add() = 0;
  /// A worker took an item that waited `queued` since it was first added: depth -1.
  virtual void on_get(duration queued) = 0;
  /// A worker finished an item it held for `worked`.
  virtual void on_done(duration worked) = 0;
  /// add_after / add_rate_limited was called (client-go counts every call).
  virtual void on_retry() = 0;
  /// Periodic: summed and longest age of the items being processed now.
  virtual void on_unfinished_work(duration total, duration longest) = 0;
};

}  // namespace kube::workqueue
