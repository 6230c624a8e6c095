// What a queue reports to its metrics hooks, with a manual clock (the
// Prometheus rendering is kube::prometheus's, tested in unit.prometheus).
#include "test_support.hpp"

#include <kube/workqueue/delaying_queue.hpp>
#include <kube/base/manual_clock.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace asio = boost::asio;
namespace wq = kube::workqueue;
using namespace std::chrono_literals;
using wq_test::settle;

namespace {
// Records what the queue reports, as a metrics library would.
struct recording_hooks final : kube::metrics::workqueue_metrics {
  long depth = 0;
  int adds = 0;
  int retries = 0;
  std::vector<duration> queued, worked;
  duration unfinished{}, longest{};
  void on_add() override {
    ++adds;
    ++depth;
  }
  void on_get(duration d) override {
    --depth;
    queued.push_back(d);
  }
  void on_done(duration d) override { worked.push_back(d); }
  void on_retry() override { ++retries; }
  void on_unfinished_work(duration total, duration max) override {
    unfinished = total;
    longest = max;
  }
};
}  // namespace

TEST_CASE("metrics: depth, adds, latency, work duration, unfinished work, retries", "[workqueue][metrics]") {
  asio::io_context io;
  kube::manual_clock clk;
  auto m = std::make_shared<recording_hooks>();
  wq::delaying_queue<std::string> q(io.get_executor(), {.time_source = &clk, .metrics = m});
  q.add("a");
  q.add("a");  // duplicate: not an add
  q.add("b");
  settle(io);
  CHECK(m->adds == 2);
  CHECK(m->depth == 2);

  clk.advance(10ms);
  std::string item;
  q.async_get([&](wq::error_code, std::string s) { item = std::move(s); });
  settle(io);
  REQUIRE(item == "a");
  CHECK(m->depth == 1);
  REQUIRE(m->queued.size() == 1);
  CHECK(m->queued[0] == 10ms);

  clk.advance(2s);
  q.update_unfinished_work();
  CHECK(m->unfinished == 2s);
  CHECK(m->longest == 2s);

  q.done("a");
  REQUIRE(m->worked.size() == 1);
  CHECK(m->worked[0] == 2s);
  q.update_unfinished_work();
  CHECK(m->unfinished == 0s);

  q.add_after("c", 1s);
  q.add_after("d", 0s);
  settle(io);
  CHECK(m->retries == 2);
  CHECK(m->adds == 3);  // "d" was added at once
  CHECK(m->depth == 2);
  q.shutdown();
  settle(io);
}

namespace {
// Hooks that throw on demand: a hook may throw, and so may the queue's own
// recording when memory runs out.
struct failing_hooks final : kube::metrics::workqueue_metrics {
  bool fail_add = false;
  bool fail_done = false;
  int fail_next_adds = 0;  // the next this many on_add calls throw
  void on_add() override {
    if (fail_next_adds > 0) {
      --fail_next_adds;
      throw std::runtime_error("on_add");
    }
    if (fail_add) throw std::runtime_error("on_add");
  }
  void on_get(duration) override {}
  void on_done(duration) override {
    if (fail_done) throw std::runtime_error("on_done");
  }
  void on_retry() override {}
  void on_unfinished_work(duration, duration) override {}
};
}  // namespace

