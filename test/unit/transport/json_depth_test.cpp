// One JSON nesting limit (kube::codec::max_json_depth) for every reader and
// writer: raw_json, the typed reader, the watch decoder, dynamic objects and
// Status bodies read 40 levels (past Boost.JSON's default of 32) and refuse
// what is deeper than the limit with a message that says so; a request body
// deeper than the limit is not sent.
#include "codec/parse_json.hpp"
#include "transport/status.hpp"
#include "support/raw_http_server.hpp"

#include <kube/codec/codec.hpp>
#include <kube/codec/json_reader.hpp>
#include <kube/codec/value_types.hpp>
#include <kube/detail/watch_decoder.hpp>
#include <kube/dynamic/dynamic_api.hpp>
#include <kube/rest/client.hpp>

#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>

#include <string>

using kube::codec::max_json_depth;
using kube_test::raw_http_server;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using request_t = kube_test::http::request<kube_test::http::string_body>;

namespace {

// {"d":{"d":...{"d":1}...}}: `levels` objects inside one another.
std::string nested(std::size_t levels) {
  std::string s;
  for (std::size_t i = 0; i < levels; ++i) s += R"({"d":)";
  s += "1";
  s.append(levels, '}');
  return s;
}

// A ConfigMap-shaped object whose `data` holds `levels` more levels.
std::string object_with_depth(std::size_t levels) {
  return R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep","resourceVersion":"5"},"x":)" +
         nested(levels - 1) + "}";
}

}  // namespace

TEST_CASE("raw_json reads 40 levels and refuses more than max_json_depth", "[json_depth]") {
  CHECK(kube::raw_json::parse(nested(40)).dump() == nested(40));
  CHECK(kube::raw_json::parse(nested(max_json_depth)).dump() == nested(max_json_depth));
  CHECK(kube::raw_json::parse(nested(40)).value().is_object());  // parsed again on the way out
  CHECK_THROWS_WITH(kube::raw_json::parse(nested(max_json_depth + 1)), Catch::Contains("too deep"));
}

TEST_CASE("the typed reader reads 40 levels and refuses more than max_json_depth", "[json_depth]") {
  const auto ok = nested(40);
  kube::codec::json_reader r(ok);
  CHECK(r.value().is_object());
  const auto deep = nested(max_json_depth + 1);
  kube::codec::json_reader too_deep(deep);
  CHECK_THROWS_WITH(too_deep.value(), Catch::Contains("deep"));
}

TEST_CASE("the watch decoder reads objects of 40 levels and refuses deeper than max_json_depth", "[json_depth]") {
  for (bool raw : {false, true}) {
    kube::detail::watch_decoder_params p;
    p.raw_objects = raw;
    kube::detail::watch_decoder ok(p);
    CHECK_FALSE(ok.write(R"({"type":"ADDED","object":)" + object_with_depth(40) + "}\n"));
    CHECK(ok.next().has_value());
    kube::detail::watch_decoder at_limit(p);
    CHECK_FALSE(at_limit.write(R"({"type":"ADDED","object":)" + object_with_depth(max_json_depth) + "}\n"));
    CHECK(at_limit.next().has_value());
    kube::detail::watch_decoder too_deep(p);
    CHECK(too_deep.write(R"({"type":"ADDED","object":)" + object_with_depth(max_json_depth + 1) + "}\n") ==
          kube::client_errc::watch_stream_error);
  }
}

TEST_CASE("a Status body of 40 levels is still read as a Status", "[json_depth]") {
  const std::string body = R"({"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404,)"
                           R"("details":)" +
                           nested(40) + "}";
  kube::diagnostics diag;
  const auto ec = kube::detail::status_error(404, body, kube::request{}.raw_path("/x"), diag);
  CHECK(ec == kube::api_errc::not_found);
  CHECK(diag.server_status() != nullptr);
}

TEST_CASE("json_too_deep counts objects and arrays, not brackets inside strings", "[json_depth]") {
  CHECK_FALSE(kube::detail::json_too_deep(nested(max_json_depth)));
  CHECK(kube::detail::json_too_deep(nested(max_json_depth + 1)));
  CHECK_FALSE(kube::detail::json_too_deep(R"({"s":")" + std::string(2000, '[') + R"("})"));
  CHECK_FALSE(kube::detail::json_too_deep(R"({"s":"\"[[["})"));
}

TEST_CASE("dynamic objects of 40 levels are read, deeper ones refused, a too deep body is not sent", "[json_depth]") {
  asio::io_context io;
  const std::string shallow = object_with_depth(40);
  const std::string deep = object_with_depth(max_json_depth + 1);
  raw_http_server server(io.get_executor(), [&](tcp::socket& s, const request_t& req, int) -> asio::awaitable<bool> {
    const std::string& body = req.target().ends_with("/deep") ? deep : shallow;
    co_await raw_http_server::write(s, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
                                           std::to_string(body.size()) + "\r\n\r\n" + body);
    co_return true;
  });
  kube::detail::transport_params tp;
  tp.server = server.url();
  tp.qps = 0;
  auto c = kube::detail::client_access::make(io.get_executor(), tp);
  kube::dynamic_api api(c, {"", "v1", "configmaps"}, "default");
  kube::error_code shallow_ec = kube::client_errc::timeout;
  kube::error_code deep_ec;
  kube::error_code write_ec;
  kube::diagnostics deep_diag;
  kube::diagnostics write_diag;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        auto [e1, u1] = co_await api.async_get("shallow", asio::as_tuple(asio::use_awaitable));
        shallow_ec = e1;
        auto [e2, u2] =
            co_await api.async_get("deep", kube::with_diagnostics(deep_diag, asio::as_tuple(asio::use_awaitable)));
        deep_ec = e2;
        // A body deeper than the limit is refused before it is sent.
        auto [e3, r3] =
            co_await c.async_request(kube::request{}.method(kube::http_method::post).raw_path("/post").body(deep),
                                     kube::with_diagnostics(write_diag, asio::as_tuple(asio::use_awaitable)));
        write_ec = e3;
        server.stop();
        io.stop();
      },
      asio::detached);
  io.run_for(std::chrono::seconds(30));
  CHECK_FALSE(shallow_ec);
  CHECK(deep_ec == kube::client_errc::decode_error);
  CHECK(deep_diag.client_message().find("too deep") != std::string::npos);
  CHECK(write_ec == kube::client_errc::encode_error);
  CHECK(write_diag.client_message().find("deeper than 1000 levels") != std::string::npos);
  CHECK(server.requests() == std::vector<std::string>{"GET /api/v1/namespaces/default/configmaps/shallow",
                                                      "GET /api/v1/namespaces/default/configmaps/deep"});
}
