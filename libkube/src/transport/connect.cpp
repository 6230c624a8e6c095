// Opening a connection: resolve, TCP connect (bounded by connect_timeout),
// an HTTP CONNECT through a proxy, the TLS handshake with SNI and host-name
// verification.
#include "transport/client_impl.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/beast/http.hpp>

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <netinet/tcp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <memory>
#include <string>
#include <tuple>

namespace kube::detail {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

namespace {
// Asio's codes carry the line of Asio that made them, which what() would
// print; a user reads the message, a program compares the code.
error_code plain(const error_code& ec) { return {ec.value(), ec.category()}; }

std::string seconds_text(std::chrono::milliseconds d) {
  const auto ms = d.count();
  return ms % 1000 == 0 ? std::to_string(ms / 1000) + " s" : std::to_string(ms) + " ms";
}

std::string connect_failure(const std::string& where, bool proxy, const error_code& ec,
                            std::chrono::milliseconds timeout) {
  if (ec == asio::error::connection_refused)
    return "the connection to " + where + " was refused - is " + (proxy ? "the proxy" : "the API server") +
           " running, and are the host and port of " +
           (proxy ? "proxy-url (or HTTPS_PROXY)" : "the kubeconfig's server") + " right?";
  if (ec == beast::error::timeout)
    return "connecting to " + where + " timed out after " + seconds_text(timeout) +
           " (client_params::connect_timeout) - is the address right, or is a firewall dropping the packets?";
  if (ec == asio::error::host_unreachable || ec == asio::error::network_unreachable)
    return "cannot reach " + where + " (" + ec.message() + ") - is the address right and the network up?";
  return "cannot connect to " + where + ": " + ec.message();
}

// What the verification saw of the server's own certificate, for the
// message when it is refused (OpenSSL does not keep a rejected peer).
struct peer_certificate {
  std::string names;  // its DNS and IP subject alternative names, else its CN
  std::string not_before, not_after, issuer;
};

std::string asn1_time_text(const ASN1_TIME* t) {
  std::tm tm{};
  if (t == nullptr || ASN1_TIME_to_tm(t, &tm) != 1) return "an unreadable date";
  char buf[32];
  return std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm) ? buf : "an unreadable date";
}

std::string name_text(const X509_NAME* n) {
  if (n == nullptr) return "an unnamed issuer";
  char buf[256];
  X509_NAME_oneline(n, buf, sizeof buf);
  return buf;
}

void describe_certificate(X509* cert, peer_certificate& out) {
  out = {};
  if (cert == nullptr) return;
  auto* sans = static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
  for (int i = 0; sans != nullptr && i < sk_GENERAL_NAME_num(sans); ++i) {
    const GENERAL_NAME* g = sk_GENERAL_NAME_value(sans, i);
    std::string one;
    if (g->type == GEN_DNS) {
      one.assign(reinterpret_cast<const char*>(ASN1_STRING_get0_data(g->d.dNSName)),
                 static_cast<std::size_t>(ASN1_STRING_length(g->d.dNSName)));
    } else if (g->type == GEN_IPADD) {
      const auto len = ASN1_STRING_length(g->d.iPAddress);
      const auto* b = ASN1_STRING_get0_data(g->d.iPAddress);
      if (len == 4) {
        one =
            std::to_string(b[0]) + "." + std::to_string(b[1]) + "." + std::to_string(b[2]) + "." + std::to_string(b[3]);
      } else if (len == 16) {
        asio::ip::address_v6::bytes_type bytes{};
        std::copy(b, b + 16, bytes.begin());
        one = asio::ip::address_v6(bytes).to_string();
      }
    }
    // A hostile server's names must not carry control bytes into logs.
    std::replace_if(
        one.begin(), one.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }, '?');
    if (!one.empty()) out.names += (out.names.empty() ? "" : ", ") + one;
  }
  GENERAL_NAMES_free(sans);
  if (out.names.empty()) {
    char cn[256] = {};
    if (X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, cn, sizeof cn) > 0)
      out.names = std::string("CN ") + cn;
  }
  if (out.names.size() > 300) out.names = out.names.substr(0, 300) + "...";
  out.not_before = asn1_time_text(X509_get0_notBefore(cert));
  out.not_after = asn1_time_text(X509_get0_notAfter(cert));
  out.issuer = name_text(X509_get_issuer_name(cert));
}

