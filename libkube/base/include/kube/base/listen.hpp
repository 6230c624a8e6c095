#pragma once

// How the SDK's own servers open their listening socket (port-forward's
// local listener, kube::prometheus's /metrics server).

#include <boost/asio/ip/tcp.hpp>
#include <boost/system/error_code.hpp>

namespace kube {

/// Opens the closed `acceptor` on `ep` and listens: a close-on-exec socket
/// (a process the program starts, such as an exec credential plugin,
/// inherits no listener), SO_REUSEADDR, bound, listening. Returns the error
/// of the step that failed, with the acceptor closed again.
boost::system::error_code listen_cloexec(boost::asio::ip::tcp::acceptor& acceptor,
                                         const boost::asio::ip::tcp::endpoint& ep);

/// Marks an accepted connection close-on-exec (Asio's accept does not).
void set_cloexec(boost::asio::ip::tcp::socket& s) noexcept;

}  // namespace kube
