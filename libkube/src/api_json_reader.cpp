#include <kube/api/codec_impl.hpp>
#include <kube/api/json_reader.hpp>

#include "json_grammar.hpp"
#include "json_text_pool.hpp"

#include <boost/json/monotonic_resource.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/parse_options.hpp>

#include <limits>

namespace kube::codec {
namespace json = boost::json;

namespace {

constexpr bool is_ws(char c) noexcept { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// Bytes a plain string may hold: printable ASCII except '"' and '\\'.
struct plain_table {
  bool ok[256] = {};
  constexpr plain_table() {
    for (int c = 0x20; c < 0x80; ++c) ok[c] = c != '"' && c != '\\';
  }
};
constexpr plain_table plain{};

} // namespace

void json_reader::syntax(std::string_view what) const {
  throw decode_error(".", "invalid JSON at byte " + std::to_string(offset()) + ": " + std::string(what));
}

void json_reader::skip_ws() noexcept {
  while (p_ != end_ && is_ws(*p_)) ++p_;
}

bool json_reader::delimiter(const char* at) const noexcept {
  return at == end_ || *at == ',' || *at == '}' || *at == ']' || is_ws(*at);
}

// A string token at `at` ('"' first) with no escape and only printable
// ASCII: its contents and the byte after the closing quote.
bool json_reader::plain_string(const char* at, std::string_view& s, const char*& after) const noexcept {
  const char* q = at + 1;
  while (q != end_ && plain.ok[static_cast<unsigned char>(*q)]) ++q;
  if (q == end_ || *q != '"') return false;
  s = std::string_view(at + 1, static_cast<std::size_t>(q - at - 1));
  after = q + 1;
  return true;
}

// An integer token at `at` (JSON grammar: no leading zeros, no fraction or
// exponent) of at most 18 digits, so it fits an int64 without checks.
bool json_reader::plain_integer(const char* at, std::int64_t& v, const char*& after) const noexcept {
  const char* q = at;
  bool neg = false;
  if (q != end_ && *q == '-') {
    neg = true;
    ++q;
  }
  const char* digits = q;
  std::int64_t n = 0;
  while (q != end_ && *q >= '0' && *q <= '9') {
    n = n * 10 + (*q - '0');
    ++q;
    if (q - digits > 18) return false;
  }
  if (q == digits) return false;
  if (*digits == '0' && q - digits > 1) return false;
  if (!delimiter(q)) return false;  // a fraction, an exponent, or junk: boost::json decides
  v = neg ? -n : n;
  after = q;
  return true;
}

void json_reader::enter() {
  if (++depth_ > max_depth) syntax("nested too deeply");
}

bool json_reader::begin_object() {
  skip_ws();
  if (p_ == end_ || *p_ != '{') return false;
  ++p_;
  enter();
  first_ = true;
  return true;
}

bool json_reader::next_key(std::string_view& key) {
  skip_ws();
  if (p_ == end_) syntax("unexpected end inside an object");
  if (*p_ == '}') {
    ++p_;
    --depth_;
    first_ = false;
    return false;
  }
  if (!first_) {
    if (*p_ != ',') syntax("expected ',' or '}'");
    ++p_;
    skip_ws();
    if (p_ == end_ || *p_ == '}') syntax("a trailing comma");
  }
  first_ = false;
  if (*p_ != '"') syntax("expected a member name");
  const char* after = nullptr;
  if (!plain_string(p_, key, after)) {
    key = key_slow();
  } else {
    p_ = after;
  }
  skip_ws();
  if (p_ == end_ || *p_ != ':') syntax("expected ':'");
  ++p_;
  return true;
}

// A key with escapes or non-ASCII bytes: boost::json validates and unescapes it.
std::string_view json_reader::key_slow() {
  const auto text = skip();
  boost::system::error_code ec;
  auto v = json::parse(text, ec);
  if (ec || !v.is_string()) syntax("an invalid member name");
  keys_.emplace_back(v.as_string().data(), v.as_string().size());
  return keys_.back();
}

bool json_reader::begin_array() {
  skip_ws();
  if (p_ == end_ || *p_ != '[') return false;
  ++p_;
  enter();
  first_ = true;
  return true;
}

bool json_reader::next_element() {
  skip_ws();
  if (p_ == end_) syntax("unexpected end inside an array");
  if (*p_ == ']') {
    ++p_;
    --depth_;
    first_ = false;
    return false;
  }
  if (!first_) {
    if (*p_ != ',') syntax("expected ',' or ']'");
    ++p_;
    skip_ws();
    if (p_ == end_ || *p_ == ']') syntax("a trailing comma");
  }
  first_ = false;
  return true;
}

bool json_reader::try_null() {
  skip_ws();
  if (end_ - p_ >= 4 && std::string_view(p_, 4) == "null" && delimiter(p_ + 4)) {
    p_ += 4;
    return true;
  }
  return false;
}

std::string_view json_reader::skip() {
  skip_ws();
  const char* start = p_;
  if (p_ == end_) syntax("expected a value");
  auto string_token = [this] {  // at '"'; stops after the closing quote
    ++p_;
    while (p_ != end_ && *p_ != '"') {
      if (*p_ == '\\' && p_ + 1 != end_) ++p_;
      ++p_;
    }
    if (p_ == end_) syntax("an unterminated string");
    ++p_;
  };
  if (*p_ == '"') {
    string_token();
  } else if (*p_ == '{' || *p_ == '[') {
    std::size_t depth = 0;
    do {
      const char c = *p_;
      if (c == '"') {
        string_token();
        continue;
      }
      if (c == '{' || c == '[') {
        if (++depth > max_depth) syntax("nested too deeply");
      } else if (c == '}' || c == ']') {
        --depth;
      }
      ++p_;
    } while (depth != 0 && p_ != end_);
    if (depth != 0) syntax("unexpected end inside a value");
  } else {
    while (!delimiter(p_) && *p_ != ':') ++p_;
    if (p_ == start) syntax("expected a value");
  }
  return {start, static_cast<std::size_t>(p_ - start)};
}

json::value json_reader::value(json::storage_ptr sp) {
  skip_ws();
  if (p_ != end_) {
    const char* after = nullptr;
    if (*p_ == '"') {
      std::string_view s;
      if (plain_string(p_, s, after)) {
        p_ = after;
        return json::value(json::string_view(s.data(), s.size()), std::move(sp));
      }
    } else if (*p_ == '-' || (*p_ >= '0' && *p_ <= '9')) {
      std::int64_t i = 0;
      if (plain_integer(p_, i, after)) {
        p_ = after;
        return json::value(i, std::move(sp));
      }
    } else if (end_ - p_ >= 4 && std::string_view(p_, 4) == "true" && delimiter(p_ + 4)) {
      p_ += 4;
      return json::value(true, std::move(sp));
    } else if (end_ - p_ >= 5 && std::string_view(p_, 5) == "false" && delimiter(p_ + 5)) {
      p_ += 5;
      return json::value(false, std::move(sp));
    } else if (try_null()) {
      return json::value(nullptr, std::move(sp));
    }
  }
  const auto text = skip();
  boost::system::error_code ec;
  json::parse_options opt;
  opt.max_depth = max_depth;
  auto v = json::parse(text, ec, std::move(sp), opt);
  if (ec) {
    p_ = text.data();  // report where the value starts
    syntax(ec.message());
  }
  return v;
}

void json_reader::read(std::string& out, const json_path& at) {
  skip_ws();
  std::string_view s;
  const char* after = nullptr;
  if (p_ != end_ && *p_ == '"' && plain_string(p_, s, after)) {
    out.assign(s.data(), s.size());
    p_ = after;
    return;
  }
  const auto v = value();
  decode(v, out, at);
}

void json_reader::read(bool& out, const json_path& at) {
  const auto v = value();  // no parser for literals: value() takes them itself
  decode(v, out, at);
}

void json_reader::read(std::int32_t& out, const json_path& at) {
  skip_ws();
  std::int64_t i = 0;
  const char* after = nullptr;
  if (p_ != end_ && plain_integer(p_, i, after) && i >= std::numeric_limits<std::int32_t>::min() &&
      i <= std::numeric_limits<std::int32_t>::max()) {
    out = static_cast<std::int32_t>(i);
    p_ = after;
    return;
  }
  const auto v = value();
  decode(v, out, at);
}

void json_reader::read(std::int64_t& out, const json_path& at) {
  skip_ws();
  std::int64_t i = 0;
  const char* after = nullptr;
  if (p_ != end_ && plain_integer(p_, i, after)) {
    out = i;
    p_ = after;
    return;
  }
  const auto v = value();
  decode(v, out, at);
}

void json_reader::read(raw_json& out, const json_path& at) {
  const char* start = p_;
  const auto text = skip();
  // Compact already? Outside strings only structure and literals; inside
  // strings printable ASCII and the two escapes boost::json writes as given.
  bool compact = true;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size() && compact; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (in_string) {
      if (c == '\\') {
        const char e = i + 1 < text.size() ? text[i + 1] : '\0';
        compact = e == '"' || e == '\\';
        ++i;
      } else if (c == '"') {
        in_string = false;
      } else {
        compact = c >= 0x20 && c < 0x7f;
      }
    } else if (c == '"') {
      in_string = true;
    } else {
      compact = c == '{' || c == '}' || c == '[' || c == ']' || c == ',' || c == ':' || (c >= 'a' && c <= 'z');
    }
  }
  if (compact) {
    boost::json::basic_parser<detail::grammar_only_handler> check(json::parse_options{});
    json::error_code ec;
    const auto n = check.write_some(false, text.data(), text.size(), ec);
    compact = !ec && n == text.size() && check.done();
  }
  if (compact) {
    out.t_ = kube::detail::shared_json_text(text);
    return;
  }
  p_ = start;
  const auto v = value();
  decode(v, out, at);
}

void json_reader::finish() {
  skip_ws();
  if (p_ != end_) syntax("unexpected text after the value");
}

void expect_object(json_reader& in, const json_path& at) {
  if (!in.begin_object()) fail_type(in.value(), at, "an object");
}

void read_via_dom(json_reader& in, decode_fn fn, void* out, const json_path& at) {
  json::monotonic_resource mr;
  const auto v = in.value(&mr);
  fn(v, out, at);
}

void read_text(std::string_view text, read_fn fn, void* out) {
  json_reader in(text);
  const json_path root{};
  fn(in, out, root);
  in.finish();
}

void decode_text(std::string_view text, read_fn read, decode_fn fn, void* out) {
  try {
    read_text(text, read, out);
    return;
  } catch (const std::exception&) {  // NOLINT(bugprone-empty-catch): the DOM path reports it
  }
  decode_text(text, fn, out);
}

} // namespace kube::codec
