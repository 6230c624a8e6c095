// queue<T>: client-go's dirty/processing rules, shutdown, drain, cancellation.
// Size: about 650 lines, one short case per rule.
#include "test_support.hpp"

#include <kube/workqueue/queue.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace asio = boost::asio;
namespace wq = kube::workqueue;
using wq_test::got;
using wq_test::settle;

namespace {

// Starts a callback async_get that records its result in `out`.
void get_into(wq::queue<std::string>& q, std::shared_ptr<got> out) {
  q.async_get([out](wq::error_code ec, std::string item) {
    out->completed = true;
    out->ec = ec;
    out->item = std::move(item);
  });
}

std::string get_now(asio::io_context& io, wq::queue<std::string>& q) {
  auto g = std::make_shared<got>();
  get_into(q, g);
  settle(io);
  REQUIRE(g->completed);
  REQUIRE_FALSE(g->ec);
  return g->item;
}

// Counts adds and dones (metrics hooks that key nothing themselves).
struct adds_counter final : kube::metrics::workqueue_metrics {
  std::size_t adds = 0;
  std::size_t done = 0;
  void on_add() override { ++adds; }
  void on_done(duration) override { ++done; }
};
}  // namespace

TEST_CASE("queue: items come out in the order they were added", "[workqueue][queue]") {
  asio::io_context io;
  wq::queue<std::string> q(io.get_executor());
  q.add("a");
  q.add("b");
  q.add("c");
  settle(io);  // the test thread is not the executor: adds arrive through the hand-off
  CHECK(q.len() == 3);
  CHECK(get_now(io, q) == "a");
  CHECK(get_now(io, q) == "b");
  CHECK(get_now(io, q) == "c");
  CHECK(q.len() == 0);
  q.shutdown();
  settle(io);
}

TEST_CASE("queue: an item added while it waits is stored once", "[workqueue][queue]") {
  asio::io_context io;
  wq::queue<std::string> q(io.get_executor());
  q.add("a");
  q.add("b");
  q.add("a");
  q.add("a");
  settle(io);
  CHECK(q.len() == 2);
  CHECK(get_now(io, q) == "a");
  CHECK(get_now(io, q) == "b");
  CHECK(q.len() == 0);
  q.shutdown();
  settle(io);
}

TEST_CASE("queue: an item added while processed goes to no other worker and is requeued on done",
          "[workqueue][queue]") {
  asio::io_context io;
  wq::queue<std::string> q(io.get_executor());
  q.add("a");
  CHECK(get_now(io, q) == "a");
  q.add("a");  // while processing: dirty, not queued
  q.add("a");  // still only once
  CHECK(q.len() == 0);
  auto second = std::make_shared<got>();
  get_into(q, second);
  settle(io);
  CHECK_FALSE(second->completed);  // not handed to another worker
  q.done("a");
  settle(io);
  REQUIRE(second->completed);
  CHECK(second->item == "a");
  q.done("a");
  CHECK(q.len() == 0);
  auto third = std::make_shared<got>();
  get_into(q, third);
  settle(io);
  CHECK_FALSE(third->completed);  // nothing was added during the second round
  q.shutdown();
  settle(io);
  CHECK(third->ec == wq::errc::shut_down);
}

TEST_CASE("queue: done without a re-add forgets the item, a later add queues it again", "[workqueue][queue]") {
  asio::io_context io;
  wq::queue<std::string> q(io.get_executor());
  q.add("a");
  CHECK(get_now(io, q) == "a");
  q.done("a");
  CHECK(q.len() == 0);
  q.add("a");
  settle(io);
  CHECK(q.len() == 1);
  q.done("never-got");  // not held by a worker: ignored
  CHECK(q.len() == 1);
  q.shutdown();
  settle(io);
}

