#pragma once

// Test support for tests that need pods running on the test cluster's fake
// nodes (KWOK): exec, attach, logs, port-forward.

#include <kube/api/core/v1/pod.hpp>
#include <kube/typed/api.hpp>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <catch2/catch.hpp>

#include <chrono>
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

}  // namespace kube_test
