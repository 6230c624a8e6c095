#pragma once

// Label selectors as the API server parses them
// (k8s.io/apimachinery/pkg/labels): a comma-separated list of requirements,
// all of which must hold.
//
//   key=value  key==value  key!=value
//   key in (a,b)  key notin (a,b)
//   key  !key                 (exists / does not exist)
//   key>5  key<5              (integer comparison; the label must parse)
//
// `!=` and `notin` also match objects WITHOUT the key (as Kubernetes does).
// Keys are [prefix/]name: the prefix a DNS subdomain (<= 253), the name
// 1..63 of [A-Za-z0-9_.-], starting and ending alphanumeric; values 0..63 of
// the same set. Errors: std::invalid_argument naming the selector and the
// offending position or token.

#include <kube/codec/string_map.hpp>

#include <cctype>
#include <cstddef>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace kube::informer {

class label_selector {
public:
  enum class op { equals, not_equals, in, not_in, exists, does_not_exist, greater_than, less_than };

  struct requirement {
    std::string key;
    op operation = op::exists;
    std::set<std::string, std::less<>> values;
  };

  /// Matches everything.
  label_selector() = default;

  /// Parses `text`; "" matches everything. Throws std::invalid_argument.
  static label_selector parse(std::string_view text) {
    label_selector s;
    parser p{text, 0};
    p.skip_ws();
    if (p.eof()) {
      return s;
    }
    for (;;) {
      s.reqs_.push_back(p.requirement());
      p.skip_ws();
      if (p.eof()) {
        break;
      }
      p.expect(',');
    }
    return s;
  }

  /// A selector of key=value equality requirements (a matchLabels map; a
  /// std::map of strings converts).
  static label_selector from_map(const kube::string_map<std::string>& labels) {
    label_selector s;
    for (const auto& [k, v] : labels) {
      validate_key(k, k);
      validate_value(v, k);
      s.reqs_.push_back({k, op::equals, {v}});
    }
    return s;
  }

  [[nodiscard]] bool empty() const noexcept { return reqs_.empty(); }
  [[nodiscard]] const std::vector<requirement>& requirements() const noexcept { return reqs_; }

  /// True if every requirement holds for `labels`.
  template <class Map>
  [[nodiscard]] bool matches(const Map& labels) const {
    for (const auto& r : reqs_) {
      auto it = labels.find(r.key);
      const bool has = it != labels.end();
      switch (r.operation) {
      case op::equals:
      case op::in:
        if (!has || !r.values.contains(std::string_view(it->second))) {
          return false;
        }
        break;
      case op::not_equals:
      case op::not_in:
        if (has && r.values.contains(std::string_view(it->second))) {
          return false;
        }
        break;
      case op::exists:
        if (!has) {
          return false;
        }
        break;
      case op::does_not_exist:
        if (has) {
          return false;
        }
        break;
      case op::greater_than:
      case op::less_than: {
        if (!has) {
          return false;
        }
        long long lv = 0;
        if (!parse_int(it->second, lv)) {
          return false;
        }
        long long rv = 0;
        parse_int(*r.values.begin(), rv);
        if (r.operation == op::greater_than ? !(lv > rv) : !(lv < rv)) {
          return false;
        }
        break;
      }
      }
    }
    return true;
  }

private:
  static bool parse_int(std::string_view s, long long& out) {
    if (s.empty()) {
      return false;
    }
    std::size_t i = 0;
    bool neg = false;
    if (s[0] == '-') {
      neg = true;
      i = 1;
    }
    if (i == s.size()) {
      return false;
    }
    long long v = 0;
    for (; i < s.size(); ++i) {
      if (std::isdigit(static_cast<unsigned char>(s[i])) == 0 || v > (1LL << 58)) {
        return false;
      }
      v = v * 10 + (s[i] - '0');
    }
    out = neg ? -v : v;
    return true;
  }

