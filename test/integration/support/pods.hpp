#pragma once

// Test support for tests that need pods running on the test cluster's fake
// nodes (KWOK) and read their streams: exec, attach, logs, port-forward.

#include <kube/k8s/core/v1/pod.hpp>
#include <kube/typed/api.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <catch2/catch.hpp>

#include <chrono>
#include <functional>
#include <string>

namespace kube_test {

/// Creates pod `name` (one container "main") and waits until it is Running
/// on a fake node (30 s at most; FAILs then).
inline boost::asio::awaitable<void> running_pod(kube::api<k8s::core::v1::Pod>& pods, const std::string& name) {
  k8s::core::v1::Pod p;
  p.metadata.name = name;
  p.spec.emplace().containers.emplace_back().name = "main";
  p.spec->containers.back().image = "example.invalid/main:1";
  co_await pods.async_create(p);
  boost::asio::steady_timer t(co_await boost::asio::this_coro::executor);
  for (int i = 0; i < 300; ++i) {
    auto got = co_await pods.async_get(name);
    if (got.status && got.status->phase == "Running") co_return;
    t.expires_after(std::chrono::milliseconds(100));
    co_await t.async_wait(boost::asio::use_awaitable);
  }
  FAIL("pod " << name << " did not become Running");
}

/// Reads everything `s` gives into `out` until it ends; the error it ends
/// with (asio::error::eof for a clean end).
template <class Stream>
boost::asio::awaitable<kube::error_code> read_to_end(Stream& s, std::string& out) {
  auto [ec, n] = co_await boost::asio::async_read(s, boost::asio::dynamic_buffer(out),
                                                  boost::asio::as_tuple(boost::asio::use_awaitable));
  (void)n;
  co_return ec;
}

/// Waits (5 s at most, polling every 50 ms) until `ready()`; its last value.
inline boost::asio::awaitable<bool> eventually(const std::function<bool()>& ready) {
  boost::asio::steady_timer t(co_await boost::asio::this_coro::executor);
  for (int i = 0; i < 100 && !ready(); ++i) {
    t.expires_after(std::chrono::milliseconds(50));
    co_await t.async_wait(boost::asio::use_awaitable);
  }
  co_return ready();
}

}  // namespace kube_test
