#pragma once
// A Reflector on a scripted fake lister_watcher and a manual clock, run on
// an io_context that the test polls until idle (no sleeps, no threads).
#include "test_object.hpp"

#include <kube/base/manual_clock.hpp>
#include <kube/informer/delta_fifo.hpp>
#include <kube/informer/fake_lister_watcher.hpp>
#include <kube/informer/indexer.hpp>
#include <kube/informer/reflector.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/io_context.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace kube::informer::test {

namespace asio = boost::asio;
using fake = fake_lister_watcher<thing>;
using namespace std::chrono_literals;

inline void settle(asio::io_context& io) {
  io.restart();
  io.poll();
}

struct reflector_rig {
  asio::io_context io;
  std::shared_ptr<kube::manual_clock> clk = std::make_shared<kube::manual_clock>();
  std::shared_ptr<fake> lw = std::make_shared<fake>();
  indexer<thing> cache;
  delta_fifo<thing> fifo{{}, &cache};
  std::vector<std::pair<error_code, std::string>> errors;
  std::vector<std::pair<std::chrono::milliseconds, bool>> retries;  // each hook call's retry_in and relist
  std::unique_ptr<reflector<thing>> r;
  asio::cancellation_signal stop;
  error_code run_ec;
  bool done = false;

  explicit reflector_rig(const std::function<void(reflector_params<thing>&)>& tweak = {}) {
    reflector_params<thing> o;
    o.clk = clk;
    o.random = [] { return 0.5; };
    o.streaming_list = false;  // the fake is scripted list first; streaming tests turn it on
    o.on_watch_error = [this](const kube::informer::watch_failure& f) {
      errors.emplace_back(f.ec, f.diag.client_message() + f.diag.server_message());
      retries.emplace_back(f.retry_in, f.relist);
    };
    if (tweak) {
      tweak(o);
    }
    r = std::make_unique<reflector<thing>>(lw, fifo, std::move(o));
    r->async_run(io.get_executor(), asio::bind_cancellation_slot(stop.slot(), [this](error_code ec) {
                   run_ec = ec;
                   done = true;
                 }));
    settle(io);
  }
  reflector_rig(const reflector_rig&) = delete;
  reflector_rig& operator=(const reflector_rig&) = delete;

  ~reflector_rig() {
    stop.emit(asio::cancellation_type::terminal);
    settle(io);
    CHECK(done);
    CHECK(run_ec == asio::error::operation_aborted);
  }

  void poll() { settle(io); }

  /// Applies every queued delta to the cache (a minimal processor) and
  /// returns what was popped.
  std::vector<delta_list<thing>> drain() {
    std::vector<delta_list<thing>> out;
    while (auto dl = fifo.try_pop()) {
      for (const auto& d : dl->deltas) {
        if (d.type == delta_type::deleted) {
          cache.remove_by_key(dl->key);
        } else {
          cache.update(d.obj());
        }
      }
      out.push_back(std::move(*dl));
    }
    return out;
  }

  std::vector<std::string> cached_keys() {
    auto k = cache.list_keys();
    std::sort(k.begin(), k.end());
    return k;
  }
};

}  // namespace kube::informer::test
