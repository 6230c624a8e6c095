// A dynamic informer's cached objects are read and copied from any thread.
// The watch decoder builds each event's object in an arena that is not
// thread-safe (and a json copy allocates from its source's arena), so the
// lister_watcher copies each object out of it before caching. Run under
// ThreadSanitizer (label tsan): two threads copy the same cached objects.
// A scripted local server (test/unit/support/raw_http_server.hpp) answers the
// list and serves the watch, so the objects come through the real watch
// decoder.
#include "support/raw_http_server.hpp"

#include <kube/dynamic/dynamic_api.hpp>
#include <kube/informer/dynamic_lister_watcher.hpp>
#include <kube/informer/shared_informer.hpp>
#include <kube/rest/client.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <catch2/catch.hpp>

#include <atomic>
#include <future>
#include <string>
#include <thread>

namespace asio = boost::asio;
using kube_test::raw_http_server;
using tcp = asio::ip::tcp;
using request_t = kube_test::http::request<kube_test::http::string_body>;

namespace {

std::string config_map(int i) {
  return R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-)" + std::to_string(i) +
         R"(","namespace":"default","resourceVersion":")" + std::to_string(100 + i) +
         R"("},"data":{"k":"a value long enough to need its own allocation","n":")" + std::to_string(i) + R"("}})";
}

}  // namespace

TEST_CASE("dynamic informer: cached objects from watch events are copied from two threads", "[informer][threads]") {
  constexpr int watched = 20;
  asio::io_context io;
  raw_http_server server(io.get_executor(), [](tcp::socket& s, const request_t& req, int) -> asio::awaitable<bool> {
    if (req.target().find("watch=true") == std::string::npos) {
      const std::string list =
          R"({"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"100"},"items":[]})";
      co_await raw_http_server::write(s, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
                                             std::to_string(list.size()) + "\r\n\r\n" + list);
      co_return true;
    }
    co_await raw_http_server::write(s, raw_http_server::chunked_head());
    for (int i = 0; i < watched; ++i) {
      co_await raw_http_server::write(s,
                                      raw_http_server::chunk(R"({"type":"ADDED","object":)" + config_map(i) + "}\n"));
    }
    co_await raw_http_server::sleep(std::chrono::seconds(30));  // the watch stays open
    co_return false;
  });
  auto c = kube_test::client_of(io.get_executor(), server);
  auto lw = std::make_shared<kube::informer::dynamic_lister_watcher>(
      kube::dynamic_api(c, {"", "v1", "configmaps"}, "default"),
      kube::informer::dynamic_lister_watcher_params{.expected_kind = "ConfigMap"});
  kube::informer::informer_params<kube::unstructured> params;
  params.reflector.streaming_list = false;  // the server above answers a list, then a plain watch
  kube::informer::shared_index_informer<kube::unstructured> inf(io.get_executor(), lw, std::move(params));
  std::promise<void> all_seen;
  std::atomic<int> added{0};
  inf.add_handler({[&](const std::shared_ptr<const kube::unstructured>&, bool) {
                     if (added.fetch_add(1) + 1 == watched) all_seen.set_value();
                   },
                   nullptr, nullptr});
  asio::cancellation_signal stop;
  std::promise<void> stopped;
  asio::post(io, [&] {
    inf.async_run(asio::bind_cancellation_slot(stop.slot(), [&](kube::error_code) { stopped.set_value(); }));
  });
  std::thread runner([&] { io.run(); });
  REQUIRE(all_seen.get_future().wait_for(std::chrono::seconds(20)) == std::future_status::ready);

  auto lister = inf.make_lister();
  std::atomic<std::size_t> copies{0};
  std::atomic<std::size_t> wrong{0};
  auto copier = [&] {
    for (int round = 0; round < 50; ++round) {
      for (int i = 0; i < watched; ++i) {
        auto cached = lister.get("default", "cm-" + std::to_string(i));
        if (!cached) {
          wrong.fetch_add(1);
          continue;
        }
        kube::unstructured copy = *cached;  // allocates: never from a shared arena
        copy.set_label("copied", "yes");
        if (copy.name() != "cm-" + std::to_string(i)) wrong.fetch_add(1);
        copies.fetch_add(1);
      }
    }
  };
  std::thread a(copier), b(copier);
  a.join();
  b.join();
  asio::post(io, [&] { stop.emit(asio::cancellation_type::terminal); });
  CHECK(stopped.get_future().wait_for(std::chrono::seconds(20)) == std::future_status::ready);
  server.stop();
  io.stop();
  runner.join();
  CHECK(wrong.load() == 0);
  CHECK(copies.load() == 2u * 50u * watched);
}
