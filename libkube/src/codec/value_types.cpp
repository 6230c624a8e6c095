#include "codec/parse_json.hpp"
#include <kube/codec/value_types.hpp>

#include "codec/json_text_pool.hpp"

#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <array>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

namespace kube {

// ---- int_or_string ---------------------------------------------------------

std::string int_or_string::to_string() const { return is_string_ ? s_ : std::to_string(i_); }

std::optional<std::int64_t> int_or_string::scaled_value(std::int64_t total, bool round_up) const {
  if (is_int()) return i_;
  const auto& s = s_;
  if (s.size() < 2 || s.back() != '%') return std::nullopt;
  std::int64_t pct = 0;
  for (std::size_t i = 0; i + 1 < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9' || pct > std::numeric_limits<std::int64_t>::max() / 10 - 9) return std::nullopt;
    pct = pct * 10 + (s[i] - '0');
  }
  const long double v = static_cast<long double>(pct) * static_cast<long double>(total) / 100.0L;
  const long double r = round_up ? std::ceil(v) : std::floor(v);
  // A result beyond int64 has no value (converting it would be undefined).
  if (!(r >= -0x1p63L && r < 0x1p63L)) return std::nullopt;
  return static_cast<std::int64_t>(r);
}

// ---- quantity --------------------------------------------------------------

namespace {

__extension__ typedef __int128 int128;

// A quantity as sign * digits * 10^exp10 * 2^exp2, exactly (client-go keeps
// quantities exact too; floating point would make "1E-3" 1.0000000001m).
struct parsed_quantity {
  bool neg = false;
  int128 digits = 0;
  int exp10 = 0;
  int exp2 = 0;
};

bool parse_quantity(std::string_view s, parsed_quantity& out) {
  out = {};
  std::size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) out.neg = s[i++] == '-';
  bool any_digit = false;
  int kept = 0;
  auto digit = [&](char c, bool fraction) {
    any_digit = true;
    if (out.digits == 0 && c == '0') {
      if (fraction) --out.exp10;
      return;
    }
    if (kept < 36) {
      out.digits = out.digits * 10 + (c - '0');
      ++kept;
      if (fraction) --out.exp10;
    } else if (!fraction) {
      ++out.exp10;  // precision beyond 36 digits is dropped
    }
  };
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') digit(s[i++], false);
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') digit(s[i++], true);
  }
  if (!any_digit) return false;
  const std::string_view suf = s.substr(i);
  struct entry {
    std::string_view s;
    int e10;
    int e2;
  };
  static constexpr std::array<entry, 16> table{{
      {"", 0, 0},
      {"n", -9, 0},
      {"u", -6, 0},
      {"m", -3, 0},
      {"k", 3, 0},
      {"M", 6, 0},
      {"G", 9, 0},
      {"T", 12, 0},
      {"P", 15, 0},
      {"E", 18, 0},
      {"Ki", 0, 10},
      {"Mi", 0, 20},
      {"Gi", 0, 30},
      {"Ti", 0, 40},
      {"Pi", 0, 50},
      {"Ei", 0, 60},
  }};
  for (const auto& e : table) {
    if (suf == e.s) {
      out.exp10 += e.e10;
      out.exp2 += e.e2;
      return true;
    }
  }
  if (suf[0] != 'e' && suf[0] != 'E') return false;
  std::size_t j = 1;
  bool eneg = false;
  if (j < suf.size() && (suf[j] == '+' || suf[j] == '-')) eneg = suf[j++] == '-';
  if (j == suf.size()) return false;
  int e = 0;
  for (; j < suf.size(); ++j) {
    if (suf[j] < '0' || suf[j] > '9' || e > 100000) return false;
    e = e * 10 + (suf[j] - '0');
  }
  out.exp10 += eneg ? -e : e;
  return true;
}

// ceil(q * 10^scale), saturated to int64.
std::int64_t scaled_ceil(const parsed_quantity& q, int scale) {
  constexpr auto max64 = std::numeric_limits<std::int64_t>::max();
  const int128 limit = static_cast<int128>(max64) + 1;
  if (q.digits == 0) return 0;
  int128 v = q.digits;
  int e10 = q.exp10 + scale;
  bool inexact = false;
  for (int k = 0; k < q.exp2; ++k) {
    v *= 2;
    if (v > limit) return q.neg ? std::numeric_limits<std::int64_t>::min() : max64;
  }
  for (; e10 > 0; --e10) {
    v *= 10;
    if (v > limit) return q.neg ? std::numeric_limits<std::int64_t>::min() : max64;
  }
  for (; e10 < 0 && v != 0; ++e10) {
    if (v % 10 != 0) inexact = true;
    v /= 10;
  }
  if (e10 < 0) inexact = true;  // everything was divided away
  // ceil: towards +infinity
  if (!q.neg && inexact) ++v;
  if (v > static_cast<int128>(max64)) return q.neg ? std::numeric_limits<std::int64_t>::min() : max64;
  return q.neg ? -static_cast<std::int64_t>(v) : static_cast<std::int64_t>(v);
}

