// TLS as the client speaks it, against a local TLS server with a
// certificate made here: the server name sent (SNI) and verified, no SNI
// for an IP address, and TLS 1.2 as the least version: a server that
// speaks only TLS 1.1 is refused. Client certificates and CAs rotated in
// their files are read again.
#include "transport/tls_context.hpp"

#include <kube/rest/client.hpp>
#include <kube/with_diagnostics.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <catch2/catch.hpp>

#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;

namespace {

struct pem_pair {
  std::string cert, key;
};

std::string bio_text(BIO* b) {
  char* data = nullptr;
  const long n = BIO_get_mem_data(b, &data);
  return {data, static_cast<std::size_t>(n)};
}

// A self-signed CA certificate for localhost, kube.example and 127.0.0.1.
pem_pair make_certificate() {
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(EVP_EC_gen("P-256"), EVP_PKEY_free);
  REQUIRE(key);
  std::unique_ptr<X509, decltype(&X509_free)> x(X509_new(), X509_free);
  X509_set_version(x.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(x.get()), 1);
  X509_gmtime_adj(X509_getm_notBefore(x.get()), -60);
  X509_gmtime_adj(X509_getm_notAfter(x.get()), 3600);
  X509_set_pubkey(x.get(), key.get());
  X509_NAME* name = X509_get_subject_name(x.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("kube-test"), -1, -1, 0);
  X509_set_issuer_name(x.get(), name);
  X509V3_CTX v3;
  X509V3_set_ctx_nodb(&v3);
  X509V3_set_ctx(&v3, x.get(), x.get(), nullptr, nullptr, 0);
  for (const auto& [nid, value] : {std::pair{NID_subject_alt_name, "DNS:localhost,DNS:kube.example,IP:127.0.0.1"},
                                   std::pair{NID_basic_constraints, "critical,CA:TRUE"}}) {
    X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &v3, nid, value);
    REQUIRE(ext);
    X509_add_ext(x.get(), ext, -1);
    X509_EXTENSION_free(ext);
  }
  REQUIRE(X509_sign(x.get(), key.get(), EVP_sha256()) > 0);
  std::unique_ptr<BIO, decltype(&BIO_free)> cb(BIO_new(BIO_s_mem()), BIO_free), kb(BIO_new(BIO_s_mem()), BIO_free);
  PEM_write_bio_X509(cb.get(), x.get());
  PEM_write_bio_PrivateKey(kb.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr);
  return {bio_text(cb.get()), bio_text(kb.get())};
}

const pem_pair& certificate() {
  static const pem_pair p = make_certificate();
  return p;
}

// Accepts TLS connections on 127.0.0.1; answers each request with 200 "{}"
// and remembers the server name each client sent ("" for none).
class tls_server {
public:
  tls_server(asio::io_context& io, int max_version)
      : ctx_(asio::ssl::context::tls_server),
        acceptor_(io, {asio::ip::make_address("127.0.0.1"), 0}) {
    ctx_.use_certificate_chain(asio::buffer(certificate().cert));
    ctx_.use_private_key(asio::buffer(certificate().key), asio::ssl::context::pem);
    SSL_CTX_set_min_proto_version(ctx_.native_handle(), 0);
    if (max_version == TLS1_1_VERSION) {
      // Old protocols need the lowest security level in OpenSSL 3.
      SSL_CTX_set_security_level(ctx_.native_handle(), 0);
      SSL_CTX_set_cipher_list(ctx_.native_handle(), "DEFAULT:@SECLEVEL=0");
    }
    SSL_CTX_set_max_proto_version(ctx_.native_handle(), max_version);
    asio::co_spawn(io, accept_loop(), asio::detached);
  }
  [[nodiscard]] unsigned short port() const { return acceptor_.local_endpoint().port(); }
  std::vector<std::string> server_names;

private:
  asio::awaitable<void> accept_loop() {
    for (;;) {
      auto [ec, sock] = co_await acceptor_.async_accept(asio::as_tuple(asio::use_awaitable));
      if (ec) co_return;
      asio::ssl::stream<tcp::socket> s(std::move(sock), ctx_);
      auto [hec] = co_await s.async_handshake(asio::ssl::stream_base::server, asio::as_tuple(asio::use_awaitable));
      if (hec) continue;
      const char* sni = SSL_get_servername(s.native_handle(), TLSEXT_NAMETYPE_host_name);
      server_names.emplace_back(sni != nullptr ? sni : "");
      std::string head;
      auto [rec, rn] = co_await asio::async_read_until(s, asio::dynamic_buffer(head), "\r\n\r\n",
                                                       asio::as_tuple(asio::use_awaitable));
      (void)rn;
      if (rec) continue;
      const std::string answer = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}";
      co_await asio::async_write(s, asio::buffer(answer), asio::as_tuple(asio::use_awaitable));
    }
  }
  asio::ssl::context ctx_;
  tcp::acceptor acceptor_;
};

