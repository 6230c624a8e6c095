// Workqueue benchmark: the same workloads as test/bench/go/cmd/workqueue (client-go).
//
//   kube-bench-workqueue <workload> [n] [--metrics | --hooks]
//
// Prints one line:
//   RESULT impl=kube workload=<w> n=<n> ns_per_op=<x> cpu_s=<y> maxrss_kb=<z>
// ns_per_op is wall time of the measured section divided by n; cpu_s and
// maxrss_kb cover the whole process (getrusage). Keys are built before timing.
//
// --metrics gives the queue hooks from a kube::prometheus::metrics provider
// (queue_params::metrics = metrics->workqueue(<workload>)), as a program
// with metrics on has them; the line then says impl=kube-metrics (run.sh
// -M compares the two). After the timed section and the getrusage reading
// it renders the registry once and prints one more line, what the hooks
// recorded (sums over the queue's series):
//   METRICS workload=<w> adds=<workqueue_adds_total> gets=<..._queue_duration_seconds_count>
//           done=<..._work_duration_seconds_count> retries=<workqueue_retries_total> bytes=<rendered text>
//
// --hooks gives the queue hooks that only count their calls in plain
// variables (impl=kube-hooks): what metrics cost apart from the provider's
// own recording (the queue's timestamps, its clock readings, the calls). It
// prints the same METRICS line from its counts (bytes=0).
//
// `kube-bench-workqueue clock_read [n]` times n readings of the clock the
// queue's metrics read (kube::real_clock(), std::chrono::steady_clock):
//   RESULT impl=kube workload=clock_read n=<n> ns_per_op=<x> ...
//
// Each workload does the same work as its Go peer. Where client-go's producer
// is a goroutine racing its workers, ours is a std::thread racing the
// executor's thread (so its adds take the cross-thread path, and the queue
// drains while it fills, as client-go's does). Workers take items as
// client-go's Get does (try_get, then async_get only when the queue is
// empty) and count in a plain local variable; neither side takes a lock or
// an atomic per item to count.
#include <kube/base/clock.hpp>
#include <kube/prometheus/metrics.hpp>
#include <kube/workqueue/rate_limited_queue.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include "../tools/metrics_text.hpp"
#include "../tools/process_stats.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace asio = boost::asio;
namespace wq = kube::workqueue;
using steady = std::chrono::steady_clock;