long double to_long_double(const parsed_quantity& q) {
  long double v = static_cast<long double>(q.digits) * std::pow(10.0L, q.exp10) * std::pow(2.0L, q.exp2);
  return q.neg ? -v : v;
}

}  // namespace

quantity::quantity(std::string text)
    : text_(std::move(text)) {
  parsed_quantity p;
  if (!parse_quantity(text_, p)) throw std::invalid_argument("\"" + text_ + "\" is not a quantity");
}

bool quantity::valid(std::string_view text) noexcept {
  parsed_quantity p;
  return parse_quantity(text, p);
}

std::int64_t quantity::milli_value() const {
  parsed_quantity p;
  parse_quantity(text_, p);
  return scaled_ceil(p, 3);
}

std::int64_t quantity::value() const {
  parsed_quantity p;
  parse_quantity(text_, p);
  return scaled_ceil(p, 0);
}

double quantity::as_double() const {
  parsed_quantity p;
  parse_quantity(text_, p);
  return static_cast<double>(to_long_double(p));
}

int quantity::compare(const quantity& other) const {
  parsed_quantity a;
  parsed_quantity b;
  parse_quantity(text_, a);
  parse_quantity(other.text_, b);
  const auto x = to_long_double(a);
  const auto y = to_long_double(b);
  return x < y ? -1 : (x > y ? 1 : 0);
}

// ---- timestamp -------------------------------------------------------------

timestamp timestamp::now() {
  return timestamp(std::chrono::time_point_cast<std::chrono::microseconds>(std::chrono::system_clock::now()));
}

std::optional<timestamp> timestamp::parse(std::string_view s) {
  auto num = [&](std::size_t pos, std::size_t n, int& out) {
    if (pos + n > s.size()) return false;
    out = 0;
    for (std::size_t i = pos; i < pos + n; ++i) {
      if (s[i] < '0' || s[i] > '9') return false;
      out = out * 10 + (s[i] - '0');
    }
    return true;
  };
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, se = 0;
  if (!num(0, 4, y) || s.size() < 20 || s[4] != '-' || !num(5, 2, mo) || s[7] != '-' || !num(8, 2, d) ||
      (s[10] != 'T' && s[10] != 't') || !num(11, 2, h) || s[13] != ':' || !num(14, 2, mi) || s[16] != ':' ||
      !num(17, 2, se)) {
    return std::nullopt;
  }
  std::size_t i = 19;
  std::int64_t micros = 0;
  if (i < s.size() && s[i] == '.') {
    ++i;
    int digits = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      if (digits < 6) micros = micros * 10 + (s[i] - '0');
      ++digits;
      ++i;
    }
    if (digits == 0) return std::nullopt;
    for (int k = digits; k < 6; ++k) micros *= 10;
  }
  int offset_min = 0;
  if (i < s.size() && (s[i] == 'Z' || s[i] == 'z')) {
    ++i;
  } else if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
    const int sign = s[i] == '-' ? -1 : 1;
    int oh = 0, om = 0;
    if (!num(i + 1, 2, oh) || i + 3 >= s.size() || s[i + 3] != ':' || !num(i + 4, 2, om)) return std::nullopt;
    offset_min = sign * (oh * 60 + om);
    i += 6;
  } else {
    return std::nullopt;
  }
  if (i != s.size()) return std::nullopt;
  using namespace std::chrono;
  const year_month_day ymd{year{y}, month{static_cast<unsigned>(mo)}, day{static_cast<unsigned>(d)}};
  if (!ymd.ok() || h > 23 || mi > 59 || se > 60) return std::nullopt;
  const auto t = sys_days(ymd) + hours(h) + minutes(mi) + seconds(se) + microseconds(micros) - minutes(offset_min);
  return timestamp(time_point_cast<microseconds>(t));
}

