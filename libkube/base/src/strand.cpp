#include <kube/base/strand.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/strand.hpp>

namespace kube {

boost::asio::any_io_executor make_strand_executor(const boost::asio::any_io_executor& ex) {
  namespace asio = boost::asio;
  if (const auto* io = ex.target<asio::io_context::executor_type>()) return asio::make_strand(*io);
  return asio::make_strand(ex);
}

}  // namespace kube
