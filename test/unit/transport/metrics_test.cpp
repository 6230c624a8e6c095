// What the client tells its metrics (client_params::metrics): every attempt
// with its status (0 when nothing came back), every retry, the whole
// request's time once, the rate limiter's waits, and the opening of a watch.
// A scripted local server (test/unit/support/raw_http_server.hpp) answers.
#include "support/raw_http_server.hpp"

#include <kube/base/metrics.hpp>
#include <kube/rest/client.hpp>

#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using kube_test::raw_http_server;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using request_t = kube_test::http::request<kube_test::http::string_body>;

namespace {

struct attempt_seen {
  std::string method, host, resource;
  int code = 0;
  std::size_t request_bytes = 0, response_bytes = 0;
};

struct recording final : kube::metrics::client_metrics {
  std::mutex mu;
  std::vector<attempt_seen> attempts, retries;
  std::vector<std::string> requests;  // "METHOD resource"
  int waits = 0;

  static attempt_seen copy(const kube::metrics::request_attempt& a) {
    return {std::string(a.method), std::string(a.host), std::string(a.resource), a.code,
            a.request_bytes,       a.response_bytes};
  }
  void on_attempt(const kube::metrics::request_attempt& a) override {
    const std::lock_guard lock(mu);
    attempts.push_back(copy(a));
  }
  void on_retry(const kube::metrics::request_attempt& a) override {
    const std::lock_guard lock(mu);
    retries.push_back(copy(a));
  }
  void on_request(std::string_view method, std::string_view, std::string_view resource, duration took) override {
    const std::lock_guard lock(mu);
    CHECK(took >= duration::zero());
    requests.push_back(std::string(method) + " " + std::string(resource));
  }
  void on_rate_limiter_wait(std::string_view, std::string_view, duration) override {
    const std::lock_guard lock(mu);
    ++waits;
  }
};

struct provider final : kube::metrics::provider {
  std::shared_ptr<recording> rec = std::make_shared<recording>();
  std::shared_ptr<kube::metrics::client_metrics> client() override { return rec; }
};

std::string answer(int code, const std::string& reason, const std::string& body, const std::string& extra = "") {
  return "HTTP/1.1 " + std::to_string(code) + " " + reason +
         "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n" + extra +
         "\r\n" + body;
}

}  // namespace

TEST_CASE("client metrics: attempts, retries, request time, rate limiter waits, a watch's opening",
          "[transport][metrics]") {
  asio::io_context io;
  // 0: the POST, 201; 1: the GET's first try, 429 with Retry-After: 0;
  // 2: its retry, 200; 3: the watch, headers then nothing more.
  raw_http_server server(io.get_executor(), [](tcp::socket& s, const request_t&, int n) -> asio::awaitable<bool> {
    switch (n) {
    case 0:
      co_await raw_http_server::write(s, answer(201, "Created", R"({"kind":"ConfigMap"})"));
      co_return true;
    case 1:
      co_await raw_http_server::write(s,
                                      answer(429, "Too Many Requests", R"({"kind":"Status"})", "Retry-After: 0\r\n"));
      co_return true;
    case 2:
      co_await raw_http_server::write(s, answer(200, "OK", "{}"));
      co_return true;
    default:
      co_await raw_http_server::write(s, raw_http_server::chunked_head());
      co_await raw_http_server::sleep(10s);
      co_return false;
    }
  });
  kube::detail::transport_params p;
  p.server = server.url();
  p.qps = 1000;  // a limiter, with no wait to speak of
  p.burst = 100;
  auto prov = std::make_shared<provider>();
  p.metrics = prov;
  auto c = kube::detail::client_access::make(io.get_executor(), p);
  const std::string host = server.url().substr(std::string("http://").size());

  bool done = false;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        auto post = kube::request{}.method(kube::http_method::post).namespace_("ns").resource("configmaps");
        post.body(R"({"metadata":{"name":"a"}})");
        auto [e1, r1] = co_await c.async_request(post, asio::as_tuple(asio::use_awaitable));
        CHECK_FALSE(e1);
        auto get = kube::request{}.group("apps").namespace_("ns").resource("deployments").name("web");
        auto [e2, r2] = co_await c.async_request(get, asio::as_tuple(asio::use_awaitable));
        CHECK_FALSE(e2);
        auto watch = kube::request{}.resource("pods").param("watch", "true");
        auto [e3, w] = co_await c.async_watch(watch, asio::as_tuple(asio::use_awaitable));
        CHECK_FALSE(e3);
        w.close();
        done = true;
        server.stop();
      },
      asio::detached);
  io.run_for(30s);
  REQUIRE(done);

  auto& rec = *prov->rec;
  REQUIRE(rec.attempts.size() == 4);
  CHECK(rec.attempts[0].method == "POST");
  CHECK(rec.attempts[0].host == host);
  CHECK(rec.attempts[0].resource == "configmaps");
  CHECK(rec.attempts[0].code == 201);
  CHECK(rec.attempts[0].request_bytes == std::string(R"({"metadata":{"name":"a"}})").size());
  CHECK(rec.attempts[0].response_bytes == std::string(R"({"kind":"ConfigMap"})").size());
  CHECK(rec.attempts[1].method == "GET");
  CHECK(rec.attempts[1].resource == "deployments.apps");
  CHECK(rec.attempts[1].code == 429);
  CHECK(rec.attempts[2].code == 200);
  CHECK(rec.attempts[2].response_bytes == 2);
  CHECK(rec.attempts[3].resource == "pods");  // the watch's opening
  CHECK(rec.attempts[3].code == 200);
  REQUIRE(rec.retries.size() == 1);
  CHECK(rec.retries[0].code == 429);
  CHECK(rec.retries[0].resource == "deployments.apps");
  // One request time per call, however many attempts it took.
  CHECK(rec.requests == std::vector<std::string>{"POST configmaps", "GET deployments.apps", "GET pods"});
  CHECK(rec.waits == 3);  // each unary attempt waits for the limiter; watches do not
}

TEST_CASE("client metrics: an attempt without an answer is reported with code 0, a path that is no resource with none",
          "[transport][metrics]") {
  asio::io_context io;
  raw_http_server server(io.get_executor(), [](tcp::socket&, const request_t&, int) -> asio::awaitable<bool> {
    co_return false;  // closes without a word
  });
  kube::detail::transport_params p;
  p.server = server.url();
  p.qps = 0;  // no limiter: no waits reported
  auto prov = std::make_shared<provider>();
  p.metrics = prov;
  auto c = kube::detail::client_access::make(io.get_executor(), p);
  bool done = false;
  c.async_request(kube::request{}.raw_path("/version"), [&](kube::error_code ec, kube::response) {
    CHECK(ec);
    done = true;
    server.stop();
  });
  io.run_for(30s);
  REQUIRE(done);
  auto& rec = *prov->rec;
  REQUIRE_FALSE(rec.attempts.empty());
  for (const auto& a : rec.attempts) {
    CHECK(a.code == 0);
    CHECK(a.resource.empty());
  }
  CHECK(rec.requests == std::vector<std::string>{"GET "});
  CHECK(rec.waits == 0);
}
