// work_loop: results -> queue decisions (forget, rate-limited retry,
// requeue-after), one reconcile per key at a time, the ready gate, graceful
// shutdown. A manual workqueue clock and a polled io_context: no sleeps.
#include <kube/controller/work_loop.hpp>
#include <kube/base/manual_clock.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace asio = boost::asio;
namespace kc = kube::controller;
using namespace std::chrono_literals;

namespace {

void settle(asio::io_context& io) {
  io.restart();
  io.poll();
}

// A door a reconcile can wait at until the test opens it (a timer that
// never expires by itself; cancel() opens it).
struct gate {
  explicit gate(asio::io_context& io)
      : t(io, asio::steady_timer::time_point::max()) {}
  asio::awaitable<void> wait() {
    ++waiting;
    auto [ec] = co_await t.async_wait(asio::as_tuple(asio::use_awaitable));
    (void)ec;
    --waiting;
  }
  void open() { t.cancel(); }
  asio::steady_timer t;
  int waiting = 0;
};

struct rig {
  asio::io_context io;
  kube::manual_clock clk;
  std::unique_ptr<kc::work_loop> loop;
  std::vector<kc::reconcile_outcome> outcomes;
  std::vector<std::string> calls;  // keys, in reconcile start order
  asio::cancellation_signal stop;
  bool done = false;
  kube::error_code run_ec;

  explicit rig(unsigned workers = 1, std::shared_ptr<kube::metrics::provider> metrics = nullptr) {
    kc::work_loop_params o;
    o.name = "test";
    o.workers = workers;
    o.metrics = std::move(metrics);
    o.queue.time_source = &clk;
    o.on_reconciled = [this](const kc::reconcile_outcome& r) { outcomes.push_back(r); };
    loop = std::make_unique<kc::work_loop>(io.get_executor(), std::move(o));
  }
  void start(kc::work_loop::reconcile_fn fn, kc::work_loop::ready_fn ready = {}) {
    loop->async_run(std::move(fn), std::move(ready),
                    asio::bind_cancellation_slot(stop.slot(), [this](kube::error_code ec) {
                      run_ec = ec;
                      done = true;
                    }));
    settle(io);
  }
  void advance(std::chrono::nanoseconds d) {
    clk.advance(d);
    settle(io);
  }
  void shutdown() {
    stop.emit(asio::cancellation_type::terminal);
    settle(io);
  }
  ~rig() {
    if (!done) {
      shutdown();
    }
  }
};

}  // namespace

TEST_CASE("work_loop: done forgets the key - errors retry after 5 ms, 10 ms, 20 ms", "[controller][work_loop]") {
  rig t;
  int failures_left = 3;
  t.start([&](const std::string& key) -> asio::awaitable<kc::reconcile_result> {
    t.calls.push_back(key);
    if (failures_left-- > 0) {
      co_return kc::reconcile_result::failed(make_error_code(boost::system::errc::io_error), "boom");
    }
    co_return kc::reconcile_result::done();
  });
  t.loop->enqueue("ns/a");
  settle(t.io);
  REQUIRE(t.calls.size() == 1);
  REQUIRE(t.outcomes.back().action == kc::reconcile_result::action::error);
  CHECK(t.outcomes.back().error.find("boom") != std::string::npos);
  CHECK(t.outcomes.back().retries == 1);

  // Backoff of the default controller limiter: 5 ms, 10 ms, 20 ms.
  for (auto wait : {5ms, 10ms, 20ms}) {
    const auto before = t.calls.size();
    t.advance(wait - 1ms);
    CHECK(t.calls.size() == before);  // not yet
    t.advance(1ms);
    CHECK(t.calls.size() == before + 1);
  }
  REQUIRE(t.calls.size() == 4);
  CHECK(t.outcomes.back().action == kc::reconcile_result::action::done);
  CHECK(t.outcomes.back().retries == 0);  // forgotten
  const auto s = t.loop->stats();
  CHECK(s.reconciles == 4);
  CHECK(s.failed == 3);
  CHECK(s.succeeded == 1);

  // Nothing else is scheduled.
  t.advance(2000s);
  CHECK(t.calls.size() == 4);
}

TEST_CASE("work_loop: an exception is an error with its text - backoff restarts after success",
          "[controller][work_loop]") {
  rig t;
  int n = 0;
  t.start([&](const std::string& key) -> asio::awaitable<kc::reconcile_result> {
    t.calls.push_back(key);
    ++n;
    if (n == 1 || n == 3) {
      throw std::runtime_error("deployment \"x\" is not ours");
    }
    co_return kc::reconcile_result::done();
  });
  t.loop->enqueue("a");
  settle(t.io);
  REQUIRE(t.outcomes.size() == 1);
  CHECK(t.outcomes[0].action == kc::reconcile_result::action::error);
  CHECK(t.outcomes[0].error == "deployment \"x\" is not ours");
  t.advance(5ms);
  REQUIRE(t.outcomes.size() == 2);
  CHECK(t.outcomes[1].action == kc::reconcile_result::action::done);
  // A new failure starts again at 5 ms (the success forgot the key).
  t.loop->enqueue("a");
  settle(t.io);
  REQUIRE(t.outcomes.size() == 3);
  CHECK(t.outcomes[2].retries == 1);
  t.advance(4ms);
  CHECK(t.outcomes.size() == 3);
  t.advance(1ms);
  CHECK(t.outcomes.size() == 4);
}