struct outcome {
  kube::error_code ec;
  kube::diagnostics diag;
};

// One GET /x through `c`, run on `io` until it completes.
outcome request_once(asio::io_context& io, kube::client& c) {
  outcome out;
  bool done = false;
  c.async_request(kube::request{}.raw_path("/x"), kube::with_diagnostics(out.diag, [&](kube::error_code e, auto) {
                    out.ec = e;
                    done = true;
                  }));
  for (int i = 0; i < 200 && !done; ++i) io.run_one_for(100ms);
  REQUIRE(done);
  return out;
}

outcome get(asio::io_context& io, const std::string& host, unsigned short port, const std::string& server_name) {
  kube::detail::transport_params p;
  p.server = "https://" + host + ":" + std::to_string(port);
  p.ca_pem = certificate().cert;
  p.tls_server_name = server_name;
  p.qps = 0;
  auto c = kube::detail::client_access::make(io.get_executor(), p);
  return request_once(io, c);
}

}  // namespace

TEST_CASE("the server name is sent and verified, an IP address sends none", "[tls]") {
  asio::io_context io;
  tls_server server(io, TLS1_3_VERSION);
  auto r = get(io, "127.0.0.1", server.port(), "kube.example");
  INFO(r.diag.client_message());
  CHECK_FALSE(r.ec);
  r = get(io, "localhost", server.port(), "");
  CHECK_FALSE(r.ec);
  r = get(io, "127.0.0.1", server.port(), "");
  CHECK_FALSE(r.ec);
  REQUIRE(server.server_names.size() == 3);
  CHECK(server.server_names[0] == "kube.example");
  CHECK(server.server_names[1] == "localhost");
  CHECK(server.server_names[2].empty());  // RFC 6066: no IP literals in SNI

  // A name the certificate does not carry fails verification.
  r = get(io, "127.0.0.1", server.port(), "other.example");
  CHECK(r.ec == kube::client_errc::tls_error);
}

TEST_CASE("TLS 1.2 is the least version: a TLS 1.1 server is refused", "[tls]") {
  kube::detail::transport_params p;
  p.ca_pem = certificate().cert;
  const auto ctx = kube::detail::make_tls_context(p);
  CHECK(SSL_CTX_get_min_proto_version(ctx->native_handle()) == TLS1_2_VERSION);

  asio::io_context io;
  tls_server old(io, TLS1_1_VERSION);
  const auto r = get(io, "127.0.0.1", old.port(), "");
  CHECK(r.ec == kube::client_errc::tls_error);
  CHECK(old.server_names.empty());  // no handshake completed

  tls_server current(io, TLS1_2_VERSION);
  CHECK_FALSE(get(io, "127.0.0.1", current.port(), "").ec);
}

