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

#include <atomic>
#include <future>
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