std::string tls_failure(const std::string& where, const error_code& hec, long verify, const peer_certificate& peer,
                        const std::string& verify_name, const transport_params& s) {
  const std::string trusted = !s.ca_file.empty()  ? "the certificate authority " + s.ca_file
                              : !s.ca_pem.empty() ? "the kubeconfig's certificate-authority-data"
                                                  : "the system's trusted roots (the kubeconfig names no CA)";
  switch (verify) {
  case X509_V_OK:
    return "TLS handshake with " + where + " failed: " + hec.message();
  case X509_V_ERR_HOSTNAME_MISMATCH:
  case X509_V_ERR_IP_ADDRESS_MISMATCH:
    return "the certificate of " + where + " is for " + peer.names + ", not for " + verify_name +
           " - connect by one of those names, or set tls-server-name in the kubeconfig's cluster to one of them";
  case X509_V_ERR_CERT_HAS_EXPIRED:
    return "the certificate of " + where + " (for " + peer.names + ") expired on " + peer.not_after +
           " - the server needs a new certificate, or this machine's clock is wrong";
  case X509_V_ERR_CERT_NOT_YET_VALID:
    return "the certificate of " + where + " (for " + peer.names + ") is not valid before " + peer.not_before +
           " - is this machine's clock right?";
  case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
  case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
  case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
  case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
  case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
  case X509_V_ERR_CERT_SIGNATURE_FAILURE:
    return "the certificate of " + where + " (issued by " + peer.issuer + ") is not signed by " + trusted +
           " - is that the CA of this cluster?";
  default:
    return "the certificate of " + where + " failed verification: " + X509_verify_cert_error_string(verify);
  }
}

template <class Stream, class Message>
asio::awaitable<std::tuple<boost::system::error_code, std::size_t>> write_on(Stream& s, Message& m) {
  co_return co_await http::async_write(s, m, use_tuple);
}

// Keepalive probes after `idle` without traffic, then every `idle` (Go's
// net.Dialer KeepAlive sets both); the kernel drops the connection after 9
// unanswered probes. Failing to set them is not worth failing the request.
void set_keepalive(asio::ip::tcp::socket& s, std::chrono::seconds idle) {
  const int secs = static_cast<int>(idle.count());
  error_code ignored;
  s.set_option(asio::socket_base::keep_alive(true), ignored);
  s.set_option(asio::detail::socket_option::integer<IPPROTO_TCP, TCP_KEEPIDLE>(secs), ignored);
  s.set_option(asio::detail::socket_option::integer<IPPROTO_TCP, TCP_KEEPINTVL>(secs), ignored);
}
}  // namespace

beast::tcp_stream& connection::tcp() {
  if (auto* p = std::get_if<std::unique_ptr<beast::tcp_stream>>(&stream)) return **p;
  return beast::get_lowest_layer(*std::get<std::unique_ptr<tls_stream>>(stream));
}

