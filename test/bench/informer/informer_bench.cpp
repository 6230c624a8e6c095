// The kube side of the informer benchmark (test/bench/informer/run.sh): a
// typed shared informer over the pods of one namespace, as a controller
// would run it (namespace index built in, no resync), the same work as
// test/bench/go/cmd/informer. It reports SYNCED once its event handler has
// been given every object of the first list (the same moment the Go side
// takes; see below), then counts update events until it has seen --updates
// of them.
//
//   kube-bench-informer --kubeconfig F --namespace NS --updates M [--strip-managed-fields]
//
// Output lines (key=value): SYNCED ..., then
//   RESULT impl=kube objects=N sync_s=.. updates_s=.. cpu_s=.. cpu_synced_s=.. sys_s=.. maxrss_kb=.. rss_before_kb=.. rss_synced_kb=..

#include <kube/api/core/v1/pod.hpp>
#include <kube/rest/client.hpp>
#include <kube/config/client_config.hpp>
#include <kube/informer/informer_factory.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include "../tools/bench_config.hpp"
#include "../tools/process_stats.hpp"

#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>

namespace asio = boost::asio;
using Pod = k8s::core::v1::Pod;

using kube_bench::cpu_seconds;
using kube_bench::rss_kb;

int main(int argc, char** argv) {
  std::string kubeconfig;
  std::string ns = "bench";
  long updates = 10000;
  bool strip = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << a << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--kubeconfig") {
      kubeconfig = value();
    } else if (a == "--namespace") {
      ns = value();
    } else if (a == "--updates") {
      updates = std::stol(value());
    } else if (a == "--strip-managed-fields") {
      strip = true;
    } else {
      std::cerr << "usage: kube-bench-informer --kubeconfig F --namespace NS --updates M [--strip-managed-fields]\n";
      return 2;
    }
  }
  asio::io_context ioc(1);
  auto cfg = kube_bench::load_config(kubeconfig);
  cfg.qps = 1000;  // as the Go side sets it
  cfg.burst = 1000;
  kube::client c(ioc.get_executor(), cfg);
  // Measured from here, as the Go side measures from after its clientset
  // is made: the kubeconfig, TLS setup and library code touched by them are
  // not part of the informer's cost on either side.
  const long rss_before = rss_kb();
  const auto start = std::chrono::steady_clock::now();

  namespace ki = kube::informer;
  ki::informer_factory factory(c, {.namespace_name = ns, .strip_managed_fields = strip});
  auto pods = factory.for_type<Pod>();
  long seen = 0;
  bool synced = false;
  std::chrono::steady_clock::time_point updates_start;
  asio::cancellation_signal stop;
  auto reg = pods->add_handler({
      {},
      [&](const std::shared_ptr<const Pod>& o, const std::shared_ptr<const Pod>& n) {
        if (synced && o->resource_version() != n->resource_version() && ++seen == updates) {
          stop.emit(asio::cancellation_type::terminal);
        }
      },
      {},
  });
  factory.async_run(asio::bind_cancellation_slot(stop.slot(), [](kube::error_code) {}));
  double sync_s = 0;
  double cpu_synced = 0;
  long rss_synced = 0;
  std::size_t objects = 0;
  asio::co_spawn(
      ioc,
      [&]() -> asio::awaitable<void> {
        // The synced moment: the first list is in the cache and the handler
        // has been given every object of it. The registration syncs when
        // the marker queued behind the first list's notifications reaches
        // the handler, and this coroutine resumes right after; client-go's
        // side reads its clock in the handler at the last object of the
        // first list (test/bench/go/cmd/informer). The factory's
        // async_wait_for_sync would complete earlier, once the list is in
        // the cache, whether or not the handler has caught up.
        co_await reg->async_wait_for_sync(asio::use_awaitable);
        synced = true;
        sync_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        cpu_synced = cpu_seconds();
        objects = pods->make_lister().list().size();
        rss_synced = rss_kb();
        std::cout << "SYNCED objects=" << objects << std::endl;
        updates_start = std::chrono::steady_clock::now();
      },
      asio::detached);
  ioc.run();
  const double updates_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - updates_start).count();
  const auto u = kube_bench::usage_now();
  std::printf("RESULT impl=kube objects=%zu sync_s=%.3f updates_s=%.3f cpu_s=%.3f cpu_synced_s=%.3f sys_s=%.3f "
              "maxrss_kb=%ld rss_before_kb=%ld rss_synced_kb=%ld\n",
              objects, sync_s, updates_s, u.cpu, cpu_synced, u.system, u.max_rss_kb, rss_before, rss_synced);
  return 0;
}
