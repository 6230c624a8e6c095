// Listers read the informer's cache from other threads while the informer
// (its own io thread) applies events: run under ThreadSanitizer (label tsan).
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
#include <thread>

namespace asio = boost::asio;
using namespace kube::informer;
using kube::informer::test::make;
using kube::informer::test::thing;

TEST_CASE("informer: listers and has_synced read from other threads while the informer writes", "[informer][threads]") {
  asio::io_context io;
  auto guard = asio::make_work_guard(io);
  auto lw = std::make_shared<fake_lister_watcher<thing>>();
  shared_index_informer<thing> inf(io.get_executor(), lw);
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
