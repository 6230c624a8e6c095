#include "client_impl.hpp"

#include <kube/client.hpp>
#include <kube/detail/gzip.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>
#include <boost/url/encode.hpp>
#include <boost/url/parse.hpp>
#include <boost/url/rfc/unreserved_chars.hpp>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <charconv>
#include <cstdlib>
#include <tuple>

namespace kube {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

namespace detail {
namespace {

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

const char* env(const char* upper, const char* lower_name) {
  if (const char* v = std::getenv(upper); v && *v) return v;
  if (const char* v = std::getenv(lower_name); v && *v) return v;
  return nullptr;
}

bool is_loopback(const std::string& host) {
  boost::system::error_code ec;
  const auto addr = asio::ip::make_address(host, ec);
  return host == "localhost" || (!ec && addr.is_loopback());
}

// NO_PROXY: comma-separated hosts, domain suffixes (".example.com" or
// "example.com" also matching subdomains), IPs, host:port, or "*".
bool no_proxy_matches(const std::string& host, const std::string& port) {
  const char* np = env("NO_PROXY", "no_proxy");
  if (!np) return false;
  std::string list = np, h = lower(host);
  std::size_t start = 0;
  while (start <= list.size()) {
    auto end = list.find(',', start);
    if (end == std::string::npos) end = list.size();
    std::string entry = lower(list.substr(start, end - start));
    start = end + 1;
    entry.erase(0, entry.find_first_not_of(' '));
    entry.erase(entry.find_last_not_of(' ') + 1);
    if (entry.empty()) continue;
    if (entry == "*") return true;
    if (auto colon = entry.rfind(':'); colon != std::string::npos && entry.find(':') == colon) {
      if (entry.substr(colon + 1) != port) continue;
      entry.resize(colon);
    }
    if (entry.front() == '.') entry.erase(0, 1);
    if (h == entry) return true;
    if (h.size() > entry.size() && h.compare(h.size() - entry.size(), entry.size(), entry) == 0 &&
        h[h.size() - entry.size() - 1] == '.')
      return true;
  }
  return false;
}

std::string openssl_error_text() {
  std::string out;
  while (const unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    if (!out.empty()) out += "; ";
    out += buf;
  }
  return out.empty() ? "unknown OpenSSL error" : out;
}

template <class Stream, class Message>
asio::awaitable<std::tuple<boost::system::error_code, std::size_t>> write_on(Stream& s, Message& m) {
  co_return co_await http::async_write(s, m, use_tuple);
}

} // namespace

beast::tcp_stream& connection::tcp() {
  if (auto* p = std::get_if<std::unique_ptr<beast::tcp_stream>>(&stream)) return **p;
  return beast::get_lowest_layer(*std::get<std::unique_ptr<tls_stream>>(stream));
}

endpoint make_endpoint(const transport_settings& s) {
  auto url = boost::urls::parse_uri(s.server);
  if (!url || (url->scheme() != "https" && url->scheme() != "http") || url->host().empty())
    throw kube::error(client_errc::invalid_config, "server \"" + s.server + "\" is not an http(s):// URL");
  endpoint ep;
  ep.tls = url->scheme() == "https";
  ep.host = url->host_address();
  if (url->host_type() == boost::urls::host_type::ipv6) ep.host = std::string(url->host_address());
  ep.port = url->has_port() ? std::string(url->port()) : (ep.tls ? "443" : "80");
  ep.base_path = url->path();
  while (!ep.base_path.empty() && ep.base_path.back() == '/') ep.base_path.pop_back();
  ep.verify_name = s.tls_server_name.empty() ? ep.host : s.tls_server_name;
  boost::system::error_code ec;
  asio::ip::make_address(ep.host, ec);
  ep.host_is_ip = !ec;

  std::string proxy = s.proxy_url;
  if (proxy.empty() && !is_loopback(ep.host) && !no_proxy_matches(ep.host, ep.port)) {
    if (const char* p = ep.tls ? env("HTTPS_PROXY", "https_proxy") : env("HTTP_PROXY", "http_proxy")) proxy = p;
  }
  if (!proxy.empty()) {
    auto purl = boost::urls::parse_uri(proxy);
    if (!purl || purl->scheme() != "http" || purl->host().empty())
      throw kube::error(client_errc::invalid_config,
                        "proxy-url: only http:// CONNECT proxies are supported (got scheme \"" +
                            (purl ? std::string(purl->scheme()) : std::string("?")) + "\")");
    ep.proxy_host = std::string(purl->host_address());
    ep.proxy_port = purl->has_port() ? std::string(purl->port()) : "80";
    if (purl->has_userinfo())
      ep.proxy_authorization = basic_authorization(purl->user(), purl->password());
  }
  return ep;
}

std::shared_ptr<asio::ssl::context> make_tls_context(const transport_settings& s) {
  auto ctx = std::make_shared<asio::ssl::context>(asio::ssl::context::tls_client);
  ctx->set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                   asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 | asio::ssl::context::no_tlsv1_1);
  boost::system::error_code ec;
  const auto source = [](const std::string& file, const char* field) {
    return file.empty() ? std::string(field) : std::string(field) + " " + file;
  };
  if (s.insecure_skip_tls_verify) {
    ctx->set_verify_mode(asio::ssl::verify_none);
  } else {
    ctx->set_verify_mode(asio::ssl::verify_peer);
    if (!s.ca_pem.empty()) {
      ERR_clear_error();
      ctx->add_certificate_authority(asio::buffer(s.ca_pem), ec);
      if (ec)
        throw kube::error(client_errc::tls_error,
                          source(s.ca_file, "certificate-authority") + ": not a PEM certificate bundle (" +
                              openssl_error_text() + ")");
    } else {
      ctx->set_default_verify_paths(ec);
    }
  }
  if (!s.client_cert_pem.empty() || !s.client_key_pem.empty()) {
    if (s.client_cert_pem.empty() || s.client_key_pem.empty())
      throw kube::error(client_errc::invalid_config, "client-certificate and client-key must be given together");
    ERR_clear_error();
    ctx->use_certificate_chain(asio::buffer(s.client_cert_pem), ec);
    if (ec)
      throw kube::error(client_errc::tls_error, source(s.client_cert_file, "client-certificate") +
                                                    ": not a PEM certificate (" + openssl_error_text() + ")");
    ERR_clear_error();
    ctx->use_private_key(asio::buffer(s.client_key_pem), asio::ssl::context::pem, ec);
    if (ec)
      throw kube::error(client_errc::tls_error, source(s.client_key_file, "client-key") +
                                                    ": not a PEM private key matching the certificate (" +
                                                    openssl_error_text() + ")");
  }
  return ctx;
}

std::vector<std::string> parse_warnings(const http::fields& headers) {
  // warn-code SP warn-agent SP "warn-text" [SP "warn-date"]; keep the text.
  std::vector<std::string> out;
  for (auto [f, last] = headers.equal_range(http::field::warning); f != last; ++f) {
    const std::string_view v = f->value();
    const auto open = v.find('"');
    if (open == std::string::npos) continue;
    std::string text;
    std::size_t i = open + 1;
    for (; i < v.size() && v[i] != '"'; ++i) {
      if (v[i] == '\\' && i + 1 < v.size()) ++i;
      text += v[i];
    }
    if (i < v.size()) out.push_back(std::move(text));
  }
  return out;
}

error_code status_error(unsigned http_status, const std::string& body, const request& req, diagnostics& diag) {
  std::string reason;
  int code = static_cast<int>(http_status);
  boost::system::error_code jec;
  auto doc = boost::json::parse(body, jec);
  if (!jec && doc.is_object() && doc.as_object().contains("kind") && doc.as_object().at("kind") == "Status") {
    auto& st = doc.as_object();
    if (const auto* r = st.if_contains("reason"); r && r->is_string()) reason = r->as_string();
    if (const auto* c = st.if_contains("code"); c && c->is_int64() && c->as_int64() > 0)
      code = static_cast<int>(c->as_int64());
    diag.set_server_status(std::move(st));
  } else {
    // Not a Status (a proxy's page, a plain-text 404): keep a bounded excerpt.
    boost::json::object synthetic{{"kind", "Status"},
                                  {"status", "Failure"},
                                  {"code", http_status},
                                  {"message", body.substr(0, 512)}};
    diag.set_server_status(std::move(synthetic));
  }
  diag.set_client_message(req.describe() + ": HTTP " + std::to_string(http_status));
  return api_errc_from_status(reason, code);
}

client_impl::client_impl(asio::any_io_executor ex, transport_settings s)
    : executor(ex),
      strand(make_strand_executor(ex)),
      settings(std::move(s)),
      ep(make_endpoint(settings)),
      tls(ep.tls ? make_tls_context(settings) : nullptr),
      auth(make_authenticator(settings, ex)),
      limiter(settings.qps, settings.burst) {}

http::request<http::string_body> client_impl::to_http(const request& r) const {
  static constexpr http::verb verbs[] = {http::verb::get,   http::verb::post,   http::verb::put,
                                         http::verb::patch, http::verb::delete_, http::verb::head};
  http::request<http::string_body> m{verbs[static_cast<int>(r.method())], ep.base_path + r.target(), 11};
  m.set(http::field::host, ep.host_is_ip || ep.port == (ep.tls ? "443" : "80") ? ep.host : ep.host + ":" + ep.port);
  m.set(http::field::user_agent, settings.user_agent);
  m.set(http::field::accept, r.accept());
  if (!r.body().empty() || r.method() == http_method::post || r.method() == http_method::put ||
      r.method() == http_method::patch) {
    m.set(http::field::content_type, r.content_type());
    m.body() = r.body();
  }
  m.keep_alive(true);
  m.prepare_payload();
  return m;
}

asio::awaitable<error_code> client_impl::add_headers(http::request<http::string_body>& m, diagnostics& diag) {
  if (auth) {
    std::string value;
    if (auto ec = co_await auth->authorization(value, diag)) co_return ec;
    if (!value.empty()) m.set(http::field::authorization, value);
  }
  if (!settings.impersonate_user.empty()) m.set("Impersonate-User", settings.impersonate_user);
  if (!settings.impersonate_uid.empty()) m.set("Impersonate-Uid", settings.impersonate_uid);
  for (const auto& g : settings.impersonate_groups) m.insert("Impersonate-Group", g);
  for (const auto& [k, values] : settings.impersonate_extra)
    for (const auto& v : values)
      m.insert("Impersonate-Extra-" + std::string(boost::urls::encode(k, boost::urls::unreserved_chars)), v);
  co_return error_code{};
}

void client_impl::surface_warnings(const std::vector<std::string>& warnings) const {
  for (const auto& w : warnings) {
    if (settings.on_warning) settings.on_warning(w);
    else settings.log.log(log_level::warning, "server warning: " + w);
  }
}

asio::awaitable<std::unique_ptr<connection>> client_impl::connect(error_code& ec, diagnostics& diag) {
  auto ex = co_await asio::this_coro::executor;
  asio::ip::tcp::resolver resolver(ex);
  const std::string& host = ep.proxy_host ? *ep.proxy_host : ep.host;
  const std::string& port = ep.proxy_port ? *ep.proxy_port : ep.port;
  const std::string where = ep.proxy_host ? "proxy " + host + ":" + port : host + ":" + port;

  auto [rec, results] = co_await resolver.async_resolve(host, port, use_tuple);
  if (rec) {
    ec = rec;
    diag.set_client_message("cannot resolve " + where + ": " + rec.message());
    co_return nullptr;
  }
  auto tcp = std::make_unique<beast::tcp_stream>(ex);
  tcp->expires_after(settings.connect_timeout);
  auto [cec, ep_used] = co_await tcp->async_connect(results, use_tuple);
  (void)ep_used;
  if (cec) {
    ec = cec == beast::error::timeout ? error_code(client_errc::timeout) : cec;
    diag.set_client_message("cannot connect to " + where + ": " + cec.message());
    co_return nullptr;
  }
  tcp->socket().set_option(asio::ip::tcp::no_delay(true));
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
      ec = pec ? pec : error_code(client_errc::connection_failed);
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
  auto tls_stream = std::make_unique<connection::tls_stream>(std::move(*tcp), *tls);
  if (!ep.host_is_ip || !settings.tls_server_name.empty()) {
    // SNI carries names only (RFC 6066), never IP literals.
    SSL_set_tlsext_host_name(tls_stream->native_handle(), ep.verify_name.c_str());
  }
  if (!settings.insecure_skip_tls_verify) tls_stream->set_verify_callback(asio::ssl::host_name_verification(ep.verify_name));
  auto [hec] = co_await tls_stream->async_handshake(asio::ssl::stream_base::client, use_tuple);
  if (hec) {
    std::string detail = hec.message();
    const long verify = SSL_get_verify_result(tls_stream->native_handle());
    if (verify != X509_V_OK) detail += std::string(" (") + X509_verify_cert_error_string(verify) + ")";
    ec = hec == beast::error::timeout         ? error_code(client_errc::timeout)
         : hec == asio::error::operation_aborted ? hec
                                                 : error_code(client_errc::tls_error);
    diag.set_client_message("TLS handshake with " + ep.host + ":" + ep.port + " failed: " + detail);
    co_return nullptr;
  }
  beast::get_lowest_layer(*tls_stream).expires_never();
  conn->stream = std::move(tls_stream);
  co_return conn;
}

// One try: connection, headers, write, read. `retryable_failure` is set when
// the failure happened on a reused keep-alive connection before any response
// byte arrived (the server closed it while idle), or was a connection reset.
asio::awaitable<result<response>> client_impl::attempt(const request& req, bool& retryable_failure,
                                                        int& retry_after) {
  result<response> r;
  retryable_failure = false;
  retry_after = -1;
  std::unique_ptr<connection> conn;
  if (!idle_.empty()) {
    conn = std::move(idle_.back());
    idle_.pop_back();
    conn->reused = true;
  } else {
    conn = co_await connect(r.ec, r.diag);
    if (!conn) co_return r;
  }

  auto m = to_http(req);
  // As Go's transport does for client-go: ask for gzip unless the
  // kubeconfig says disable-compression. (Watches do not: the apiserver
  // sends their events as they happen, uncompressed.)
  if (!settings.disable_compression) m.set(http::field::accept_encoding, "gzip");
  if ((r.ec = co_await add_headers(m, r.diag))) co_return r;

  if (settings.timeout.count() > 0) conn->tcp().expires_after(settings.timeout);
  http::response_parser<http::string_body> parser;
  parser.body_limit(boost::none);  // lists can be large; the caller asked for them
  auto io = [&]<class Stream>(Stream& s) -> asio::awaitable<error_code> {
    auto [wec, wn] = co_await http::async_write(s, m, use_tuple);
    (void)wn;
    if (wec) co_return wec;
    auto [rec, rn] = co_await http::async_read(s, conn->buffer, parser, use_tuple);
    (void)rn;
    co_return rec;
  };
  const error_code ec = co_await conn->visit(io);
  conn->tcp().expires_never();

  if (ec) {
    const bool nothing_received = !parser.got_some();
    retryable_failure = (conn->reused && nothing_received) || ec == asio::error::connection_reset;
    if (ec == beast::error::timeout) {
      r.ec = client_errc::timeout;
      r.diag.set_client_message(req.describe() + ": timed out after " + std::to_string(settings.timeout.count()) + " ms");
    } else {
      r.ec = ec;
      r.diag.set_client_message(req.describe() + ": " + ec.message());
    }
    co_return r;
  }

  auto& res = parser.get();
  r.value.status = res.result_int();
  r.value.content_type = std::string(res[http::field::content_type]);
  r.value.warnings = parse_warnings(res);
  surface_warnings(r.value.warnings);
  retry_after = -1;
  if (const auto ra = res[http::field::retry_after]; !ra.empty()) {
    int secs = 0;
    const auto* end = ra.data() + ra.size();
    if (auto [ptr, perr] = std::from_chars(ra.data(), end, secs); perr == std::errc{} && ptr == end && secs >= 0)
      retry_after = secs;
  }
  const bool keep = res.keep_alive();
  r.value.body = std::move(res.body());
  if (const auto enc = res[http::field::content_encoding]; !enc.empty() && !beast::iequals(enc, "identity")) {
    if (!beast::iequals(enc, "gzip")) {
      r.ec = client_errc::protocol_error;
      r.diag.set_client_message(req.describe() + ": the response is encoded as \"" + std::string(enc.substr(0, 64)) +
                                "\", which was not asked for (only gzip is)");
      co_return r;
    }
    std::string plain;
    std::string why;
    if (!detail::gunzip(r.value.body, plain, why)) {
      r.ec = client_errc::protocol_error;
      r.diag.set_client_message(req.describe() + ": the gzip-encoded response body (" +
                                std::to_string(r.value.body.size()) + " bytes) does not decode: " + why);
      co_return r;
    }
    r.value.body = std::move(plain);
    r.value.content_encoding = "gzip";
  }
  if (r.value.status < 200 || r.value.status >= 300) r.ec = status_error(r.value.status, r.value.body, req, r.diag);
  if (keep && idle_.size() < settings.max_idle_connections) {
    conn->reused = false;
    idle_.push_back(std::move(conn));
  }
  co_return r;
}

asio::awaitable<result<response>> client_impl::run(request req) {
  auto ex = co_await asio::this_coro::executor;
  const bool idempotent = req.method() == http_method::get || req.method() == http_method::head;
  bool refreshed_auth = false;
  int retries = 0;
  for (;;) {
    // Every try is throttled, as client-go throttles each retry.
    if (auto wait = limiter.reserve(std::chrono::steady_clock::now()); wait.count() > 0) {
      asio::steady_timer t(ex, wait);
      auto [tec] = co_await t.async_wait(use_tuple);
      if (tec) co_return result<response>{tec, {}, {}};
    }
    bool retryable_failure = false;
    int retry_after = -1;
    auto r = co_await attempt(req, retryable_failure, retry_after);
    if (r.ec == asio::error::operation_aborted) co_return r;

    // A pooled connection the server had closed while idle (the failure came
    // before any response byte): retry at once on a fresh connection, for any
    // method, as the server never answered. A connection reset: retry GET and
    // HEAD only (client-go's rule), after a second.
    if (r.ec && retryable_failure && retries < settings.max_retries) {
      if (!idempotent && r.ec == asio::error::connection_reset) co_return r;
      ++retries;
      settings.log.log(log_level::debug, req.describe() + ": retrying on a new connection after " + r.ec.message());
      if (r.ec == asio::error::connection_reset) {
        asio::steady_timer t(ex, std::chrono::seconds(1));
        auto [tec] = co_await t.async_wait(use_tuple);
        if (tec) co_return result<response>{tec, {}, {}};
      }
      continue;
    }

    // 429 and 5xx carrying Retry-After: wait as told, at most max_retries times.
    if ((r.value.status == 429 || r.value.status >= 500) && retry_after >= 0) {
      if (retries >= settings.max_retries) {
        r.ec = client_errc::too_many_retries;
        r.diag.set_client_message(req.describe() + ": gave up after " + std::to_string(retries) +
                                  " retries (HTTP " + std::to_string(r.value.status) + " with Retry-After)");
        co_return r;
      }
      ++retries;
      settings.log.log(log_level::info, req.describe() + ": HTTP " + std::to_string(r.value.status) +
                                            ", retrying after " + std::to_string(retry_after) + "s");
      asio::steady_timer t(ex, std::chrono::seconds(retry_after));
      auto [tec] = co_await t.async_wait(use_tuple);
      if (tec) co_return result<response>{tec, {}, {}};
      continue;
    }

    // 401: refresh rotating credentials (token file, exec plugin) once.
    if (r.value.status == 401 && !refreshed_auth && auth && auth->invalidate()) {
      refreshed_auth = true;
      settings.log.log(log_level::info, req.describe() + ": 401, refreshing credentials");
      continue;
    }
    co_return r;
  }
}

} // namespace detail

