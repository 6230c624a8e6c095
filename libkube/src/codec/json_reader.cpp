#include <kube/codec/codec_impl.hpp>
#include <kube/codec/json_reader.hpp>

#include "codec/json_text_pool.hpp"
#include "codec/parse_json.hpp"

#include <boost/json/monotonic_resource.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/parse_options.hpp>

#include <algorithm>
#include <cstring>
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

// Word-at-a-time scanning (eight bytes per step) for the long runs of plain
// bytes inside strings. Each mask has the high bit of a byte set for the
// bytes it looks for; its lowest set bit is exact (a borrow only ever marks
// bytes above a true match), which is all the scanners use.
constexpr std::uint64_t ones = 0x0101010101010101ULL;
constexpr std::uint64_t highs = 0x8080808080808080ULL;

inline std::uint64_t load8(const char* p) noexcept {
  std::uint64_t w;
  std::memcpy(&w, p, sizeof w);
  return w;
}
inline std::uint64_t zero_bytes(std::uint64_t w) noexcept { return (w - ones) & ~w & highs; }
inline std::uint64_t bytes_equal(std::uint64_t w, unsigned char c) noexcept { return zero_bytes(w ^ (ones * c)); }
// '"', '\\', a control byte (< 0x20) or a non-ASCII byte (>= 0x80).
inline std::uint64_t not_plain(std::uint64_t w) noexcept {
  return bytes_equal(w, '"') | bytes_equal(w, '\\') | ((w - ones * 0x20) & ~w & highs) | (w & highs);
}
inline std::size_t first_marked(std::uint64_t mask) noexcept {
  return static_cast<std::size_t>(__builtin_ctzll(mask)) / 8;
}

// The first byte in [q, end) that is not plain (see plain_table), or end.
inline const char* skip_plain(const char* q, const char* end) noexcept {
  while (end - q >= 8) {
    if (const std::uint64_t m = not_plain(load8(q))) return q + first_marked(m);
    q += 8;
  }
  while (q != end && plain.ok[static_cast<unsigned char>(*q)]) ++q;
  return q;
}

// The first '"' or '\\' in [q, end), or end.
inline const char* find_quote_or_backslash(const char* q, const char* end) noexcept {
  while (end - q >= 8) {
    const std::uint64_t w = load8(q);
    if (const std::uint64_t m = bytes_equal(w, '"') | bytes_equal(w, '\\')) return q + first_marked(m);
    q += 8;
  }
  while (q != end && *q != '"' && *q != '\\') ++q;
  return q;
}

// Whether the value at `p` is JSON in the form raw_json keeps as text, and
// if so where it ends: no whitespace, no numbers, strings of printable ASCII
// whose only escapes are \" and \\ (what boost::json's serializer writes
// unchanged). One pass that checks the grammar too. False for anything else,
// valid or not; the caller then takes the DOM path, which reports bad JSON.
bool compact_json_value(const char* p, const char* end, const char*& after, std::size_t nesting_left) noexcept {
  constexpr std::size_t max_nesting = 128;  // deeper: the DOM path decides
  const std::size_t limit = std::min(max_nesting, nesting_left);
  char closers[max_nesting];
  std::size_t depth = 0;
  auto string_token = [&]() -> bool {  // at '"'
    ++p;
    for (;;) {
      p = skip_plain(p, end);
      if (p == end) return false;
      if (*p == '"') {
        ++p;
        return true;
      }
      if (*p != '\\' || end - p < 2 || (p[1] != '"' && p[1] != '\\')) return false;
      p += 2;
    }
  };
  auto member_key = [&]() -> bool {  // a member's name and its ':'
    if (p == end || *p != '"' || !string_token() || p == end || *p != ':') return false;
    ++p;
    return true;
  };
  auto literal = [&](std::string_view word) -> bool {
    if (static_cast<std::size_t>(end - p) < word.size() || std::string_view(p, word.size()) != word) return false;
    p += word.size();
    return true;
  };
  // Each turn reads one value, then the separators and closers after it.
  for (;;) {
    if (p == end) return false;
    switch (*p) {
    case '{':
    case '[': {
      if (depth == limit) return false;
      const char closer = *p == '{' ? '}' : ']';
      ++p;
      if (p != end && *p == closer) {  // empty
        ++p;
        break;
      }
      closers[depth++] = closer;
      if (closer == '}' && !member_key()) return false;
      continue;  // the first member's or element's value
    }
    case '"':
      if (!string_token()) return false;
      break;
    case 't':
      if (!literal("true")) return false;
      break;
    case 'f':
      if (!literal("false")) return false;
      break;
    case 'n':
      if (!literal("null")) return false;
      break;
    default:
      return false;
    }
    // After a complete value: close containers, or go on to the next member.
    for (;;) {
      if (depth == 0) {
        after = p;
        return true;
      }
      if (p == end) return false;
      if (*p == closers[depth - 1]) {
        ++p;
        --depth;
        continue;
      }
      if (*p != ',') return false;
      ++p;
      if (closers[depth - 1] == '}' && !member_key()) return false;
      break;
    }
  }
}

}  // namespace

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
  const char* q = skip_plain(at + 1, end_);
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
    if (q - digits == 18) return false;  // a 19th digit could overflow: boost::json decides
    n = n * 10 + (*q - '0');
    ++q;
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
    for (;;) {
      p_ = find_quote_or_backslash(p_, end_);
      if (p_ == end_) syntax("an unterminated string");
      if (*p_ == '"') break;
      p_ += end_ - p_ >= 2 ? 2 : 1;  // an escape: skip the escaped byte
    }
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
  // The limit is the whole text's, not this value's.
  auto v = kube::detail::parse_json(text, ec, std::move(sp), max_depth - depth_);
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
  skip_ws();
  const char* after = nullptr;
  if (compact_json_value(p_, end_, after, max_depth - depth_)) {
    out.t_ = kube::detail::shared_json_text(std::string_view(p_, static_cast<std::size_t>(after - p_)));
    p_ = after;
    return;
  }
  const auto v = value();
  decode(v, out, at);
}

void json_reader::read_whole(std::string_view text, raw_json& out, const json_path& at) {
  if (auto known = kube::detail::find_json_text(text)) {
    out.t_ = std::move(known);
    return;
  }
  try {
    json_reader r(text);
    r.read(out, at);
    r.finish();
  } catch (const decode_error& e) {
    if (e.path() != ".") throw;
    // A syntax error in the text: named by the field that carried it.
    std::string_view problem = e.what();
    if (problem.starts_with(".: ")) problem.remove_prefix(3);
    fail(at, std::string(problem));
  }
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

}  // namespace kube::codec
