#pragma once

// What the C++ benchmark programs report about their own process.

#include <sys/resource.h>

namespace kube_bench {

/// User + system CPU seconds of the whole process so far (getrusage).
inline double cpu_seconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

}  // namespace kube_bench
