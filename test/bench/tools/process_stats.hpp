#pragma once

// What the C++ benchmark programs report about their own process (the Go
// programs read the same with test/bench/go/internal/procstat).

#include <sys/resource.h>

#include <fstream>
#include <string>

namespace kube_bench {

/// The process's getrusage so far.
struct usage {
  double cpu = 0;     ///< user + system seconds
  double system = 0;  ///< system seconds
  long max_rss_kb = 0;
};

inline usage usage_now() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  usage u;
  u.cpu = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
          static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
  u.system = static_cast<double>(ru.ru_stime.tv_sec) + static_cast<double>(ru.ru_stime.tv_usec) / 1e6;
  u.max_rss_kb = ru.ru_maxrss;
  return u;
}

/// User + system CPU seconds of the whole process so far.
inline double cpu_seconds() { return usage_now().cpu; }

/// The current resident set (VmRSS), KiB; -1 when unreadable.
inline long rss_kb() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

}  // namespace kube_bench