namespace {

std::vector<std::string> make_keys(std::size_t n) {
  std::vector<std::string> keys;
  keys.reserve(n);
  char buf[64];
  for (std::size_t i = 0; i < n; ++i) {
    std::snprintf(buf, sizeof buf, "default/object-%07zu", i);
    keys.emplace_back(buf);
  }
  return keys;
}

// A key the producer builds and hands over, as a controller's event
// handler does: the queue may take its buffer, and whatever the queue leaves
// in it is freed when the temporary dies, inside the timed section (a
// moved-from keys[i] would keep it until after the timing).
std::string take(std::string& key) { return std::move(key); }

// What a worker does to get its next item, like client-go's Get(): take a
// ready item with a plain call (try_get), and only when none is ready await
// async_get (wait_item, a coroutine frame only on that path):
//   std::optional<std::string> key = q.try_get();
//   if (!key) key = co_await wait_item(q);
// nullopt after that means shut down.
template <class Queue>
asio::awaitable<std::optional<std::string>> wait_item(Queue& q) {
  auto [ec, key] = co_await q.async_get(asio::as_tuple(asio::deferred));
  if (ec) co_return std::nullopt;
  co_return std::optional<std::string>(std::move(key));
}

// A worker: get, done, count; until the queue is shut down and empty.
template <class Queue>
asio::awaitable<void> worker(Queue& q, std::size_t& processed) {
  for (;;) {
    std::optional<std::string> key = q.try_get();
    if (!key) key = co_await wait_item(q);
    if (!key) co_return;
    q.done(*key);
    ++processed;
  }
}

// add/get/done of n distinct keys: a producer thread adds them all, then
// shuts the queue down; `workers` workers take them until it is empty.
double distinct(std::size_t n, int workers, const wq::queue_params& params) {
  auto keys = make_keys(n);
  asio::io_context io(1);
  wq::queue<std::string> q(io.get_executor(), params);
  std::vector<std::size_t> processed(workers, 0);
  for (int w = 0; w < workers; ++w) asio::co_spawn(io, worker(q, processed[w]), asio::detached);
  const auto start = steady::now();
  std::thread producer([&] {
    for (auto& k : keys) q.add(take(k));
    q.shutdown();
  });
  io.run();
  const auto end = steady::now();
  producer.join();
  std::size_t total = 0;
  for (std::size_t p : processed) total += p;
  if (total != n) throw std::runtime_error("distinct: processed " + std::to_string(total));
  return std::chrono::duration<double, std::nano>(end - start).count();
}

// n adds drawn from 1000 hot keys by a producer thread while 2 workers
// process (so adds land on queued items and on items being processed), then
// shutdown with drain. Times the adds and the processing.
double dedup_hot(std::size_t n, const wq::queue_params& params) {
  auto hot = make_keys(1000);
  std::mt19937 rng(42);
  std::vector<std::uint32_t> pick(n);
  for (auto& p : pick) p = rng() % hot.size();
  std::vector<bool> picked(hot.size(), false);
  for (auto p : pick) picked[p] = true;
  const auto keys_added = static_cast<std::size_t>(std::count(picked.begin(), picked.end(), true));
  asio::io_context io(1);
  wq::queue<std::string> q(io.get_executor(), params);
  std::vector<std::size_t> processed(2, 0);
  for (std::size_t& p : processed) asio::co_spawn(io, worker(q, p), asio::detached);
  const auto start = steady::now();
  std::thread producer([&] {
    for (std::size_t i = 0; i < n; ++i) q.add(hot[pick[i]]);
    q.async_shutdown_with_drain(asio::detached);
  });
  io.run();
  const auto end = steady::now();
  producer.join();
  const std::size_t total = processed[0] + processed[1];
  if (total < keys_added || total > n) throw std::runtime_error("dedup_hot: processed " + std::to_string(total));
  return std::chrono::duration<double, std::nano>(end - start).count();
}

// n add_after of distinct keys with random delays in [0, 10ms) from a
// producer thread; 1 worker takes them all.
double add_after_random(std::size_t n, const wq::queue_params& params) {
  auto keys = make_keys(n);
  std::mt19937 rng(42);
  std::vector<std::chrono::nanoseconds> delays(n);
  for (auto& d : delays) d = std::chrono::nanoseconds(rng() % 10'000'000);
  asio::io_context io(1);
  wq::delaying_queue<std::string> q(io.get_executor(), params);
  std::size_t processed = 0;
  steady::time_point end;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        for (;;) {
          std::optional<std::string> key = q.try_get();
          if (!key) key = co_await wait_item(q);
          if (!key) co_return;
          q.done(*key);
          if (++processed == n) {
            end = steady::now();
            q.shutdown();
          }
        }
      },
      asio::detached);
  const auto start = steady::now();
  std::thread producer([&] {
    for (std::size_t i = 0; i < n; ++i) q.add_after(take(keys[i]), delays[i]);
  });
  io.run();
  producer.join();
  if (processed != n) throw std::runtime_error("add_after_random: processed " + std::to_string(processed));
  return std::chrono::duration<double, std::nano>(end - start).count();
}

