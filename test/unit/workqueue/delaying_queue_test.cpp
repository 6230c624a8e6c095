// delaying_queue<T>: add_after with a manual clock; one real-timer check.
#include "test_support.hpp"

#include <kube/workqueue/delaying_queue.hpp>
#include <kube/workqueue/detail/delay_heap.hpp>
#include <kube/base/manual_clock.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/detached.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <new>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace asio = boost::asio;
namespace wq = kube::workqueue;
using namespace std::chrono_literals;
using wq_test::settle;

namespace {

// Takes everything that is ready now, in order, marking each done.
std::vector<std::string> drain_ready(asio::io_context& io, wq::delaying_queue<std::string>& q) {
  settle(io);
  std::vector<std::string> out;
  while (q.len() > 0) {
    std::string item;
    q.async_get([&](wq::error_code ec, std::string s) {
      REQUIRE_FALSE(ec);
      item = std::move(s);
    });
    settle(io);
    q.done(item);
    out.push_back(item);
  }
  return out;
}

using strings = std::vector<std::string>;

}  // namespace

namespace {

// What delay_heap needs of a node (the queue's nodes have more).
struct test_node {
  std::string item;
  kube::clock::time_point ready_at{};
  std::uint64_t seq = 0;
  std::uint32_t heap_refs = 0;
  std::uint8_t state = 0;
};
constexpr std::uint8_t waiting_bit = 4;

}  // namespace

TEST_CASE("delay_heap: earliest first, ties in insertion order, earlier time wins", "[workqueue][delay]") {
  kube::manual_clock clk;
  const auto t0 = clk.now();
  test_node late{"late"}, tie1{"tie1"}, tie2{"tie2"};
  wq::detail::delay_heap<test_node, waiting_bit> h;
  strings unrefs;
  auto unref = [&](test_node* n) { unrefs.push_back(n->item); };
  CHECK(h.push(&late, t0 + 30ms));
  CHECK(h.push(&tie1, t0 + 10ms));
  CHECK(h.push(&tie2, t0 + 10ms));
  CHECK(h.push(&late, t0 + 5ms));         // moves earlier
  CHECK_FALSE(h.push(&tie1, t0 + 20ms));  // later: ignored
  CHECK(h.size() == 3);
  CHECK(late.heap_refs == 2);  // the current entry and the stale one
  CHECK(h.next_ready_at(unref) == t0 + 5ms);
  strings out;
  auto take = [&](test_node* n) {
    CHECK((n->state & waiting_bit) == 0);  // no longer waiting when handed out
    out.push_back(n->item);
  };
  h.pop_ready(t0 + 4ms, take, unref);
  CHECK(out.empty());
  h.pop_ready(t0 + 10ms, take, unref);
  CHECK(out == strings{"late", "tie1", "tie2"});
  CHECK(h.empty());
  CHECK(late.heap_refs == 0);  // its stale entry was dropped when it surfaced
  h.pop_ready(t0 + 1h, take, unref);
  CHECK(out.size() == 3);
  CHECK(tie1.heap_refs == 0);
  CHECK(tie2.heap_refs == 0);
  // Every entry that left the heap was reported: 3 handed out, 1 stale.
  CHECK(unrefs.size() == 4);
}

TEST_CASE("delay_heap: clear drops every entry and unmarks the waiting nodes", "[workqueue][delay]") {
  kube::manual_clock clk;
  const auto t0 = clk.now();
  test_node a{"a"}, b{"b"};
  wq::detail::delay_heap<test_node, waiting_bit> h;
  int unrefs = 0;
  auto unref = [&](test_node*) { ++unrefs; };
  h.push(&a, t0 + 10ms);
  h.push(&a, t0 + 5ms);
  h.push(&b, t0 + 1s);
  h.clear(unref);
  CHECK(h.empty());
  CHECK(unrefs == 2);  // once per node, at its last entry (a has two)
  CHECK(a.heap_refs == 0);
  CHECK(b.heap_refs == 0);
  CHECK(a.state == 0);
  CHECK(b.state == 0);
}

