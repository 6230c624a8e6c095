#include <kube/base/listen.hpp>

#include <cerrno>

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

namespace kube {

boost::system::error_code listen_cloexec(boost::asio::ip::tcp::acceptor& acceptor,
                                         const boost::asio::ip::tcp::endpoint& ep) {
  boost::system::error_code ec;
  // Asio opens sockets without SOCK_CLOEXEC: the descriptor is made here
  // and handed to the acceptor.
  const int fd = ::socket(ep.protocol().family(), SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_TCP);
  if (fd < 0) return {errno, boost::system::system_category()};
  acceptor.assign(ep.protocol(), fd, ec);
  if (ec) {
    ::close(fd);
    return ec;
  }
  if (!ec) acceptor.set_option(boost::asio::ip::tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor.bind(ep, ec);
  if (!ec) acceptor.listen(boost::asio::socket_base::max_listen_connections, ec);
  if (ec) {
    boost::system::error_code ignored;
    acceptor.close(ignored);
  }
  return ec;
}

void set_cloexec(boost::asio::ip::tcp::socket& s) noexcept {
  const int fd = s.native_handle();
  if (fd >= 0) ::fcntl(fd, F_SETFD, ::fcntl(fd, F_GETFD) | FD_CLOEXEC);
}

}  // namespace kube
