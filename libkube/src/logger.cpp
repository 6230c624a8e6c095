#include <kube/logger.hpp>

#include <cstdio>

namespace kube {

const char* to_string(log_level l) noexcept {
  switch (l) {
  case log_level::trace:
    return "trace";
  case log_level::debug:
    return "debug";
  case log_level::info:
    return "info";
  case log_level::warning:
    return "warning";
  case log_level::error:
    return "error";
  case log_level::off:
    return "off";
  }
  return "?";
}

void logger::log(log_level l, std::string_view line) const {
  if (!enabled(l)) return;
  if (sink) {
    sink(l, line);
    return;
  }
  std::fprintf(stderr, "kube %s: %.*s\n", to_string(l), static_cast<int>(line.size()), line.data());
}

}  // namespace kube