namespace {
// std::allocator that throws std::bad_alloc while `refuse` is set: out of
// memory on demand, for the heap's storage.
bool refuse = false;
template <class T>
struct refusing_allocator {
  using value_type = T;
  refusing_allocator() = default;
  template <class U>
  explicit refusing_allocator(const refusing_allocator<U>&) noexcept {}
  T* allocate(std::size_t n) {
    if (refuse) throw std::bad_alloc();
    return std::allocator<T>{}.allocate(n);
  }
  void deallocate(T* p, std::size_t n) noexcept { std::allocator<T>{}.deallocate(p, n); }
  friend bool operator==(const refusing_allocator&, const refusing_allocator&) noexcept { return true; }
};
}  // namespace

TEST_CASE("delay_heap: a push that runs out of memory changes neither the node nor the heap", "[workqueue][delay]") {
  kube::manual_clock clk;
  const auto t0 = clk.now();
  test_node a{"a"}, b{"b"}, c{"c"};
  wq::detail::delay_heap<test_node, waiting_bit, refusing_allocator> h;
  int unrefs = 0;
  auto unref = [&](test_node*) { ++unrefs; };
  CHECK(h.push(&a, t0 + 20ms));
  CHECK(h.push(&b, t0 + 30ms));  // two entries: the next push must grow the storage
  refuse = true;
  CHECK_THROWS_AS(h.push(&c, t0 + 10ms), std::bad_alloc);  // a new node
  CHECK_THROWS_AS(h.push(&a, t0 + 5ms), std::bad_alloc);   // a waiting node moved earlier
  refuse = false;
  CHECK(c.state == 0);
  CHECK(c.heap_refs == 0);
  CHECK(a.ready_at == t0 + 20ms);
  CHECK(a.heap_refs == 1);
  CHECK(h.size() == 2);
  CHECK(h.next_ready_at(unref) == t0 + 20ms);
  CHECK(h.push(&c, t0 + 10ms));  // with memory again, as if nothing had happened
  strings out;
  h.pop_ready(
      t0 + 1h, [&](test_node* n) { out.push_back(n->item); }, unref);
  CHECK(out == strings{"c", "a", "b"});
  CHECK(h.empty());
  CHECK(unrefs == 3);
  CHECK(a.heap_refs + b.heap_refs + c.heap_refs == 0);
}

TEST_CASE("delaying_queue: an item becomes ready exactly when its delay has passed", "[workqueue][delay]") {
  asio::io_context io;
  kube::manual_clock clk;
  wq::delaying_queue<std::string> q(io.get_executor(), {.time_source = &clk});
  q.add_after("foo", 50ms);
  settle(io);
  CHECK(q.len() == 0);
  CHECK(q.waiting_for_delay() == 1);
  clk.advance(49ms);
  CHECK(drain_ready(io, q).empty());
  clk.advance(1ms);
  CHECK(drain_ready(io, q) == strings{"foo"});
  CHECK(q.waiting_for_delay() == 0);
  q.shutdown();
  settle(io);
}

TEST_CASE("delaying_queue: zero or negative delay adds now", "[workqueue][delay]") {
  asio::io_context io;
  kube::manual_clock clk;
  wq::delaying_queue<std::string> q(io.get_executor(), {.time_source = &clk});
  q.add_after("zero", 0ms);
  q.add_after("neg", -5ms);
  settle(io);
  CHECK(q.len() == 2);
  CHECK(q.waiting_for_delay() == 0);
  q.shutdown();
  settle(io);
}

TEST_CASE("delaying_queue: adding a waiting item keeps the earlier ready time", "[workqueue][delay]") {
  // client-go TestDeduping.
  asio::io_context io;
  kube::manual_clock clk;
  wq::delaying_queue<std::string> q(io.get_executor(), {.time_source = &clk});
  q.add_after("foo", 50ms);
  q.add_after("foo", 70ms);  // later: ignored
  settle(io);
  CHECK(q.waiting_for_delay() == 1);
  clk.advance(60ms);
  CHECK(drain_ready(io, q) == strings{"foo"});
  clk.advance(20ms);
  CHECK(drain_ready(io, q).empty());  // the 70ms request was folded into the first

  q.add_after("foo", 70ms);
  q.add_after("foo", 50ms);  // earlier: wins
  settle(io);
  clk.advance(60ms);
  CHECK(drain_ready(io, q) == strings{"foo"});
  clk.advance(20ms);
  CHECK(drain_ready(io, q).empty());
  q.shutdown();
  settle(io);
}

