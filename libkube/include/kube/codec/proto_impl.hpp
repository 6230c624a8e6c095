#pragma once

// The templates generated sources use to read and write protobuf, the wire
// format of Kubernetes' generated.proto files. Included only by compiled
// sources (generated *.cpp); user code needs codec.hpp only. The wire format
// itself is protozero's (docs/architecture.md says why).
//
// Reading follows Go's generated unmarshalers: fields may come in any order,
// a repeated field's elements one by one or packed, a message field met twice
// is merged; a field of the wrong wire type is an error naming the field. A
// field number the type does not know is kept, bytes as they were, in the
// object's unknown_fields and written back.

#include <kube/codec/codec.hpp>

#include <protozero/exception.hpp>
#include <protozero/pbf_reader.hpp>
#include <protozero/pbf_writer.hpp>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace kube::codec {

class proto_reader : public protozero::pbf_reader {
public:
  explicit proto_reader(std::string_view bytes) noexcept
      : pbf_reader(bytes.data(), bytes.size()) {}
  /// Where the next field starts (call before next()).
  [[nodiscard]] const char* position() const noexcept { return data().data(); }
  /// Skips the current field, which began at `start`, and keeps it in `out`.
  void keep_unknown(const char* start, unknown_fields& out) {
    skip();
    out.append_protobuf(std::string_view(start, static_cast<std::size_t>(position() - start)));
  }
  /// The current field as a message of its own; throws decode_error at `at`
  /// if it is not length-delimited, or if it would nest messages deeper than
  /// max_json_depth (the one nesting limit of every reader).
  [[nodiscard]] proto_reader message(const json_path& at);
  /// How many fields in a row, the current one first, share its tag: the
  /// size of a repeated field, whose elements Go writes together. Counted
  /// before the first element is read so that its vector is allocated once;
  /// bytes that do not parse end the count (reading them fails later).
  [[nodiscard]] std::size_t count_run() const noexcept;

private:
  std::size_t depth_ = 0;  // messages around this one
};

class proto_writer : public protozero::pbf_writer {
public:
  /// `lossy`, when not null, is set when something could not be written.
  explicit proto_writer(std::string& buffer, bool* lossy = nullptr) noexcept
      : protozero::pbf_writer(buffer),
        buffer_(&buffer),
        lossy_(lossy) {}
  /// A sub-message in field `tag` of `parent`, finished when destroyed.
  /// protozero drops a sub-message that stays empty; message() keeps it.
  proto_writer(proto_writer& parent, protozero::pbf_tag_type tag)
      : protozero::pbf_writer(parent, tag),
        buffer_(parent.buffer_),
        lossy_(parent.lossy_) {}
  /// Writes field `tag` as a message whose fields `fill(proto_writer&)`
  /// writes; an empty message is written too (Go's `emptyDir: {}` is a
  /// present, empty message, not an absent one).
  template <class F>
  void message(protozero::pbf_tag_type tag, F&& fill) {
    const auto before = buffer_->size();
    {
      proto_writer sub(*this, tag);
      fill(sub);
    }
    if (buffer_->size() == before) add_message(tag, "", 0);
  }
  /// Writes back the unknown protobuf fields; unknown JSON members cannot
  /// be written (note_lossy).
  void put_unknown(const unknown_fields& u);
  /// Something of the object has no protobuf form.
  void note_lossy() noexcept {
    if (lossy_) *lossy_ = true;
  }

private:
  std::string* buffer_;
  bool* lossy_;
};

