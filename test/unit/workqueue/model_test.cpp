// Randomized checks of queue and delaying_queue against a plain model of
// client-go's rules (dirty set, processing set, FIFO; waiting items with the
// earliest ready time kept). Long sequences of add / add_after / get / done /
// clock steps, with keys that collide in the index (a hash with three
// values) and with many keys (index and node storage grow, shrink and reuse
// memory). Fixed seeds: a failure reproduces.
#include "test_support.hpp"

#include <kube/workqueue/delaying_queue.hpp>
#include <kube/base/manual_clock.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace asio = boost::asio;
namespace wq = kube::workqueue;
using namespace std::chrono_literals;
using wq_test::settle;

namespace {

// Every key lands on one of three hashes: long probe runs, equal full
// hashes, erasures in the middle of runs.
struct colliding_hash {
  std::size_t operator()(int k) const noexcept { return static_cast<std::size_t>(k % 3); }
};

// client-go's rules, written the obvious way.
template <class K>
struct model {
  using time_point = kube::clock::time_point;
  std::deque<K> fifo;
  std::set<K> dirty;
  std::set<K> processing;
  std::map<K, std::pair<time_point, std::uint64_t>> waiting;  // ready time, order of the winning request
  std::uint64_t seq = 0;

  void add(const K& k) {
    if (!dirty.insert(k).second) return;
    if (processing.count(k) == 0) fifo.push_back(k);
  }
  std::optional<K> get() {
    if (fifo.empty()) return std::nullopt;
    K k = fifo.front();
    fifo.pop_front();
    processing.insert(k);
    dirty.erase(k);
    return k;
  }
  void done(const K& k) {
    if (processing.erase(k) == 0) return;
    if (dirty.count(k) != 0) fifo.push_back(k);
  }
  void add_after(const K& k, kube::clock::duration d, time_point now) {
    if (d <= kube::clock::duration::zero()) {
      add(k);
      return;
    }
    auto it = waiting.find(k);
    if (it != waiting.end() && now + d >= it->second.first) return;
    waiting[k] = {now + d, seq++};
  }
  // Everything ready at `now` is added, in (ready time, request order).
  void ready(time_point now) {
    std::vector<std::tuple<time_point, std::uint64_t, K>> due;
    for (auto it = waiting.begin(); it != waiting.end();) {
      if (it->second.first <= now) {
        due.emplace_back(it->second.first, it->second.second, it->first);
        it = waiting.erase(it);
      } else {
        ++it;
      }
    }
    std::sort(due.begin(), due.end());
    for (const auto& d : due) add(std::get<2>(d));
  }
};

// Runs `f` on the queue's executor (so add is the executor's own add and
// try_get/done are allowed), then everything it made ready.
template <class F>
void on_executor(asio::io_context& io, F&& f) {
  asio::post(io, std::forward<F>(f));
  settle(io);
}

// One random run, checked against the model after every step (Catch2 on
// this, the test's thread: the executor is polled here too). A step is
// either a clock move or a run of 1-24 operations made inside one handler
// on the executor (so several adds, gets and dones happen between two
// returns to the event loop, as in a worker); len() is also read in the
// middle of a run.
template <class K, class Hash, class MakeKey>
void run_model(std::uint32_t seed, int steps, int keys, bool delays, MakeKey make_key) {
  asio::io_context io;
  kube::manual_clock clk;
  wq::delaying_queue<K, Hash> q(io.get_executor(), {.time_source = &clk});
  model<K> m;
  std::mt19937 rng(seed);
  std::vector<K> held;  // items taken and not yet done (per the model)
  enum class op_kind { add, add_after, get, done, len };
  struct op {
    op_kind kind;
    K key{};
    kube::clock::duration delay{};
  };
  for (int step = 0; step < steps; ++step) {
    if (delays && rng() % 100 < 8) {
      clk.advance(std::chrono::milliseconds(rng() % 20));
      settle(io);
      m.ready(clk.now());
    } else {
      // Plan the run and what the model says each get/len gives.
      std::vector<op> ops;
      std::vector<std::optional<K>> want_gets;
      std::vector<std::size_t> want_lens;
      const unsigned count = rng() % 4 == 0 ? 1 + rng() % 24 : 1;
      const auto now = clk.now();
      for (unsigned i = 0; i < count; ++i) {
        const unsigned kind = rng() % 100;
        const K k = make_key(static_cast<int>(rng() % static_cast<unsigned>(keys)));
        if (kind < 40) {
          ops.push_back({op_kind::add, k});
          m.add(k);
        } else if (kind < 55 && delays) {
          const auto d = std::chrono::milliseconds(static_cast<int>(rng() % 40) - 5);
          ops.push_back({op_kind::add_after, k, d});
          m.add_after(k, d, now);
        } else if (kind < 80) {
          ops.push_back({op_kind::get});
          want_gets.push_back(m.get());
          if (want_gets.back()) held.push_back(*want_gets.back());
        } else if (kind < 95 && !held.empty()) {
          const std::size_t j = rng() % held.size();
          ops.push_back({op_kind::done, held[j]});
          m.done(held[j]);
          held.erase(held.begin() + static_cast<std::ptrdiff_t>(j));
        } else {
          ops.push_back({op_kind::len});
          want_lens.push_back(m.fifo.size());
        }
      }
      std::vector<std::optional<K>> gets;
      std::vector<std::size_t> lens;
      on_executor(io, [&] {
        for (const op& o : ops) {
          switch (o.kind) {
          case op_kind::add:
            q.add(o.key);
            break;
          case op_kind::add_after:
            q.add_after(o.key, o.delay);
            break;
          case op_kind::get:
            gets.push_back(q.try_get());
            break;
          case op_kind::done:
            q.done(o.key);
            break;
          case op_kind::len:
            lens.push_back(q.len());
            break;
          }
        }
      });
      REQUIRE(gets == want_gets);
      REQUIRE(lens == want_lens);
    }
    REQUIRE(q.len() == m.fifo.size());
    if (delays) REQUIRE(q.waiting_for_delay() == m.waiting.size());
  }
  // Drain: everything still held is done, everything queued taken and done.
  clk.advance(1h);
  settle(io);
  m.ready(clk.now());
  for (const K& h : held) {
    on_executor(io, [&] { q.done(h); });
    m.done(h);
  }
  for (;;) {
    std::optional<K> got;
    on_executor(io, [&] { got = q.try_get(); });
    const std::optional<K> want = m.get();
    REQUIRE(got == want);
    if (!got) break;
    on_executor(io, [&] { q.done(*got); });
    m.done(*got);
  }
  CHECK(q.len() == 0);
  CHECK(q.waiting_for_delay() == 0);
  q.shutdown();
  settle(io);
}

}  // namespace

