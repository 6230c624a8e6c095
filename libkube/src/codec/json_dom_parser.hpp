#pragma once

// Internal: the one incremental JSON-to-DOM parser of libkube's sources.
// boost::json::stream_parser with one difference: a number that is not an
// integer is read correctly rounded (std::from_chars on its text). Boost.JSON
// 1.81 computes some doubles an ulp or two off (9.007199666666666E52), so an
// unknown member holding one would change on every decode and re-encode; Go
// reads them exactly.

#include <kube/codec/codec.hpp>

#include <boost/json/basic_parser.hpp>
#include <boost/json/error.hpp>
#include <boost/json/storage_ptr.hpp>
#include <boost/json/value.hpp>
#include <boost/json/value_stack.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

namespace kube::detail {

/// basic_parser's handler: builds the DOM as boost::json::parser does.
struct json_dom_handler {
  static constexpr std::size_t max_object_size = boost::json::object::max_size();
  static constexpr std::size_t max_array_size = boost::json::array::max_size();
  static constexpr std::size_t max_key_size = boost::json::string::max_size();
  static constexpr std::size_t max_string_size = boost::json::string::max_size();

  boost::json::value_stack st;
  std::string number;  // the text of a number split across writes

  json_dom_handler(unsigned char* temp, std::size_t temp_size)
      : st({}, temp, temp_size) {}

  bool on_document_begin(boost::json::error_code&) { return true; }
  bool on_document_end(boost::json::error_code&) { return true; }
  bool on_object_begin(boost::json::error_code&) { return true; }
  bool on_object_end(std::size_t n, boost::json::error_code&);
  bool on_array_begin(boost::json::error_code&) { return true; }
  bool on_array_end(std::size_t n, boost::json::error_code&);
  bool on_key_part(boost::json::string_view s, std::size_t, boost::json::error_code&);
  bool on_key(boost::json::string_view s, std::size_t, boost::json::error_code&);
  bool on_string_part(boost::json::string_view s, std::size_t, boost::json::error_code&);
  bool on_string(boost::json::string_view s, std::size_t, boost::json::error_code&);
  bool on_number_part(boost::json::string_view s, boost::json::error_code&);
  bool on_int64(std::int64_t i, boost::json::string_view, boost::json::error_code&);
  bool on_uint64(std::uint64_t u, boost::json::string_view, boost::json::error_code&);
  bool on_double(double d, boost::json::string_view s, boost::json::error_code&);
  bool on_bool(bool b, boost::json::error_code&);
  bool on_null(boost::json::error_code&);
  bool on_comment_part(boost::json::string_view, boost::json::error_code&) { return true; }
  bool on_comment(boost::json::string_view, boost::json::error_code&) { return true; }
};

/// Parses one JSON text fed in pieces, as boost::json::stream_parser does
/// (write_some with more = true until done(), or more = false for the last
/// piece), nesting limited to `max_depth`. A number too large for a double
/// reads as infinity, as in Boost.JSON; parse_json and the callers that
/// build DOMs refuse those (json_has_non_finite).
class json_dom_parser {
public:
  /// `temp`, when given, is where the value stack starts before it needs
  /// the heap (boost::json::parse uses a buffer on the stack the same way).
  explicit json_dom_parser(std::size_t max_depth = codec::max_json_depth, unsigned char* temp = nullptr,
                           std::size_t temp_size = 0);

  /// Starts a new text; the DOM's memory comes from `sp`.
  void reset(boost::json::storage_ptr sp = {}) noexcept;
  /// Parses what it can of [data, data + size); the bytes used.
  std::size_t write_some(const char* data, std::size_t size, bool more, boost::json::error_code& ec);
  bool done() const noexcept;
  /// Parses [data, data + size) as a whole text (trailing bytes other than
  /// whitespace are extra_data); the bytes used, where an error stopped it.
  std::size_t write(const char* data, std::size_t size, boost::json::error_code& ec);
  /// The parsed value (done() must hold).
  boost::json::value release();

private:
  boost::json::basic_parser<json_dom_handler> p_;
};

}  // namespace kube::detail
