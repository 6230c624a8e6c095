#include "codec/json_dom_parser.hpp"

#include <boost/json/basic_parser_impl.hpp>

#include <charconv>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#if defined(_LIBCPP_VERSION) && _LIBCPP_VERSION < 170000
#include <cerrno>
#include <clocale>
#include <cmath>
#include <cstdlib>
#endif

namespace kube::detail {
namespace json = boost::json;

namespace {
// The double a JSON number's text denotes, correctly rounded: true and `out`
// set when the whole text is one in range.
bool parse_double(std::string_view text, double& out) {
#if defined(_LIBCPP_VERSION) && _LIBCPP_VERSION < 170000
  // libc++ 16 has no std::from_chars for double: strtod in the "C" locale
  // (glibc's is correctly rounded too).
  static const locale_t c_locale = newlocale(LC_ALL_MASK, "C", locale_t{});
  const std::string z(text);
  char* end = nullptr;
  errno = 0;
  const double v = strtod_l(z.c_str(), &end, c_locale);
  if (end != z.c_str() + z.size()) return false;
  // ERANGE with a subnormal result is not out of range for from_chars.
  if (errno == ERANGE && (v == 0 || v == HUGE_VAL || v == -HUGE_VAL)) return false;
  out = v;
  return true;
#else
  const auto [end, rc] = std::from_chars(text.data(), text.data() + text.size(), out);
  return rc == std::errc() && end == text.data() + text.size();
#endif
}
}  // namespace

bool json_dom_handler::on_object_end(std::size_t n, json::error_code&) {
  st.push_object(n);
  return true;
}
bool json_dom_handler::on_array_end(std::size_t n, json::error_code&) {
  st.push_array(n);
  return true;
}
bool json_dom_handler::on_key_part(json::string_view s, std::size_t, json::error_code&) {
  st.push_chars(s);
  return true;
}
bool json_dom_handler::on_key(json::string_view s, std::size_t, json::error_code&) {
  st.push_key(s);
  return true;
}
bool json_dom_handler::on_string_part(json::string_view s, std::size_t, json::error_code&) {
  st.push_chars(s);
  return true;
}
bool json_dom_handler::on_string(json::string_view s, std::size_t, json::error_code&) {
  st.push_string(s);
  return true;
}
bool json_dom_handler::on_number_part(json::string_view s, json::error_code&) {
  number.append(s.data(), s.size());
  return true;
}
bool json_dom_handler::on_int64(std::int64_t i, json::string_view, json::error_code&) {
  number.clear();
  st.push_int64(i);
  return true;
}
bool json_dom_handler::on_uint64(std::uint64_t u, json::string_view, json::error_code&) {
  number.clear();
  st.push_uint64(u);
  return true;
}
bool json_dom_handler::on_double(double d, json::string_view s, json::error_code&) {
  std::string_view text(s.data(), s.size());
  if (!number.empty()) {
    number.append(s.data(), s.size());
    text = number;
  }
  // The parser has checked the grammar, and JSON's number grammar is a
  // subset of from_chars'. Out of range keeps Boost's value: infinity (which
  // the callers refuse) or the underflow's zero, as Go reads 1E-400.
  double exact = 0;
  if (parse_double(text, exact)) d = exact;
  number.clear();
  st.push_double(d);
  return true;
}
bool json_dom_handler::on_bool(bool b, json::error_code&) {
  st.push_bool(b);
  return true;
}
bool json_dom_handler::on_null(json::error_code&) {
  st.push_null();
  return true;
}

namespace {
json::parse_options options(std::size_t max_depth) {
  json::parse_options o;
  o.max_depth = max_depth;
  return o;
}
}  // namespace

json_dom_parser::json_dom_parser(std::size_t max_depth, unsigned char* temp, std::size_t temp_size)
    : p_(options(max_depth), temp, temp_size) {
  reset();
}

void json_dom_parser::reset(json::storage_ptr sp) noexcept {
  p_.reset();
  p_.handler().st.reset(std::move(sp));
  p_.handler().number.clear();
}

std::size_t json_dom_parser::write_some(const char* data, std::size_t size, bool more, json::error_code& ec) {
  return p_.write_some(more, data, size, ec);
}

std::size_t json_dom_parser::write(const char* data, std::size_t size, json::error_code& ec) {
  const std::size_t n = write_some(data, size, false, ec);
  if (!ec && n < size) ec = json::error::extra_data;
  return n;
}

bool json_dom_parser::done() const noexcept { return p_.done(); }

json::value json_dom_parser::release() { return p_.handler().st.release(); }

}  // namespace kube::detail
