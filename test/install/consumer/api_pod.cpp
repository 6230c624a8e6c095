// What a user TU that lists Pods with the typed client compiles: kube::api<Pod>
// and one coroutine. Built against the installed package by the install
// tests, and timed by test/bench/compile/run.sh (docs/building.md).
#include <kube/k8s/core/v1/pod.hpp>
#include <kube/config/client_config.hpp>
#include <kube/rest/client.hpp>
#include <kube/typed/api.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::puts("usage: consumer_api_pod NAMESPACE (lists its pods with the default kubeconfig)");
    return 0;
  }
  boost::asio::io_context io;
  kube::client client(io.get_executor(), kube::client_config::load_default());
  boost::asio::co_spawn(
      io,
      [&]() -> boost::asio::awaitable<void> {
        kube::api<k8s::core::v1::Pod> pods(client, argv[1]);
        auto list = co_await pods.async_list_all();
        for (const auto& p : list.items) std::printf("%.*s\n", int(p.name().size()), p.name().data());
      },
      boost::asio::detached);
  io.run();
  return 0;
}
