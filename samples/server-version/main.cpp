// kube-server-version: reads /version from a kube-apiserver over verified TLS,
// authenticating with a client certificate.
//
//   kube-server-version --server https://127.0.0.1:6443 --ca ca.crt
//                       --cert admin.crt --key admin.key
//
// It checks the transport stack under kube::client (Asio + Beast + OpenSSL,
// compiled once in kube::kube) end to end, so it uses Beast directly rather
// than the client. With kube::client the same request is
// `c.async_request(kube::request().raw_path("/version"))`.
#include <kube/version.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/json.hpp>
#include <boost/url/parse.hpp>

#include <chrono>
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>
#include <string_view>

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;

namespace {

struct options {
  std::string server;  // https://host:port
  std::string ca;      // PEM bundle that must have signed the serving cert
  std::string cert;    // client certificate (PEM)
  std::string key;     // client key (PEM)
};

struct usage_error {
  std::string what;
};

options parse_args(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw usage_error{std::string(a) + " needs a value"};
      return argv[++i];
    };
    if (a == "--server")
      o.server = value();
    else if (a == "--ca")
      o.ca = value();
    else if (a == "--cert")
      o.cert = value();
    else if (a == "--key")
      o.key = value();
    else
      throw usage_error{"unknown argument " + std::string(a)};
  }
  if (o.server.empty() || o.ca.empty()) throw usage_error{"--server and --ca are required"};
  if (o.cert.empty() != o.key.empty()) throw usage_error{"--cert and --key go together"};
  return o;
}

// Loads a PEM file into the context, naming the file when it fails.
template <class Load>
void load_pem(std::string_view what, const std::string& path, Load load) {
  boost::system::error_code ec;
  load(path, ec);
  if (ec) throw std::runtime_error(std::string(what) + " " + path + ": " + ec.message());
}

asio::awaitable<std::string> fetch_version(const options& o, ssl::context& tls) {
  auto url = boost::urls::parse_uri(o.server);
  if (!url || url->scheme() != "https") throw std::runtime_error("--server " + o.server + ": not an https:// URL");
  const std::string host = url->host();
  const std::string port = url->has_port() ? std::string(url->port()) : "443";

  auto ex = co_await asio::this_coro::executor;
  asio::ip::tcp::resolver resolver{ex};
  beast::ssl_stream<beast::tcp_stream> stream{ex, tls};
  beast::get_lowest_layer(stream).expires_after(std::chrono::seconds(10));

  // SNI, and the certificate must name the host we asked for.
  if (!SSL_set_tlsext_host_name(stream.native_handle(), host.c_str()))
    throw std::runtime_error("cannot set SNI host name " + host);
  stream.set_verify_callback(ssl::host_name_verification(host));

  auto endpoints = co_await resolver.async_resolve(host, port, asio::use_awaitable);
  co_await beast::get_lowest_layer(stream).async_connect(endpoints, asio::use_awaitable);
  try {
    co_await stream.async_handshake(ssl::stream_base::client, asio::use_awaitable);
  } catch (const boost::system::system_error& e) {
    std::string detail = e.code().message();
    const long verify = SSL_get_verify_result(stream.native_handle());
    if (verify != X509_V_OK) detail += std::string(" (") + X509_verify_cert_error_string(verify) + ")";
    throw std::runtime_error("TLS handshake with " + o.server + " failed: " + detail);
  }

  http::request<http::empty_body> req{http::verb::get, "/version", 11};
  req.set(http::field::host, host);
  req.set(http::field::accept, "application/json");
  req.set(http::field::user_agent, "kube-server-version/" + std::string(kube::sdk_version()));
  co_await http::async_write(stream, req, asio::use_awaitable);

  beast::flat_buffer buffer;
  http::response<http::string_body> res;
  co_await http::async_read(stream, buffer, res, asio::use_awaitable);
  if (res.result() != http::status::ok)
    throw std::runtime_error("GET /version: HTTP " + std::to_string(res.result_int()) + ": " + res.body());

  boost::system::error_code ec;
  stream.shutdown(ec);  // the server may close without close_notify; nothing to do about it
  co_return res.body();
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  try {
    o = parse_args(argc, argv);
  } catch (const usage_error& e) {
    std::cerr << "kube-server-version: " << e.what << "\n"
              << "usage: kube-server-version --server URL --ca FILE [--cert FILE --key FILE]\n";
    return 2;
  }

  try {
    ssl::context tls{ssl::context::tls_client};
    tls.set_options(ssl::context::no_sslv2 | ssl::context::no_sslv3 | ssl::context::no_tlsv1 |
                    ssl::context::no_tlsv1_1);
    tls.set_verify_mode(ssl::verify_peer);
    load_pem("CA file", o.ca, [&](auto& p, auto& ec) { tls.load_verify_file(p, ec); });
    if (!o.cert.empty()) {
      load_pem("client certificate", o.cert, [&](auto& p, auto& ec) { tls.use_certificate_chain_file(p, ec); });
      load_pem("client key", o.key, [&](auto& p, auto& ec) { tls.use_private_key_file(p, ssl::context::pem, ec); });
    }

    asio::io_context io;
    std::string body;
    std::exception_ptr failure;
    asio::co_spawn(io, fetch_version(o, tls), [&](std::exception_ptr e, std::string b) {
      failure = e;
      body = std::move(b);
    });
    io.run();
    if (failure) std::rethrow_exception(failure);

    const auto doc = boost::json::parse(body).as_object();
    const auto field = [&](const char* k) -> std::string {
      const auto* v = doc.if_contains(k);
      return v && v->is_string() ? std::string(v->as_string()) : std::string("?");
    };
    std::cout << "Kubernetes server version: " << field("gitVersion") << " (" << field("platform") << ", "
              << field("goVersion") << ")\n"
              << "kube SDK " << kube::sdk_version() << " targets Kubernetes " << kube::kubernetes_version() << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "kube-server-version: " << e.what() << "\n";
    return 1;
  }
}