namespace {
detail::transport_settings to_settings(const client_config& c, client_options o) {
  detail::transport_settings s;
  s.server = c.server;
  s.ca_pem = c.ca_pem;
  s.ca_file = c.ca_file;
  s.client_cert_pem = c.client_cert_pem;
  s.client_key_pem = c.client_key_pem.reveal();
  s.client_cert_file = c.client_cert_file;
  s.client_key_file = c.client_key_file;
  s.insecure_skip_tls_verify = c.insecure_skip_tls_verify;
  s.tls_server_name = c.tls_server_name;
  // A token file wins over its content read at load time: the transport re-reads it.
  if (c.token_file.empty()) s.token = c.bearer_token.reveal();
  s.token_file = c.token_file;
  s.token_file_refresh = o.token_file_refresh;
  s.username = c.username;
  s.password = c.password.reveal();
  if (c.exec) {
    s.has_exec = true;
    s.exec.api_version = c.exec->api_version;
    s.exec.command = c.exec->command;
    s.exec.args = c.exec->args;
    for (const auto& e : c.exec->env) s.exec.env.emplace_back(e.name, e.value);
    s.exec.provide_cluster_info = c.exec->provide_cluster_info;
    s.exec.install_hint = c.exec->install_hint;
    s.exec.timeout = o.exec_timeout;
  }
  s.impersonate_user = c.impersonate.user;
  s.impersonate_uid = c.impersonate.uid;
  s.impersonate_groups = c.impersonate.groups;
  s.impersonate_extra = c.impersonate.extra;
  s.proxy_url = c.proxy_url;
  s.disable_compression = c.disable_compression;
  s.user_agent = c.user_agent;
  s.qps = c.qps;
  s.burst = c.burst;
  s.timeout = o.timeout;
  s.connect_timeout = o.connect_timeout;
  s.max_idle_connections = o.max_idle_connections;
  s.max_retries = o.max_retries;
  s.log = std::move(o.log);
  s.on_warning = std::move(o.on_warning);
  return s;
}
} // namespace

client::client(executor_type ex, const client_config& config, client_options options)
    : client(std::move(ex), to_settings(config, std::move(options))) {}

client::client(executor_type ex, detail::transport_settings settings)
    : impl_(std::make_shared<detail::client_impl>(std::move(ex), std::move(settings))) {}

client::executor_type client::get_executor() const noexcept { return impl_->executor; }

std::size_t client::connections_opened() const noexcept {
  return impl_->connections_opened.load(std::memory_order_relaxed);
}


namespace detail {

void start_request(const std::shared_ptr<client_impl>& impl, request req, completion<response> handler) {
  spawn_op<response>(
      impl, [impl, req = std::move(req)]() mutable { return impl->run(std::move(req)); }, std::move(handler));
}

} // namespace detail
} // namespace kube
