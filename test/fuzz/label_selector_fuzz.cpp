// Fuzz target: label selectors (kube::informer::label_selector, the parser
// listers and informers use for `labelSelector`). The checks:
//   - parsing fails only with std::invalid_argument (any other exception
//     escapes and is reported as a crash);
//   - a parsed selector, printed back in the canonical syntax, parses to the
//     same requirements;
//   - a selector matches labels built to satisfy it: every key of an `=`,
//     `in` or exists requirement set to its first value, when no other
//     requirement names the key;
//   - matches() on labels taken from the selector's own keys and values does
//     not crash, and from_map takes those labels (the parser accepted their
//     keys and values) and matches them.

#include "fuzz_support.hpp"

#include <kube/informer/label_selector.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace {

constexpr const char* target = "label_selector_fuzz";
using selector = kube::informer::label_selector;

std::optional<selector> parse(std::string_view text) {
  try {
    return selector::parse(text);
  } catch (const std::invalid_argument&) {
    return std::nullopt;
  }
}

std::string print(const selector& s) {
  std::string out;
  for (const auto& r : s.requirements()) {
    if (!out.empty()) out += ',';
    auto list = [&] {
      std::string l = "(";
      bool first = true;
      for (const auto& v : r.values) {  // a value may be empty: "a in (,x)"
        if (!first) l += ',';
        first = false;
        l += v;
      }
      return l + ")";
    };
    switch (r.operation) {
    case selector::op::equals:
      out += r.key + "=" + *r.values.begin();
      break;
    case selector::op::not_equals:
      out += r.key + "!=" + *r.values.begin();
      break;
    case selector::op::in:
      out += r.key + " in " + list();
      break;
    case selector::op::not_in:
      out += r.key + " notin " + list();
      break;
    case selector::op::exists:
      out += r.key;
      break;
    case selector::op::does_not_exist:
      out += "!" + r.key;
      break;
    case selector::op::greater_than:
      out += r.key + ">" + *r.values.begin();
      break;
    case selector::op::less_than:
      out += r.key + "<" + *r.values.begin();
      break;
    }
  }
  return out;
}

bool same(const selector& a, const selector& b) {
  const auto& x = a.requirements();
  const auto& y = b.requirements();
  if (x.size() != y.size()) return false;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (x[i].key != y[i].key || x[i].operation != y[i].operation || x[i].values != y[i].values) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto s = parse(fuzz::text(data, size));
  if (!s) return 0;

  const auto back = parse(print(*s));
  fuzz::require(back.has_value(), target, "a printed selector parses");
  fuzz::require(same(*s, *back), target, "a printed selector parses to the same requirements");

  std::map<std::string, int> uses;
  for (const auto& r : s->requirements()) ++uses[r.key];
  std::map<std::string, std::string> satisfying;
  bool all_positive = true;
  for (const auto& r : s->requirements()) {
    const bool positive =
        r.operation == selector::op::equals || r.operation == selector::op::in || r.operation == selector::op::exists;
    all_positive = all_positive && positive && uses[r.key] == 1;
    satisfying[r.key] = r.values.empty() ? std::string("x") : *r.values.begin();
  }
  if (all_positive) fuzz::require(s->matches(satisfying), target, "a selector matches labels built to satisfy it");

  std::map<std::string, std::string> labels;
  for (const auto& r : s->requirements()) {
    labels[r.key] = r.values.empty() ? std::string() : *r.values.rbegin();
    (void)s->matches(labels);
  }
  // Keys and values the parser accepted are valid labels: from_map takes them.
  fuzz::require(selector::from_map(labels).matches(labels), target, "from_map(labels) matches the labels");
  return 0;
}