TEST_CASE("queue: a parked worker is woken by add", "[workqueue][queue]") {
  asio::io_context io;
  wq::queue<std::string> q(io.get_executor());
  auto g = std::make_shared<got>();
  get_into(q, g);
  settle(io);
  CHECK_FALSE(g->completed);
  asio::post(io, [&] {
    q.add("x");
    CHECK(q.len() == 0);  // handed straight to the parked worker
  });
  settle(io);
  REQUIRE(g->completed);
  CHECK(g->item == "x");
  q.shutdown();
  settle(io);
}

TEST_CASE("queue: completion is never invoked inside async_get", "[workqueue][queue]") {
  asio::io_context io;
  wq::queue<std::string> q(io.get_executor());
  q.add("a");
  auto g = std::make_shared<got>();
  get_into(q, g);
  CHECK_FALSE(g->completed);  // posted, not inline
  settle(io);
  CHECK(g->completed);
  q.shutdown();
  settle(io);
}

TEST_CASE("queue: shutdown wakes parked workers, refuses adds, still hands out queued items", "[workqueue][queue]") {
  asio::io_context io;
  wq::queue<std::string> q(io.get_executor());
  auto parked = std::make_shared<got>();
  get_into(q, parked);
  settle(io);
  q.shutdown();
  settle(io);
  REQUIRE(parked->completed);
  CHECK(parked->ec == wq::errc::shut_down);
  CHECK(q.shutting_down());
  q.add("late");
  CHECK(q.len() == 0);

  wq::queue<std::string> q2(io.get_executor());
  q2.add("a");
  q2.add("b");
  q2.shutdown();
  settle(io);
  CHECK(get_now(io, q2) == "a");  // client-go: Get drains what is queued
  CHECK(get_now(io, q2) == "b");
  auto end = std::make_shared<got>();
  get_into(q2, end);
  settle(io);
  REQUIRE(end->completed);
  CHECK(end->ec == wq::errc::shut_down);
  CHECK(end->ec.message() == "work queue is shut down");
}

TEST_CASE("queue: shutdown_with_drain waits for processing items", "[workqueue][queue]") {
  asio::io_context io;
  wq::queue<std::string> q(io.get_executor());
  q.add("a");
  q.add("b");
  CHECK(get_now(io, q) == "a");
  CHECK(get_now(io, q) == "b");
  bool drained = false;
  q.async_shutdown_with_drain([&](wq::error_code ec) {
    CHECK_FALSE(ec);
    drained = true;
  });
  settle(io);
  CHECK(q.shutting_down());
  CHECK_FALSE(drained);
  q.done("a");
  settle(io);
  CHECK_FALSE(drained);  // b is still being processed
  q.done("b");
  settle(io);
  CHECK(drained);
}

TEST_CASE("queue: shutdown_with_drain with nothing processing completes at once", "[workqueue][queue]") {
  asio::io_context io;
  wq::queue<std::string> q(io.get_executor());
  bool drained = false;
  q.async_shutdown_with_drain([&](wq::error_code) { drained = true; });
  settle(io);
  CHECK(drained);
}

TEST_CASE("queue: shutdown_with_drain processes an item re-added during processing", "[workqueue][queue]") {
  // client-go TestQueueDrainageUsingShutDownWithDrainWithDirtyItem.
  asio::io_context io;
  wq::queue<std::string> q(io.get_executor());
  q.add("foo");
  CHECK(get_now(io, q) == "foo");
  q.add("foo");  // dirty while processing
  bool drained = false;
  q.async_shutdown_with_drain([&](wq::error_code) { drained = true; });
  settle(io);
  CHECK_FALSE(drained);
  q.done("foo");  // requeued even though shutting down
  settle(io);
  CHECK(q.len() == 1);
  // As in client-go, the drain ends as soon as nothing is being processed;
  // the requeued item is still handed out afterwards.
  CHECK(get_now(io, q) == "foo");
  q.done("foo");
  auto end = std::make_shared<got>();
  get_into(q, end);
  settle(io);
  CHECK(end->ec == wq::errc::shut_down);
  CHECK(drained);
}