TEST_CASE("metrics: an add or done whose recording fails leaves the item as it was, never stuck",
          "[workqueue][metrics]") {
  asio::io_context io;
  kube::manual_clock clk;
  auto hooks = std::make_shared<failing_hooks>();
  wq::queue<std::string> q(io.get_executor(), {.time_source = &clk, .metrics = hooks});
  bool ran = false;
  asio::post(io, [&] {
    hooks->fail_add = true;
    CHECK_THROWS_AS(q.add("a"), std::runtime_error);  // a new item: not added
    hooks->fail_add = false;
    CHECK(q.len() == 0);
    q.add("a");  // added now (a stale "already queued" mark would drop it)
    CHECK(q.len() == 1);
    auto a = q.try_get();
    REQUIRE(a.has_value());

    hooks->fail_add = true;
    CHECK_THROWS_AS(q.add("a"), std::runtime_error);  // held: the requeue is not recorded
    hooks->fail_add = false;
    hooks->fail_done = true;
    CHECK_THROWS_AS(q.done("a"), std::runtime_error);  // still held
    hooks->fail_done = false;
    q.done("a");
    CHECK(q.len() == 0);  // the failed re-add did not requeue it
    CHECK_FALSE(q.try_get().has_value());

    hooks->fail_add = true;
    CHECK_THROWS_AS(q.add("a"), std::runtime_error);  // finished (its node is kept a while): not added
    hooks->fail_add = false;
    CHECK(q.len() == 0);
    q.add("a");
    CHECK(q.len() == 1);
    auto again = q.try_get();
    REQUIRE(again.has_value());
    CHECK(*again == "a");
    q.done("a");
    CHECK(q.len() == 0);
    ran = true;
  });
  settle(io);
  CHECK(ran);
}

TEST_CASE("metrics: an item whose delay ends but cannot be queued is dropped, and the others are queued",
          "[workqueue][metrics][delaying]") {
  asio::io_context io;
  kube::manual_clock clk;
  auto hooks = std::make_shared<failing_hooks>();
  wq::delaying_queue<std::string> q(io.get_executor(), {.time_source = &clk, .metrics = hooks});
  asio::post(io, [&] {
    q.add_after("a", 10ms);
    q.add_after("b", 10ms);
    q.add_after("c", 10ms);
  });
  settle(io);
  CHECK(q.waiting_for_delay() == 3);

  hooks->fail_next_adds = 1;  // "a", the first one ready
  clk.advance(10ms);
  CHECK_THROWS_AS(settle(io), std::runtime_error);
  settle(io);
  CHECK(q.waiting_for_delay() == 0);
  CHECK(q.len() == 2);  // "b" and "c" were not lost with "a"

  bool ran = false;
  asio::post(io, [&] {
    auto b = q.try_get();
    auto c = q.try_get();
    REQUIRE(b.has_value());
    REQUIRE(c.has_value());
    CHECK(*b == "b");
    CHECK(*c == "c");
    q.done("b");
    q.done("c");
    // "a" waits no more: a new delay for it fires
    q.add_after("a", 5ms);
    ran = true;
  });
  settle(io);
  REQUIRE(ran);
  clk.advance(5ms);
  settle(io);
  CHECK(q.len() == 1);
}

TEST_CASE("metrics: held items finished in any order - the unfinished work is theirs", "[workqueue][metrics]") {
  asio::io_context io;
  kube::manual_clock clk;
  auto m = std::make_shared<recording_hooks>();
  wq::queue<std::string> q(io.get_executor(), {.time_source = &clk, .metrics = m});
  bool ran = false;
  asio::post(io, [&] {
    q.add("a");
    q.add("b");
    q.add("c");
    q.add("d");
    REQUIRE(q.try_get() == "a");  // taken at 0s
    clk.advance(1s);
    REQUIRE(q.try_get() == "b");  // 1s
    clk.advance(1s);
    REQUIRE(q.try_get() == "c");  // 2s
    clk.advance(1s);
    REQUIRE(q.try_get() == "d");  // 3s
    clk.advance(1s);              // now 4s: held for 4, 3, 2, 1
    q.update_unfinished_work();
    CHECK(m->unfinished == 10s);
    CHECK(m->longest == 4s);

    q.done("b");  // from the middle
    q.update_unfinished_work();
    CHECK(m->unfinished == 7s);
    CHECK(m->longest == 4s);
    q.done("a");  // the longest
    q.update_unfinished_work();
    CHECK(m->unfinished == 3s);
    CHECK(m->longest == 2s);
    q.done("d");  // the newest
    q.update_unfinished_work();
    CHECK(m->unfinished == 2s);
    CHECK(m->longest == 2s);

    q.add("e");  // taken after "c", the only one held: the list is whole again
    REQUIRE(q.try_get() == "e");
    clk.advance(1s);
    q.update_unfinished_work();
    CHECK(m->unfinished == 4s);  // c 3s, e 1s
    CHECK(m->longest == 3s);
    q.done("c");
    q.done("e");
    q.update_unfinished_work();
    CHECK(m->unfinished == 0s);
    CHECK(m->longest == 0s);
    REQUIRE(m->worked.size() == 5);
    CHECK(m->worked[0] == 3s);  // b
    CHECK(m->worked[1] == 4s);  // a
    CHECK(m->worked[2] == 1s);  // d
    CHECK(m->worked[3] == 3s);  // c
    CHECK(m->worked[4] == 1s);  // e

    // Re-added while held: its queue latency counts from that add.
    q.add("f");
    REQUIRE(q.try_get() == "f");
    clk.advance(1s);
    q.add("f");  // dirty again while held
    clk.advance(2s);
    q.done("f");  // requeued
    clk.advance(3s);
    REQUIRE(q.try_get() == "f");
    CHECK(m->queued.back() == 5s);
    CHECK(m->worked.back() == 3s);
    q.done("f");
    ran = true;
  });
  settle(io);
  CHECK(ran);
}

