#pragma once

// The templates generated sources use to decode and encode fields. Included
// only by compiled sources (generated *.cpp); user code needs codec.hpp only.

#include <kube/codec/codec.hpp>
#include <kube/codec/json_reader.hpp>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <cstddef>
#include <map>
#include <memory_resource>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kube::codec {

template <class T>
void decode_into(const boost::json::value& in, T& out, const json_path& at);
template <class T>
void decode_into(const boost::json::value& in, std::optional<T>& out, const json_path& at);
template <class T>
void decode_into(const boost::json::value& in, std::vector<T>& out, const json_path& at);
template <class T>
void decode_into(const boost::json::value& in, std::map<std::string, T>& out, const json_path& at);
template <class T>
void decode_into(const boost::json::value& in, string_map<T>& out, const json_path& at);
template <class T>
void decode_into(const boost::json::value& in, boxed<T>& out, const json_path& at);
template <class T>
void decode_into(const boost::json::value& in, heap_optional<T>& out, const json_path& at);

template <class T>
void encode_from(const T& in, boost::json::value& out);
template <class T>
void encode_from(const std::vector<T>& in, boost::json::value& out);
template <class T>
void encode_from(const std::map<std::string, T>& in, boost::json::value& out);
template <class T>
void encode_from(const string_map<T>& in, boost::json::value& out);
template <class T>
void encode_from(const boxed<T>& in, boost::json::value& out);

template <class T>
void decode_into(const boost::json::value& in, T& out, const json_path& at) {
  decode(in, out, at);
}

template <class T>
void decode_into(const boost::json::value& in, std::optional<T>& out, const json_path& at) {
  if (in.is_null()) {
    out.reset();
    return;
  }
  decode_into(in, out.emplace(), at);
}

template <class T>
void decode_into(const boost::json::value& in, std::vector<T>& out, const json_path& at) {
  out.clear();
  if (in.is_null()) return;
  const auto* a = in.if_array();
  if (!a) fail_type(in, at, "an array");
  out.resize(a->size());
  for (std::size_t i = 0; i < a->size(); ++i) {
    const json_path here{&at, {}, i};
    decode_into((*a)[i], out[i], here);
  }
}

template <class T>
void decode_into(const boost::json::value& in, std::map<std::string, T>& out, const json_path& at) {
  out.clear();
  if (in.is_null()) return;
  const auto* o = in.if_object();
  if (!o) fail_type(in, at, "an object");
  auto hint = out.end();
  for (const auto& kv : *o) {
    const std::string_view key(kv.key().data(), kv.key().size());
    const json_path here{&at, key};
    hint = out.emplace_hint(hint, std::string(key), T{});
    decode_into(kv.value(), hint->second, here);
  }
}

template <class T>
void decode_into(const boost::json::value& in, string_map<T>& out, const json_path& at) {
  out.clear();
  if (in.is_null()) return;
  const auto* o = in.if_object();
  if (!o) fail_type(in, at, "an object");
  out.reserve(o->size());  // a Boost.JSON object's keys are unique
  for (const auto& kv : *o) {
    const std::string_view key(kv.key().data(), kv.key().size());
    const json_path here{&at, key};
    decode_into(kv.value(), out.decode_append(key), here);
  }
  out.restore_order();  // O(n log n) whatever the keys' order
}

template <class T>
void decode_into(const boost::json::value& in, boxed<T>& out, const json_path& at) {
  decode_into(in, *out, at);
}

template <class T>
void decode_into(const boost::json::value& in, heap_optional<T>& out, const json_path& at) {
  if (in.is_null()) {
    out.reset();
    return;
  }
  decode_into(in, out.emplace(), at);
}

template <class T>
void encode_from(const T& in, boost::json::value& out) {
  encode(in, out);
}

template <class T>
void encode_from(const std::vector<T>& in, boost::json::value& out) {
  auto& a = out.emplace_array();
  a.reserve(in.size());
  for (const auto& e : in) {
    encode_from(e, a.emplace_back(nullptr));
  }
}

/// A map field (std::map or string_map) as a JSON object.
template <class Map>
void encode_entries(const Map& in, boost::json::value& out) {
  auto& o = out.emplace_object();
  o.reserve(in.size());
  for (const auto& [k, v] : in) {
    encode_from(v, o[k]);
  }
}

template <class T>
void encode_from(const std::map<std::string, T>& in, boost::json::value& out) {
  encode_entries(in, out);
}

template <class T>
void encode_from(const string_map<T>& in, boost::json::value& out) {
  encode_entries(in, out);
}

template <class T>
void encode_from(const boxed<T>& in, boost::json::value& out) {
  encode_from(*in, out);
}

/// Writes `name: value` into `o` for a present optional.
template <class T>
void put(boost::json::object& o, std::string_view name, const std::optional<T>& v) {
  if (v) encode_from(*v, o[name]);
}
/// Writes `name: value` into `o` for a present heap_optional.
template <class T>
void put(boost::json::object& o, std::string_view name, const heap_optional<T>& v) {
  if (v) encode_from(*v, o[name]);
}
/// Writes `name: value` into `o` (required fields are always written).
template <class T>
void put(boost::json::object& o, std::string_view name, const T& v) {
  encode_from(v, o[name]);
}

