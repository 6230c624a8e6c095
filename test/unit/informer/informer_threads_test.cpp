// Listers read the informer's cache from other threads while the informer
// (its own io thread) applies events, and handlers run on their own strands
// of a two-thread io_context: run under ThreadSanitizer (label tsan).
#include "test_object.hpp"

#include <kube/informer/fake_lister_watcher.hpp>
#include <kube/informer/lister.hpp>
#include <kube/informer/shared_informer.hpp>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace asio = boost::asio;
using namespace kube::informer;
using kube::informer::test::make;
using kube::informer::test::thing;

TEST_CASE("informer: listers and has_synced read from other threads while the informer writes", "[informer][threads]") {
  asio::io_context io;
  auto guard = asio::make_work_guard(io);
  auto lw = std::make_shared<fake_lister_watcher<thing>>();
  informer_params<thing> params;
  params.reflector.streaming_list = false;  // the fake is scripted list first
  shared_index_informer<thing> inf(io.get_executor(), lw, std::move(params));
  std::promise<void> last_seen;
  inf.add_handler({[&](const std::shared_ptr<const thing>& o, bool) {
                     if (o->nm == "last") last_seen.set_value();
                   },
                   nullptr, nullptr});
  asio::cancellation_signal stop;
  std::promise<kube::error_code> stopped;
  asio::post(io, [&] {
    inf.async_run(asio::bind_cancellation_slot(stop.slot(), [&](kube::error_code ec) { stopped.set_value(ec); }));
  });
  std::thread runner([&] { io.run(); });

  auto cache = inf.cache();
  lister<thing> l(cache, [](const thing&) { return std::map<std::string, std::string>{}; });
  std::atomic<bool> done{false};
  std::atomic<std::size_t> reads{0};
  std::atomic<std::size_t> null_reads{0};
  // Catch2 assertions are not thread-safe: readers count what they saw and
  // the test thread checks the counts after joining them.
  auto reader = [&] {
    while (!done.load()) {
      auto all = l.list();
      for (const auto& o : all) {
        if (!o || o->nm.empty()) null_reads.fetch_add(1);  // shared_ptrs to immutable objects stay valid
      }
      (void)l.get("ns", "a");
      (void)inf.has_synced();
      reads.fetch_add(1);
    }
  };
  std::thread r1(reader), r2(reader);

  // All fake access happens on the io thread (the fake is single-threaded).
  asio::post(io, [&] {
    std::vector<std::shared_ptr<const thing>> items;
    for (int i = 0; i < 200; ++i) items.push_back(make("ns", "o" + std::to_string(i)));
    lw->push_list(std::move(items), "10");
    std::vector<event<thing>> evs;
    for (int i = 0; i < 2000; ++i) {
      evs.push_back(
          fake_lister_watcher<thing>::modified(make("ns", "o" + std::to_string(i % 200), std::to_string(11 + i))));
      if (i % 10 == 0) evs.push_back(fake_lister_watcher<thing>::deleted(make("ns", "o" + std::to_string(i % 200))));
    }
    evs.push_back(fake_lister_watcher<thing>::added(make("ns", "last", "9999")));
    lw->push_watch(std::move(evs));
  });
  REQUIRE(last_seen.get_future().wait_for(std::chrono::seconds(60)) == std::future_status::ready);
  done = true;
  r1.join();
  r2.join();
  CHECK(inf.has_synced());
  CHECK(l.get("ns", "last"));
  CHECK(reads.load() > 0);
  CHECK(null_reads.load() == 0);
  asio::post(inf.get_executor(), [&] { stop.emit(asio::cancellation_type::terminal); });
  auto f = stopped.get_future();
  REQUIRE(f.wait_for(std::chrono::seconds(30)) == std::future_status::ready);
  CHECK(f.get() == asio::error::operation_aborted);
  guard.reset();
  runner.join();
}

