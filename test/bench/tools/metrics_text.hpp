#pragma once

// Reading one figure back from the Prometheus text exposition
// (kube::prometheus::metrics::render()), for the benchmarks' --metrics
// sanity line: enough to show that the hooks ran, not a parser.

#include <cstdlib>
#include <string>
#include <string_view>

namespace kube_bench {

/// The sum over every sample of the metric `name` (all its label sets) in
/// `text`; 0 when there is none. `name` is matched whole: "x_count" is not
/// "x", and "x" does not match "x_total".
inline double metric_sum(std::string_view text, std::string_view name) {
  double sum = 0;
  while (!text.empty()) {
    const auto eol = text.find('\n');
    const auto line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
    if (!line.starts_with(name) || line.size() <= name.size()) continue;
    const char next = line[name.size()];
    if (next != ' ' && next != '{') continue;
    // The value follows the last space before it (labels may hold spaces
    // but end at '}'); a timestamp is not written by prometheus-cpp.
    const auto labels_end = next == '{' ? line.rfind('}') : name.size();
    if (labels_end == std::string_view::npos) continue;
    const std::string value(line.substr(labels_end + 1));
    sum += std::strtod(value.c_str(), nullptr);
  }
  return sum;
}

}  // namespace kube_bench
