#pragma once

// "Am I running on this executor right now?" for the executors the queue
// knows (io_context executors and strands over them). Unknown executors
// answer false, which is always safe: callers then take the cross-thread path.

#include <boost/asio/any_io_executor.hpp>

namespace kube::workqueue::detail {

class executor_probe {
 public:
  explicit executor_probe(const boost::asio::any_io_executor& ex) noexcept;

  [[nodiscard]] bool running_in_this_thread(const boost::asio::any_io_executor& ex) const noexcept {
    return fn_(ctx_, ex);
  }

 private:
  bool (*fn_)(const void*, const boost::asio::any_io_executor&) noexcept;
  const void* ctx_ = nullptr;
};

}  // namespace kube::workqueue::detail
