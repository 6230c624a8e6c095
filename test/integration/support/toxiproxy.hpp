#pragma once

// Test support: Toxiproxy in front of the test cluster's apiserver. kcluster
// starts it with one proxy, "apiserver" ($KUBE_TEST_PROXY_SERVER, the same
// serving certificate, so TLS verification holds); tests add and remove
// toxics over its HTTP API ($KUBE_TEST_TOXIPROXY_API) with a small blocking
// HTTP/1.1 client on Boost.Beast.

#include "cluster_env.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>

#include <stdexcept>
#include <string>
#include <utility>

namespace kube_test {

/// One toxic (https://github.com/Shopify/toxiproxy#toxics): `type` is
/// latency, bandwidth, slicer, reset_peer, timeout, limit_data, ...;
/// `stream` is "downstream" (server to client) or "upstream";
/// `toxicity` the chance that it applies to a connection (drawn per
/// connection when the toxic is added or the connection opens).
struct toxic_params {
  std::string name;
  std::string type;
  std::string stream = "downstream";
  double toxicity = 1.0;
  boost::json::object attributes = {};
};

class toxiproxy {
public:
  toxiproxy() {
    // http://127.0.0.1:PORT, as kcluster writes it.
    const auto api = cluster_env().at("KUBE_TEST_TOXIPROXY_API");
    const auto host_at = api.find("://") + 3, colon = api.rfind(':');
    host_ = api.substr(host_at, colon - host_at);
    port_ = api.substr(colon + 1);
  }

  /// Adds a toxic to the "apiserver" proxy; it applies to open connections too.
  void add(const toxic_params& t) {
    boost::json::object body{{"name", t.name},
                             {"type", t.type},
                             {"stream", t.stream},
                             {"toxicity", t.toxicity},
                             {"attributes", t.attributes}};
    expect(request(boost::beast::http::verb::post, "/proxies/apiserver/toxics", boost::json::serialize(body)), 200,
           "add toxic " + t.name);
  }

  /// Removes one toxic; connections it held up carry data again.
  void remove(const std::string& name) {
    expect(request(boost::beast::http::verb::delete_, "/proxies/apiserver/toxics/" + name, ""), 204,
           "remove toxic " + name);
  }

  /// Removes every toxic and enables every proxy.
  void reset() { expect(request(boost::beast::http::verb::post, "/reset", ""), 204, "reset"); }

private:
  static void expect(const std::pair<unsigned, std::string>& r, unsigned status, const std::string& what) {
    if (r.first != status)
      throw std::runtime_error("toxiproxy: " + what + ": HTTP " + std::to_string(r.first) + " " + r.second);
  }

  std::pair<unsigned, std::string> request(boost::beast::http::verb verb, const std::string& target,
                                           const std::string& body) const {
    namespace http = boost::beast::http;
    boost::asio::io_context io;
    boost::asio::ip::tcp::resolver resolver(io);
    boost::asio::ip::tcp::socket socket(io);
    boost::asio::connect(socket, resolver.resolve(host_, port_));
    http::request<http::string_body> req(verb, target, 11);
    req.set(http::field::host, host_ + ":" + port_);
    req.set(http::field::content_type, "application/json");
    req.keep_alive(false);
    req.body() = body;
    req.prepare_payload();
    http::write(socket, req);
    boost::beast::flat_buffer buf;
    http::response<http::string_body> res;
    http::read(socket, buf, res);
    boost::system::error_code ignored;
    socket.shutdown(boost::asio::ip::tcp::socket::shutdown_both, ignored);
    return {res.result_int(), res.body()};
  }

  std::string host_, port_;
};

/// A toxic for the lifetime of this object (removed also when a test fails).
class scoped_toxic {
public:
  scoped_toxic(toxiproxy& proxy, toxic_params t)
      : proxy_(proxy),
        name_(t.name) {
    proxy_.add(t);
  }
  scoped_toxic(const scoped_toxic&) = delete;
  scoped_toxic& operator=(const scoped_toxic&) = delete;
  ~scoped_toxic() {
    try {
      lift();
    } catch (const std::exception&) {  // NOLINT(bugprone-empty-catch): a destructor must not throw
    }
  }

  /// Removes the toxic now (once).
  void lift() {
    if (std::exchange(active_, false)) proxy_.remove(name_);
  }

private:
  toxiproxy& proxy_;
  std::string name_;
  bool active_ = true;
};

}  // namespace kube_test