asio::awaitable<std::unique_ptr<connection>> client_impl::connect(error_code& ec, diagnostics& diag) {
  auto ex = co_await asio::this_coro::executor;
  asio::ip::tcp::resolver resolver(ex);
  const std::string& host = ep.proxy_host ? *ep.proxy_host : ep.host;
  const std::string& port = ep.proxy_port ? *ep.proxy_port : ep.port;
  const std::string where = ep.proxy_host ? "the proxy " + host + ":" + port : server_text();

  auto [rec, results] = co_await resolver.async_resolve(host, port, use_tuple);
  if (rec) {
    ec = plain(rec);
    diag.set_client_message("cannot resolve the host name of " + where + " (" + rec.message() +
                            ") - is the name in the kubeconfig right, and does DNS answer for it?");
    co_return nullptr;
  }
  auto tcp = std::make_unique<beast::tcp_stream>(ex);
  tcp->expires_after(settings.connect_timeout);
  // Each address in turn, on a socket opened close-on-exec (Asio's own
  // open does not set it), so a process started by any thread of the
  // program (an exec plugin, the user's own children) never holds our
  // connections.
  error_code cec = asio::error::host_not_found;
  for (const auto& entry : results) {
    const auto protocol = entry.endpoint().protocol();
    const int fd = ::socket(protocol.family(), SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_TCP);
    if (fd < 0) {
      cec = error_code(errno, boost::system::system_category());
      continue;
    }
    error_code aec;
    tcp->socket().assign(protocol, fd, aec);
    if (aec) {
      ::close(fd);
      cec = aec;
      continue;
    }
    std::tie(cec) = co_await tcp->async_connect(entry.endpoint(), use_tuple);
    if (!cec || cec == beast::error::timeout) break;
    error_code ignored;
    tcp->socket().close(ignored);
  }
  if (cec) {
    ec = cec == beast::error::timeout ? error_code(client_errc::timeout) : plain(cec);
    diag.set_client_message(connect_failure(where, ep.proxy_host.has_value(), cec, settings.connect_timeout));
    co_return nullptr;
  }
  tcp->socket().set_option(asio::ip::tcp::no_delay(true));
  if (settings.tcp_keepalive.count() > 0) set_keepalive(tcp->socket(), settings.tcp_keepalive);
  connections_opened.fetch_add(1, std::memory_order_relaxed);

  if (ep.proxy_host) {
    http::request<http::empty_body> creq{http::verb::connect, ep.host + ":" + ep.port, 11};
    creq.set(http::field::host, ep.host + ":" + ep.port);
    if (ep.proxy_authorization) creq.set(http::field::proxy_authorization, *ep.proxy_authorization);
    auto [wec, wn] = co_await write_on(*tcp, creq);
    (void)wn;
    beast::flat_buffer buf;
    http::response_parser<http::empty_body> parser;
    parser.skip(true);  // a CONNECT answer has no body
    error_code pec = wec;
    if (!pec) std::tie(pec, std::ignore) = co_await http::async_read_header(*tcp, buf, parser, use_tuple);
    if (pec || parser.get().result() != http::status::ok) {
      ec = pec ? plain(pec) : error_code(client_errc::connection_failed);
      diag.set_client_message(where + ": CONNECT " + ep.host + ":" + ep.port + " failed: " +
                              (pec ? pec.message() : "HTTP " + std::to_string(parser.get().result_int())));
      co_return nullptr;
    }
  }

  auto conn = std::make_unique<connection>();
  if (!ep.tls) {
    tcp->expires_never();
    conn->stream = std::move(tcp);
    co_return conn;
  }
  auto [context, generation] = tls->current();
  conn->tls_context = context;
  conn->tls_generation = generation;
  auto tls_stream = std::make_unique<connection::tls_stream>(std::move(*tcp), *context);
  if (!ep.host_is_ip || !settings.tls_server_name.empty()) {
    // SNI carries names only (RFC 6066), never IP literals.
    SSL_set_tlsext_host_name(tls_stream->native_handle(), ep.verify_name.c_str());
  }
  // OpenSSL checks the name itself (X509_check_host or _ip, as Asio's
  // host_name_verification does), so a mismatch has its own verify result; the callback only notes what the server's
  // certificate says, for the message if it is refused.
  auto peer = std::make_shared<peer_certificate>();
  if (!settings.insecure_skip_tls_verify) {
    X509_VERIFY_PARAM* param = SSL_get0_param(tls_stream->native_handle());
    error_code not_ip;
    (void)asio::ip::make_address(ep.verify_name, not_ip);
    const bool ip = !not_ip;
    if (ip ? X509_VERIFY_PARAM_set1_ip_asc(param, ep.verify_name.c_str()) != 1
           : X509_VERIFY_PARAM_set1_host(param, ep.verify_name.c_str(), ep.verify_name.size()) != 1) {
      ec = client_errc::tls_error;
      diag.set_client_message("cannot verify " + where + " by the name \"" + ep.verify_name + "\"");
      co_return nullptr;
    }
    tls_stream->set_verify_callback([peer](bool preverified, asio::ssl::verify_context& ctx) {
      X509_STORE_CTX* store = ctx.native_handle();
      if (!preverified) describe_certificate(X509_STORE_CTX_get0_cert(store), *peer);
      return preverified;
    });
  }
  auto [hec] = co_await tls_stream->async_handshake(asio::ssl::stream_base::client, use_tuple);
  if (hec) {
    const long verify = SSL_get_verify_result(tls_stream->native_handle());
    // A connection reset or closed during the handshake is a network error
    // (as in Go's TLS client): callers treat it like any broken connection,
    // e.g. an informer reopens its watch without a relist. What TLS itself
    // refused (verification, protocol version) is client_errc::tls_error.
    const bool broken = hec.category() == boost::system::system_category() || hec == asio::error::eof ||
                        hec == asio::ssl::error::stream_truncated;
    ec = hec == beast::error::timeout            ? error_code(client_errc::timeout)
         : hec == asio::error::operation_aborted ? hec
         : broken                                ? plain(hec)
                                                 : error_code(client_errc::tls_error);
    const std::string server = server_text();
    diag.set_client_message(hec == beast::error::timeout
                                ? "the TLS handshake with " + server + " did not finish within " +
                                      seconds_text(settings.connect_timeout) +
                                      " (client_params::connect_timeout) - is it a TLS server, and is it overloaded?"
                                : tls_failure(server, hec, verify, *peer, ep.verify_name, settings));
    co_return nullptr;
  }
  beast::get_lowest_layer(*tls_stream).expires_never();
  conn->stream = std::move(tls_stream);
  co_return conn;
}

}  // namespace kube::detail
