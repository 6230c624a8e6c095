#include <kube/workqueue/detail/executor_probe.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/strand.hpp>

namespace kube::workqueue::detail {
namespace asio = boost::asio;
namespace {

using io_executor = asio::io_context::executor_type;
using tracked_io_executor =
    decltype(asio::prefer(std::declval<io_executor>(), asio::execution::outstanding_work.tracked));

bool never(const void*) noexcept { return false; }

template <class Executor>
bool running_in(const void* target) noexcept {
  return static_cast<const Executor*>(target)->running_in_this_thread();
}

}  // namespace

executor_probe::executor_probe(const asio::any_io_executor& ex) noexcept
    : fn_(&never) {
  auto bind = [&]<class Executor>(const Executor* target) {
    if (target == nullptr || fn_ != &never) return;
    target_ = target;
    fn_ = &running_in<Executor>;
  };
  bind(ex.target<io_executor>());
  bind(ex.target<tracked_io_executor>());
  bind(ex.target<asio::strand<io_executor>>());
  bind(ex.target<asio::strand<asio::any_io_executor>>());
}

}  // namespace kube::workqueue::detail
