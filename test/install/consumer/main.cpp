// Builds against the installed kube package: links the client (and with it the
// separately compiled Asio/Beast) and runs an io_context.
#include <kube/version.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <cstdio>

int main() {
  boost::asio::io_context io;
  bool ran = false;
  boost::asio::co_spawn(
      io,
      [&]() -> boost::asio::awaitable<void> {
        ran = true;
        co_return;
      },
      boost::asio::detached);
  io.run();
  std::printf("kube %.*s for Kubernetes %.*s\n", int(kube::sdk_version().size()), kube::sdk_version().data(),
              int(kube::kubernetes_version().size()), kube::kubernetes_version().data());
  return ran && !kube::sdk_version().empty() ? 0 : 1;
}
