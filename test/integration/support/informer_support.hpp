#pragma once

// For integration tests that run an informer (or a factory) on its own
// thread and look at it from the test's thread.

#include <kube/error.hpp>
#include <kube/informer/reflector.hpp>

#include <boost/asio/post.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <future>

namespace kube_test {

/// The reflector's counters of `inf`, read on the informer's strand.
template <class Informer>
kube::informer::reflector_stats reflector_stats_of(Informer& inf) {
  std::promise<kube::informer::reflector_stats> p;
  boost::asio::post(inf.get_executor(), [&] { p.set_value(inf.get_reflector().stats()); });
  return p.get_future().get();
}

/// Waits until `s` (an informer or a factory) has synced; fails the test
/// unless it does so within `limit`, without error.
template <class Syncable>
void require_synced(Syncable& s, std::chrono::seconds limit = std::chrono::seconds(30)) {
  std::promise<kube::error_code> synced;
  s.async_wait_for_sync([&](kube::error_code ec) { synced.set_value(ec); });
  auto f = synced.get_future();
  REQUIRE(f.wait_for(limit) == std::future_status::ready);
  REQUIRE_FALSE(f.get());
}

}  // namespace kube_test
