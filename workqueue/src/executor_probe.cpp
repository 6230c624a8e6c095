#include <kube/workqueue/detail/executor_probe.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/strand.hpp>

namespace kube::workqueue::detail {
namespace asio = boost::asio;
namespace {

using io_executor = asio::io_context::executor_type;
using tracked_io_executor =
    decltype(asio::prefer(std::declval<io_executor>(), asio::execution::outstanding_work.tracked));

bool never(const asio::any_io_executor&) noexcept { return false; }

template <class Strand>
bool on_strand(const asio::any_io_executor& ex) noexcept {
  const auto* s = ex.target<Strand>();
  return s != nullptr && s->running_in_this_thread();
}

// The key io_context::executor_type::running_in_this_thread() looks up on the
// thread's call stack: the context's scheduler (io_context_impl).
asio::detail::thread_context* io_key(asio::io_context& io) {
  return &asio::use_service<asio::detail::io_context_impl>(io);
}

}  // namespace

executor_probe::executor_probe(const asio::any_io_executor& ex) noexcept : fn_(&never) {
  if (const auto* e = ex.target<io_executor>()) {
    io_key_ = io_key(e->context());
  } else if (const auto* t = ex.target<tracked_io_executor>()) {
    io_key_ = io_key(t->context());
  } else if (ex.target<asio::strand<io_executor>>() != nullptr) {
    fn_ = &on_strand<asio::strand<io_executor>>;
  } else if (ex.target<asio::strand<asio::any_io_executor>>() != nullptr) {
    fn_ = &on_strand<asio::strand<asio::any_io_executor>>;
  }
}

}  // namespace kube::workqueue::detail
