// A unary request: throttle, one attempt on a pooled or new connection,
// and the retry policy's decision after each attempt.
#include "codec/parse_json.hpp"
#include "transport/client_impl.hpp"
#include "transport/retry_policy.hpp"

#include <kube/detail/gzip.hpp>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http.hpp>
#include <boost/url/encode.hpp>
#include <boost/url/rfc/unreserved_chars.hpp>

#include <algorithm>
#include <charconv>
#include <limits>

namespace kube::detail {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

client_impl::client_impl(asio::any_io_executor ex, transport_params s)
    : executor(ex),
      strand(make_strand_executor(ex)),
      settings(std::move(s)),
      ep(make_endpoint(settings)),
      metrics(settings.metrics ? settings.metrics->client() : nullptr),
      metrics_host(ep.host_is_ip && ep.host.find(':') != std::string::npos ? "[" + ep.host + "]:" + ep.port
                                                                           : ep.host + ":" + ep.port),
      tls(ep.tls ? std::make_unique<tls_source>(settings) : nullptr),
      auth(make_authenticator(settings, ex, metrics)),
      limiter(make_rate_limiter(settings.qps, settings.burst)) {}

request_meter::request_meter(const client_impl& c, const request& req)
    : m_(c.metrics.get()),
      host_(c.metrics_host),
      method_(to_string(req.method())) {
  if (m_ == nullptr) return;
  request_bytes_ = req.body().size();
  start_ = std::chrono::steady_clock::now();
  if (!req.raw_path().empty()) return;  // not a resource: the label stays empty
  resource_ = req.resource();
  if (!req.group().empty()) resource_ += "." + req.group();
}

request_meter::~request_meter() {
  if (m_ != nullptr) m_->on_request(method_, host_, resource_, std::chrono::steady_clock::now() - start_);
}

metrics::request_attempt request_meter::record(int code, std::size_t response_bytes) const {
  return {.method = method_,
          .host = host_,
          .resource = resource_,
          .code = code,
          .request_bytes = request_bytes_,
          .response_bytes = response_bytes};
}

void request_meter::attempt(int code, std::size_t response_bytes) {
  if (m_ != nullptr) m_->on_attempt(record(code, response_bytes));
}

void request_meter::retry(int code) {
  if (m_ != nullptr) m_->on_retry(record(code, 0));
}

void request_meter::throttled(std::chrono::steady_clock::duration waited) {
  if (m_ != nullptr) m_->on_rate_limiter_wait(method_, host_, waited);
}

http::request<http::string_body> client_impl::to_http(const request& r) const {
  static constexpr http::verb verbs[] = {http::verb::get,   http::verb::post,    http::verb::put,
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
    if (settings.on_warning)
      settings.on_warning(w);
    else
      settings.log.log(log_level::warning, "server warning: " + w);
  }
}

error_code client_impl::refusal(unsigned http_status, const std::string& body, const request& req,
                                diagnostics& diag) const {
  const auto ec = status_error(http_status, body, req, diag);
  if (ec == api_errc::unauthorized) diag.set_client_message(unauthorized(req.describe()));
  return ec;
}

std::string client_impl::unauthorized(std::string_view what) const {
  return std::string(what) + ": " + server_text() + " refused " + describe_credentials(settings) +
         " (HTTP 401 Unauthorized) - they may have expired, or belong to another cluster";
}

// One try: connection, headers, write, read. `facts` gets what the retry
// policy needs besides the result: whether the connection was a pooled one,
// how far the exchange got, the Retry-After header.
asio::awaitable<result<response>> client_impl::attempt(const request& req, attempt_outcome& facts,
                                                       body_consumer* consumer) {
  result<response> r;
  facts = {};
  std::unique_ptr<connection> conn;
  // A connection made before the TLS files were reloaded is closed, not
  // reused: the next requests present the new certificate.
  while (!idle_.empty() && !conn) {
    conn = std::move(idle_.back());
    idle_.pop_back();
    if (tls && conn->tls_generation != tls->generation()) conn.reset();
  }
  if (conn) {
    conn->reused = true;
    facts.reused = true;
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

  // Two clocks bound the exchange: the request's own deadline (`timeout`,
  // none by default) and the read timeout, re-armed for every read, so a
  // long list that keeps arriving is never cut while a server that went
  // silent is found.
  using steady = std::chrono::steady_clock;
  const auto deadline = settings.timeout.count() > 0 ? steady::now() + settings.timeout : steady::time_point::max();
  bool past_deadline = false;
  auto arm = [&] {
    auto t = deadline;
    if (settings.read_timeout.count() > 0) t = std::min(t, steady::now() + settings.read_timeout);
    past_deadline = t == deadline;
    if (t == steady::time_point::max()) {
      conn->tcp().expires_never();
    } else {
      conn->tcp().expires_at(t);
    }
  };
  http::response_parser<http::string_body> parser;
  // 0 in the settings: no limit.
  const std::size_t max_body =
      settings.max_response_body == 0 ? std::numeric_limits<std::size_t>::max() : settings.max_response_body;
  parser.body_limit(max_body);
  // With a consumer, a 2xx body leaves the parser's string as it arrives
  // (gzip decoded on the way); `streaming` is decided once the headers are in.
  enum class feed { undecided, whole, streaming } mode = consumer ? feed::undecided : feed::whole;
  std::optional<gzip_decoder> gz;
  std::string inflated;  // the last piece, gzip decoded
  std::string consumer_error;
  const auto consume = [&]() -> error_code {
    if (mode == feed::undecided) {
      const auto& h = parser.get();
      const auto enc = h[http::field::content_encoding];
      const bool gzip = beast::iequals(enc, "gzip");
      if (h.result_int() < 200 || h.result_int() >= 300 ||
          (!enc.empty() && !gzip && !beast::iequals(enc, "identity"))) {
        mode = feed::whole;  // a Status, or an encoding reported below
        return {};
      }
      mode = feed::streaming;
      if (gzip) gz.emplace(max_body);
      consumer->start(h[http::field::content_type]);
    }
    if (mode != feed::streaming) return {};
    auto& body = parser.get().body();
    try {
      std::string_view out = body;
      if (gz) {
        inflated.clear();
        std::string why;
        if (!gz->write(body, inflated, why)) {
          consumer_error = "the gzip-encoded response body does not decode: " + why;
          return gz->too_large() ? client_errc::response_too_large : client_errc::protocol_error;
        }
        out = inflated;
      }
      facts.streamed += out.size();
      if (!out.empty()) consumer->write(out);
      body.clear();
      if (parser.is_done()) {
        std::string why;
        if (gz && !gz->finish(why)) {
          consumer_error = "the gzip-encoded response body does not decode: " + why;
          return client_errc::protocol_error;
        }
        consumer->finish();
      }
    } catch (const std::exception& e) {
      consumer_error = e.what();
      return client_errc::decode_error;
    }
    return {};
  };
  std::size_t written = 0;
  auto io = [&]<class Stream>(Stream& s) -> asio::awaitable<error_code> {
    arm();
    auto [wec, wn] = co_await http::async_write(s, m, use_tuple);
    written = wn;
    if (wec) co_return wec;
    while (!parser.is_done()) {
      arm();
      auto [rec, rn] = co_await http::async_read_some(s, conn->buffer, parser, use_tuple);
      (void)rn;
      if (rec) co_return rec;
      if (mode != feed::whole && parser.is_header_done()) {
        if (auto cec = consume()) co_return cec;
      }
    }
    co_return error_code{};
  };
  const error_code ec = co_await conn->visit(io);
  conn->tcp().expires_never();

  if (ec && !consumer_error.empty()) {
    // The body did not decode as it arrived: the rest is not read, the
    // connection is dropped, and the request is not sent again.
    r.value.status = parser.get().result_int();
    r.value.content_type = std::string(parser.get()[http::field::content_type]);
    r.ec = ec;
    // A decode error's text is the consumer's; its caller names the request.
    r.diag.set_client_message(ec == client_errc::decode_error ? consumer_error
                                                              : req.describe() + ": " + consumer_error);
    co_return r;
  }
  if (ec) {
    facts.nothing_written = written == 0;
    facts.nothing_received = !parser.got_some();
    if (ec == http::error::body_limit) {
      r.ec = client_errc::response_too_large;
      r.diag.set_client_message(req.describe() + ": the response body is larger than the limit of " +
                                std::to_string(max_body) + " bytes (client_params::max_response_body)");
      // The connection is dropped with the rest of the body unread.
    } else if (ec == beast::error::timeout) {
      r.ec = client_errc::timeout;
      const std::string server = server_text();
      r.diag.set_client_message(
          req.describe() +
          (past_deadline ? ": " + server + " did not answer within " + std::to_string(settings.timeout.count()) +
                               " ms (client_params::timeout)"
                         : ": no data from " + server + " for " + std::to_string(settings.read_timeout.count()) +
                               " ms (client_params::read_timeout)") +
          " - is it overloaded, or is the network path to it stalled?");
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
  if (const auto ra = res[http::field::retry_after]; !ra.empty()) {
    int secs = 0;
    const auto* end = ra.data() + ra.size();
    if (auto [ptr, perr] = std::from_chars(ra.data(), end, secs); perr == std::errc{} && ptr == end && secs >= 0)
      facts.retry_after = secs;
  }
  const bool keep = res.keep_alive();
  r.value.body = std::move(res.body());
  if (const auto enc = res[http::field::content_encoding]; !enc.empty() && !beast::iequals(enc, "identity")) {
    r.value.content_encoding = std::string(enc);
  }
  if (mode == feed::streaming) {
    // Decoded as it arrived; the consumer has it all.
  } else if (const auto enc = res[http::field::content_encoding]; !enc.empty() && !beast::iequals(enc, "identity")) {
    if (!beast::iequals(enc, "gzip")) {
      r.ec = client_errc::protocol_error;
      r.diag.set_client_message(req.describe() + ": the response is encoded as \"" + std::string(enc.substr(0, 64)) +
                                "\", which was not asked for (only gzip is)");
      co_return r;
    }
    std::string plain;
    std::string why;
    if (!detail::gunzip(r.value.body, plain, why, max_body)) {
      r.ec = plain.size() > max_body ? client_errc::response_too_large : client_errc::protocol_error;
      r.diag.set_client_message(req.describe() + ": the gzip-encoded response body (" +
                                std::to_string(r.value.body.size()) + " bytes) does not decode: " + why);
      co_return r;
    }
    r.value.body = std::move(plain);
  }
  if (r.value.status < 200 || r.value.status >= 300) r.ec = refusal(r.value.status, r.value.body, req, r.diag);
  if (keep && idle_.size() < settings.max_idle_connections && (!tls || conn->tls_generation == tls->generation())) {
    conn->reused = false;
    idle_.push_back(std::move(conn));
  }
  co_return r;
}

std::optional<token_bucket> make_rate_limiter(double qps, int burst) {
  if (!(qps > 0)) return std::nullopt;
  return token_bucket({.qps = qps, .burst = std::max(burst, 1)});
}

asio::awaitable<error_code> client_impl::throttle(request_meter& meter) {
  if (!limiter) co_return error_code{};
  const auto wait = limiter->reserve(real_clock().now());
  if (wait.count() <= 0) {
    meter.throttled({});
    co_return error_code{};
  }
  const auto start = std::chrono::steady_clock::now();
  asio::steady_timer t(co_await asio::this_coro::executor, wait);
  auto [ec] = co_await t.async_wait(use_tuple);
  meter.throttled(std::chrono::steady_clock::now() - start);
  co_return ec;
}

asio::awaitable<result<response>> client_impl::run(request req, body_consumer* consumer) {
  if (!req.content_type().starts_with(codec::protobuf_media_type) && json_too_deep(req.body())) {
    // What the SDK could not read back is not sent (one limit both ways).
    result<response> r;
    r.ec = client_errc::encode_error;
    r.diag.set_client_message(req.describe() + ": the request body nests JSON objects and arrays deeper than " +
                              std::to_string(codec::max_json_depth) + " levels (kube::codec::max_json_depth)");
    co_return r;
  }
  request_meter meter(*this, req);
  retry_policy policy(req.method(), settings.max_retries);
  for (;;) {
    // Every try is throttled, as client-go throttles each retry.
    if (auto ec = co_await throttle(meter)) co_return result<response>{ec, {}, {}};
    attempt_outcome facts;
    auto r = co_await attempt(req, facts, consumer);
    const bool answered = r.value.status != 0;
    meter.attempt(r.value.status, consumer && r.value.body.empty() ? facts.streamed : r.value.body.size());
    facts.ec = answered ? error_code{} : r.ec;
    facts.http_status = r.value.status;
    const auto action = policy.next(facts);
    switch (action.what) {
    case retry_action::kind::done:
      if (answered && settings.log.enabled(log_level::trace)) {
        settings.log.log(log_level::trace,
                         req.describe() + ": HTTP " + std::to_string(r.value.status) + ", " +
                             (r.value.content_type.empty() ? "no content type" : r.value.content_type) + ", " +
                             std::to_string(consumer && r.value.body.empty() ? facts.streamed : r.value.body.size()) +
                             " bytes" + (consumer && r.value.body.empty() ? " (decoded as they arrived)" : ""));
      }
      if (action.not_replayed) {
        r.diag.set_client_message(r.diag.client_message() +
                                  " (the reused connection closed before any answer; not sent again, as the server "
                                  "may have applied it)");
      }
      co_return r;
    case retry_action::kind::give_up:
      r.ec = client_errc::too_many_retries;
      r.diag.set_client_message(req.describe() + ": gave up after " + std::to_string(policy.retries()) +
                                " retries (HTTP " + std::to_string(r.value.status) + " with Retry-After)");
      co_return r;
    case retry_action::kind::refresh_and_retry:
      if (!auth || !auth->invalidate()) co_return r;
      settings.log.log(log_level::info, req.describe() + ": 401, refreshing credentials");
      meter.retry(r.value.status);
      continue;
    case retry_action::kind::retry:
      meter.retry(r.value.status);
      break;
    }
    if (answered)
      settings.log.log(log_level::info, req.describe() + ": HTTP " + std::to_string(r.value.status) +
                                            ", retrying after " + std::to_string(facts.retry_after) + "s");
    else
      settings.log.log(log_level::debug, req.describe() + ": retrying on a new connection after " + r.ec.message());
    if (action.delay.count() > 0) {
      asio::steady_timer t(co_await asio::this_coro::executor, action.delay);
      auto [tec] = co_await t.async_wait(use_tuple);
      if (tec) co_return result<response>{tec, {}, {}};
    }
  }
}

}  // namespace kube::detail