TEST_CASE("delaying_queue: items become ready in time order", "[workqueue][delay]") {
  // client-go TestAddTwoFireEarly and TestCopyShifting.
  asio::io_context io;
  kube::manual_clock clk;
  wq::delaying_queue<std::string> q(io.get_executor(), {.time_source = &clk});
  q.add_after("foo", 1s);
  q.add_after("bar", 50ms);
  q.add_after("baz", 2s);
  q.add_after("qux", 1s);
  settle(io);
  clk.advance(60ms);
  CHECK(drain_ready(io, q) == strings{"bar"});
  clk.advance(3s);
  CHECK(drain_ready(io, q) == strings{"foo", "qux", "baz"});
  q.shutdown();
  settle(io);
}

TEST_CASE("delaying_queue: a delayed item that is already queued is stored once", "[workqueue][delay]") {
  asio::io_context io;
  kube::manual_clock clk;
  wq::delaying_queue<std::string> q(io.get_executor(), {.time_source = &clk});
  q.add("a");
  q.add_after("a", 10ms);
  clk.advance(10ms);
  CHECK(drain_ready(io, q) == strings{"a"});
  q.shutdown();
  settle(io);
}

TEST_CASE("delaying_queue: shutdown drops waiting items and ignores add_after", "[workqueue][delay]") {
  asio::io_context io;
  kube::manual_clock clk;
  wq::delaying_queue<std::string> q(io.get_executor(), {.time_source = &clk});
  q.add_after("a", 10ms);
  q.shutdown();
  q.add_after("b", 0ms);
  settle(io);
  clk.advance(1s);
  settle(io);
  CHECK(q.len() == 0);
  CHECK(q.waiting_for_delay() == 0);
}

TEST_CASE("delaying_queue: with the real clock the timer delivers the item", "[workqueue][delay]") {
  asio::io_context io;
  wq::delaying_queue<std::string> q(io.get_executor());
  const auto start = std::chrono::steady_clock::now();
  std::chrono::steady_clock::duration waited{};
  std::string got;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        q.add_after("late", 20ms);
        q.add_after("early", 2ms);
        auto [ec, first] = co_await q.async_get(asio::as_tuple(asio::deferred));
        waited = std::chrono::steady_clock::now() - start;
        got = first;
        q.shutdown();
      },
      asio::detached);
  io.run();  // returns: shutdown cancels the timer
  CHECK(got == "early");
  CHECK(waited >= 2ms);
}

