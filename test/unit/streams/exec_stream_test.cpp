// An exec's WebSocket against a scripted local server that speaks the
// channel protocol by hand (the handshake and unmasked server frames are a
// few bytes; the client's frames are never read): a write that fails after
// the server has closed keeps what the server sent before (its Status), and
// a write the server never reads ends with a timeout instead of waiting for
// ever.
#include "support/raw_http_server.hpp"

#include <kube/streams/pod_streams.hpp>
#include <kube/k8s/core/v1/pod.hpp>
#include <kube/streams/port_forward.hpp>
#include <kube/typed/api.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <catch2/catch.hpp>
#include <openssl/evp.h>
#include <openssl/sha.h>

#include <array>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace asio = boost::asio;
namespace http = boost::beast::http;
using kube_test::raw_http_server;
using tcp = asio::ip::tcp;

namespace {

// The 101 answer to a WebSocket upgrade, choosing `protocol`.
std::string switching_protocols(const http::request<http::string_body>& req,
                                const std::string& protocol = "v5.channel.k8s.io") {
  const std::string key = std::string(req["Sec-WebSocket-Key"]) + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
  std::array<unsigned char, SHA_DIGEST_LENGTH> digest{};
  SHA1(reinterpret_cast<const unsigned char*>(key.data()), key.size(), digest.data());
  std::array<unsigned char, 64> accept{};
  const int n = EVP_EncodeBlock(accept.data(), digest.data(), static_cast<int>(digest.size()));
  return "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
         "Sec-WebSocket-Accept: " +
         std::string(reinterpret_cast<const char*>(accept.data()), static_cast<std::size_t>(n)) +
         "\r\nSec-WebSocket-Protocol: " + protocol + "\r\n\r\n";
}

// One unmasked binary frame from the server: the channel byte, then `payload`.
std::string frame(unsigned char channel, const std::string& payload) {
  const std::size_t len = payload.size() + 1;
  std::string f(1, static_cast<char>(0x82));
  if (len < 126) {
    f.push_back(static_cast<char>(len));
  } else if (len <= 0xffff) {
    f.push_back(static_cast<char>(126));
    f.push_back(static_cast<char>(len >> 8));
    f.push_back(static_cast<char>(len & 0xff));
  } else {
    f.push_back(static_cast<char>(127));
    for (int shift = 56; shift >= 0; shift -= 8) f.push_back(static_cast<char>((len >> shift) & 0xff));
  }
  f.push_back(static_cast<char>(channel));
  return f + payload;
}

const std::string close_frame = std::string("\x88\x02\x03\xe8", 4);  // 1000, normal closure
const std::string exit_7 = R"({"metadata":{},"status":"Failure","reason":"NonZeroExitCode",)"
                           R"("details":{"causes":[{"reason":"ExitCode","message":"7"}]}})";

// `cat` in pod ns/p1, its stdin open.
asio::awaitable<kube::remote_process> exec_cat(kube::client c) {
  kube::api<k8s::core::v1::Pod> pods(c, "ns");
  kube::remote_command_params p;
  p.with_stdin = true;
  std::vector<std::string> cmd{"cat"};  // g++ 12: no braced list inside a co_await
  co_return co_await kube::async_exec(pods, "p1", cmd, p);
}

template <class F>
void run(asio::io_context& io, F body) {
  std::exception_ptr failure;
  bool done = false;
  asio::co_spawn(io, std::move(body), [&](std::exception_ptr e) {
    failure = e;
    done = true;
    io.stop();
  });
  io.run_for(std::chrono::seconds(30));
  REQUIRE(done);
  if (failure) std::rethrow_exception(failure);
}

}  // namespace

TEST_CASE("an exec whose stdin write fails after the server closed still gives the output and the Status",
          "[streams]") {
  // More output than the client buffers before the program reads (1 MiB),
  // then the Status, the close frame, and the end of the connection: the
  // client's reader is paused with the Status unread when the program's
  // writes fail (the first is answered with a reset, the second fails).
  const std::string chunk(64 * 1024, 'o');
  constexpr int chunks = 16;  // exactly the 1 MiB: the rest is small enough to wait in the client's kernel
  asio::io_context io;
  raw_http_server server(
      io.get_executor(),
      [&](tcp::socket& s, const http::request<http::string_body>& req, int) -> asio::awaitable<bool> {
        std::string out = switching_protocols(req);
        for (int i = 0; i < chunks; ++i) out += frame(1, chunk);
        out += frame(3, exit_7) + close_frame;
        co_await raw_http_server::write(s, out);
        co_await raw_http_server::sleep(std::chrono::milliseconds(100));  // all delivered
        co_return false;  // closed: the client's next write is answered with a reset
      });
  auto c = kube_test::client_of(io.get_executor(), server, std::chrono::seconds(10));
  run(io, [&]() -> asio::awaitable<void> {
    auto proc = co_await exec_cat(c);
    // Write until a write fails: the server has closed, and the reset it
    // answers a write with fails the next (however slow the machine).
    asio::steady_timer t(co_await asio::this_coro::executor);
    bool write_failed = false;
    for (int i = 0; i < 200 && !write_failed; ++i) {
      t.expires_after(std::chrono::milliseconds(50));
      co_await t.async_wait(asio::use_awaitable);
      auto [ec, n] =
          co_await asio::async_write(proc.in(), asio::buffer("input\n", 6), asio::as_tuple(asio::use_awaitable));
      (void)n;
      write_failed = static_cast<bool>(ec);
    }
    CHECK(write_failed);  // the connection is gone: a write fails, and says so
    std::string out;
    auto [rec, n] =
        co_await asio::async_read(proc.out(), asio::dynamic_buffer(out), asio::as_tuple(asio::use_awaitable));
    CHECK(rec == asio::error::eof);
    CHECK(n == chunk.size() * chunks);
    kube::diagnostics diag;
    auto [wec, ended] = co_await proc.async_wait(kube::with_diagnostics(diag, asio::as_tuple(asio::use_awaitable)));
    INFO(diag.client_message());
    CHECK_FALSE(wec);
    CHECK(ended.code == 7);
  });
}

