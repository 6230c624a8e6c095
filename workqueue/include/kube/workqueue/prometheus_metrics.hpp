#pragma once

// Built-in metrics_hooks: records client-go's workqueue metrics and renders
// them in the Prometheus text exposition format with client-go's names
// (workqueue_depth, workqueue_adds_total, workqueue_queue_duration_seconds,
// workqueue_work_duration_seconds, workqueue_unfinished_work_seconds,
// workqueue_longest_running_processor_seconds, workqueue_retries_total), all
// labelled name="<queue name>", histogram buckets 1e-8 s .. 10 s (x10).

#include <kube/workqueue/metrics.hpp>

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

namespace kube::workqueue {

/// Thread safety: the hooks are called on the queue's executor; render() may
/// be called from any thread at the same time (every value is an atomic; a
/// rendering is not a consistent snapshot across metrics, as in Prometheus).
class prometheus_metrics final : public metrics_hooks {
public:
  static constexpr std::size_t bucket_count = 10;

  /// `name` is the queue's label value (client-go's QueueConfig.Name).
  explicit prometheus_metrics(std::string name);

  void on_add() override;
  void on_get(duration queued) override;
  void on_done(duration worked) override;
  void on_retry() override;
  void on_unfinished_work(duration total, duration longest) override;

  /// Prometheus text format (HELP/TYPE lines included).
  [[nodiscard]] std::string render() const;

  [[nodiscard]] std::int64_t depth() const noexcept { return depth_.load(std::memory_order_relaxed); }
  [[nodiscard]] std::uint64_t adds() const noexcept { return adds_.load(std::memory_order_relaxed); }
  [[nodiscard]] std::uint64_t retries() const noexcept { return retries_.load(std::memory_order_relaxed); }
  [[nodiscard]] double unfinished_work_seconds() const noexcept { return unfinished_.load(std::memory_order_relaxed); }
  [[nodiscard]] double longest_running_processor_seconds() const noexcept {
    return longest_.load(std::memory_order_relaxed);
  }

  struct histogram {
    std::array<std::atomic<std::uint64_t>, bucket_count> buckets{};  // non-cumulative
    std::atomic<std::uint64_t> count{0};
    std::atomic<double> sum{0.0};  // seconds
    void observe(double seconds) noexcept;
  };
  [[nodiscard]] const histogram& queue_duration() const noexcept { return latency_; }
  [[nodiscard]] const histogram& work_duration() const noexcept { return work_; }

private:
  std::string name_;
  std::atomic<std::int64_t> depth_{0};
  std::atomic<std::uint64_t> adds_{0};
  std::atomic<std::uint64_t> retries_{0};
  std::atomic<double> unfinished_{0.0};
  std::atomic<double> longest_{0.0};
  histogram latency_;
  histogram work_;
};

}  // namespace kube::workqueue