namespace {

// Accepts TLS connections from clients that present a certificate it
// trusts now; use() replaces its own certificate and the one it trusts (for
// the connections that come next). Answers each request with 200 "{}".
class mtls_server {
public:
  explicit mtls_server(asio::io_context& io)
      : acceptor_(io, {asio::ip::make_address("127.0.0.1"), 0}) {
    asio::co_spawn(io, accept_loop(), asio::detached);
  }
  void use(const pem_pair& own, const pem_pair& trusted_client) {
    auto ctx = std::make_shared<asio::ssl::context>(asio::ssl::context::tls_server);
    ctx->use_certificate_chain(asio::buffer(own.cert));
    ctx->use_private_key(asio::buffer(own.key), asio::ssl::context::pem);
    ctx->add_certificate_authority(asio::buffer(trusted_client.cert));
    ctx->set_verify_mode(asio::ssl::verify_peer | asio::ssl::verify_fail_if_no_peer_cert);
    ctx_ = std::move(ctx);
  }
  [[nodiscard]] unsigned short port() const { return acceptor_.local_endpoint().port(); }
  int refused = 0;  // handshakes that failed

private:
  asio::awaitable<void> accept_loop() {
    for (;;) {
      auto [ec, sock] = co_await acceptor_.async_accept(asio::as_tuple(asio::use_awaitable));
      if (ec) co_return;
      const auto ctx = ctx_;
      asio::ssl::stream<tcp::socket> s(std::move(sock), *ctx);
      auto [hec] = co_await s.async_handshake(asio::ssl::stream_base::server, asio::as_tuple(asio::use_awaitable));
      if (hec) {
        ++refused;
        continue;
      }
      std::string head;
      auto [rec, rn] = co_await asio::async_read_until(s, asio::dynamic_buffer(head), "\r\n\r\n",
                                                       asio::as_tuple(asio::use_awaitable));
      (void)rn;
      if (rec) continue;
      const std::string answer = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}";
      co_await asio::async_write(s, asio::buffer(answer), asio::as_tuple(asio::use_awaitable));
    }
  }
  std::shared_ptr<asio::ssl::context> ctx_;
  tcp::acceptor acceptor_;
};

// Writes `text` to `path` as a rotation does: a new file renamed over it.
void replace_file(const std::filesystem::path& path, const std::string& text) {
  const auto tmp = path.string() + ".new";
  std::ofstream(tmp, std::ios::binary) << text;
  std::filesystem::rename(tmp, path);
}

}  // namespace

TEST_CASE("a rotated client certificate and CA are read again from their files - a half-done rotation keeps the old",
          "[tls]") {
  const auto dir = std::filesystem::temp_directory_path() / ("kube-tls-rotation-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto server1 = make_certificate(), server2 = make_certificate();
  const auto client1 = make_certificate(), client2 = make_certificate(), client3 = make_certificate();
  replace_file(dir / "ca.crt", server1.cert);
  replace_file(dir / "client.crt", client1.cert);
  replace_file(dir / "client.key", client1.key);

  asio::io_context io;
  mtls_server server(io);
  server.use(server1, client1);
  kube::detail::transport_params p;
  p.server = "https://127.0.0.1:" + std::to_string(server.port());
  p.ca_file = (dir / "ca.crt").string();
  p.ca_pem = server1.cert;
  p.client_cert_file = (dir / "client.crt").string();
  p.client_cert_pem = client1.cert;
  p.client_key_file = (dir / "client.key").string();
  p.client_key_pem = client1.key;
  p.qps = 0;
  auto c = kube::detail::client_access::make(io.get_executor(), p);  // one client throughout
  const auto get_ok = [&] {
    const auto out = request_once(io, c);
    INFO(out.diag.client_message());
    return !out.ec;
  };
  CHECK(get_ok());

  // Both rotated: the server has a new certificate (from a new CA) and
  // trusts only the new client certificate. Files are looked at once a second.
  replace_file(dir / "ca.crt", server2.cert);
  replace_file(dir / "client.crt", client2.cert);
  replace_file(dir / "client.key", client2.key);
  server.use(server2, client2);
  std::this_thread::sleep_for(1100ms);
  CHECK(get_ok());  // before: the old CA and certificate, refused both ways
  CHECK(server.refused == 0);

  // Half done: a new certificate with the old key does not load; the
  // client goes on with what it has until the key comes.
  replace_file(dir / "client.crt", client3.cert);
  std::this_thread::sleep_for(1100ms);
  CHECK(get_ok());
  replace_file(dir / "client.key", client3.key);
  server.use(server2, client3);
  std::this_thread::sleep_for(1100ms);
  CHECK(get_ok());
  CHECK(server.refused == 0);
  std::filesystem::remove_all(dir);
}