TEST_CASE("a stdin write the server never reads ends with a timeout, not a wait for ever", "[streams]") {
  asio::io_context io;
  raw_http_server server(
      io.get_executor(),
      [&](tcp::socket& s, const http::request<http::string_body>& req, int) -> asio::awaitable<bool> {
        co_await raw_http_server::write(s, switching_protocols(req));
        co_await raw_http_server::sleep(std::chrono::seconds(25));  // reads nothing
        co_return false;
      });
  auto c = kube_test::client_of(io.get_executor(), server, std::chrono::milliseconds(500));
  run(io, [&]() -> asio::awaitable<void> {
    auto proc = co_await exec_cat(c);
    const std::string block(32 * 1024, 'i');
    kube::error_code ec;
    std::size_t written = 0;
    const auto start = std::chrono::steady_clock::now();
    while (!ec) {  // until the socket buffers are full and the deadline passes
      std::size_t n = 0;
      std::tie(ec, n) = co_await asio::async_write(proc.in(), asio::buffer(block), asio::as_tuple(asio::use_awaitable));
      written += n;
    }
    INFO("written before the failure: " << written);
    CHECK(ec == kube::client_errc::timeout);
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(20));
    kube::diagnostics diag;
    auto [wec, ended] = co_await proc.async_wait(kube::with_diagnostics(diag, asio::as_tuple(asio::use_awaitable)));
    (void)ended;
    CHECK(wec == kube::client_errc::timeout);
    CHECK_THAT(diag.client_message(), Catch::Contains("no progress"));
  });
}

TEST_CASE("a port_forwarder forwards at most max_connections at once, and its upgrades take no qps tokens",
          "[streams][port_forward]") {
  // Each forwarded connection is a WebSocket the server holds open until
  // the client closes it. The client's bucket gives one token per 100 s:
  // an upgrade that took a token would stall the second connection.
  asio::io_context io;
  int upgrades = 0;
  raw_http_server server(
      io.get_executor(),
      [&](tcp::socket& s, const http::request<http::string_body>& req, int) -> asio::awaitable<bool> {
        ++upgrades;
        co_await raw_http_server::write(s, switching_protocols(req, "v4.channel.k8s.io"));
        std::array<char, 256> buf{};
        for (;;) {  // until the client closes
          auto [ec, n] = co_await s.async_read_some(asio::buffer(buf), asio::as_tuple(asio::use_awaitable));
          (void)n;
          if (ec) break;
        }
        co_return false;
      });
  kube::detail::transport_params tp;
  tp.server = server.url();
  tp.qps = 0.01;
  tp.burst = 1;
  auto c = kube::detail::client_access::make(io.get_executor(), tp);
  kube::port_forward_params pp;
  pp.max_connections = 2;
  kube::port_forwarder fwd(c, "ns", "p1", 8080, pp);
  asio::cancellation_signal stop;
  fwd.async_run(asio::bind_cancellation_slot(stop.slot(), [](kube::error_code) {}));
  run(io, [&]() -> asio::awaitable<void> {
    auto ex = co_await asio::this_coro::executor;
    const tcp::endpoint at(asio::ip::make_address("127.0.0.1"), fwd.local_port());
    std::vector<std::unique_ptr<tcp::socket>> locals;
    for (int i = 0; i < 5; ++i) {
      locals.push_back(std::make_unique<tcp::socket>(ex));
      co_await locals.back()->async_connect(at, asio::use_awaitable);
    }
    asio::steady_timer t(ex);
    // Waits (up to 10 s, in steps of 50 ms) until `ready()`.
    auto until = [&](auto ready) -> asio::awaitable<bool> {
      for (int i = 0; i < 200 && !ready(); ++i) {
        t.expires_after(std::chrono::milliseconds(50));
        co_await t.async_wait(asio::use_awaitable);
      }
      co_return ready();
    };
    CHECK(co_await until([&] { return upgrades == 2; }));
    t.expires_after(std::chrono::milliseconds(300));
    co_await t.async_wait(asio::use_awaitable);
    CHECK(upgrades == 2);  // still: the other three wait, not accepted
    CHECK(fwd.stats().open == 2);
    CHECK(fwd.stats().accepted == 2);
    for (int i = 0; i < 5; ++i) {  // each one that ends lets the next in
      locals[static_cast<std::size_t>(i)]->close();
      if (i < 3) CHECK(co_await until([&] { return upgrades == 3 + i; }));
    }
    CHECK(co_await until([&] { return fwd.stats().open == 0; }));
    CHECK(upgrades == 5);
    CHECK(fwd.stats().accepted == 5);
    stop.emit(asio::cancellation_type::terminal);
  });
}
