// Workqueue benchmark: the same workloads as test/bench/go/cmd/workqueue (client-go).
//
//   kube-bench-workqueue <workload> [n]
//
// Prints one line:
//   RESULT impl=kube workload=<w> n=<n> ns_per_op=<x> cpu_s=<y> maxrss_kb=<z>
// ns_per_op is wall time of the measured section divided by n; cpu_s and
// maxrss_kb cover the whole process (getrusage). Keys are built before timing.
// Workers take items as client-go's Get does (try_get, then async_get only
// when the queue is empty). The producer's pattern is the same on both sides
// (see producer_batch()).
#include <kube/workqueue/rate_limited_queue.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "../tools/process_stats.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
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

// The producer's pattern, identical in the Go peer: 0 (the default, every
// workload) means the producer adds without ever yielding, the literal
// `for k in keys: add(k)` loop on both sides; B > 0 means it yields after
// every B adds (here `co_await post`, in Go runtime.Gosched()). It does not
// apply to distinct_1w_xthread, whose producer is an OS thread here and a
// goroutine there and never yields on either side (std::this_thread::yield
// hands the core to other processes, not to the queue's consumer: it is not
// Gosched's equivalent).
// KUBE_BENCH_PRODUCER_BATCH sets it. client-go's producer goroutine runs on
// the other core while its workers run, so its queue drains while it fills;
// ours is a coroutine on the workers' thread, so with 0 our queue holds all
// n before a worker runs (and in dedup_hot no add lands on an item being
// processed: our workers only run after the producer). Yielding is not free
// or neutral in Go: runtime.Gosched() every 64 adds makes client-go's
// dedup_hot 3-5x slower on the development VM, so B > 0 is reported only as a
// second table, never as the headline.
std::size_t producer_batch(std::size_t def) {
  const char* v = std::getenv("KUBE_BENCH_PRODUCER_BATCH");
  if (v == nullptr) return def;
  char* end = nullptr;
  const unsigned long long b = std::strtoull(v, &end, 10);
  if (end == v || *end != '\0') throw std::invalid_argument(std::string("bad KUBE_BENCH_PRODUCER_BATCH: ") + v);
  return static_cast<std::size_t>(b);
}

// Calls add(i) for i in [0, n), yielding every `batch` calls (0: never).
template <class Add>
asio::awaitable<void> produce(asio::io_context& io, std::size_t n, std::size_t batch, Add add) {
  for (std::size_t i = 0; i < n; ++i) {
    add(i);
    if (batch != 0 && i % batch == batch - 1) co_await asio::post(io, asio::deferred);
  }
}

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

// A worker: get, (optionally hold across a suspension), done; counts items.
template <class Queue>
asio::awaitable<void> worker(Queue& q, std::size_t& processed, bool hold) {
  for (;;) {
    std::optional<std::string> key = q.try_get();
    if (!key) key = co_await wait_item(q);
    if (!key) co_return;
    if (hold) co_await asio::post(q.get_executor(), asio::deferred);
    q.done(*key);
    ++processed;
  }
}

// add/get/done of n distinct keys. The producer is a coroutine on the same
// executor (or, with producer_thread, a separate std::thread).
double distinct(std::size_t n, int workers, bool producer_thread) {
  auto keys = make_keys(n);
  const std::size_t batch = producer_thread ? 0 : producer_batch(0);
  asio::io_context io(1);
  wq::queue<std::string> q(io.get_executor());
  std::size_t processed = 0;
  const auto start = steady::now();
  steady::time_point end;
  for (int w = 0; w < workers; ++w) {
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
  }
  std::thread producer;
  if (producer_thread) {
    producer = std::thread([&] {
      for (auto& k : keys) q.add(take(k));
    });
  } else {
    asio::co_spawn(io, produce(io, n, batch, [&](std::size_t i) { q.add(take(keys[i])); }), asio::detached);
  }
  io.run();
  if (producer.joinable()) producer.join();
  if (processed != n) throw std::runtime_error("distinct: processed " + std::to_string(processed));
  return std::chrono::duration<double, std::nano>(end - start).count();
}

