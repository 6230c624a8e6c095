#include "codec/base64.hpp"
#include "codec/json_dom_parser.hpp"
#include "codec/parse_json.hpp"

#include <kube/codec/codec_impl.hpp>
#include <kube/codec/proto_impl.hpp>
#include <kube/codec/json_reader.hpp>

#include <boost/json/monotonic_resource.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <cmath>
#include <limits>
#include <vector>

namespace kube {

std::string json_path::to_string() const {
  std::vector<const json_path*> chain;
  for (const auto* p = this; p != nullptr; p = p->parent) chain.push_back(p);
  std::string out;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    const auto* p = *it;
    if (p->parent == nullptr) continue;  // the root
    if (p->index != no_index) {
      out += '[' + std::to_string(p->index) + ']';
    } else {
      out += '.';
      out.append(p->member);
    }
  }
  return out.empty() ? std::string(".") : out;
}

decode_error::decode_error(std::string path, const std::string& problem)
    : std::runtime_error(path + ": " + problem),
      path_(std::move(path)) {}

namespace codec {
namespace json = boost::json;

void fail(const json_path& at, const std::string& problem) { throw decode_error(at.to_string(), problem); }

void fail_type(const json::value& v, const json_path& at, std::string_view what) {
  std::string got;
  switch (v.kind()) {
  case json::kind::null:
    got = "null";
    break;
  case json::kind::bool_:
    got = "a boolean";
    break;
  case json::kind::int64:
  case json::kind::uint64:
    got = "an integer";
    break;
  case json::kind::double_:
    got = "a number";
    break;
  case json::kind::string:
    got = "a string";
    break;
  case json::kind::array:
    got = "an array";
    break;
  case json::kind::object:
    got = "an object";
    break;
  }
  fail(at, "expected " + std::string(what) + ", got " + got);
}

void decode(const json::value& in, std::string& out, const json_path& at) {
  const auto* s = in.if_string();
  if (!s) fail_type(in, at, "a string");
  out.assign(s->data(), s->size());
}

void decode(const json::value& in, bool& out, const json_path& at) {
  const auto* b = in.if_bool();
  if (!b) fail_type(in, at, "a boolean");
  out = *b;
}

namespace {
std::int64_t integer(const json::value& in, const json_path& at, std::int64_t lo, std::int64_t hi,
                     std::string_view what) {
  std::int64_t v = 0;
  if (const auto* i = in.if_int64()) {
    v = *i;
  } else if (const auto* u = in.if_uint64()) {
    if (*u > static_cast<std::uint64_t>(hi)) fail(at, "integer out of range for " + std::string(what));
    v = static_cast<std::int64_t>(*u);
  } else if (const auto* d = in.if_double()) {
    // Go's encoding/json accepts 1.0 for an int only if it is integral; so do we.
    if (std::trunc(*d) != *d || *d < static_cast<double>(lo) || *d > static_cast<double>(hi)) {
      fail_type(in, at, what);
    }
    v = static_cast<std::int64_t>(*d);
  } else {
    fail_type(in, at, what);
  }
  if (v < lo || v > hi) fail(at, "integer out of range for " + std::string(what));
  return v;
}
}  // namespace

void decode(const json::value& in, std::int32_t& out, const json_path& at) {
  out = static_cast<std::int32_t>(integer(in, at, std::numeric_limits<std::int32_t>::min(),
                                          std::numeric_limits<std::int32_t>::max(), "a 32-bit integer"));
}

void decode(const json::value& in, std::int64_t& out, const json_path& at) {
  out =
      integer(in, at, std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max(), "an integer");
}

void decode(const json::value& in, double& out, const json_path& at) {
  if (const auto* d = in.if_double()) {
    out = *d;
  } else if (const auto* i = in.if_int64()) {
    out = static_cast<double>(*i);
  } else if (const auto* u = in.if_uint64()) {
    out = static_cast<double>(*u);
  } else {
    fail_type(in, at, "a number");
  }
}

void decode(const json::value& in, int_or_string& out, const json_path& at) {
  if (const auto* s = in.if_string()) {
    out = int_or_string(std::string(s->data(), s->size()));
  } else if (in.is_int64() || in.is_uint64()) {
    std::int64_t v = 0;
    decode(in, v, at);
    out = int_or_string(v);
  } else {
    fail_type(in, at, "an integer or a string");
  }
}

void decode(const json::value& in, quantity& out, const json_path& at) {
  std::string text;
  if (const auto* s = in.if_string()) {
    text.assign(s->data(), s->size());
  } else if (in.is_int64() || in.is_uint64() || in.is_double()) {
    text = json::serialize(in);
  } else {
    fail_type(in, at, "a quantity (string)");
  }
  out = to_quantity(std::move(text), at);
}

quantity to_quantity(std::string text, const json_path& at) {
  const auto size = text.size();
  try {
    return quantity(std::move(text));
  } catch (const std::invalid_argument&) {
    fail(at, "not a valid quantity (" + std::to_string(size) + " bytes)");
  }
}

void decode(const json::value& in, timestamp& out, const json_path& at) {
  const auto* s = in.if_string();
  if (!s) fail_type(in, at, "an RFC 3339 time (string)");
  auto t = timestamp::parse(std::string_view(s->data(), s->size()));
  if (!t) fail(at, "not an RFC 3339 time (" + std::to_string(s->size()) + " bytes)");
  out = *t;
}

void decode(const json::value& in, micro_timestamp& out, const json_path& at) {
  timestamp t;
  decode(in, t, at);
  out = micro_timestamp(t);
}

void decode(const json::value& in, bytes& out, const json_path& at) {
  const auto* s = in.if_string();
  if (!s) fail_type(in, at, "base64 data (string)");
  std::size_t bad = 0;
  auto b = detail::base64_decode(std::string_view(s->data(), s->size()), bad);
  if (!b) fail(at, "not valid base64 (at byte " + std::to_string(bad) + ")");
  out = bytes(std::move(*b));
}

void decode(const json::value& in, raw_json& out, const json_path&) { out = raw_json(in); }  // kept as text

void encode(const std::string& in, json::value& out) { out = json::string(in); }
void encode(bool in, json::value& out) { out = in; }
void encode(std::int32_t in, json::value& out) { out = static_cast<std::int64_t>(in); }
void encode(std::int64_t in, json::value& out) { out = in; }
// Go's encoding/json writes an integral float64 below 1e21 without a
// fraction or exponent ("minimum": 0); so do we, so that values round-trip.
void encode(double in, json::value& out) {
  if (std::trunc(in) == in && std::fabs(in) < 1e15) {
    out = static_cast<std::int64_t>(in);
  } else {
    out = in;
  }
}
void encode(const int_or_string& in, json::value& out) {
  if (in.is_int()) {
    out = in.int_value();
  } else {
    out = json::string(in.string_value());
  }
}
void encode(const quantity& in, json::value& out) { out = json::string(in.text()); }
void encode(const timestamp& in, json::value& out) { out = json::string(in.to_string()); }
void encode(const micro_timestamp& in, json::value& out) { out = json::string(in.to_micro_string()); }
void encode(const bytes& in, json::value& out) { out = json::string(detail::base64_encode(in.str())); }
void encode(const raw_json& in, json::value& out) { out = in.value(); }  // parsed again to embed it

void decode_text(std::string_view text, decode_fn fn, void* out) {
  boost::system::error_code ec;
  json::monotonic_resource mr;
  auto v = detail::parse_json(text, ec, &mr);
  if (ec) throw decode_error(".", "not JSON: " + ec.message());
  const json_path root{};
  fn(v, out, root);
}

std::string encode_text(encode_fn fn, const void* in) {
  json::value v;
  fn(in, v);
  return json::serialize(v);
}

const json::object& expect_object(const json::value& in, const json_path& at) {
  const auto* o = in.if_object();
  if (!o) fail_type(in, at, "an object");
  return *o;
}

// Copies use the default memory resource: the decoded document may live in a
// short-lived arena.
void keep_unknown(unknown_fields& u, std::string_view key, const json::value& v) {
  u.set(key, json::value(v, json::storage_ptr()));
}

void put_unknown(json::object& o, const unknown_fields& u) {
  if (const auto* extra = u.get()) {
    for (const auto& kv : *extra) o[kv.key()] = kv.value();
  }
}

}  // namespace codec
namespace detail {

// ---- one nesting limit -----------------------------------------------------

std::string object_named(const boost::json::value& object) {
  const auto* md = object.is_object() ? object.as_object().if_contains("metadata") : nullptr;
  if (!md || !md->is_object()) return {};
  std::string out;
  if (const auto* ns = md->as_object().if_contains("namespace"); ns && ns->is_string())
    out = std::string(ns->as_string()) + "/";
  if (const auto* n = md->as_object().if_contains("name"); n && n->is_string()) out += n->as_string();
  return out.empty() ? out : " (object \"" + out + "\")";
}

bool json_has_non_finite(const boost::json::value& root) {
  // Iterative: the nesting may be as deep as codec::max_json_depth.
  std::vector<const boost::json::value*> todo{&root};
  while (!todo.empty()) {
    const auto* v = todo.back();
    todo.pop_back();
    if (const auto* d = v->if_double()) {
      if (!std::isfinite(*d)) return true;
    } else if (const auto* a = v->if_array()) {
      for (const auto& e : *a) todo.push_back(&e);
    } else if (const auto* o = v->if_object()) {
      for (const auto& kv : *o) todo.push_back(&kv.value());
    }
  }
  return false;
}

boost::json::value parse_json(std::string_view text, error_code& ec, boost::json::storage_ptr sp,
                              std::size_t max_depth) {
  unsigned char temp[BOOST_JSON_STACK_BUFFER_SIZE];
  json_dom_parser p(max_depth, temp, sizeof temp);
  p.reset(std::move(sp));
  p.write(text.data(), text.size(), ec);
  if (ec) return {};
  auto v = p.release();
  if (json_has_non_finite(v)) {
    ec = boost::json::error::exponent_overflow;
    return {};
  }
  return v;
}

bool json_too_deep(std::string_view text) noexcept {
  std::size_t depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > codec::max_json_depth) return true;
    } else if ((c == '}' || c == ']') && depth > 0) {
      --depth;
    }
  }
  return false;
}

}  // namespace detail
}  // namespace kube