namespace pb {

[[noreturn]] void fail_wire(const proto_reader& in, const json_path& at, std::string_view expected);
/// The current length-delimited field's bytes (a view into the input);
/// throws decode_error at `at` ("expected <what>") for another wire type.
[[nodiscard]] std::string_view read_view(proto_reader& in, const json_path& at, std::string_view what);
/// The current string field's bytes, a view into the input (copied only
/// where they are kept); read(in, std::string&) is this plus the copy.
[[nodiscard]] std::string_view read_string_view(proto_reader& in, const json_path& at);

// Leaves: one wire shape per C++ type (std::string is protobuf string,
// kube::bytes is bytes, the apimachinery types are their messages).
void read(proto_reader& in, std::string& out, const json_path& at);
void read(proto_reader& in, bool& out, const json_path& at);
void read(proto_reader& in, std::int32_t& out, const json_path& at);
void read(proto_reader& in, std::int64_t& out, const json_path& at);
void read(proto_reader& in, double& out, const json_path& at);
void read(proto_reader& in, bytes& out, const json_path& at);
void read(proto_reader& in, quantity& out, const json_path& at);
void read(proto_reader& in, int_or_string& out, const json_path& at);
void read(proto_reader& in, raw_json& out, const json_path& at);
/// metav1.Time (seconds; Go ignores nanos) and MicroTime (microseconds).
/// An empty message is Go's zero time: false, and `out` is left alone.
bool read_time(proto_reader& in, timestamp& out, const json_path& at, bool micro);
inline void read(proto_reader& in, timestamp& out, const json_path& at) { read_time(in, out, at, false); }
inline void read(proto_reader& in, micro_timestamp& out, const json_path& at) { read_time(in, out, at, true); }

void write(proto_writer& out, protozero::pbf_tag_type tag, const std::string& v);
void write(proto_writer& out, protozero::pbf_tag_type tag, bool v);
void write(proto_writer& out, protozero::pbf_tag_type tag, std::int32_t v);
void write(proto_writer& out, protozero::pbf_tag_type tag, std::int64_t v);
void write(proto_writer& out, protozero::pbf_tag_type tag, double v);
void write(proto_writer& out, protozero::pbf_tag_type tag, const bytes& v);
void write(proto_writer& out, protozero::pbf_tag_type tag, const quantity& v);
void write(proto_writer& out, protozero::pbf_tag_type tag, const int_or_string& v);
void write(proto_writer& out, protozero::pbf_tag_type tag, const raw_json& v);
void write(proto_writer& out, protozero::pbf_tag_type tag, const timestamp& v);
void write(proto_writer& out, protozero::pbf_tag_type tag, const micro_timestamp& v);

template <class T>
concept message_type = requires(proto_reader& r, T& o, const T& c, proto_writer& w, const json_path& at) {
  read_proto(r, o, at);
  write_proto(c, w);
};

// The templates below call each other: all declared first.
template <message_type T>
void read(proto_reader& in, T& out, const json_path& at);
template <class T>
void read(proto_reader& in, std::optional<T>& out, const json_path& at);
template <class T>
void read(proto_reader& in, heap_optional<T>& out, const json_path& at);
template <class T>
void read(proto_reader& in, boxed<T>& out, const json_path& at);
template <class T>
void read(proto_reader& in, std::vector<T>& out, const json_path& at);
template <class T>
void read(proto_reader& in, string_map<T>& out, const json_path& at);
template <class T>
void read_items(proto_reader& in, std::vector<T>& out, const json_path& at);
template <message_type T>
void write(proto_writer& out, protozero::pbf_tag_type tag, const T& v);
template <class T>
void write(proto_writer& out, protozero::pbf_tag_type tag, const std::optional<T>& v);
template <class T>
void write(proto_writer& out, protozero::pbf_tag_type tag, const heap_optional<T>& v);
template <class T>
void write(proto_writer& out, protozero::pbf_tag_type tag, const boxed<T>& v);
template <class T>
void write(proto_writer& out, protozero::pbf_tag_type tag, const std::vector<T>& v);
template <class T>
void write(proto_writer& out, protozero::pbf_tag_type tag, const string_map<T>& v);
template <class T>
void write_items(proto_writer& out, protozero::pbf_tag_type tag, const std::vector<T>& v);

/// The zero a Go value field is written with: read as absent (JSON omits it).
inline bool is_zero(const std::string& v) noexcept { return v.empty(); }
inline bool is_zero(const bytes& v) noexcept { return v.str().empty(); }
template <class T>
  requires std::is_arithmetic_v<T>
bool is_zero(T v) noexcept { return v == T{}; }

[[noreturn]] void fail_malformed(const json_path& at, const std::exception& e);

template <message_type T>
void read(proto_reader& in, T& out, const json_path& at) {
  auto sub = in.message(at);
  try {
    read_proto(sub, out, at);
  } catch (const protozero::exception& e) {  // the innermost message names the place
    fail_malformed(at, e);
  }
}

template <class T>
void read(proto_reader& in, std::optional<T>& out, const json_path& at) {
  read(in, out ? *out : out.emplace(), at);
}
/// An optional Time or MicroTime: Go's zero time (an empty message) is absent, as JSON's null.
template <class T>
  requires std::is_base_of_v<timestamp, T>
void read(proto_reader& in, std::optional<T>& out, const json_path& at) {
  T t;
  if (read_time(in, t, at, std::is_same_v<T, micro_timestamp>)) {
    out = t;
  } else {
    out.reset();
  }
}
template <class T>
void read(proto_reader& in, heap_optional<T>& out, const json_path& at) {
  read(in, out ? *out : out.emplace(), at);
}
template <class T>
void read(proto_reader& in, boxed<T>& out, const json_path& at) {
  read(in, *out, at);
}

/// One element of a repeated field, or several when a scalar list is packed.
template <class T>
void read(proto_reader& in, std::vector<T>& out, const json_path& at) {
  if constexpr (std::is_arithmetic_v<T>) {
    if (in.wire_type() == protozero::pbf_wire_type::length_delimited && !std::is_same_v<T, double>) {  // packed varints
      const auto view = in.get_view();
      const char* p = view.data();
      const char* end = p + view.size();
      while (p != end) {
        const auto v = protozero::decode_varint(&p, end);
        out.push_back(static_cast<T>(v));
      }
      return;
    }
  }
  if (out.empty()) out.reserve(in.count_run());
  out.emplace_back();
  read(in, out.back(), json_path{&at, {}, out.size() - 1});
}

/// A repeated field whose elements did not come together grows an element
/// at a time; an object that may sit in a cache for long keeps no spare
/// capacity (JSON arrays are sized exactly).
template <class T>
void fit(std::vector<T>& v) {
  if (v.capacity() != v.size()) v.shrink_to_fit();
}
template <class T>
void fit(std::optional<std::vector<T>>& v) {
  if (v) fit(*v);
}
/// A map read entry by entry (read_entry): in key order, one entry per key.
template <class T>
void fit(string_map<T>& m) {
  m.restore_order();
}
template <class T>
void fit(std::optional<string_map<T>>& m) {
  if (m) fit(*m);
}

/// A Go value field: its zero is absent.
template <class T>
void read_nonzero(proto_reader& in, std::optional<T>& out, const json_path& at) {
  read(in, out.emplace(), at);
  if (is_zero(*out)) out.reset();
}

/// Calls `f(in)` for each occurrence of field `tag` in the message `in`
/// (f reads the field), skipping the other fields.
template <class F>
void each_field(proto_reader in, protozero::pbf_tag_type tag, F&& f) {
  while (in.next()) {
    if (in.tag() == tag) {
      f(in);
    } else {
      in.skip();
    }
  }
}

/// A list wrapped in a message of its own ({repeated X items = 1}: metav1.Verbs, ExtraValue).
template <class T>
void read_items(proto_reader& in, std::vector<T>& out, const json_path& at) {
  each_field(in.message(at), 1, [&](proto_reader& f) { read(f, out, at); });
}
template <class T>
void read_items(proto_reader& in, std::optional<std::vector<T>>& out, const json_path& at) {
  read_items(in, out ? *out : out.emplace(), at);
}

/// One entry of a map<string, V>: a message {key = 1, value = 2}; `value`
/// reads the value (its path names the key). The entry is appended in the
/// order it came; the message's reader calls fit() on the map once all its
/// fields are read, which sorts the entries and keeps the last of each key
/// (as Go's decoder does): O(n log n) whatever the order and interleaving.
template <class M, class F>
void read_entry(proto_reader& in, M& out, const json_path& at, F&& value) {
  if (out.empty()) out.reserve(in.count_run());
  const auto entry = in.message(at);
  std::string_view key;  // into the input: copied once, into the map
  each_field(entry, 1, [&](proto_reader& f) { key = read_string_view(f, at); });
  auto& v = out.decode_append(key);
  const json_path here{&at, key};
  each_field(entry, 2, [&](proto_reader& f) { value(f, v, here); });
}
template <class T>
void read(proto_reader& in, string_map<T>& out, const json_path& at) {
  read_entry(in, out, at, [](proto_reader& r, T& v, const json_path& p) { read(r, v, p); });
}
template <class T>
void read_map_items(proto_reader& in, string_map<std::vector<T>>& out, const json_path& at) {
  read_entry(in, out, at, [](proto_reader& r, std::vector<T>& v, const json_path& p) { read_items(r, v, p); });
}
template <class T>
void read_map_items(proto_reader& in, std::optional<string_map<std::vector<T>>>& out, const json_path& at) {
  read_map_items(in, out ? *out : out.emplace(), at);
}

template <message_type T>
void write(proto_writer& out, protozero::pbf_tag_type tag, const T& v) {
  out.message(tag, [&](proto_writer& sub) { write_proto(v, sub); });
}
template <class T>
void write(proto_writer& out, protozero::pbf_tag_type tag, const std::optional<T>& v) {
  if (v) write(out, tag, *v);
}
template <class T>
void write(proto_writer& out, protozero::pbf_tag_type tag, const heap_optional<T>& v) {
  if (v) write(out, tag, *v);
}
template <class T>
void write(proto_writer& out, protozero::pbf_tag_type tag, const boxed<T>& v) {
  write(out, tag, *v);
}
/// Repeated: one field per element, unpacked (proto2, as Go writes them).
template <class T>
void write(proto_writer& out, protozero::pbf_tag_type tag, const std::vector<T>& v) {
  for (const auto& e : v) write(out, tag, e);
}
template <class T>
void write(proto_writer& out, protozero::pbf_tag_type tag, const string_map<T>& v) {
  for (const auto& [key, value] : v) {
    proto_writer entry(out, tag);
    entry.add_string(1, key.data(), key.size());
    write(entry, 2, value);
  }
}
template <class T>
void write_items(proto_writer& out, protozero::pbf_tag_type tag, const std::vector<T>& v) {
  out.message(tag, [&](proto_writer& sub) { write(sub, 1, v); });
}
template <class T>
void write_items(proto_writer& out, protozero::pbf_tag_type tag, const std::optional<std::vector<T>>& v) {
  if (v) write_items(out, tag, *v);
}
template <class T>
void write_map_items(proto_writer& out, protozero::pbf_tag_type tag, const string_map<std::vector<T>>& v) {
  for (const auto& [key, value] : v) {
    proto_writer entry(out, tag);
    entry.add_string(1, key.data(), key.size());
    write_items(entry, 2, value);
  }
}
template <class T>
void write_map_items(proto_writer& out, protozero::pbf_tag_type tag,
                     const std::optional<string_map<std::vector<T>>>& v) {
  if (v) write_map_items(out, tag, *v);
}

}  // namespace pb
}  // namespace kube::codec