  static bool name_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_' || c == '.';
  }
  static bool alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

  static void validate_name(std::string_view n, std::string_view whole, const char* what) {
    if (n.empty() || n.size() > 63) {
      throw std::invalid_argument(std::string("label selector: ") + what + " \"" + std::string(whole) +
                                  "\" must be 1 to 63 characters");
    }
    for (char c : n) {
      if (!name_char(c)) {
        throw std::invalid_argument(std::string("label selector: ") + what + " \"" + std::string(whole) +
                                    "\" has an invalid character");
      }
    }
    if (!alnum(n.front()) || !alnum(n.back())) {
      throw std::invalid_argument(std::string("label selector: ") + what + " \"" + std::string(whole) +
                                  "\" must start and end with an alphanumeric character");
    }
  }

  static void validate_key(std::string_view k, std::string_view whole) {
    const auto slash = k.find('/');
    if (slash == std::string_view::npos) {
      validate_name(k, whole, "key");
      return;
    }
    const auto prefix = k.substr(0, slash);
    if (prefix.empty() || prefix.size() > 253) {
      throw std::invalid_argument("label selector: key \"" + std::string(whole) + "\" has an invalid prefix");
    }
    for (char c : prefix) {
      if (!(alnum(c) || c == '-' || c == '.') || std::isupper(static_cast<unsigned char>(c)) != 0) {
        throw std::invalid_argument("label selector: key \"" + std::string(whole) + "\" has an invalid prefix");
      }
    }
    validate_name(k.substr(slash + 1), whole, "key");
  }

  static void validate_value(std::string_view v, std::string_view key) {
    if (v.empty()) {
      return;
    }
    if (v.size() > 63) {
      throw std::invalid_argument("label selector: the value for \"" + std::string(key) + "\" is longer than 63");
    }
    for (char c : v) {
      if (!name_char(c)) {
        throw std::invalid_argument("label selector: the value \"" + std::string(v) + "\" for \"" + std::string(key) +
                                    "\" has an invalid character");
      }
    }
    if (!alnum(v.front()) || !alnum(v.back())) {
      throw std::invalid_argument("label selector: the value \"" + std::string(v) + "\" for \"" + std::string(key) +
                                  "\" must start and end with an alphanumeric character");
    }
  }

  struct parser {
    std::string_view s;
    std::size_t i;

    [[nodiscard]] bool eof() const { return i >= s.size(); }
    void skip_ws() {
      while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) {
        ++i;
      }
    }
    [[noreturn]] void error(const std::string& what) const {
      throw std::invalid_argument("label selector \"" + std::string(s) + "\": " + what + " at position " +
                                  std::to_string(i));
    }
    void expect(char c) {
      skip_ws();
      if (eof() || s[i] != c) {
        error(std::string("expected '") + c + "'");
      }
      ++i;
    }
    std::string word() {
      skip_ws();
      const auto b = i;
      while (i < s.size() && (name_char(s[i]) || s[i] == '/')) {
        ++i;
      }
      return std::string(s.substr(b, i - b));
    }
    std::string value(const std::string& key) {
      skip_ws();
      const auto b = i;
      while (i < s.size() && name_char(s[i])) {
        ++i;
      }
      auto v = std::string(s.substr(b, i - b));
      validate_value(v, key);
      return v;
    }

    label_selector::requirement requirement() {
      label_selector::requirement r;
      skip_ws();
      bool negated = false;
      if (!eof() && s[i] == '!') {
        negated = true;
        ++i;
      }
      r.key = word();
      if (r.key.empty()) {
        error("expected a label key");
      }
      validate_key(r.key, r.key);
      skip_ws();
      if (negated) {
        r.operation = op::does_not_exist;
        return r;
      }
      if (eof() || s[i] == ',') {
        r.operation = op::exists;
        return r;
      }
      if (s.substr(i, 2) == "==") {
        i += 2;
        r.operation = op::equals;
      } else if (s.substr(i, 2) == "!=") {
        i += 2;
        r.operation = op::not_equals;
      } else if (s[i] == '=') {
        ++i;
        r.operation = op::equals;
      } else if (s[i] == '>' || s[i] == '<') {
        r.operation = s[i] == '>' ? op::greater_than : op::less_than;
        ++i;
        auto v = value(r.key);
        long long n = 0;
        if (!parse_int(v, n)) {
          error("\"" + v + "\" is not an integer");
        }
        r.values.insert(std::move(v));
        return r;
      } else {
        const auto kw = word();
        if (kw == "in") {
          r.operation = op::in;
        } else if (kw == "notin") {
          r.operation = op::not_in;
        } else {
          error("expected an operator (=, ==, !=, in, notin, >, <)");
        }
        expect('(');
        for (;;) {
          r.values.insert(value(r.key));
          skip_ws();
          if (!eof() && s[i] == ')') {
            ++i;
            break;
          }
          expect(',');
        }
        return r;
      }
      r.values.insert(value(r.key));
      return r;
    }
  };

  std::vector<requirement> reqs_;
};

}  // namespace kube::informer
