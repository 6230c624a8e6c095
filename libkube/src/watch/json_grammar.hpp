#pragma once

// A boost::json::basic_parser handler that checks the grammar and builds
// nothing. Private to libkube's sources.

#include <boost/json/array.hpp>
#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/object.hpp>
#include <boost/json/string.hpp>

#include <cstddef>
#include <cstdint>

namespace kube::detail {

// Grammar only, no DOM: the watch decoder's error path finds the failing
// byte with it, json_reader validates raw JSON it keeps as text.
struct grammar_only_handler {
  static constexpr std::size_t max_object_size = boost::json::object::max_size();
  static constexpr std::size_t max_array_size = boost::json::array::max_size();
  static constexpr std::size_t max_key_size = boost::json::string::max_size();
  static constexpr std::size_t max_string_size = boost::json::string::max_size();
  bool on_document_begin(boost::json::error_code&) { return true; }
  bool on_document_end(boost::json::error_code&) { return true; }
  bool on_object_begin(boost::json::error_code&) { return true; }
  bool on_object_end(std::size_t, boost::json::error_code&) { return true; }
  bool on_array_begin(boost::json::error_code&) { return true; }
  bool on_array_end(std::size_t, boost::json::error_code&) { return true; }
  bool on_key_part(boost::json::string_view, std::size_t, boost::json::error_code&) { return true; }
  bool on_key(boost::json::string_view, std::size_t, boost::json::error_code&) { return true; }
  bool on_string_part(boost::json::string_view, std::size_t, boost::json::error_code&) { return true; }
  bool on_string(boost::json::string_view, std::size_t, boost::json::error_code&) { return true; }
  bool on_number_part(boost::json::string_view, boost::json::error_code&) { return true; }
  bool on_int64(std::int64_t, boost::json::string_view, boost::json::error_code&) { return true; }
  bool on_uint64(std::uint64_t, boost::json::string_view, boost::json::error_code&) { return true; }
  bool on_double(double, boost::json::string_view, boost::json::error_code&) { return true; }
  bool on_bool(bool, boost::json::error_code&) { return true; }
  bool on_null(boost::json::error_code&) { return true; }
  bool on_comment_part(boost::json::string_view, boost::json::error_code&) { return true; }
  bool on_comment(boost::json::string_view, boost::json::error_code&) { return true; }
};

}  // namespace kube::detail