// Straight from the text (json_reader): the same shapes as decode_into.

inline void read_json(json_reader& in, std::string& out, const json_path& at) { in.read(out, at); }
inline void read_json(json_reader& in, bool& out, const json_path& at) { in.read(out, at); }
inline void read_json(json_reader& in, std::int32_t& out, const json_path& at) { in.read(out, at); }
inline void read_json(json_reader& in, std::int64_t& out, const json_path& at) { in.read(out, at); }
inline void read_json(json_reader& in, raw_json& out, const json_path& at) { in.read(out, at); }

template <class T>
void read_into(json_reader& in, T& out, const json_path& at);
template <class T>
void read_into(json_reader& in, std::optional<T>& out, const json_path& at);
template <class T>
void read_into(json_reader& in, std::vector<T>& out, const json_path& at);
template <class T>
void read_into(json_reader& in, std::map<std::string, T>& out, const json_path& at);
template <class T>
void read_into(json_reader& in, string_map<T>& out, const json_path& at);
template <class T>
void read_into(json_reader& in, boxed<T>& out, const json_path& at);
template <class T>
void read_into(json_reader& in, heap_optional<T>& out, const json_path& at);

/// Generated types and the plain leaves read themselves; the other leaves
/// (int_or_string, quantity, timestamps, bytes, raw_json, double) decode the
/// value through their DOM codec.
template <class T>
void read_into(json_reader& in, T& out, const json_path& at) {
  if constexpr (requires { read_json(in, out, at); }) {
    read_json(in, out, at);
  } else {
    const auto v = in.value();
    decode(v, out, at);
  }
}

template <class T>
void read_into(json_reader& in, std::optional<T>& out, const json_path& at) {
  if (in.try_null()) {
    out.reset();
    return;
  }
  read_into(in, out.emplace(), at);
}

template <class T>
void read_into(json_reader& in, std::vector<T>& out, const json_path& at) {
  out.clear();
  if (in.try_null()) return;
  if (!in.begin_array()) fail_type(in.value(), at, "an array");
  for (std::size_t i = 0; in.next_element(); ++i) {
    const json_path here{&at, {}, i};
    read_into(in, out.emplace_back(), here);
  }
  // Decoded objects are mostly kept (an informer caches them): drop the
  // growth slack, which for 3, 5-7 or 9-15 elements is up to half the block.
  if (out.capacity() != out.size()) out.shrink_to_fit();
}

template <class T>
void read_into(json_reader& in, std::map<std::string, T>& out, const json_path& at) {
  out.clear();
  if (in.try_null()) return;
  if (!in.begin_object()) fail_type(in.value(), at, "an object");
  std::string_view key;
  while (in.next_key(key)) {
    const json_path here{&at, key};
    // Go writes map keys sorted, so the hint at the end makes each insert O(1).
    auto it = out.emplace_hint(out.end(), std::string(key), T{});
    read_into(in, it->second, here);
  }
}

template <class T>
void read_into(json_reader& in, string_map<T>& out, const json_path& at) {
  out.clear();
  if (in.try_null()) return;
  if (!in.begin_object()) fail_type(in.value(), at, "an object");
  // The entries are read into a vector on a stack buffer first, so the map
  // allocates once, at its final size: an informer keeps what it decodes,
  // and growing the map in place took one allocation per doubling.
  alignas(std::max_align_t) std::byte stack[1024];
  std::pmr::monotonic_buffer_resource arena(stack, sizeof stack);
  std::pmr::vector<std::pair<std::string, T>> read(&arena);
  std::string_view key;
  while (in.next_key(key)) {
    const json_path here{&at, key};
    auto& e = read.emplace_back(std::piecewise_construct, std::forward_as_tuple(key), std::forward_as_tuple());
    read_into(in, e.second, here);
  }
  out.assign_moved(read.begin(), read.end());
}

template <class T>
void read_into(json_reader& in, boxed<T>& out, const json_path& at) {
  read_into(in, *out, at);
}

template <class T>
void read_into(json_reader& in, heap_optional<T>& out, const json_path& at) {
  if (in.try_null()) {
    out.reset();
    return;
  }
  read_into(in, out.emplace(), at);
}

/// The next value must be an object (consumed up to its first member), or a
/// decode_error naming `at`.
void expect_object(json_reader& in, const json_path& at);

/// The object `in` is, or a decode_error naming `at`.
const boost::json::object& expect_object(const boost::json::value& in, const json_path& at);
/// Keeps an unknown member.
void keep_unknown(unknown_fields& u, std::string_view key, const boost::json::value& v);
/// Writes the kept unknown members back.
void put_unknown(boost::json::object& o, const unknown_fields& u);

}  // namespace kube::codec
