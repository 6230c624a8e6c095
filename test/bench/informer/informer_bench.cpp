// The kube side of the informer benchmark (test/bench/informer/run.sh): a
// typed shared informer over the pods of one namespace, as a controller
// would run it (namespace index built in, no resync), the same work as
// test/bench/go/cmd/informer. It reports SYNCED once its event handler has
// been given every object of the first list (the same moment the Go side
// takes; see below), then counts update events until it has seen --updates
// of them.
//
//   kube-bench-informer --kubeconfig F --namespace NS --updates M [--strip-managed-fields] [--json] [--list]
//                       [--relist] [--metrics]
//
// By default the client asks for protobuf, as every kube::client does for
// built-in types (and as client-go's clientset does); --json sets
// client_params::json_only, so the list and the watch are JSON (impl
// kube-json). By default the informer syncs by a streaming list (WatchList);
// --list turns that off (informer_factory_params::streaming_list), so it
// syncs by a list as client-go v0.34 does (impl kube-list).
//
// --metrics turns metrics on as a program does: client_params::metrics is a
// kube::prometheus::metrics, so the client reports its requests and the
// informer the factory builds over it takes its hooks from the same
// provider (informer_factory::for_type fills informer_params::metrics).
// The impl then gets a "-metrics" suffix (kube-metrics, ...; run.sh -M
// compares kube with kube-metrics). Once the process has its figures it
// renders the registry once and prints what the hooks recorded, summed
// over their series:
//   METRICS handler_calls=<informer_handler_duration_seconds_count> processed=<informer_processing_latency_..._count>
//           lists=<reflector_lists_total> watches=<reflector_watches_total> requests=<rest_client_requests_total>
//           bytes=<rendered text>
// The bench's handler has an update function only (no add, no delete), so
// handler_calls counts the update events it was given (--updates, plus any
// other update seen), and processed every delta the informer popped: the N
// objects of the first list and every event after it.
//
// --relist: after the updates, the process waits for a relist forced from
// outside. It lets the cache settle for a second, records the steady RSS
// and live heap (glibc's mallinfo2), resets the kernel's peak-RSS mark
// (/proc/self/clear_refs), prints STEADY, and waits until the informer's
// reflector has synced once more (run.sh compacts etcd and restarts the
// apiserver). A second after that sync it reports the peak RSS since the
// mark (VmHWM) and the highest live heap it sampled every 10 ms meanwhile. The formats the server answered in are read from the client's
// trace log lines (one per request, none per watch event) and reported;
// list_bytes is the first list's body after gzip decoding.
//
// Output lines (key=value): SYNCED ..., then
//   RESULT impl=kube|kube-json objects=N sync_s=.. updates_s=.. cpu_s=.. cpu_synced_s=.. sys_s=.. maxrss_kb=..
//          rss_before_kb=.. rss_synced_kb=.. list_type=protobuf|json|none list_bytes=.. watch_type=protobuf|json
//          sync=streaming|list
//   with --metrics: METRICS ... (above)
//   and with --relist: RELIST steady_rss_kb=.. peak_rss_kb=.. after_rss_kb=.. steady_heap_kb=.. peak_heap_kb=..
//          reused=.. relist_sync=streaming|list

#include <kube/k8s/core/v1/pod.hpp>
#include <kube/rest/client.hpp>
#include <kube/config/client_config.hpp>
#include <kube/informer/informer_factory.hpp>
#include <kube/prometheus/metrics.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <malloc.h>

#include "../tools/bench_config.hpp"
#include "../tools/metrics_text.hpp"
#include "../tools/process_stats.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
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

// Bytes the program holds from malloc (glibc: arenas in use plus mmapped
// chunks), KiB.
long live_heap_kb() {
  const auto m = mallinfo2();
  return static_cast<long>((m.uordblks + m.hblkhd) / 1024);
}