// n adds drawn from 1000 hot keys, 2 workers (each holds its item across a
// suspension, so with a yielding producer adds land on items being
// processed; with the default non-yielding producer they land on queued
// items), then a drain. Times the adds and the processing.
double dedup_hot(std::size_t n) {
  auto hot = make_keys(1000);
  std::mt19937 rng(42);
  std::vector<std::uint32_t> pick(n);
  for (auto& p : pick) p = rng() % hot.size();
  const std::size_t batch = producer_batch(0);
  asio::io_context io(1);
  wq::queue<std::string> q(io.get_executor());
  std::size_t processed = 0;
  for (int w = 0; w < 2; ++w) asio::co_spawn(io, worker(q, processed, true), asio::detached);
  const auto start = steady::now();
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        co_await produce(io, n, batch, [&](std::size_t i) { q.add(hot[pick[i]]); });
        co_await q.async_shutdown_with_drain(asio::deferred);
      },
      asio::detached);
  io.run();
  const auto end = steady::now();
  if (processed == 0 || processed > n) throw std::runtime_error("dedup_hot: processed " + std::to_string(processed));
  return std::chrono::duration<double, std::nano>(end - start).count();
}

// n add_after of distinct keys with random delays in [0, 10ms); 1 worker
// takes them all.
double add_after_random(std::size_t n) {
  auto keys = make_keys(n);
  std::mt19937 rng(42);
  std::vector<std::chrono::nanoseconds> delays(n);
  for (auto& d : delays) d = std::chrono::nanoseconds(rng() % 10'000'000);
  const std::size_t batch = producer_batch(0);
  asio::io_context io(1);
  wq::delaying_queue<std::string> q(io.get_executor());
  std::size_t processed = 0;
  steady::time_point end;
  const auto start = steady::now();
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
  asio::co_spawn(io, produce(io, n, batch, [&](std::size_t i) { q.add_after(take(keys[i]), delays[i]); }),
                 asio::detached);
  io.run();
  if (processed != n) throw std::runtime_error("add_after_random: processed " + std::to_string(processed));
  return std::chrono::duration<double, std::nano>(end - start).count();
}

// n add_rate_limited calls over 10k keys with the default controller limiter.
// Delays grow far beyond the run, so this measures the calls themselves.
double rate_limited(std::size_t n) {
  auto keys = make_keys(10'000);
  asio::io_context io(1);
  wq::rate_limited_queue<std::string> q(io.get_executor());
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

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: %s distinct_1w|distinct_2w|distinct_1w_xthread|dedup_hot|add_after_random|rate_limited [n]\n",
                 argv[0]);
    return 2;
  }
  const std::string_view w = argv[1];
  const std::size_t n = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1'000'000;
  double ns = 0;
  try {
    if (w == "distinct_1w") {
      ns = distinct(n, 1, false);
    } else if (w == "distinct_2w") {
      ns = distinct(n, 2, false);
    } else if (w == "distinct_1w_xthread") {
      ns = distinct(n, 1, true);
    } else if (w == "dedup_hot") {
      ns = dedup_hot(n);
    } else if (w == "add_after_random") {
      ns = add_after_random(n);
    } else if (w == "rate_limited") {
      ns = rate_limited(n);
    } else {
      std::fprintf(stderr, "unknown workload %.*s\n", int(w.size()), w.data());
      return 2;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench failed: %s\n", e.what());
    return 1;
  }
  const auto u = kube_bench::usage_now();
  std::printf("RESULT impl=kube workload=%.*s n=%zu ns_per_op=%.1f cpu_s=%.3f maxrss_kb=%ld\n", int(w.size()),
              w.data(), n, ns / double(n), u.cpu, u.max_rss_kb);
  return 0;
}