namespace {
std::string format_time(timestamp::time_point t, bool micro) {
  using namespace std::chrono;
  const auto days = floor<std::chrono::days>(t);
  const year_month_day ymd(days);
  const hh_mm_ss<microseconds> tod(t - days);
  std::array<char, 40> buf{};
  int n = 0;
  if (micro) {
    n = std::snprintf(buf.data(), buf.size(), "%04d-%02u-%02uT%02d:%02d:%02d.%06lldZ", static_cast<int>(ymd.year()),
                      static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                      static_cast<int>(tod.hours().count()), static_cast<int>(tod.minutes().count()),
                      static_cast<int>(tod.seconds().count()), static_cast<long long>(tod.subseconds().count()));
  } else {
    n = std::snprintf(buf.data(), buf.size(), "%04d-%02u-%02uT%02d:%02d:%02dZ", static_cast<int>(ymd.year()),
                      static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                      static_cast<int>(tod.hours().count()), static_cast<int>(tod.minutes().count()),
                      static_cast<int>(tod.seconds().count()));
  }
  return std::string(buf.data(), static_cast<std::size_t>(n));
}
}  // namespace

std::string timestamp::to_string() const { return format_time(t_, false); }
std::string timestamp::to_micro_string() const { return format_time(t_, true); }

// ---- raw_json --------------------------------------------------------------

raw_json::raw_json(const boost::json::value& v)
    : t_(detail::shared_json_text(boost::json::serialize(v))) {}

boost::json::value raw_json::value() const {
  if (!t_) return nullptr;
  error_code ec;  // the text came from a parsed value: it parses, within the same limit
  return detail::parse_json(*t_, ec);
}

bool raw_json::is_null() const noexcept { return !t_ || *t_ == "null"; }

void raw_json::set(const boost::json::value& v) { t_ = detail::shared_json_text(boost::json::serialize(v)); }

raw_json raw_json::parse(std::string_view json) {
  error_code ec;
  auto v = detail::parse_json(json, ec);
  if (ec) throw std::invalid_argument("raw_json: not JSON: " + ec.message());
  return raw_json(v);
}

std::string raw_json::dump() const { return t_ ? *t_ : std::string("null"); }

bool operator==(const raw_json& a, const raw_json& b) {
  if (a.text() == b.text()) return true;
  return a.value() == b.value();  // the same JSON may be spelled differently
}

// ---- unknown_fields --------------------------------------------------------

struct unknown_fields::rep {
  std::atomic<std::size_t> refs{1};
  boost::json::object members;
  std::string protobuf;  // whole fields (tag and value), in the order read
};

void unknown_fields::add_ref(rep* r) noexcept { r->refs.fetch_add(1, std::memory_order_relaxed); }

void unknown_fields::release(rep* r) noexcept {
  if (r->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete r;
}

const boost::json::object* unknown_fields::get() const noexcept { return r_ ? &r_->members : nullptr; }

bool unknown_fields::empty() const noexcept { return !r_ || (r_->members.empty() && r_->protobuf.empty()); }
std::size_t unknown_fields::size() const noexcept { return r_ ? r_->members.size() : 0; }

const boost::json::value* unknown_fields::find(std::string_view key) const noexcept {
  return r_ ? r_->members.if_contains(key) : nullptr;
}

namespace {
// The members of `r_`, owned by this holder alone (copied if shared).
template <class Rep>
Rep* unshare(Rep* r, void (*release)(Rep*) noexcept) {
  if (!r) return new Rep;
  if (r->refs.load(std::memory_order_acquire) == 1) return r;
  auto own = std::make_unique<Rep>();
  own->members = r->members;
  own->protobuf = r->protobuf;
  release(r);
  return own.release();
}
}  // namespace

void unknown_fields::set(std::string_view key, boost::json::value v) {
  r_ = unshare(r_, &release);
  r_->members[key] = std::move(v);
}

bool unknown_fields::erase(std::string_view key) {
  if (!r_ || !r_->members.contains(key)) return false;
  r_ = unshare(r_, &release);
  r_->members.erase(key);
  return true;
}

std::string_view unknown_fields::protobuf() const noexcept {
  return r_ ? std::string_view(r_->protobuf) : std::string_view();
}

void unknown_fields::append_protobuf(std::string_view fields) {
  if (fields.empty()) return;
  r_ = unshare(r_, &release);
  r_->protobuf.append(fields);
}

bool operator==(const unknown_fields& a, const unknown_fields& b) noexcept {
  if (a.empty() || b.empty()) return a.empty() == b.empty();
  return a.r_->members == b.r_->members && a.r_->protobuf == b.r_->protobuf;
}

}  // namespace kube