// The peak RSS since the last reset (VmHWM), KiB.
long peak_rss_kb() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string kubeconfig;
  std::string ns = "bench";
  long updates = 10000;
  bool strip = false;
  bool json = false;
  bool list = false;
  bool relist = false;
  bool with_metrics = false;
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
    } else if (a == "--list") {
      list = true;
    } else if (a == "--relist") {
      relist = true;
    } else if (a == "--metrics") {
      with_metrics = true;
    } else {
      std::cerr << "usage: kube-bench-informer --kubeconfig F --namespace NS --updates M [--strip-managed-fields] "
                   "[--json] [--list] [--relist] [--metrics]\n";
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
  std::shared_ptr<kube::prometheus::metrics> metrics;
  if (with_metrics) {
    metrics = std::make_shared<kube::prometheus::metrics>();
    params.metrics = metrics;  // the client's hooks, and the factory's informers' (for_type below)
  }
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
  ki::informer_factory factory(c, {.namespace_name = ns, .strip_managed_fields = strip, .streaming_list = !list});
  auto pods = factory.for_type<Pod>();
  long seen = 0;
  bool synced = false;
  std::chrono::steady_clock::time_point updates_start, updates_end;
  asio::cancellation_signal stop;
  asio::steady_timer updated(ioc, asio::steady_timer::time_point::max());
  auto reg = pods->add_handler({
      {},
      [&](const std::shared_ptr<const Pod>& o, const std::shared_ptr<const Pod>& n) {
        if (synced && o->resource_version() != n->resource_version() && ++seen == updates) {
          updates_end = std::chrono::steady_clock::now();
          updated.cancel();
        }
      },
      {},
  });
  factory.async_run(asio::bind_cancellation_slot(stop.slot(), [](kube::error_code) {}));
  // --relist: see the file comment. Runs on the io_context's one thread,
  // the informer's too, so the reflector's stats are read in place.
  std::string relist_line;
  auto wait_for_relist = [&]() -> asio::awaitable<void> {
    asio::steady_timer t(ioc);
    t.expires_after(std::chrono::seconds(1));
    co_await t.async_wait(asio::use_awaitable);
    const auto& r = pods->get_reflector();
    const auto before = r.stats();
    const long steady_rss = rss_kb();
    const long steady_heap = live_heap_kb();
    std::ofstream("/proc/self/clear_refs") << "5";
    std::cout << "STEADY" << std::endl;
    long peak_heap = steady_heap;
    const auto synced_again = [&] { return r.stats().syncs() > before.syncs(); };
    for (int i = 0; i < 18000 && !synced_again(); ++i) {  // 3 minutes
      peak_heap = std::max(peak_heap, live_heap_kb());
      t.expires_after(std::chrono::milliseconds(10));
      co_await t.async_wait(asio::use_awaitable);
    }
    for (int i = 0; i < 100; ++i) {  // one more second: the replace's deltas reach the cache
      peak_heap = std::max(peak_heap, live_heap_kb());
      t.expires_after(std::chrono::milliseconds(10));
      co_await t.async_wait(asio::use_awaitable);
    }
    const auto after = r.stats();
    char line[512];
    std::snprintf(line, sizeof line,
                  "RELIST steady_rss_kb=%ld peak_rss_kb=%ld after_rss_kb=%ld steady_heap_kb=%ld peak_heap_kb=%ld "
                  "reused=%zu relist_sync=%s",
                  steady_rss, peak_rss_kb(), rss_kb(), steady_heap, peak_heap, after.reused - before.reused,
                  !synced_again()                                  ? "none"
                  : after.streaming_syncs > before.streaming_syncs ? "streaming"
                                                                   : "list");
    relist_line = line;
  };
  kube_bench::usage u;
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
        co_await updated.async_wait(asio::as_tuple(asio::use_awaitable));
        u = kube_bench::usage_now();
        if (relist) co_await wait_for_relist();
        stop.emit(asio::cancellation_type::terminal);
      },
      asio::detached);
  ioc.run();
  const double updates_s = std::chrono::duration<double>(updates_end - updates_start).count();
  const bool streamed = pods->get_reflector().stats().streaming_syncs > 0;
  const std::string impl = std::string(json ? "kube-json" : list ? "kube-list" : "kube") + (metrics ? "-metrics" : "");
  std::printf("RESULT impl=%s objects=%zu sync_s=%.3f updates_s=%.3f cpu_s=%.3f cpu_synced_s=%.3f sys_s=%.3f "
              "maxrss_kb=%ld rss_before_kb=%ld rss_synced_kb=%ld list_type=%s list_bytes=%s watch_type=%s sync=%s\n",
              impl.c_str(), objects, sync_s, updates_s, u.cpu, cpu_synced, u.system, u.max_rss_kb, rss_before,
              rss_synced, wire.list_type.c_str(), wire.list_bytes.c_str(), wire.watch_type.c_str(),
              streamed ? "streaming" : "list");
  if (!relist_line.empty()) std::printf("%s\n", relist_line.c_str());
  if (metrics) {
    // After the figures above: rendering is not part of what is measured.
    const std::string text = metrics->render();
    using kube_bench::metric_sum;
    std::printf("METRICS handler_calls=%.0f processed=%.0f lists=%.0f watches=%.0f requests=%.0f bytes=%zu\n",
                metric_sum(text, "informer_handler_duration_seconds_count"),
                metric_sum(text, "informer_processing_latency_seconds_count"),
                metric_sum(text, "reflector_lists_total"), metric_sum(text, "reflector_watches_total"),
                metric_sum(text, "rest_client_requests_total"), text.size());
  }
  return 0;
}
