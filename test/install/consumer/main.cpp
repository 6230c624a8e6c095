// Builds against the installed kube package: links the client (and with it the
// separately compiled Asio/Beast) and runs an io_context; links the
// Prometheus provider (and with it prometheus-cpp) and renders a series.
#include <kube/prometheus/metrics.hpp>
#include <kube/version.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <cstdio>
#include <memory>
#include <string>

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
  auto metrics = std::make_shared<kube::prometheus::metrics>();
  metrics->workqueue("consumer")->on_add();
  const bool rendered = metrics->render().find("workqueue_adds_total{name=\"consumer\"} 1") != std::string::npos;
  return ran && rendered && !kube::sdk_version().empty() ? 0 : 1;
}
