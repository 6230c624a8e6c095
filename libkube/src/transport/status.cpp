#include "codec/parse_json.hpp"
#include "codec/protobuf_meta.hpp"
#include "transport/status.hpp"

#include <boost/beast/http/field.hpp>
#include <boost/json.hpp>

namespace kube::detail {
namespace http = boost::beast::http;

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
  boost::json::value doc;
  if (body.starts_with(codec::protobuf_magic)) {
    // A client that asked for protobuf gets its Status as protobuf.
    try {
      const auto env = codec::open_envelope(body);
      if (env.kind == "Status") doc = status_from_protobuf(env.raw);
    } catch (const decode_error&) {  // NOLINT(bugprone-empty-catch): kept as an excerpt below
    }
  } else {
    doc = detail::parse_json(body, jec);
  }
  if (!jec && doc.is_object() && doc.as_object().contains("kind") && doc.as_object().at("kind") == "Status") {
    auto& st = doc.as_object();
    if (const auto* r = st.if_contains("reason"); r && r->is_string()) reason = r->as_string();
    if (const auto* c = st.if_contains("code"); c && c->is_int64() && c->as_int64() > 0)
      code = static_cast<int>(c->as_int64());
    diag.set_server_status(std::move(st));
  } else {
    // Not a Status (a proxy's page, a plain-text 404): keep a bounded excerpt.
    boost::json::object synthetic{
        {"kind", "Status"}, {"status", "Failure"}, {"code", http_status}, {"message", body.substr(0, 512)}};
    diag.set_server_status(std::move(synthetic));
  }
  diag.set_client_message(req.describe() + ": HTTP " + std::to_string(http_status));
  return api_errc_from_status(reason, code);
}

}  // namespace kube::detail
