#pragma once

// Helpers for the workqueue tests: run an io_context until nothing is ready,
// and collect what async_get hands out.

#include <boost/asio/io_context.hpp>

#include <optional>
#include <string>
#include <vector>

namespace wq_test {

/// Runs every handler that is ready (no blocking, no timers waited for).
inline void settle(boost::asio::io_context& io) {
  io.restart();
  io.poll();
}

/// Result of one callback-style async_get.
struct got {
  bool completed = false;
  boost::system::error_code ec;
  std::string item;
};

}  // namespace wq_test