TEST_CASE("queue: a plain shutdown releases a drain waiter", "[workqueue][queue]") {
  // client-go TestForceQueueShutdownUsingShutDown.
  asio::io_context io;
  wq::queue<std::string> q(io.get_executor());
  q.add("a");
  CHECK(get_now(io, q) == "a");
  bool drained = false;
  q.async_shutdown_with_drain([&](wq::error_code) { drained = true; });
  settle(io);
  CHECK_FALSE(drained);
  q.shutdown();
  settle(io);
  CHECK(drained);
}

TEST_CASE("queue: a cancelled async_get completes with operation_aborted and loses no item",
          "[workqueue][queue][cancel]") {
  asio::io_context io;
  wq::queue<std::string> q(io.get_executor());
  asio::cancellation_signal sig;
  auto g = std::make_shared<got>();
  q.async_get(asio::bind_cancellation_slot(sig.slot(), [g](wq::error_code ec, std::string item) {
    g->completed = true;
    g->ec = ec;
    g->item = std::move(item);
  }));
  settle(io);
  CHECK_FALSE(g->completed);
  sig.emit(asio::cancellation_type::terminal);
  sig.emit(asio::cancellation_type::terminal);  // a second emit is harmless
  settle(io);
  REQUIRE(g->completed);
  CHECK(g->ec == asio::error::operation_aborted);
  q.add("a");
  settle(io);
  CHECK(q.len() == 1);  // not given to the cancelled operation
  CHECK(get_now(io, q) == "a");
  q.shutdown();
  settle(io);
}

TEST_CASE("queue: cancelling after the item was handed over delivers the item", "[workqueue][queue][cancel]") {
  asio::io_context io;
  wq::queue<std::string> q(io.get_executor());
  asio::cancellation_signal sig;
  auto g = std::make_shared<got>();
  q.async_get(asio::bind_cancellation_slot(sig.slot(), [g](wq::error_code ec, std::string item) {
    g->completed = true;
    g->ec = ec;
    g->item = std::move(item);
  }));
  settle(io);
  asio::post(io, [&] {
    q.add("a");                                   // taken now (on the executor), completion posted
    sig.emit(asio::cancellation_type::terminal);  // too late: must not lose "a"
  });
  settle(io);
  REQUIRE(g->completed);
  CHECK_FALSE(g->ec);
  CHECK(g->item == "a");
  q.shutdown();
  settle(io);
}

TEST_CASE("queue: async_get works with deferred (default), use_awaitable, as_tuple and use_future",
          "[workqueue][queue][tokens]") {
  asio::io_context io;
  wq::queue<std::string> q(io.get_executor());
  std::vector<std::string> seen;
  q.add("d");
  q.add("u");
  q.add("t");
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        std::string a = co_await q.async_get();  // default token: kube::use_awaitable
        seen.push_back(a);
        std::string b = co_await q.async_get(asio::use_awaitable);
        seen.push_back(b);
        auto [ec, c] = co_await q.async_get(asio::as_tuple(asio::use_awaitable));
        CHECK_FALSE(ec);
        seen.push_back(c);
        q.done(a);
        q.done(b);
        q.done(c);
        q.shutdown();
        auto [ec2, none] = co_await q.async_get(asio::as_tuple(asio::deferred));
        CHECK(ec2 == wq::errc::shut_down);
        CHECK(none.empty());
        try {
          (void)co_await q.async_get();
          FAIL("expected an exception at shutdown");
        } catch (const boost::system::system_error& e) {
          CHECK(e.code() == wq::errc::shut_down);
        }
      },
      asio::detached);
  io.run();  // returns: the queue is shut down and nothing waits
  CHECK(seen == std::vector<std::string>{"d", "u", "t"});

  asio::io_context io2;
  wq::queue<int> qi(io2.get_executor());
  qi.add(7);
  auto fut = qi.async_get(asio::use_future);
  io2.run();
  CHECK(fut.get() == 7);
}