TEST_CASE("work_loop: requeue_after comes back after exactly that delay and resets the backoff",
          "[controller][work_loop]") {
  rig t;
  int n = 0;
  t.start([&](const std::string& key) -> asio::awaitable<kc::reconcile_result> {
    t.calls.push_back(key);
    ++n;
    if (n == 1) co_return kc::reconcile_result::failed({}, "first fails");
    if (n <= 3) co_return kc::reconcile_result::requeue_after(30s);
    co_return kc::reconcile_result::done();
  });
  t.loop->enqueue("ns/p");
  settle(t.io);
  t.advance(5ms);  // the retry
  REQUIRE(t.calls.size() == 2);
  CHECK(t.outcomes.back().action == kc::reconcile_result::action::requeue_after);
  CHECK(t.outcomes.back().requeue_after == 30s);
  CHECK(t.outcomes.back().retries == 0);  // forgotten
  CHECK(t.outcomes.front().error == "first fails");
  t.advance(30s - 1ms);
  CHECK(t.calls.size() == 2);
  t.advance(1ms);
  CHECK(t.calls.size() == 3);
  t.advance(30s);
  CHECK(t.calls.size() == 4);
  t.advance(1h);
  CHECK(t.calls.size() == 4);
  CHECK(t.loop->stats().requeued == 2);
}

TEST_CASE("work_loop: requeue() and requeue_after(0) are rate limited", "[controller][work_loop]") {
  rig t;
  int n = 0;
  t.start([&](const std::string& key) -> asio::awaitable<kc::reconcile_result> {
    t.calls.push_back(key);
    ++n;
    if (n == 1) co_return kc::reconcile_result::requeue();
    if (n == 2) co_return kc::reconcile_result::requeue_after(0s);
    co_return kc::reconcile_result::done();
  });
  t.loop->enqueue("k");
  settle(t.io);
  CHECK(t.outcomes.back().action == kc::reconcile_result::action::requeue);
  t.advance(5ms);
  REQUIRE(t.calls.size() == 2);
  CHECK(t.outcomes.back().action == kc::reconcile_result::action::requeue);
  t.advance(9ms);
  CHECK(t.calls.size() == 2);
  t.advance(1ms);
  CHECK(t.calls.size() == 3);
  CHECK(t.loop->stats().failed == 0);
}

TEST_CASE("work_loop: one key is never reconciled twice at once - other keys run in parallel",
          "[controller][work_loop]") {
  rig t(4);
  gate g(t.io);
  std::map<std::string, int> running, most, count;
  t.start([&](const std::string& key) -> asio::awaitable<kc::reconcile_result> {
    most[key] = std::max(most[key], ++running[key]);
    ++count[key];
    co_await g.wait();
    --running[key];
    co_return kc::reconcile_result::done();
  });
  t.loop->enqueue("ns/a");
  t.loop->enqueue("ns/b");
  settle(t.io);
  CHECK(g.waiting == 2);  // a and b in flight, on two of the four workers
  // "a" changes three more times while its reconcile runs: held back, once.
  t.loop->enqueue("ns/a");
  t.loop->enqueue("ns/a");
  t.loop->enqueue("ns/a");
  settle(t.io);
  CHECK(g.waiting == 2);
  CHECK(count["ns/a"] == 1);
  CHECK(t.loop->stats().in_flight == 2);
  g.open();  // both finish; "a" is handed out again (once)
  settle(t.io);
  CHECK(count["ns/a"] == 2);
  CHECK(count["ns/b"] == 1);
  CHECK(g.waiting == 1);
  g.open();
  settle(t.io);
  CHECK(most["ns/a"] == 1);
  CHECK(most["ns/b"] == 1);
  CHECK(t.loop->stats().max_in_flight == 2);
  CHECK(t.loop->stats().reconciles == 3);
}

TEST_CASE("work_loop: no reconcile before ready completes", "[controller][work_loop]") {
  rig t(2);
  gate ready(t.io);
  t.start(
      [&](const std::string& key) -> asio::awaitable<kc::reconcile_result> {
        t.calls.push_back(key);
        co_return kc::reconcile_result::done();
      },
      [&]() -> asio::awaitable<void> { co_await ready.wait(); });
  t.loop->enqueue("x/1");
  t.loop->enqueue("x/2");
  settle(t.io);
  CHECK(t.calls.empty());
  CHECK_FALSE(t.loop->started());
  ready.open();
  settle(t.io);
  CHECK(t.loop->started());
  CHECK(t.calls.size() == 2);
}