// Ready times under the poll window (tens of microseconds) are polled on the
// executor instead of armed on the OS timer; a far one falls back to the OS
// timer. Either way an item is never handed out before its time, and items
// come out in ready-time order. A ready time is the clock at the call plus
// the delay, so each is known to lie in [before call, after call] + delay;
// only orders and lower bounds that those intervals imply are asserted.
TEST_CASE("delaying_queue: with the real clock near and far ready times are delivered in order, never early",
          "[workqueue][delay]") {
  using steady = std::chrono::steady_clock;
  asio::io_context io;
  wq::delaying_queue<std::string> q(io.get_executor());
  struct planned {
    std::string name;
    std::chrono::microseconds delay;
    steady::time_point lo, hi;  // bounds of the ready time
    steady::time_point got{};
    int position = -1;
  };
  std::vector<planned> plan = {
      {"d", 3000us, {}, {}}, {"b", 20us, {}, {}}, {"c", 40us, {}, {}}, {"a", 5us, {}, {}}, {"e", 3500us, {}, {}}};
  int taken = 0;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        for (auto& p : plan) {
          p.lo = steady::now() + p.delay;
          q.add_after(p.name, p.delay);
          p.hi = steady::now() + p.delay;
        }
        while (taken < static_cast<int>(plan.size())) {
          auto [ec, item] = co_await q.async_get(asio::as_tuple(asio::deferred));
          if (ec) break;
          for (auto& p : plan) {
            if (p.name == item) {
              p.got = steady::now();
              p.position = taken;
            }
          }
          ++taken;
          q.done(item);
        }
        q.shutdown();
      },
      asio::detached);
  io.run();  // returns: nothing is left waiting, and the queue is shut down
  REQUIRE(taken == static_cast<int>(plan.size()));
  for (const auto& p : plan) {
    INFO(p.name);
    REQUIRE(p.position >= 0);
    CHECK(p.got >= p.lo);  // never early
  }
  for (const auto& x : plan) {
    for (const auto& y : plan) {
      if (x.hi < y.lo) {  // x is surely ready before y
        INFO(x.name << " before " << y.name);
        CHECK(x.position < y.position);
      }
    }
  }
  // The last added has the latest ready time by at least 0.5 ms.
  CHECK(plan[4].position == 4);
}

TEST_CASE("delay_heap: many ready at once come out in time order, ties in call order, rest keep waiting",
          "[workqueue][delay]") {
  // More ready items than the one-by-one limit, so the bulk path runs.
  kube::manual_clock clk;
  const auto t0 = clk.now();
  std::deque<test_node> nodes;  // stable addresses
  for (int i = 0; i < 500; ++i) nodes.push_back(test_node{"k" + std::to_string(i)});
  test_node late{"late"};
  wq::detail::delay_heap<test_node, waiting_bit> h;
  int unrefs = 0;
  auto unref = [&](test_node*) { ++unrefs; };
  for (int i = 0; i < 500; ++i) {
    // times 499, 498, ... 0 ms: reverse of call order; every 10th shares a time with the next
    const int ms = 499 - i - (i % 10 == 1 ? 1 : 0);
    h.push(&nodes[static_cast<std::size_t>(i)], t0 + std::chrono::milliseconds(ms));
  }
  h.push(&nodes[7], t0 - 1ms);  // moved earlier: its old entry becomes stale
  h.push(&late, t0 + 1000ms);   // not ready
  CHECK(h.size() == 501);
  strings out;
  auto take = [&](test_node* n) { out.push_back(n->item); };
  h.pop_ready(t0 + 499ms, take, unref);
  CHECK(out.size() == 500);
  CHECK(out.front() == "k7");
  // After k7, the rest in increasing time; equal times in call order.
  strings rest(out.begin() + 1, out.end());
  strings want;
  std::vector<std::pair<int, int>> keyed;  // (ms, call index)
  for (int i = 0; i < 500; ++i) {
    if (i == 7) continue;
    keyed.emplace_back(499 - i - (i % 10 == 1 ? 1 : 0), i);
  }
  std::sort(keyed.begin(), keyed.end());
  for (auto& [ms, i] : keyed) want.push_back("k" + std::to_string(i));
  CHECK(rest == want);
  CHECK(unrefs == 501);  // 500 handed out and k7's stale entry
  CHECK(h.size() == 1);
  CHECK((late.state & waiting_bit) != 0);
  CHECK(h.next_ready_at(unref) == t0 + 1000ms);
  h.pop_ready(t0 + 1000ms, take, unref);
  CHECK(out.back() == "late");
  CHECK(h.empty());
  for (const test_node& n : nodes) CHECK(n.heap_refs == 0);
}

