#include <kube/workqueue/prometheus_metrics.hpp>

#include <chrono>
#include <charconv>
#include <system_error>
#include <utility>

namespace kube::workqueue {
namespace {

// Upper bounds: 1e-8 * 10^i seconds, i = 0..9 (client-go's ExponentialBuckets(10e-9, 10, 10)).
constexpr std::array<double, prometheus_metrics::bucket_count> bounds = {1e-8, 1e-7, 1e-6, 1e-5, 1e-4,
                                                                         1e-3, 1e-2, 1e-1, 1e0,  1e1};

double seconds(clock::duration d) { return std::chrono::duration<double>(d).count(); }

std::string escape_label(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

// Shortest text that reads back as the same double, as Prometheus' Go client
// writes it (1e-08, 0.1, 10).
std::string number(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc{} ? std::string(buf, end) : std::string("NaN");
}

}  // namespace

prometheus_metrics::prometheus_metrics(std::string name)
    : name_(std::move(name)) {}

void prometheus_metrics::histogram::observe(double s) noexcept {
  std::size_t i = 0;
  while (i < bucket_count && s > bounds[i]) ++i;
  if (i < bucket_count) buckets[i].fetch_add(1, std::memory_order_relaxed);
  count.fetch_add(1, std::memory_order_relaxed);
  sum.fetch_add(s, std::memory_order_relaxed);
}

void prometheus_metrics::on_add() {
  adds_.fetch_add(1, std::memory_order_relaxed);
  depth_.fetch_add(1, std::memory_order_relaxed);
}
void prometheus_metrics::on_get(duration queued) {
  depth_.fetch_sub(1, std::memory_order_relaxed);
  latency_.observe(seconds(queued));
}
void prometheus_metrics::on_done(duration worked) { work_.observe(seconds(worked)); }
void prometheus_metrics::on_retry() { retries_.fetch_add(1, std::memory_order_relaxed); }
void prometheus_metrics::on_unfinished_work(duration total, duration longest) {
  unfinished_.store(seconds(total), std::memory_order_relaxed);
  longest_.store(seconds(longest), std::memory_order_relaxed);
}

std::string prometheus_metrics::render() const {
  const std::string label = "name=\"" + escape_label(name_) + "\"";
  std::string out;
  auto scalar = [&](const char* metric, const char* type, const char* help, const std::string& value) {
    out += std::string("# HELP ") + metric + " " + help + "\n# TYPE " + metric + " " + type + "\n";
    out += std::string(metric) + "{" + label + "} " + value + "\n";
  };
  auto hist = [&](const char* metric, const char* help, const histogram& h) {
    out += std::string("# HELP ") + metric + " " + help + "\n# TYPE " + metric + " histogram\n";
    std::uint64_t cumulative = 0;
    for (std::size_t i = 0; i < bucket_count; ++i) {
      cumulative += h.buckets[i].load(std::memory_order_relaxed);
      out += std::string(metric) + "_bucket{" + label + ",le=\"" + number(bounds[i]) + "\"} " +
             std::to_string(cumulative) + "\n";
    }
    const auto count = h.count.load(std::memory_order_relaxed);
    out += std::string(metric) + "_bucket{" + label + ",le=\"+Inf\"} " + std::to_string(count) + "\n";
    out += std::string(metric) + "_sum{" + label + "} " + number(h.sum.load(std::memory_order_relaxed)) + "\n";
    out += std::string(metric) + "_count{" + label + "} " + std::to_string(count) + "\n";
  };
  scalar("workqueue_depth", "gauge", "Current depth of workqueue", std::to_string(depth()));
  scalar("workqueue_adds_total", "counter", "Total number of adds handled by workqueue", std::to_string(adds()));
  hist("workqueue_queue_duration_seconds", "How long in seconds an item stays in workqueue before being requested.",
       latency_);
  hist("workqueue_work_duration_seconds", "How long in seconds processing an item from workqueue takes.", work_);
  scalar("workqueue_unfinished_work_seconds", "gauge",
         "How many seconds of work has done that is in progress and hasn't been observed by work_duration.",
         number(unfinished_work_seconds()));
  scalar("workqueue_longest_running_processor_seconds", "gauge",
         "How many seconds has the longest running processor for workqueue been running.",
         number(longest_running_processor_seconds()));
  scalar("workqueue_retries_total", "counter", "Total number of retries handled by workqueue",
         std::to_string(retries()));
  return out;
}

}  // namespace kube::workqueue
