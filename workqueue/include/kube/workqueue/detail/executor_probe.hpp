#pragma once

// "Am I running on this executor right now?" for the executors the queue
// knows (io_context executors and strands over them), through their public
// running_in_this_thread(). Unknown executors answer false, which is always
// safe: callers then take the cross-thread path.
//
// The probe is bound to the executor object it was made from (it keeps a
// pointer to that object's target, so the type test is made once, not on
// every add): that object must outlive the probe and not be assigned to.

#include <boost/asio/any_io_executor.hpp>

namespace kube::workqueue::detail {

class executor_probe {
public:
  explicit executor_probe(const boost::asio::any_io_executor& ex) noexcept;

  [[nodiscard]] bool running_in_this_thread() const noexcept { return fn_(target_); }

private:
  const void* target_ = nullptr;
  bool (*fn_)(const void*) noexcept;
};

}  // namespace kube::workqueue::detail
