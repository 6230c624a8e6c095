// work_loop with real threads (run under TSAN): the io_context runs on three
// threads, two producer threads enqueue 20,000 changes of 50 keys while
// another thread reads stats(). Every key's last change is reconciled, no key
// is ever in two reconciles at once, and a stop drains. No sleeps: the test
// waits for signals (futures) with generous bounds.
#include <kube/controller/work_loop.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <catch2/catch.hpp>

#include <array>
#include <atomic>
#include <future>
#include <string>
#include <thread>
#include <vector>

namespace asio = boost::asio;
namespace kc = kube::controller;
using namespace std::chrono_literals;

TEST_CASE("work_loop threads: producers on other threads, every last change reconciled, one key at a time",
          "[controller][work_loop][threads]") {
  constexpr int keys = 50;
  constexpr int per_producer = 10000;
  asio::io_context io;
  auto guard = asio::make_work_guard(io);
  std::vector<std::thread> runners;

  kc::work_loop_params o;
  o.workers = 4;
  kc::work_loop loop(io.get_executor(), o);

  std::array<std::atomic<int>, keys> latest{};  // bumped by producers before each enqueue
  std::array<int, keys> seen{};                 // strand only
  std::array<int, keys> running{};              // strand only
  int overlaps = 0;                             // strand only
  std::atomic<bool> producers_done{false};
  std::promise<void> all_seen;
  bool signalled = false;  // strand only

  auto reconcile = [&](const std::string& key) -> asio::awaitable<kc::reconcile_result> {
    const int i = std::stoi(key.substr(2));
    if (++running[i] > 1) ++overlaps;
    seen[i] = latest[i].load();
    // Let other workers run between the read and the end of this reconcile.
    co_await asio::post(co_await asio::this_coro::executor, asio::use_awaitable);
    --running[i];
    if (!signalled && producers_done.load()) {
      bool all = true;
      for (int k = 0; k < keys; ++k) all = all && seen[k] == latest[k].load();
      if (all) {
        signalled = true;
        all_seen.set_value();
      }
    }
    co_return kc::reconcile_result::done();
  };

  asio::cancellation_signal stop;
  std::promise<kube::error_code> stopped;
  asio::post(loop.get_executor(), [&] {
    loop.async_run(reconcile, {},
                   asio::bind_cancellation_slot(stop.slot(), [&](kube::error_code ec) { stopped.set_value(ec); }));
  });
  for (int t = 0; t < 3; ++t) runners.emplace_back([&] { io.run(); });

  std::atomic<bool> reading{true};
  bool monotonic = true;  // reader thread only until joined (Catch2 assertions stay on this thread)
  std::thread reader([&] {
    std::uint64_t last = 0;
    while (reading.load()) {
      const auto s = loop.stats();
      if (s.reconciles < last) monotonic = false;
      last = s.reconciles;
      std::this_thread::yield();
    }
  });
  std::vector<std::thread> producers;
  for (int p = 0; p < 2; ++p) {
    producers.emplace_back([&, p] {
      for (int n = 0; n < per_producer; ++n) {
        const int i = (n * 7 + p) % keys;
        latest[i].fetch_add(1);
        loop.enqueue("k-" + std::to_string(i));
      }
    });
  }
  for (auto& p : producers) p.join();
  producers_done = true;
  // A last change of every key, so the "all seen" check runs after the flag.
  for (int i = 0; i < keys; ++i) {
    latest[i].fetch_add(1);
    loop.enqueue("k-" + std::to_string(i));
  }
  auto seen_all = all_seen.get_future();
  const bool converged = seen_all.wait_for(120s) == std::future_status::ready;
  CHECK(converged);

  asio::post(loop.get_executor(), [&] { stop.emit(asio::cancellation_type::terminal); });
  auto stop_result = stopped.get_future();
  const bool drained = stop_result.wait_for(60s) == std::future_status::ready;
  CHECK(drained);
  if (drained) CHECK(stop_result.get() == asio::error::operation_aborted);
  reading = false;
  reader.join();
  CHECK(monotonic);
  guard.reset();
  io.stop();
  for (auto& r : runners) r.join();

  const auto s = loop.stats();
  CHECK(overlaps == 0);
  CHECK(s.in_flight == 0);
  CHECK(s.failed == 0);
  CHECK(s.reconciles >= static_cast<std::uint64_t>(keys));
  CHECK(s.reconciles < static_cast<std::uint64_t>(2 * per_producer + keys));  // changes were coalesced
}