TEST_CASE("queue: a parked worker keeps io_context::run() going until shutdown", "[workqueue][queue]") {
  asio::io_context io;
  wq::queue<int> q(io.get_executor());
  int got_items = 0;
  bool finished = false;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        for (;;) {
          auto [ec, item] = co_await q.async_get(asio::as_tuple(asio::deferred));
          if (ec) break;
          ++got_items;
          q.done(item);
        }
        finished = true;
      },
      asio::detached);
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        for (int i = 0; i < 3; ++i) {
          co_await asio::post(io, asio::use_awaitable);  // let the worker park
          q.add(i);
        }
        co_await asio::post(io, asio::use_awaitable);
        q.shutdown();
      },
      asio::detached);
  io.run();
  CHECK(got_items == 3);
  CHECK(finished);
}

TEST_CASE("queue: one key is never held by two of 8 workers over 100k adds", "[workqueue][queue]") {
  asio::io_context io;
  wq::queue<int> q(io.get_executor());
  constexpr int keys = 50;
  constexpr int adds = 100'000;
  std::vector<int> held(keys, 0);
  std::vector<int> added_since_start(keys, 0);  // adds after the key's last hand-out began
  int violations = 0;
  long processed = 0;
  for (int w = 0; w < 8; ++w) {
    asio::co_spawn(
        io,
        [&]() -> asio::awaitable<void> {
          for (;;) {
            auto [ec, key] = co_await q.async_get(asio::as_tuple(asio::deferred));
            if (ec) co_return;
            if (held[key]++ != 0) ++violations;
            added_since_start[key] = 0;
            ++processed;
            co_await asio::post(io, asio::use_awaitable);  // hold it across a suspension
            --held[key];
            q.done(key);
          }
        },
        asio::detached);
  }
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        std::uint32_t x = 12345;
        for (int i = 0; i < adds; ++i) {
          x = x * 1664525u + 1013904223u;
          const int key = static_cast<int>((x >> 8) % keys);
          q.add(key);
          ++added_since_start[key];
          if (i % 7 == 0) co_await asio::post(io, asio::use_awaitable);
        }
        co_await q.async_shutdown_with_drain(asio::use_awaitable);
      },
      asio::detached);
  io.run();
  CHECK(violations == 0);
  CHECK(processed > keys);
  CHECK(processed <= adds);
  // Every add was followed by a hand-out of its key: nothing was dropped.
  for (int k = 0; k < keys; ++k) CHECK(added_since_start[k] == 0);
}

TEST_CASE("queue: len is queued items only (not processing)", "[workqueue][queue]") {
  asio::io_context io;
  wq::queue<std::string> q(io.get_executor());
  q.add("a");
  q.add("b");
  settle(io);
  CHECK(q.len() == 2);
  CHECK(get_now(io, q) == "a");
  CHECK(q.len() == 1);
  q.add("a");
  settle(io);
  CHECK(q.len() == 1);  // dirty while processing is not counted
  q.shutdown();
  settle(io);
}

TEST_CASE("queue: try_get takes a ready item synchronously and follows the same rules", "[workqueue][queue][try_get]") {
  asio::io_context io;
  wq::queue<std::string> q(io.get_executor());
  asio::post(io, [&] {
    CHECK_FALSE(q.try_get().has_value());  // empty: nothing changes
    q.add("a");
    q.add("b");
    q.add("a");  // waiting: stored once
    CHECK(q.len() == 2);
    auto a = q.try_get();
    REQUIRE(a.has_value());
    CHECK(*a == "a");
    CHECK(q.len() == 1);
    q.add("a");  // held: not handed out again until done
    auto b = q.try_get();
    REQUIRE(b.has_value());
    CHECK(*b == "b");
    CHECK_FALSE(q.try_get().has_value());
    q.done("a");  // re-added while held: queued again now
    CHECK(q.len() == 1);
    auto again = q.try_get();
    REQUIRE(again.has_value());
    CHECK(*again == "a");
    q.done("a");
    q.done("b");
    q.add("b");  // forgotten at done: a later add queues it again
    CHECK(q.len() == 1);
    q.shutdown();
    auto last = q.try_get();  // queued items are still handed out after shutdown
    REQUIRE(last.has_value());
    CHECK(*last == "b");
    CHECK_FALSE(q.try_get().has_value());
  });
  settle(io);
}

