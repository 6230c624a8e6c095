#pragma once

#include <functional>
#include <string_view>

namespace kube {

enum class log_level { trace, debug, info, warning, error, off };

/// An injectable logger: a minimum level and a function that receives each
/// line at or above it. The SDK forces no logging library; the default writes
/// warnings and errors to stderr. Lines never contain credentials.
///
/// The function may be called from whichever thread runs the client's
/// executor; it must be safe to call from there. One client calls it from
/// its strand, so never concurrently; clients sharing a logger may.
struct logger {
  log_level level = log_level::warning;
  std::function<void(log_level, std::string_view)> sink;  ///< empty: write to stderr

  [[nodiscard]] bool enabled(log_level l) const noexcept { return l >= level && level != log_level::off; }
  void log(log_level l, std::string_view line) const;
};

[[nodiscard]] const char* to_string(log_level l) noexcept;

}  // namespace kube
