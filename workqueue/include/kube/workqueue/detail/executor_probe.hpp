#pragma once

// "Am I running on this executor right now?" for the executors the queue
// knows (io_context executors and strands over them). Unknown executors
// answer false, which is always safe: callers then take the cross-thread path.
//
// Every add() asks, so the io_context case is answered inline: asio marks a
// thread running an io_context by pushing that context's scheduler on a
// thread-local call stack (what io_context::executor_type's
// running_in_this_thread() looks up, through two out-of-line calls that cost
// ~2.5 ns of a ~15 ns re-add); the probe keeps the scheduler's key and looks
// it up itself.

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/detail/call_stack.hpp>
#include <boost/asio/detail/thread_context.hpp>
#include <boost/asio/detail/thread_info_base.hpp>

namespace kube::workqueue::detail {

class executor_probe {
 public:
  explicit executor_probe(const boost::asio::any_io_executor& ex) noexcept;

  [[nodiscard]] bool running_in_this_thread(const boost::asio::any_io_executor& ex) const noexcept {
    if (io_key_ != nullptr) {
      namespace ad = boost::asio::detail;
      return ad::call_stack<ad::thread_context, ad::thread_info_base>::contains(io_key_) != nullptr;
    }
    return fn_(ex);
  }

 private:
  boost::asio::detail::thread_context* io_key_ = nullptr;  // an io_context's scheduler
  bool (*fn_)(const boost::asio::any_io_executor&) noexcept;  // strands and unknown executors
};

}  // namespace kube::workqueue::detail