TEST_CASE("queue: a parked worker gets a new item before try_get can take it", "[workqueue][queue][try_get]") {
  asio::io_context io;
  wq::queue<std::string> q(io.get_executor());
  auto g = std::make_shared<got>();
  get_into(q, g);
  settle(io);
  asio::post(io, [&] {
    q.add("x");
    CHECK_FALSE(q.try_get().has_value());  // "x" went to the parked worker (oldest waiter first)
  });
  settle(io);
  REQUIRE(g->completed);
  CHECK(g->item == "x");
}

TEST_CASE("queue: adds from another thread that hit a held item requeue it on done", "[workqueue][queue]") {
  asio::io_context io;
  wq::queue<std::string> q(io.get_executor());
  q.add("k");
  settle(io);
  CHECK(get_now(io, q) == "k");
  q.add("k");  // not on the executor: hand-off node, deduplicated on arrival
  q.add("k");
  settle(io);
  CHECK(q.len() == 0);  // held: not queued
  asio::post(io, [&] { q.done("k"); });
  settle(io);
  CHECK(q.len() == 1);
  CHECK(get_now(io, q) == "k");
}

TEST_CASE("queue: items done and added again across many done() calls are queued once each, in order",
          "[workqueue][queue]") {
  // Crosses the batches in which finished items are unindexed, and done()
  // calls for items that were not the last ones handed out.
  asio::io_context io;
  wq::queue<std::string> q(io.get_executor());
  asio::post(io, [&] {
    for (int round = 0; round < 3; ++round) {
      for (int i = 0; i < 700; ++i) q.add("k" + std::to_string(i));
      for (int i = 0; i < 700; ++i) q.add("k" + std::to_string(i));  // waiting: stored once
      CHECK(q.len() == 700);
      std::vector<std::string> held;
      while (auto item = q.try_get()) held.push_back(*item);
      REQUIRE(held.size() == 700);
      CHECK(held.front() == "k0");
      CHECK(held.back() == "k699");
      q.add("k5");                                                         // held: requeued at done
      for (auto it = held.rbegin(); it != held.rend(); ++it) q.done(*it);  // oldest handed out last
      CHECK(q.len() == 1);
      auto again = q.try_get();
      REQUIRE(again.has_value());
      CHECK(*again == "k5");
      q.done("k5");
      q.done("k5");  // not held any more: ignored
      CHECK(q.len() == 0);
      CHECK_FALSE(q.try_get().has_value());
    }
  });
  settle(io);
}

// A node keeps a std::string key of up to 32 bytes inline and a longer one
// as a std::string: keys on both sides of that line, and keys that differ
// only past it, are stored once, handed out whole and requeued exactly.
TEST_CASE("queue: keys kept in the node and on the heap are exact at every length around 32 bytes",
          "[workqueue][queue][hash]") {
  asio::io_context io;
  auto m = std::make_shared<adds_counter>();  // metrics key their maps by a copy of the item
  wq::queue<std::string> q(io.get_executor(), {.metrics = m});
  std::vector<std::string> keys;
  for (std::size_t len : {0U, 1U, 7U, 8U, 15U, 16U, 31U, 32U, 33U, 40U, 64U, 300U}) {
    keys.push_back(std::string(len, 'k'));
    if (len > 0) {
      std::string last = keys.back();
      last.back() = 'z';  // same length, differs in the last byte only
      keys.push_back(last);
    }
  }
  for (int round = 0; round < 2; ++round) {
    for (const auto& k : keys) q.add(k);  // by copy
  }
  for (auto k : keys) q.add(std::move(k));  // by move: still a duplicate
  settle(io);                               // (adds from outside the executor are applied there)
  CHECK(q.len() == keys.size());
  CHECK(m->adds == keys.size());
  std::vector<std::string> out;
  for (std::size_t i = 0; i < keys.size(); ++i) out.push_back(get_now(io, q));
  CHECK(out == keys);  // in order, every byte
  // Re-added while held: requeued once each on done, with the same bytes.
  for (const auto& k : keys) q.add(std::string(k));
  settle(io);
  CHECK(q.len() == 0);
  for (const auto& k : keys) q.done(k);
  CHECK(q.len() == keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) CHECK(get_now(io, q) == keys[i]);
  for (const auto& k : keys) q.done(k);
  CHECK(q.len() == 0);
  CHECK(m->done == 2 * keys.size());
  q.shutdown();
  settle(io);
}

