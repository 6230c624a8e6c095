// Fuzz target: the value types parsed from strings on the wire: resource
// quantities ("100m", "1.5Gi", "1e3"), RFC 3339 times (metav1.Time and
// MicroTime) and int-or-string percentages ("25%"). Every input is tried as
// each. The checks:
//   - quantity: valid() agrees with the constructor and with the JSON
//     decoder; value() and milli_value() round up the same number (when
//     neither saturates, 1000 * (value - 1) < milli_value <= 1000 * value);
//     a quantity compares equal to itself;
//   - time: the JSON decoder accepts what timestamp::parse accepts; a parsed
//     time between years 0000 and 9999 reads back from its MicroTime text
//     exactly and from its Time text truncated to the second;
//   - percentage: scaled_value rounds down no higher than up, by at most
//     one, and a percentage from 0 to 100 of a total stays within it.

#include "fuzz_support.hpp"

#include <kube/codec/codec.hpp>
#include <kube/codec/value_types.hpp>

#include <boost/json/string.hpp>
#include <boost/json/value.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace {

constexpr const char* target = "value_types_fuzz";

template <class T>
bool json_decodes(std::string_view text) {
  const boost::json::value v = boost::json::string(text);
  T out;
  try {
    kube::codec::decode(v, out, kube::json_path{});
    return true;
  } catch (const kube::decode_error&) {
    return false;
  }
}

void check_quantity(std::string_view text) {
  const bool valid = kube::quantity::valid(text);
  fuzz::require(json_decodes<kube::quantity>(text) == valid, target, "the JSON decoder accepts valid quantities only");
  std::optional<kube::quantity> q;
  try {
    q.emplace(std::string(text));
  } catch (const std::invalid_argument&) {}
  fuzz::require(q.has_value() == valid, target, "the constructor accepts valid quantities only");
  if (!q) return;
  constexpr auto max = std::numeric_limits<std::int64_t>::max();
  constexpr auto min = std::numeric_limits<std::int64_t>::min();
  const std::int64_t v = q->value();
  const std::int64_t m = q->milli_value();
  if (v > -max / 2000 && v < max / 2000 && m != max && m != min) {
    fuzz::require(1000 * (v - 1) < m && m <= 1000 * v, target, "value() and milli_value() round up the same number");
  }
  (void)q->as_double();
  fuzz::require(q->compare(*q) == 0, target, "a quantity equals itself");
}

void check_time(std::string_view text) {
  const auto t = kube::timestamp::parse(text);
  fuzz::require(json_decodes<kube::timestamp>(text) == t.has_value(), target,
                "the JSON decoder accepts what timestamp::parse accepts");
  fuzz::require(json_decodes<kube::micro_timestamp>(text) == t.has_value(), target,
                "the MicroTime decoder accepts what timestamp::parse accepts");
  if (!t) return;
  using namespace std::chrono;
  const auto year = static_cast<int>(year_month_day(floor<days>(t->time())).year());
  if (year < 0 || year > 9999) return;
  const auto micro = kube::timestamp::parse(t->to_micro_string());
  fuzz::require(micro && *micro == *t, target, "a time reads back from its MicroTime text");
  const auto second = kube::timestamp::parse(t->to_string());
  fuzz::require(second && second->time() == floor<seconds>(t->time()), target,
                "a time reads back from its Time text, truncated to the second");
}

void check_percent(std::string_view text) {
  const kube::int_or_string p{std::string(text)};
  for (const std::int64_t total : {std::int64_t{0}, std::int64_t{1}, std::int64_t{7}, std::int64_t{100},
                                   std::int64_t{std::numeric_limits<std::int32_t>::max()}}) {
    const auto down = p.scaled_value(total, false);
    const auto up = p.scaled_value(total, true);
    fuzz::require(down.has_value() == up.has_value(), target, "rounding does not decide validity");
    if (!down) continue;
    fuzz::require(*down <= *up && *up - *down <= 1, target, "rounding down and up differ by at most one");
    const auto pct = std::string_view(text).substr(0, text.size() - 1);
    if (pct.size() <= 3 && std::stoi(std::string(pct)) <= 100) {
      fuzz::require(0 <= *down && *up <= total, target, "0% to 100% of a total stays within it");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = fuzz::text(data, size);
  check_quantity(text);
  check_time(text);
  check_percent(text);
  return 0;
}