TEST_CASE("informer: a handler that sleeps delays only itself - its queue grows, nothing is dropped",
          "[informer][threads]") {
  asio::io_context io;
  auto guard = asio::make_work_guard(io);
  auto lw = std::make_shared<fake_lister_watcher<thing>>();
  std::atomic<std::size_t> backlog_calls{0};
  std::atomic<std::uint64_t> backlog_id{0};
  informer_params<thing> params;
  params.reflector.streaming_list = false;  // the fake is scripted list first
  // The fast handler's queue holds at most a turn of the informer (64
  // deltas) and what its thread has not yet taken; the slow one's, 402.
  params.handler_backlog_warning = 300;
  params.on_handler_backlog = [&](const handler_backlog& b) {
    backlog_id = b.handler_id;
    backlog_calls.fetch_add(1);
  };
  shared_index_informer<thing> inf(io.get_executor(), lw, std::move(params));

  // Each handler's log is written on its own strand and read here only
  // after the promise it fulfils, or after the io threads are joined.
  std::atomic<bool> gate{false};
  std::vector<std::string> slow_log, fast_log;
  std::promise<void> fast_done, slow_done;
  auto record = [](std::vector<std::string>& log, std::promise<void>& done) {
    return event_handler<thing>{
        [&log, &done](const std::shared_ptr<const thing>& o, bool initial) {
          log.push_back("add " + o->nm + (initial ? " initial" : ""));
          if (o->nm == "last") done.set_value();
        },
        [&log](const std::shared_ptr<const thing>&, const std::shared_ptr<const thing>& o) {
          log.push_back("update " + o->nm + "@" + o->rv);
        },
        [&log](const deleted_object<thing>& d) { log.push_back("delete " + object_of(d)->nm); }};
  };
  auto slow_h = record(slow_log, slow_done);
  slow_h.on_add = [&, add = slow_h.on_add](const std::shared_ptr<const thing>& o, bool initial) {
    while (!gate.load()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    add(o, initial);
  };
  auto slow = inf.add_handler(std::move(slow_h));
  auto fast = inf.add_handler(record(fast_log, fast_done));

  asio::cancellation_signal stop;
  std::promise<kube::error_code> stopped;
  asio::post(io, [&] {
    inf.async_run(asio::bind_cancellation_slot(stop.slot(), [&](kube::error_code ec) { stopped.set_value(ec); }));
  });
  // Two threads: the sleeping handler holds one, everything else runs on the other.
  std::thread io1([&] { io.run(); });
  std::thread io2([&] { io.run(); });
  // The fake is single-threaded: fed on the informer's strand, which reads it.
  asio::post(inf.get_executor(), [&] {
    std::vector<std::shared_ptr<const thing>> items;
    for (int i = 0; i < 100; ++i) items.push_back(make("ns", "o" + std::to_string(i)));
    lw->push_list(std::move(items), "10");
    std::vector<event<thing>> evs;
    for (int i = 0; i < 300; ++i) {
      evs.push_back(
          fake_lister_watcher<thing>::modified(make("ns", "o" + std::to_string(i % 100), std::to_string(11 + i))));
    }
    evs.push_back(fake_lister_watcher<thing>::deleted(make("ns", "o7")));
    evs.push_back(fake_lister_watcher<thing>::added(make("ns", "last", "9999")));
    lw->push_watch(std::move(evs));
  });

  // The fast handler and the cache get everything while the slow one sleeps.
  REQUIRE(fast_done.get_future().wait_for(std::chrono::seconds(60)) == std::future_status::ready);
  CHECK(inf.has_synced());
  CHECK(fast->has_synced());
  CHECK(inf.make_lister().get("ns", "last"));
  CHECK(fast_log.size() == 100 + 300 + 2);
  CHECK_FALSE(slow->has_synced());
  CHECK(slow->pending() >= 400);  // at most the first add and one batch are out of its queue
  CHECK(backlog_calls.load() == 1);
  CHECK(backlog_id.load() == slow->id());

  gate = true;
  // Not asio::use_future: libc++ releases a future<void>'s state inside its
  // uninstrumented library, so ThreadSanitizer would see the io thread free
  // it without an order. This promise is the test's, and freed here.
  std::promise<kube::error_code> slow_synced;
  slow->async_wait_for_sync([&](kube::error_code ec) { slow_synced.set_value(ec); });
  REQUIRE(slow_done.get_future().wait_for(std::chrono::seconds(60)) == std::future_status::ready);
  auto synced = slow_synced.get_future();
  REQUIRE(synced.wait_for(std::chrono::seconds(60)) == std::future_status::ready);
  CHECK_FALSE(synced.get());
  CHECK(slow->has_synced());
  CHECK(slow->max_pending() >= 400);
  CHECK(slow->pending() == 0);
  CHECK(slow_log == fast_log);  // the same notifications, in the same order

  asio::post(inf.get_executor(), [&] { stop.emit(asio::cancellation_type::terminal); });
  auto f = stopped.get_future();
  REQUIRE(f.wait_for(std::chrono::seconds(30)) == std::future_status::ready);
  CHECK(f.get() == asio::error::operation_aborted);
  guard.reset();
  io1.join();
  io2.join();
}

namespace {

// Records each handler's queue length as the informer reports it (from
// the informer's and the handlers' strands).
struct queue_lengths final : kube::metrics::informer_metrics {
  std::mutex m;
  std::map<std::uint64_t, std::pair<std::size_t, std::size_t>> by_handler;  // id -> {longest, last}
  void on_handler_queue(std::uint64_t handler, std::size_t length) override {
    const std::lock_guard lock(m);
    auto& [longest, last] = by_handler[handler];
    longest = std::max(longest, length);
    last = length;
  }
};

// A bounded queue: one listed object (o0), then a watch that adds o1 to
// o99, updates each of the 100 three times, deletes o0 and o7 and adds
// "last", to a handler that holds its thread on its first notification
// (o0's add) until the gate opens, and to a fast one. The watch starts
// once the slow handler holds o0. Each handler's log is read only after the io threads are joined
// or after the promise its last notification fulfils.
struct bounded_run {
  asio::io_context io;
  std::shared_ptr<fake_lister_watcher<thing>> lw = std::make_shared<fake_lister_watcher<thing>>();
  std::shared_ptr<queue_lengths> lengths = std::make_shared<queue_lengths>();
  std::optional<shared_index_informer<thing>> inf;
  std::atomic<bool> gate{false};
  std::atomic<bool> slow_entered{false};
  std::vector<std::string> slow_log, fast_log;
  std::promise<void> fast_done, slow_done;
  std::shared_future<void> fast_seen = fast_done.get_future().share();  // "last" reached the fast handler
  std::shared_future<void> slow_seen = slow_done.get_future().share();
  std::shared_ptr<handler_registration> slow, fast;
  asio::cancellation_signal stop;
  std::promise<kube::error_code> stopped;
  std::vector<std::thread> threads;

  explicit bounded_run(handler_overflow_policy policy) {
    informer_params<thing> params;
    params.reflector.streaming_list = false;
    params.handler_queue_limit = 50;
    params.handler_overflow = policy;
    params.metrics = lengths;
    inf.emplace(io.get_executor(), lw, std::move(params));
    auto record = [](std::vector<std::string>& log, std::promise<void>& done) {
      return event_handler<thing>{
          [&log, &done](const std::shared_ptr<const thing>& o, bool initial) {
            log.push_back("add " + o->nm + "@" + o->rv + (initial ? " initial" : ""));
            if (o->nm == "last") done.set_value();
          },
          [&log](const std::shared_ptr<const thing>& old, const std::shared_ptr<const thing>& o) {
            log.push_back("update " + o->nm + "@" + old->rv + ">" + o->rv);
          },
          [&log](const deleted_object<thing>& d) { log.push_back("delete " + object_of(d)->nm); }};
    };
    auto slow_h = record(slow_log, slow_done);
    slow_h.on_add = [this, add = slow_h.on_add](const std::shared_ptr<const thing>& o, bool initial) {
      slow_entered = true;
      while (!gate.load()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
      add(o, initial);
    };
    slow = inf->add_handler(std::move(slow_h));
    fast = inf->add_handler(record(fast_log, fast_done));
    asio::post(io, [this] {
      inf->async_run(asio::bind_cancellation_slot(stop.slot(), [this](kube::error_code ec) { stopped.set_value(ec); }));
    });
    auto guard = std::make_shared<asio::executor_work_guard<asio::io_context::executor_type>>(io.get_executor());
    for (int i = 0; i < 2; ++i) threads.emplace_back([this, guard] { io.run(); });
    asio::post(inf->get_executor(), [this] { lw->push_list({make("ns", "o0", "1")}, "10"); });
    // (Not a REQUIRE: the threads must be joined by the destructor; the
    // tests check the slow handler's first notification.)
    for (int i = 0; i < 6000 && !slow_entered.load(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    asio::post(inf->get_executor(), [this] {
      std::vector<event<thing>> evs;
      for (int i = 1; i < 100; ++i) {
        evs.push_back(fake_lister_watcher<thing>::added(make("ns", "o" + std::to_string(i), std::to_string(i + 1))));
      }
      for (int i = 0; i < 300; ++i) {
        evs.push_back(
            fake_lister_watcher<thing>::modified(make("ns", "o" + std::to_string(i % 100), std::to_string(11 + i))));
      }
      evs.push_back(fake_lister_watcher<thing>::deleted(make("ns", "o0", "400")));
      evs.push_back(fake_lister_watcher<thing>::deleted(make("ns", "o7", "401")));
      evs.push_back(fake_lister_watcher<thing>::added(make("ns", "last", "9999")));
      lw->push_watch(std::move(evs));
    });
  }

  // Opens the gate, waits for both handlers, stops the informer and joins.
  void finish() {
    gate = true;
    REQUIRE(slow_seen.wait_for(std::chrono::seconds(60)) == std::future_status::ready);
    REQUIRE(fast_seen.wait_for(std::chrono::seconds(60)) == std::future_status::ready);
    asio::post(inf->get_executor(), [this] { stop.emit(asio::cancellation_type::terminal); });
    auto f = stopped.get_future();
    REQUIRE(f.wait_for(std::chrono::seconds(30)) == std::future_status::ready);
    CHECK(f.get() == asio::error::operation_aborted);
  }
  ~bounded_run() {
    gate = true;
    io.stop();
    for (auto& t : threads) t.join();
  }
};

// What a handler's log says the objects are now: name -> resourceVersion.
std::map<std::string, std::string> state_of(const std::vector<std::string>& log) {
  std::map<std::string, std::string> out;
  for (const auto& line : log) {
    const auto sp = line.find(' ');
    const auto verb = line.substr(0, sp);
    auto rest = line.substr(sp + 1);
    if (verb == "delete") {
      out.erase(rest);
      continue;
    }
    rest = rest.substr(0, rest.find(' '));
    const auto at = rest.find('@');
    auto rv = rest.substr(at + 1);
    if (const auto gt = rv.find('>'); gt != std::string::npos) rv = rv.substr(gt + 1);
    out[rest.substr(0, at)] = rv;
  }
  return out;
}

}  // namespace

TEST_CASE("informer: a bounded handler queue that blocks holds the informer back - nothing is dropped or merged",
          "[informer][threads]") {
  bounded_run r(handler_overflow_policy::block);
  // The slow handler's queue fills to the bound; then the informer waits,
  // and the cache and the fast handler with it.
  for (int i = 0; i < 600 && r.slow->pending() < 50; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  REQUIRE(r.slow->pending() >= 50);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  CHECK(r.slow->max_pending() <= 50 + 4);  // one delta list past the bound at most (an object's queued changes)
  CHECK_FALSE(r.inf->make_lister().get("ns", "last"));
  CHECK(r.fast->pending() <= 50 + 4);
  r.finish();
  CHECK(r.fast_log.size() == 100 + 300 + 3);
  CHECK(r.slow_log.front() == "add o0@1 initial");
  CHECK(r.slow_log == r.fast_log);  // every notification, in order, to both
  CHECK(r.slow->max_pending() <= 50 + 4);
  const std::lock_guard lock(r.lengths->m);
  CHECK(r.lengths->by_handler[r.slow->id()].first >= 50);
  CHECK(r.lengths->by_handler[r.slow->id()].second == 0);
}

TEST_CASE("informer: a bounded handler queue that coalesces folds by object - the informer and other handlers go on, "
          "no delete is lost",
          "[informer][threads]") {
  bounded_run r(handler_overflow_policy::coalesce);
  // The fast handler and the cache get everything while the slow one waits.
  REQUIRE(r.fast_seen.wait_for(std::chrono::seconds(60)) == std::future_status::ready);
  CHECK(r.inf->make_lister().get("ns", "last"));
  CHECK(r.slow->pending() <= 101);  // one entry per object (o0 is being delivered), not 402 notifications
  CHECK_FALSE(r.slow->has_synced());
  r.finish();
  // Marked right after the folded batch whose "last" finish() waited for.
  for (int i = 0; i < 600 && !r.slow->has_synced(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK(r.slow->has_synced());
  // Both handlers end where the cache is (the fast one's queue may have
  // reached the bound too, in a burst), the slow one in at most one call
  // per object after its first.
  std::map<std::string, std::string> want;
  for (const auto& o : r.inf->make_lister().list()) want[o->nm] = o->rv;
  CHECK(want.size() == 99);
  CHECK(want["o5"] == "216");  // its third update
  CHECK(state_of(r.slow_log) == want);
  CHECK(state_of(r.fast_log) == want);
  CHECK(r.slow_log.size() <= 1 + 101);
  CHECK(r.slow_log.front() == "add o0@1 initial");
  // o0 was seen (its add was delivered) and deleted: the delete comes.
  CHECK(std::count(r.slow_log.begin(), r.slow_log.end(), "delete o0") == 1);
  // o7 was added and deleted within the fold: the slow handler never hears of it.
  CHECK(std::none_of(r.slow_log.begin(), r.slow_log.end(),
                     [](const std::string& l) { return l.find(" o7@") != std::string::npos || l == "delete o7"; }));
  CHECK(r.slow->max_pending() <= 102);
  const std::lock_guard lock(r.lengths->m);
  CHECK(r.lengths->by_handler[r.slow->id()].first >= 50);
  CHECK(r.lengths->by_handler[r.slow->id()].second == 0);
}

TEST_CASE("informer: an informer blocked by a full handler queue still stops when cancelled", "[informer][threads]") {
  bounded_run r(handler_overflow_policy::block);
  for (int i = 0; i < 600 && r.slow->pending() < 50; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  REQUIRE(r.slow->pending() >= 50);
  CHECK_FALSE(r.inf->make_lister().get("ns", "last"));  // blocked
  asio::post(r.inf->get_executor(), [&r] { r.stop.emit(asio::cancellation_type::terminal); });
  auto f = r.stopped.get_future();
  REQUIRE(f.wait_for(std::chrono::seconds(30)) == std::future_status::ready);  // the gate is still closed
  CHECK(f.get() == asio::error::operation_aborted);
}
