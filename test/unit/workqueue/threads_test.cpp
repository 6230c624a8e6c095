// Producers on other threads; workers on the io_context thread. Labelled tsan.
#include <kube/workqueue/delaying_queue.hpp>
#include <kube/workqueue/detail/executor_probe.hpp>
#include <kube/workqueue/queue.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace asio = boost::asio;
namespace wq = kube::workqueue;

TEST_CASE("threads: adds from 2 threads reach 8 workers, one key never held twice", "[workqueue][threads]") {
  asio::io_context io;
  wq::queue<int> q(io.get_executor());
  constexpr int keys = 64;
  constexpr int adds_per_thread = 50'000;
  std::vector<int> held(keys, 0);
  int violations = 0;
  long processed = 0;
  std::vector<int> last_seen(keys, -1);  // highest sequence number seen per key's hand-out window
  for (int w = 0; w < 8; ++w) {
    asio::co_spawn(
        io,
        [&]() -> asio::awaitable<void> {
          for (;;) {
            auto [ec, key] = co_await q.async_get(asio::as_tuple(asio::deferred));
            if (ec) co_return;
            if (held[key]++ != 0) ++violations;
            ++processed;
            co_await asio::post(io, asio::use_awaitable);
            --held[key];
            q.done(key);
          }
        },
        asio::detached);
  }
  std::atomic<int> producers_left{2};
  std::vector<std::thread> producers;
  for (int t = 0; t < 2; ++t) {
    producers.emplace_back([&, t] {
      for (int i = 0; i < adds_per_thread; ++i) q.add((i * 7 + t) % keys);
      if (--producers_left == 0) {
        // Sent after every add of both threads, through the same executor.
        asio::post(io, [&] { q.async_shutdown_with_drain(asio::detached); });
      }
    });
  }
  io.run();
  for (auto& p : producers) p.join();
  CHECK(violations == 0);
  CHECK(processed >= keys);  // every key was added, so each came out at least once
  CHECK(q.shutting_down());
}

TEST_CASE("threads: adds from one thread keep their order", "[workqueue][threads]") {
  asio::io_context io;
  wq::queue<int> q(io.get_executor());
  constexpr int n = 20'000;
  std::vector<int> seen;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        for (;;) {
          auto [ec, v] = co_await q.async_get(asio::as_tuple(asio::deferred));
          if (ec) co_return;
          seen.push_back(v);
          q.done(v);
          if (static_cast<int>(seen.size()) == n) q.shutdown();
        }
      },
      asio::detached);
  std::thread producer([&] {
    for (int i = 0; i < n; ++i) q.add(i);
  });
  io.run();
  producer.join();
  REQUIRE(static_cast<int>(seen.size()) == n);
  bool ordered = true;
  for (int i = 0; i < n; ++i) ordered = ordered && seen[i] == i;
  CHECK(ordered);
}

// client-go's Add returns with the item queued, so ShutDown right after it
// still hands the item out. Here an add from another thread is a message
// that reaches the executor later; shutdown() called after it on the same
// thread must not overtake it.
TEST_CASE("threads: adds made before shutdown() on the same thread are all handed out", "[workqueue][threads]") {
  for (int round = 0; round < 20; ++round) {
    asio::io_context io;
    wq::queue<int> q(io.get_executor());
    constexpr int n = 5'000;
    int processed = 0;
    asio::co_spawn(
        io,
        [&]() -> asio::awaitable<void> {
          for (;;) {
            auto [ec, v] = co_await q.async_get(asio::as_tuple(asio::deferred));
            if (ec) co_return;
            ++processed;
            q.done(v);
          }
        },
        asio::detached);
    std::thread producer([&] {
      for (int i = 0; i < n; ++i) q.add(i);
      q.shutdown();
    });
    io.run();
    producer.join();
    REQUIRE(processed == n);
  }
}

TEST_CASE("threads: len and shutting_down may be read from another thread", "[workqueue][threads]") {
  asio::io_context io;
  wq::queue<int> q(io.get_executor());
  std::atomic<bool> stop{false};
  std::size_t max_len = 0;  // read by the test thread after join (Catch2 asserts only there)
  std::thread reader([&] {
    while (!stop.load()) {
      max_len = std::max(max_len, q.len());
      (void)q.shutting_down();
    }
  });
  for (int i = 0; i < 1000; ++i) q.add(i);
  q.shutdown();
  io.run();
  stop = true;
  reader.join();
  CHECK(max_len <= 1000);
  CHECK(q.shutting_down());
}

TEST_CASE("threads: a queue on a strand of a 2-thread pool serves workers and remote adds", "[workqueue][threads]") {
  asio::thread_pool pool(2);
  auto strand = asio::make_strand(pool.get_executor());
  wq::delaying_queue<int> q(strand);
  std::atomic<int> processed{0};
  std::atomic<int> finished_workers{0};
  constexpr int n = 5000;
  for (int w = 0; w < 4; ++w) {
    asio::co_spawn(
        strand,
        [&]() -> asio::awaitable<void> {
          for (;;) {
            auto [ec, v] = co_await q.async_get(asio::as_tuple(asio::deferred));
            if (ec) break;
            q.done(v);
            if (processed.fetch_add(1) + 1 == n) q.shutdown();
          }
          ++finished_workers;
        },
        asio::detached);
  }
  std::thread producer([&] {
    for (int i = 0; i < n; ++i) {
      if (i % 2 == 0) {
        q.add(i);
      } else {
        q.add_after(i, std::chrono::microseconds(i % 5));
      }
    }
  });
  producer.join();
  pool.join();
  CHECK(processed.load() == n);
  CHECK(finished_workers.load() == 4);
}

