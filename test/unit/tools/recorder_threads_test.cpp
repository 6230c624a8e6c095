// event_recorder under threads (TSAN): record() from 4 threads while the
// writer runs on a 2-thread io_context. The server is unreachable, so every
// write fails on the network (max_tries 1) — the queue, the wake-ups and the
// counters are what is exercised.
#include <kube/tools/event_recorder.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

TEST_CASE("record() from many threads while the writer runs: nothing lost, nothing double counted",
          "[events][threads]") {
  boost::asio::io_context io;
  auto guard = boost::asio::make_work_guard(io);
  kube::detail::transport_params s;
  s.server = "http://127.0.0.1:1";  // connection refused
  s.log.level = kube::log_level::off;
  s.qps = 0;
  auto c = kube::detail::client_access::make(io.get_executor(), std::move(s));
  kube::event_recorder_params o;
  o.component = "threads";
  o.max_tries = 1;
  o.spam_burst = 1000;
  kube::event_recorder rec(c, o);

  boost::asio::cancellation_signal stop;
  std::atomic<bool> done{false};
  kube::error_code run_ec;
  boost::asio::post(io, [&] {
    rec.async_run(boost::asio::bind_cancellation_slot(stop.slot(), [&](kube::error_code ec) {
      run_ec = ec;
      done = true;
    }));
  });
  std::vector<std::thread> io_threads;
  for (int i = 0; i < 2; ++i) io_threads.emplace_back([&] { io.run(); });

  constexpr int producers = 4, per_producer = 50;
  std::vector<std::thread> threads;
  for (int t = 0; t < producers; ++t) {
    threads.emplace_back([&, t] {
      const kube::object_reference obj{"v1", "Pod", "demo", "p" + std::to_string(t), "u"};
      for (int i = 0; i < per_producer; ++i) rec.record(obj, kube::event_type::normal, "R", "m" + std::to_string(i));
    });
  }
  for (auto& t : threads) t.join();

  // Wait (bounded) until the writer has processed everything it accepted.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (;;) {
    const auto st = rec.stats();
    if (st.failed + st.filtered + st.created + st.patched == st.recorded && rec.queued() == 0) break;
    REQUIRE(std::chrono::steady_clock::now() < deadline);
    std::this_thread::yield();
  }
  const auto st = rec.stats();
  CHECK(st.recorded + st.dropped == producers * per_producer);
  CHECK(st.recorded == producers * per_producer);  // capacity 1000 is never reached
  CHECK(st.failed == st.recorded);                 // every write failed on the network
  CHECK(st.created == 0);

  boost::asio::post(io, [&] { stop.emit(boost::asio::cancellation_type::terminal); });
  while (!done) std::this_thread::yield();
  guard.reset();
  for (auto& t : io_threads) t.join();
  CHECK(run_ec == boost::asio::error::operation_aborted);
}
