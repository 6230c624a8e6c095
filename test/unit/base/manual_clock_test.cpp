// kube::manual_clock: time moves only on request, and waiters registered
// through on_advance are told, in due order.
#include <kube/base/manual_clock.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

using kube::clock;
using kube::manual_clock;
using namespace std::chrono_literals;

TEST_CASE("manual clock moves only through advance and set, never back", "[base][clock]") {
  manual_clock c;
  const auto start = c.now();
  CHECK(start == clock::time_point{} + 1h);
  CHECK(c.is_manual());
  CHECK(c.now() == start);
  c.advance(5ms);
  CHECK(c.now() == start + 5ms);
  c.set(start + 1s);
  CHECK(c.now() == start + 1s);
  CHECK_THROWS_AS(c.advance(-1ns), std::invalid_argument);
  CHECK_THROWS_AS(c.set(start), std::invalid_argument);
  CHECK(c.now() == start + 1s);
}

TEST_CASE("the real clock is steady and not manual", "[base][clock]") {
  const auto& c = kube::real_clock();
  CHECK_FALSE(c.is_manual());
  const auto a = c.now();
  CHECK(c.now() >= a);
}

TEST_CASE("manual clock calls a listener after every advance until it returns false", "[base][clock]") {
  manual_clock c;
  int calls = 0;
  c.on_advance([&] { return ++calls < 2; }, clock::time_point::max());
  CHECK(calls == 0);  // registering does not call
  c.advance(1ms);
  CHECK(calls == 1);
  c.set(c.now() + 1ms);
  CHECK(calls == 2);  // returned false: dropped
  c.advance(1ms);
  CHECK(calls == 2);
}

TEST_CASE("manual clock calls due listeners in due order, then the any-advance ones", "[base][clock]") {
  manual_clock c;
  std::vector<std::string> order;
  c.on_advance(
      [&] {
        order.push_back("any");
        return false;
      },
      clock::time_point::max());
  c.on_advance(
      [&] {
        order.push_back("late");
        return false;
      },
      c.now() + 3s);
  c.on_advance(
      [&] {
        order.push_back("early");
        return false;
      },
      c.now() + 1s);
  c.on_advance(
      [&] {
        order.push_back("early2");
        return false;
      },
      c.now() + 1s);
  c.advance(5s);
  CHECK(order == std::vector<std::string>{"early", "early2", "late", "any"});
}

TEST_CASE("manual clock reports waits to tests: lengths, pending, next wake", "[base][clock]") {
  manual_clock c;
  CHECK(c.pending() == 0);
  CHECK(c.next_wake_in() == 0s);
  const auto start = c.now();
  // A waiter that is woken once its due time has come, as informer::sleep does.
  auto wait = [&c](clock::duration d, bool& woken) {
    const auto due = c.now() + d;
    c.on_advance([&c, &woken, due] { return !(woken = c.now() >= due); }, due);
  };
  bool a = false;
  bool b = false;
  wait(3s, a);
  c.advance(1s);
  wait(5s, b);
  c.on_advance([] { return true; }, clock::time_point::max());  // not a wait
  CHECK(c.sleeps() == std::vector<clock::duration>{3s, 5s});
  CHECK(c.pending() == 2);
  CHECK(c.next_wake_in() == 2s);  // a is due at start + 3 s
  c.advance(2s);
  CHECK(a);
  CHECK_FALSE(b);
  CHECK(c.pending() == 1);
  CHECK(c.next_wake_in() == 3s);  // b is due at start + 6 s
  c.set(start + 6s);
  CHECK(b);
  CHECK(c.pending() == 0);
}

TEST_CASE("manual clock keeps a listener registered by another listener for the next advance", "[base][clock]") {
  manual_clock c;
  int inner = 0;
  c.on_advance(
      [&] {
        c.on_advance(
            [&] {
              ++inner;
              return true;
            },
            clock::time_point::max());
        return false;
      },
      clock::time_point::max());
  c.advance(1ms);
  CHECK(inner == 0);
  c.advance(1ms);
  CHECK(inner == 1);
}