TEST_CASE("work_loop: shutdown waits for in-flight reconciles and starts no new ones", "[controller][work_loop]") {
  rig t(2);
  gate g(t.io);
  int finished = 0;
  t.start([&](const std::string& key) -> asio::awaitable<kc::reconcile_result> {
    t.calls.push_back(key);
    co_await g.wait();
    ++finished;
    co_return kc::reconcile_result::failed({}, "would retry");
  });
  t.loop->enqueue("a");
  t.loop->enqueue("b");
  t.loop->enqueue("c");  // queued behind the two busy workers
  settle(t.io);
  REQUIRE(t.calls.size() == 2);
  t.shutdown();
  CHECK_FALSE(t.done);  // a and b still running
  g.open();
  settle(t.io);
  CHECK(finished == 2);
  CHECK(t.done);
  CHECK(t.run_ec == asio::error::operation_aborted);
  CHECK(t.calls.size() == 2);  // c never started
  t.advance(1h);               // the retries were dropped with the queue
  CHECK(t.calls.size() == 2);
}

TEST_CASE("work_loop: cancelled while waiting for ready - bad arguments", "[controller][work_loop]") {
  {
    rig t;
    gate ready(t.io);
    t.start(
        [&](const std::string&) -> asio::awaitable<kc::reconcile_result> { co_return kc::reconcile_result::done(); },
        [&]() -> asio::awaitable<void> {
          auto [ec] = co_await ready.t.async_wait(asio::as_tuple(asio::use_awaitable));
          if (ec) throw boost::system::system_error(ec);
        });
    t.shutdown();
    CHECK(t.done);
    CHECK(t.run_ec == asio::error::operation_aborted);
    // One-shot: a second run is refused.
    kube::error_code again;
    t.loop->async_run(
        [](const std::string&) -> asio::awaitable<kc::reconcile_result> { co_return kc::reconcile_result::done(); }, {},
        [&](kube::error_code ec) { again = ec; });
    settle(t.io);
    CHECK(again == kube::client_errc::already_running);
  }
  asio::io_context io;
  kc::work_loop_params o;
  o.workers = 0;
  CHECK_THROWS_AS(kc::work_loop(io.get_executor(), o), std::invalid_argument);
}

namespace {
struct loop_metrics final : kube::metrics::controller_metrics {
  unsigned workers = 0;
  std::vector<unsigned> active;
  std::vector<kube::metrics::reconcile_label> results;
  std::vector<duration> took;
  void on_workers(unsigned n) override { workers = n; }
  void on_active(unsigned n) override { active.push_back(n); }
  void on_reconcile(kube::metrics::reconcile_label r, duration d) override {
    results.push_back(r);
    took.push_back(d);
  }
};
struct queue_metrics final : kube::metrics::workqueue_metrics {
  int adds = 0;
  void on_add() override { ++adds; }
};
struct loop_provider final : kube::metrics::provider {
  std::shared_ptr<loop_metrics> loop = std::make_shared<loop_metrics>();
  std::shared_ptr<queue_metrics> queue = std::make_shared<queue_metrics>();
  std::vector<std::string> names;
  std::shared_ptr<kube::metrics::controller_metrics> controller(std::string_view name) override {
    names.emplace_back(name);
    return loop;
  }
  std::shared_ptr<kube::metrics::workqueue_metrics> workqueue(std::string_view name) override {
    names.emplace_back(name);
    return queue;
  }
};
}  // namespace

TEST_CASE("work_loop: metrics hear of workers, active reconciles, each result and its time, and the queue",
          "[controller][work_loop][metrics]") {
  using kube::metrics::reconcile_label;
  auto p = std::make_shared<loop_provider>();
  rig t(2, p);
  CHECK(p->names == std::vector<std::string>{"test", "test"});  // the queue's and the controller's, by name
  gate g(t.io);
  t.start([&](const std::string& key) -> asio::awaitable<kc::reconcile_result> {
    if (key == "ns/slow") {
      co_await g.wait();
      co_return kc::reconcile_result::requeue_after(1h);
    }
    t.clk.advance(3ms);  // the work takes 3 ms by the queue's clock
    if (key == "ns/bad") {
      co_return kc::reconcile_result::failed(make_error_code(boost::system::errc::io_error), "boom");
    }
    if (key == "ns/again") {
      co_return kc::reconcile_result::requeue();
    }
    co_return kc::reconcile_result::done();
  });
  CHECK(p->loop->workers == 2);
  t.loop->enqueue("ns/slow");
  settle(t.io);
  CHECK(p->loop->active.back() == 1);  // slow holds a worker
  t.loop->enqueue("ns/ok");
  t.loop->enqueue("ns/bad");
  t.loop->enqueue("ns/again");
  settle(t.io);
  g.open();
  settle(t.io);
  CHECK(p->loop->active.back() == 0);
  CHECK(*std::max_element(p->loop->active.begin(), p->loop->active.end()) == 2);
  REQUIRE(p->loop->results.size() == 4);
  CHECK(p->loop->results[0] == reconcile_label::success);
  CHECK(p->loop->results[1] == reconcile_label::error);
  CHECK(p->loop->results[2] == reconcile_label::requeue);
  CHECK(p->loop->results[3] == reconcile_label::requeue_after);
  CHECK(p->loop->took[0] == 3ms);
  CHECK(p->queue->adds == 4);
}