// A producer in lock-step with the worker: each add arrives only after the
// previous item was processed, so nearly every add finds the hand-off empty
// and the drain just unscheduled (or about to). A lost wake-up would leave an
// item on the stack with no drain scheduled: the worker would never see it
// and io.run() would not return (the test would time out).
TEST_CASE("threads: adds one at a time, each after the previous was processed, all arrive", "[workqueue][threads]") {
  asio::io_context io;
  wq::queue<int> q(io.get_executor());
  constexpr int n = 5'000;
  std::atomic<int> processed{0};
  int in_order = 0;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        for (;;) {
          std::optional<int> v = q.try_get();
          if (!v) {
            auto [ec, got] = co_await q.async_get(asio::as_tuple(asio::deferred));
            if (ec) co_return;
            v = got;
          }
          if (*v == processed.load()) ++in_order;
          q.done(*v);
          processed.fetch_add(1);
          processed.notify_one();
          if (*v == n - 1) q.shutdown();
        }
      },
      asio::detached);
  std::thread producer([&] {
    for (int i = 0; i < n; ++i) {
      q.add(i);
      processed.wait(i);  // until the worker has processed item i
    }
  });
  io.run();
  producer.join();
  CHECK(processed.load() == n);
  CHECK(in_order == n);
}

// Messages from other threads are carved from blocks the adding thread owns
// (detail/message_blocks.hpp). Here the adding threads exit before anything
// is drained, so the executor frees their blocks after the owners are gone;
// a second queue is destroyed with its adds never drained. Under ASan a
// block or an item that is never freed is reported as a leak, and a use
// after free as such; under TSAN the hand-over of a block is checked.
TEST_CASE("threads: adds from threads that exit first all arrive, and undrained adds are freed",
          "[workqueue][threads]") {
  constexpr int threads = 4;
  constexpr int per_thread = 3'000;  // several blocks per thread
  auto key = [](int t, int i) { return "thread-" + std::to_string(t) + "/item-" + std::to_string(i); };
  {
    asio::io_context io;
    wq::delaying_queue<std::string> q(io.get_executor());
    std::vector<std::thread> producers;
    for (int t = 0; t < threads; ++t) {
      producers.emplace_back([&, t] {
        for (int i = 0; i < per_thread; ++i) {
          if (i % 3 == 0) {
            q.add_after(key(t, i), std::chrono::nanoseconds(-1));  // ready at once
          } else {
            q.add(key(t, i));
          }
        }
      });
    }
    for (auto& p : producers) p.join();
    std::set<std::string> seen;
    int duplicates = 0;
    asio::co_spawn(
        io,
        [&]() -> asio::awaitable<void> {
          for (;;) {
            auto [ec, k] = co_await q.async_get(asio::as_tuple(asio::deferred));
            if (ec) co_return;
            if (!seen.insert(k).second) ++duplicates;
            q.done(k);
            if (seen.size() == std::size_t{threads} * per_thread) q.shutdown();
          }
        },
        asio::detached);
    io.run();
    CHECK(duplicates == 0);
    CHECK(seen.size() == std::size_t{threads} * per_thread);
    CHECK(seen.count(key(threads - 1, per_thread - 1)) == 1);
  }
  {
    asio::io_context io;  // never run: nothing is drained
    auto q = std::make_unique<wq::delaying_queue<std::string>>(io.get_executor());
    std::thread producer([&] {
      for (int i = 0; i < 500; ++i) q->add_after(key(0, i), std::chrono::hours(1));
      for (int i = 500; i < 1000; ++i) q->add(key(0, i));
    });
    producer.join();
    CHECK(q->len() == 0);  // not applied yet (read off the executor)
    q.reset();
  }
}

// Whether an add() runs on the queue's executor decides between updating the
// queue directly and the cross-thread hand-off, so the probe must say yes
// exactly on a thread inside that io_context's run() (or that strand's
// handler), and no anywhere else: another thread while it runs, the same
// thread outside run(), a thread running another io_context.
TEST_CASE("threads: the executor probe says yes only inside the executor's own handlers", "[workqueue][threads]") {
  using wq::detail::executor_probe;
  asio::io_context io;
  asio::io_context other;
  const asio::any_io_executor plain = io.get_executor();
  asio::any_io_executor tracked = asio::prefer(io.get_executor(), asio::execution::outstanding_work.tracked);
  const asio::any_io_executor strand = asio::make_strand(io);
  asio::thread_pool pool(1);
  const asio::any_io_executor pool_ex = pool.get_executor();  // a kind the probe does not know: always no
  const executor_probe p_plain(plain), p_tracked(tracked), p_strand(strand), p_pool(pool_ex);

  CHECK_FALSE(p_plain.running_in_this_thread());  // not inside run()
  CHECK_FALSE(p_tracked.running_in_this_thread());
  CHECK_FALSE(p_strand.running_in_this_thread());

  std::atomic<int> inside{0};
  std::atomic<bool> elsewhere{false};
  asio::post(io, [&] {
    inside += p_plain.running_in_this_thread() ? 1 : 0;
    inside += p_tracked.running_in_this_thread() ? 1 : 0;
    inside += p_strand.running_in_this_thread() ? 0 : 1;  // on io, but not in the strand
    inside += p_pool.running_in_this_thread() ? 0 : 1;
    std::thread t([&] {
      elsewhere = p_plain.running_in_this_thread() || p_tracked.running_in_this_thread();
      asio::post(other, [&] { elsewhere = elsewhere || p_plain.running_in_this_thread(); });
      other.run();
    });
    t.join();
  });
  asio::post(strand, [&] { inside += p_strand.running_in_this_thread() ? 1 : 0; });
  asio::post(io, [&] { tracked = {}; });  // its outstanding work would keep run() going
  io.run();
  CHECK(inside == 5);
  CHECK_FALSE(elsewhere);
}