TEST_CASE("delaying_queue: shutdown releases many waiting items that each have a stale heap entry",
          "[workqueue][delay]") {
  // Each item is moved earlier once, so two heap entries point at its node.
  // Shutdown drops them all; nodes are retired and freed in batches while
  // that happens, so no entry may be looked at after its node's last one
  // (ASan reports it: freed nodes are poisoned).
  asio::io_context io;
  kube::manual_clock clk;
  wq::delaying_queue<std::string> q(io.get_executor(), {.time_source = &clk});
  asio::post(io, [&] {
    for (int i = 0; i < 1000; ++i) {
      const std::string key = "k" + std::to_string(i);
      q.add_after(key, 20ms);
      q.add_after(key, 10ms);
    }
  });
  settle(io);
  CHECK(q.waiting_for_delay() == 1000);
  q.shutdown();
  settle(io);
  CHECK(q.waiting_for_delay() == 0);
  CHECK(q.len() == 0);
}

TEST_CASE("delaying_queue: items ready at once after a long handler come out in time order", "[workqueue][delay]") {
  asio::io_context io;
  kube::manual_clock clk;
  wq::delaying_queue<std::string> q(io.get_executor(), {.time_source = &clk});
  asio::post(io, [&] {
    for (int i = 0; i < 300; ++i) q.add_after("k" + std::to_string(i), std::chrono::milliseconds(300 - i));
  });
  settle(io);
  CHECK(q.waiting_for_delay() == 300);
  clk.advance(1s);
  strings out = drain_ready(io, q);
  REQUIRE(out.size() == 300);
  CHECK(out.front() == "k299");
  CHECK(out.back() == "k0");
  CHECK(std::is_sorted(out.begin(), out.end(), [](const std::string& a, const std::string& b) {
    return std::stoi(a.substr(1)) > std::stoi(b.substr(1));
  }));
}

TEST_CASE("delay_heap: a large heap with some or most entries ready hands out exactly those, in order",
          "[workqueue][delay]") {
  // 8,000 entries (above the size from which the heap samples its leaves to
  // choose between single pops and one bulk pass), ready times shuffled,
  // and one entry far in the future so the "everything has passed" shortcut
  // never applies. Whichever way is chosen, the ready items come out in
  // (time, call) order and the others keep waiting.
  const double fraction = GENERATE(0.005, 0.05, 0.5, 0.95);
  CAPTURE(fraction);
  kube::manual_clock clk;
  const auto t0 = clk.now();
  constexpr int count = 8000;
  std::vector<int> ms(count);
  std::mt19937 rng(7);
  for (int i = 0; i < count; ++i) ms[static_cast<std::size_t>(i)] = static_cast<int>(rng() % 10'000);
  std::deque<test_node> nodes;
  for (int i = 0; i < count; ++i) nodes.push_back(test_node{"k" + std::to_string(i)});
  test_node far{"far"};
  wq::detail::delay_heap<test_node, waiting_bit> h;
  auto unref = [](test_node*) {};
  for (int i = 0; i < count; ++i) {
    h.push(&nodes[static_cast<std::size_t>(i)], t0 + std::chrono::milliseconds(ms[static_cast<std::size_t>(i)]));
  }
  h.push(&far, t0 + 1h);
  const int cut = static_cast<int>(10'000 * fraction);  // ready: ms <= cut
  std::vector<std::pair<int, int>> keyed;               // (ms, call index) of the ready ones
  for (int i = 0; i < count; ++i) {
    if (ms[static_cast<std::size_t>(i)] <= cut) keyed.emplace_back(ms[static_cast<std::size_t>(i)], i);
  }
  std::sort(keyed.begin(), keyed.end());
  strings want;
  for (auto& [t, i] : keyed) want.push_back("k" + std::to_string(i));
  strings out;
  h.pop_ready(
      t0 + std::chrono::milliseconds(cut), [&](test_node* n) { out.push_back(n->item); }, unref);
  CHECK(out == want);
  CHECK(h.size() == static_cast<std::size_t>(count) + 1 - want.size());
  int next = 10'000;
  for (int t : ms) {
    if (t > cut) next = std::min(next, t);
  }
  CHECK(h.next_ready_at(unref) == t0 + std::chrono::milliseconds(next));
  std::size_t waiting = 0;
  for (const test_node& n : nodes) waiting += (n.state & waiting_bit) != 0 ? 1 : 0;
  CHECK(waiting == static_cast<std::size_t>(count) - want.size());
}
