#pragma once

// Internal: every JSON text libkube parses into a DOM goes through here, so
// one nesting limit (codec::max_json_depth) holds for all of them.

#include <kube/codec/codec.hpp>
#include <kube/error.hpp>

#include <boost/json/storage_ptr.hpp>
#include <boost/json/value.hpp>

#include <cstddef>
#include <string>
#include <string_view>

namespace kube::detail {

/// boost::json::parse with correctly rounded doubles (json_dom_parser),
/// limited to `max_depth` levels (codec::max_json_depth; less for a value
/// inside a text whose outer levels were already read). A
/// number too large for a double (1E400) is an error (exponent_overflow), as
/// in Go's encoding/json: Boost.JSON would read it as infinity and write it
/// back as `Infinity`, which is not JSON.
boost::json::value parse_json(std::string_view text, error_code& ec, boost::json::storage_ptr sp = {},
                              std::size_t max_depth = codec::max_json_depth);

/// " (object \"<namespace>/<name>\")" for a decoded object's DOM, from its
/// metadata, to follow a decode error's text; empty without a name.
std::string object_named(const boost::json::value& object);

/// True when `v` holds, at any depth, a number too large for a double
/// (what parse_json refuses; for DOMs a json_dom_parser built).
bool json_has_non_finite(const boost::json::value& v);

/// True when a valid JSON text nests objects and arrays deeper than
/// codec::max_json_depth (strings are skipped; a linear scan, no DOM).
bool json_too_deep(std::string_view text) noexcept;

}  // namespace kube::detail
