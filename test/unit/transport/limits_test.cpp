// The cap on response bodies (client_params::max_response_body): a body
// above it fails the request with client_errc::response_too_large whether
// its size is announced (Content-Length) or not (chunked), and a small gzip
// body that would inflate past it (a gzip bomb) stops at the cap. A
// scripted local server (test/unit/support/raw_http_server.hpp) answers.
#include "support/gzip_encode.hpp"
#include "support/raw_http_server.hpp"

#include <kube/rest/client.hpp>
#include <kube/with_diagnostics.hpp>

#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>

#include <chrono>
#include <string>

using namespace std::chrono_literals;
using kube_test::raw_http_server;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using request_t = kube_test::http::request<kube_test::http::string_body>;

namespace {

constexpr std::size_t limit = std::size_t{1} << 20;

struct outcome {
  kube::error_code ec;
  kube::response res;
  kube::diagnostics diag;
};

// One GET through a client with this body limit; the server answers every
// request with `answer` (the whole HTTP response).
outcome get_with_limit(std::size_t max_body, std::string answer) {
  asio::io_context io;
  raw_http_server server(io.get_executor(),
                         [answer = std::move(answer)](tcp::socket& s, const request_t&, int) -> asio::awaitable<bool> {
                           co_await raw_http_server::write(s, answer);
                           co_return false;
                         });
  kube::detail::transport_params p;
  p.server = server.url();
  p.qps = 0;
  p.max_response_body = max_body;
  auto c = kube::detail::client_access::make(io.get_executor(), p);
  outcome out;
  c.async_request(kube::request{}.raw_path("/x"),
                  kube::with_diagnostics(out.diag, [&](kube::error_code e, kube::response r) {
                    out.ec = e;
                    out.res = std::move(r);
                    server.stop();
                    io.stop();
                  }));
  io.run_for(30s);
  return out;
}

std::string with_length(const std::string& body, const std::string& extra_headers = "") {
  return "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" + extra_headers +
         "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

std::string chunked(const std::string& body) {
  std::string out = raw_http_server::chunked_head();
  for (std::size_t at = 0; at < body.size(); at += 65536) out += raw_http_server::chunk(body.substr(at, 65536));
  return out + "0\r\n\r\n";
}

}  // namespace

TEST_CASE("a body at the limit is read, one byte more fails with response_too_large", "[limits]") {
  const std::string at_limit(limit, 'x');
  auto ok = get_with_limit(limit, with_length(at_limit));
  REQUIRE_FALSE(ok.ec);
  CHECK(ok.res.body.size() == limit);

  auto over = get_with_limit(limit, with_length(at_limit + "x"));
  CHECK(over.ec == kube::client_errc::response_too_large);
  CHECK(over.diag.client_message().find("larger than the limit of 1048576 bytes") != std::string::npos);

  auto over_chunked = get_with_limit(limit, chunked(at_limit + "x"));
  CHECK(over_chunked.ec == kube::client_errc::response_too_large);

  auto unlimited = get_with_limit(0, chunked(at_limit + at_limit));
  REQUIRE_FALSE(unlimited.ec);
  CHECK(unlimited.res.body.size() == 2 * limit);
}

TEST_CASE("a gzip body that inflates past the limit fails with response_too_large", "[limits][gzip]") {
  const std::string zeros(64 * limit, '0');
  const std::string bomb = kube_test::gzip(zeros, 9);
  REQUIRE(bomb.size() < limit / 4);  // the compressed body itself is far below the limit
  auto r = get_with_limit(limit, with_length(bomb, "Content-Encoding: gzip\r\n"));
  CHECK(r.ec == kube::client_errc::response_too_large);
  CHECK(r.diag.client_message().find("max_response_body") != std::string::npos);

  const std::string fits(limit, '0');
  auto ok = get_with_limit(limit, with_length(kube_test::gzip(fits), "Content-Encoding: gzip\r\n"));
  REQUIRE_FALSE(ok.ec);
  CHECK(ok.res.body == fits);
}