// The queue hashes std::string keys (default std::hash / std::equal_to) with
// its own byte hash; any other Hash or KeyEqual is used as given.
TEST_CASE("queue: own string hash/equality are exact for keys of every length, and only replace the defaults",
          "[workqueue][hash]") {
  using wq::detail::hash_bytes;
  STATIC_REQUIRE(wq::detail::own_string_hash<std::string, std::hash<std::string>, std::equal_to<std::string>>);
  struct other_hash {
    std::size_t operator()(const std::string& s) const { return s.size(); }
  };
  STATIC_REQUIRE_FALSE(wq::detail::own_string_hash<std::string, other_hash, std::equal_to<std::string>>);
  STATIC_REQUIRE_FALSE(wq::detail::own_string_hash<int, std::hash<int>, std::equal_to<int>>);

  std::vector<std::size_t> seen;
  for (std::size_t len = 0; len <= 40; ++len) {
    const std::string base(len, 'a');
    // A copy in another buffer hashes the same (only the bytes count).
    const std::string copy(base.data(), base.size());
    CHECK(hash_bytes(base.data(), base.size()) == hash_bytes(copy.data(), copy.size()));
    seen.push_back(hash_bytes(base.data(), base.size()));
    CHECK(wq::detail::same_bytes(base, copy));
    CHECK_FALSE(wq::detail::same_bytes(base, base + "a"));
    // Changing any one byte changes the hash and the equality.
    for (std::size_t i = 0; i < len; ++i) {
      std::string k = base;
      k[i] = 'b';
      seen.push_back(hash_bytes(k.data(), k.size()));
      CHECK_FALSE(wq::detail::same_bytes(base, k));
      CHECK_FALSE(wq::detail::same_bytes(k, base));
    }
  }
  std::sort(seen.begin(), seen.end());
  CHECK(std::adjacent_find(seen.begin(), seen.end()) == seen.end());  // 861 distinct keys, no collision

  // The index takes a slot from the hash's low bits unmixed, so they must
  // spread keys that differ only in a few digits: 65,536 such keys over
  // 4,096 slots average 16 each. A uniform hash puts at most ~35 in one
  // slot and leaves none empty; a hash whose low bits ignored part of the
  // key would pile them up.
  std::vector<int> per_slot(4096);
  for (int i = 0; i < 65536; ++i) {
    const std::string k = "default/object-" + std::to_string(i);
    ++per_slot[hash_bytes(k.data(), k.size()) & 4095];
  }
  CHECK(*std::max_element(per_slot.begin(), per_slot.end()) <= 40);
  CHECK(std::count(per_slot.begin(), per_slot.end(), 0) == 0);

  // A queue over keys that differ only in their last bytes dedups exactly.
  asio::io_context io;
  wq::queue<std::string> q(io.get_executor());
  asio::post(io, [&] {
    for (int round = 0; round < 2; ++round) {
      for (int i = 0; i < 1000; ++i) q.add("default/object-" + std::to_string(i));
    }
  });
  settle(io);
  CHECK(q.len() == 1000);
}
