// The kube side of the informer benchmark (test/bench/informer/run.sh): a
// typed shared informer over the pods of one namespace, as a controller
// would run it (namespace index built in, no resync), the same work as
// test/bench/go/cmd/informer. It reports SYNCED once its event handler has
// been given every object of the first list (the same moment the Go side
// takes; see below), then counts update events until it has seen --updates
// of them.
//
//   kube-bench-informer --kubeconfig F --namespace NS --updates M [--strip-managed-fields] [--json]
//
// By default the client asks for protobuf, as every kube::client does for
// built-in types (and as client-go's clientset does); --json sets
// client_params::json_only, so the list and the watch are JSON (impl
// kube-json). The formats the server answered in are read from the client's
// trace log lines (one per request, none per watch event) and reported;
// list_bytes is the first list's body after gzip decoding.
//
// Output lines (key=value): SYNCED ..., then
//   RESULT impl=kube|kube-json objects=N sync_s=.. updates_s=.. cpu_s=.. cpu_synced_s=.. sys_s=.. maxrss_kb=..
//          rss_before_kb=.. rss_synced_kb=.. list_type=protobuf|json list_bytes=.. watch_type=protobuf|json

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
#include <string_view>

namespace asio = boost::asio;
using Pod = k8s::core::v1::Pod;

using kube_bench::cpu_seconds;
using kube_bench::rss_kb;

namespace {

// "protobuf" or "json" for a Content-Type; the type itself otherwise.
std::string wire_name(std::string_view content_type) {
  if (content_type.starts_with("application/vnd.kubernetes.protobuf")) return "protobuf";
  if (content_type.starts_with("application/json")) return "json";
  return content_type.empty() ? "none" : std::string(content_type);
}

// What the server answered the informer's first list and first watch in,
// from the client's trace lines: "GET v1 pods NS: HTTP 200, <type>, <n> bytes"
// for a list, "..., <type>, streaming" for a watch.
struct wire_seen {
  std::string list_type = "none", watch_type = "none";
  std::string list_bytes = "0";

  void line(std::string_view l) {
    constexpr std::string_view ok = ": HTTP 200, ";
    const auto at = l.find(ok);
    if (at == std::string_view::npos || l.find(" pods ") == std::string_view::npos) return;
    auto rest = l.substr(at + ok.size());
    const auto comma = rest.rfind(", ");
    if (comma == std::string_view::npos) return;
    const auto type = rest.substr(0, comma);
    const auto tail = rest.substr(comma + 2);
    if (tail == "streaming") {
      if (watch_type == "none") watch_type = wire_name(type);
    } else if (list_type == "none") {
      list_type = wire_name(type);
      list_bytes = std::string(tail.substr(0, tail.find(' ')));
    }
  }
};

}  // namespace

int main(int argc, char** argv) {
  std::string kubeconfig;
  std::string ns = "bench";
  long updates = 10000;
  bool strip = false;
  bool json = false;
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
    } else if (a == "--json") {
      json = true;
    } else {
      std::cerr
          << "usage: kube-bench-informer --kubeconfig F --namespace NS --updates M [--strip-managed-fields] [--json]\n";
      return 2;
    }
  }
  asio::io_context ioc(1);
  auto cfg = kube_bench::load_config(kubeconfig);
  cfg.qps = 1000;  // as the Go side sets it
  cfg.burst = 1000;
  wire_seen wire;
  kube::client_params params;
  params.json_only = json;
  params.log.level = kube::log_level::trace;  // one line per request, none per watch event
  params.log.sink = [&wire](kube::log_level l, std::string_view line) {
    if (l >= kube::log_level::warning) {
      std::cerr << kube::to_string(l) << ": " << line << '\n';
    } else {
      wire.line(line);
    }
  };
  kube::client c(ioc.get_executor(), cfg, std::move(params));
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
  std::printf("RESULT impl=%s objects=%zu sync_s=%.3f updates_s=%.3f cpu_s=%.3f cpu_synced_s=%.3f sys_s=%.3f "
              "maxrss_kb=%ld rss_before_kb=%ld rss_synced_kb=%ld list_type=%s list_bytes=%s watch_type=%s\n",
              json ? "kube-json" : "kube", objects, sync_s, updates_s, u.cpu, cpu_synced, u.system, u.max_rss_kb,
              rss_before, rss_synced, wire.list_type.c_str(), wire.list_bytes.c_str(), wire.watch_type.c_str());
  return 0;
}