TEST_CASE("model: queue with colliding hashes follows client-go's rules", "[workqueue][model]") {
  for (std::uint32_t seed : {1u, 2u, 3u}) {
    run_model<int, colliding_hash>(seed, 20000, 48, false, [](int i) { return i; });
  }
}

TEST_CASE("model: delaying queue with colliding hashes follows client-go's rules", "[workqueue][model]") {
  for (std::uint32_t seed : {4u, 5u, 6u}) {
    run_model<int, colliding_hash>(seed, 20000, 48, true, [](int i) { return i; });
  }
}

TEST_CASE("model: delaying queue with many string keys follows client-go's rules", "[workqueue][model]") {
  // Enough distinct keys that the index and the node slabs grow, and (after
  // the final drain) shrink and are given back.
  run_model<std::string, std::hash<std::string>>(7, 25000, 5000, true,
                                                 [](int i) { return "default/object-" + std::to_string(i); });
}

TEST_CASE("model: delaying queue with keys in the node and on the heap follows client-go's rules",
          "[workqueue][model]") {
  // Key lengths 1 to 54: nodes keep up to 32 bytes inline and longer keys
  // as a std::string; both kinds are indexed, requeued and retired together.
  run_model<std::string, std::hash<std::string>>(10, 20000, 3000, true, [](int i) {
    return std::string(static_cast<std::size_t>(i % 50), 'k') + "/" + std::to_string(i);
  });
}

TEST_CASE("delaying_queue: an item waiting for a delay can meanwhile be queued, held and done", "[workqueue][delay]") {
  asio::io_context io;
  kube::manual_clock clk;
  wq::delaying_queue<std::string> q(io.get_executor(), {.time_source = &clk});
  std::optional<std::string> got;
  on_executor(io, [&] {
    q.add_after("a", 10ms);
    q.add("a");  // queued now; still waiting for its delay as well
  });
  CHECK(q.len() == 1);
  CHECK(q.waiting_for_delay() == 1);
  on_executor(io, [&] { got = q.try_get(); });
  CHECK(got == "a");
  clk.advance(10ms);  // ready while held: marked dirty, not handed out
  settle(io);
  CHECK(q.waiting_for_delay() == 0);
  CHECK(q.len() == 0);
  on_executor(io, [&] { q.done("a"); });  // requeued
  CHECK(q.len() == 1);
  on_executor(io, [&] {
    got = q.try_get();
    q.done("a");
  });
  CHECK(got == "a");
  CHECK(q.len() == 0);
  q.shutdown();
  settle(io);
}

TEST_CASE("model: queue fed mostly new keys follows client-go's rules", "[workqueue][model]") {
  // Keys drawn from a million: nearly every add brings a new item, so the
  // node pool and the index keep growing (and retiring) under the model.
  run_model<std::string, std::hash<std::string>>(8, 8000, 1000000, false,
                                                 [](int i) { return "default/object-" + std::to_string(i); });
  run_model<std::string, std::hash<std::string>>(9, 8000, 1000000, true,
                                                 [](int i) { return "default/object-" + std::to_string(i); });
}