// n add_rate_limited calls over 10k keys with the default controller limiter,
// on the executor (client-go: on the calling goroutine; no worker on either
// side). Delays grow far beyond the run, so this measures the calls.
double rate_limited(std::size_t n, const wq::queue_params& params) {
  auto keys = make_keys(10'000);
  asio::io_context io(1);
  wq::rate_limited_queue<std::string> q(io.get_executor(), wq::default_controller_rate_limiter<std::string>(), params);
  double ns = 0;
  asio::post(io, [&] {
    const auto start = steady::now();
    for (std::size_t i = 0; i < n; ++i) q.add_rate_limited(keys[i % keys.size()]);
    ns = std::chrono::duration<double, std::nano>(steady::now() - start).count();
    if (q.num_requeues(keys[0]) != static_cast<int>((n + keys.size() - 1) / keys.size())) {
      throw std::runtime_error("rate_limited: wrong requeue count");
    }
    q.shutdown();
  });
  io.run();
  return ns;
}

// Hooks that count their calls and nothing else (--hooks).
struct counting_hooks final : kube::metrics::workqueue_metrics {
  std::size_t adds = 0, gets = 0, dones = 0, retries = 0;
  void on_add() override { ++adds; }
  void on_get(duration) override { ++gets; }
  void on_done(duration) override { ++dones; }
  void on_retry() override { ++retries; }
};

// n readings of the real clock, as the queue's metrics take them.
double clock_read(std::size_t n) {
  const kube::clock& clk = kube::real_clock();
  std::int64_t sum = 0;
  const auto start = steady::now();
  for (std::size_t i = 0; i < n; ++i) sum += clk.now().time_since_epoch().count();
  const auto end = steady::now();
  if (sum == 42) std::puts("");  // keeps the readings
  return std::chrono::duration<double, std::nano>(end - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string_view> args;
  bool with_metrics = false;
  bool with_hooks = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--metrics") {
      with_metrics = true;
    } else if (a == "--hooks") {
      with_hooks = true;
    } else {
      args.push_back(a);
    }
  }
  if (args.empty() || args.size() > 2 || (with_metrics && with_hooks)) {
    std::fprintf(
        stderr, "usage: %s distinct_1w|distinct_2w|dedup_hot|add_after_random|rate_limited [n] [--metrics | --hooks]\n",
        argv[0]);
    return 2;
  }
  const std::string_view w = args[0];
  const std::size_t n = args.size() > 1 ? std::strtoull(std::string(args[1]).c_str(), nullptr, 10) : 1'000'000;
  // Built before timing, as a program builds its provider at start.
  std::shared_ptr<kube::prometheus::metrics> metrics;
  wq::queue_params params;
  if (with_metrics) {
    metrics = std::make_shared<kube::prometheus::metrics>();
    params.metrics = metrics->workqueue(w);
  }
  std::shared_ptr<counting_hooks> hooks;
  if (with_hooks) {
    hooks = std::make_shared<counting_hooks>();
    params.metrics = hooks;
  }
  double ns = 0;
  try {
    if (w == "distinct_1w") {
      ns = distinct(n, 1, params);
    } else if (w == "distinct_2w") {
      ns = distinct(n, 2, params);
    } else if (w == "dedup_hot") {
      ns = dedup_hot(n, params);
    } else if (w == "add_after_random") {
      ns = add_after_random(n, params);
    } else if (w == "rate_limited") {
      ns = rate_limited(n, params);
    } else if (w == "clock_read") {
      ns = clock_read(n);
    } else {
      std::fprintf(stderr, "unknown workload %.*s\n", int(w.size()), w.data());
      return 2;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench failed: %s\n", e.what());
    return 1;
  }
  const auto u = kube_bench::usage_now();
  std::printf("RESULT impl=%s workload=%.*s n=%zu ns_per_op=%.1f cpu_s=%.3f maxrss_kb=%ld\n",
              metrics ? "kube-metrics"
              : hooks ? "kube-hooks"
                      : "kube",
              int(w.size()), w.data(), n, ns / double(n), u.cpu, u.max_rss_kb);
  if (metrics) {
    const std::string text = metrics->render();
    using kube_bench::metric_sum;
    std::printf("METRICS workload=%.*s adds=%.0f gets=%.0f done=%.0f retries=%.0f bytes=%zu\n", int(w.size()), w.data(),
                metric_sum(text, "workqueue_adds_total"), metric_sum(text, "workqueue_queue_duration_seconds_count"),
                metric_sum(text, "workqueue_work_duration_seconds_count"), metric_sum(text, "workqueue_retries_total"),
                text.size());
  }
  if (hooks) {
    std::printf("METRICS workload=%.*s adds=%zu gets=%zu done=%zu retries=%zu bytes=0\n", int(w.size()), w.data(),
                hooks->adds, hooks->gets, hooks->dones, hooks->retries);
  }
  return 0;
}
