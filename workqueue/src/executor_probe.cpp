#include <kube/workqueue/detail/executor_probe.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/strand.hpp>

namespace kube::workqueue::detail {
namespace asio = boost::asio;
namespace {

using io_executor = asio::io_context::executor_type;
using tracked_io_executor =
    decltype(asio::prefer(std::declval<io_executor>(), asio::execution::outstanding_work.tracked));

bool never(const void*, const asio::any_io_executor&) noexcept { return false; }

// The io_context itself is the context: a thread-local lookup, no type test.
bool on_io_context(const void* ctx, const asio::any_io_executor&) noexcept {
  return static_cast<asio::io_context*>(const_cast<void*>(ctx))->get_executor().running_in_this_thread();
}

template <class Strand>
bool on_strand(const void*, const asio::any_io_executor& ex) noexcept {
  const auto* s = ex.target<Strand>();
  return s != nullptr && s->running_in_this_thread();
}

}  // namespace

executor_probe::executor_probe(const asio::any_io_executor& ex) noexcept : fn_(&never) {
  if (const auto* e = ex.target<io_executor>()) {
    fn_ = &on_io_context;
    ctx_ = &e->context();
  } else if (const auto* t = ex.target<tracked_io_executor>()) {
    fn_ = &on_io_context;
    ctx_ = &t->context();
  } else if (ex.target<asio::strand<io_executor>>() != nullptr) {
    fn_ = &on_strand<asio::strand<io_executor>>;
  } else if (ex.target<asio::strand<asio::any_io_executor>>() != nullptr) {
    fn_ = &on_strand<asio::strand<asio::any_io_executor>>;
  }
}

}  // namespace kube::workqueue::detail