TEST_CASE("metrics: times over many nodes and reused ones are each item's own", "[workqueue][metrics]") {
  asio::io_context io;
  kube::manual_clock clk;
  auto m = std::make_shared<recording_hooks>();
  wq::queue<std::string> q(io.get_executor(), {.time_source = &clk, .metrics = m});
  constexpr int n = 70'000;  // more nodes than several of the pool's slabs hold
  bool ran = false;
  asio::post(io, [&] {
    for (int round = 0; round < 2; ++round) {  // the second round reuses freed nodes
      m->queued.clear();
      m->worked.clear();
      for (int i = 0; i < n; ++i) {
        q.add("ns/object-" + std::to_string(round) + "-" + std::to_string(i));
        if (i % 1000 == 999) clk.advance(1ms);  // items i/1000 ms apart
      }
      // Item i is added at i/1000 ms (rounded down) and taken n/1000 ms later; the
      // last of each thousand is held for 1 ms, the others are done at once.
      for (int i = 0; i < n; ++i) {
        auto item = q.try_get();
        REQUIRE(item.has_value());
        if (i % 1000 == 999) clk.advance(1ms);
        q.done(*item);
      }
      REQUIRE(m->queued.size() == std::size_t{n});
      REQUIRE(m->worked.size() == std::size_t{n});
      int wrong = 0;
      for (int i = 0; i < n; ++i) {
        if (m->queued[std::size_t(i)] != std::chrono::milliseconds(n / 1000)) ++wrong;
        if (m->worked[std::size_t(i)] != (i % 1000 == 999 ? 1ms : 0ms)) ++wrong;
      }
      CHECK(wrong == 0);
    }
    ran = true;
  });
  settle(io);
  CHECK(ran);
}

TEST_CASE("metrics: adds from other threads count from when they reach the executor", "[workqueue][metrics][threads]") {
  asio::io_context io;
  kube::manual_clock clk;
  auto m = std::make_shared<recording_hooks>();
  wq::queue<std::string> q(io.get_executor(), {.time_source = &clk, .metrics = m});
  std::thread producer([&] {
    for (int i = 0; i < 1000; ++i) q.add("ns/remote-" + std::to_string(i));
  });
  producer.join();
  clk.advance(3s);  // the adds reach the executor now
  settle(io);
  CHECK(m->adds == 1000);
  CHECK(q.len() == 1000);
  clk.advance(2s);
  bool ran = false;
  asio::post(io, [&] {
    for (int i = 0; i < 1000; ++i) {
      auto item = q.try_get();
      REQUIRE(item.has_value());
      q.done(*item);
    }
    ran = true;
  });
  settle(io);
  REQUIRE(ran);
  REQUIRE(m->queued.size() == 1000);
  int wrong = 0;
  for (auto d : m->queued) wrong += d != 2s;
  CHECK(wrong == 0);
}
