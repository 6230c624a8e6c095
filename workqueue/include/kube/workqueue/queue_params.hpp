#pragma once

// Options shared by queue, delaying_queue and rate_limited_queue.

#include <kube/base/clock.hpp>
#include <kube/base/metrics.hpp>

#include <chrono>
#include <memory>

namespace kube::workqueue {

struct queue_params {
  /// Time source for delays, rate limits and metrics; nullptr means
  /// real_clock(). Must outlive the queue. Tests pass a manual_clock.
  const clock* time_source = nullptr;
  /// Metrics hooks (kube/base/metrics.hpp; e.g. from kube::prometheus's
  /// provider: workqueue("name")); nullptr records nothing and skips the
  /// per-item timestamps metrics need.
  std::shared_ptr<kube::metrics::workqueue_metrics> metrics = nullptr;
  /// How often on_unfinished_work is reported while items are being
  /// processed (client-go: 500 ms); zero turns the periodic report off
  /// (update_unfinished_work() still reports on demand). Real clock only.
  clock::duration unfinished_work_period = std::chrono::milliseconds(500);
};

}  // namespace kube::workqueue
