#pragma once

// JSON encoding and decoding of generated Kubernetes types.
//
//   auto pod = kube::from_json<k8s::core::v1::Pod>(text);   // throws kube::decode_error
//   std::string text = kube::to_json(pod);
//
// Every generated type T declares, in its own namespace (found by ADL):
//   void decode(const boost::json::value& in, T& out, const kube::json_path& at);
//   void encode(const T& in, boost::json::value& out);
//   void read_json(kube::codec::json_reader& in, T& out, const kube::json_path& at);
// (read_json decodes straight from the text, see json_reader.hpp.) Their definitions live in compiled sources, so including a type's header
// costs no JSON templates. decode keeps the members T does not know in
// T::unknown_fields and encode writes them back; JSON null decodes as an
// absent optional. A value of the wrong JSON type throws decode_error naming
// the field path (".spec.containers[0].ports[1].containerPort").
//
// Thread safety: the functions are reentrant.

#include <kube/codec/value_types.hpp>

#include <boost/json/fwd.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace kube {

namespace codec {
/// The deepest nesting of JSON objects and arrays the SDK reads or writes,
/// counted from the root of a document: one limit for typed and dynamic
/// objects, watch events, Status bodies, raw_json and discovery documents.
/// Deeper input fails to decode with a message that says so; a deeper
/// request body is refused before it is sent (client_errc::encode_error).
/// Kubernetes' own decoder allows 10,000; Boost.JSON's default is 32.
inline constexpr std::size_t max_json_depth = 1000;
}  // namespace codec

/// Where in a JSON document the decoder is: a chain of member names and array
/// indexes kept on the stack; turned into text only for an error.
struct json_path {
  static constexpr std::size_t no_index = static_cast<std::size_t>(-1);
  const json_path* parent = nullptr;
  std::string_view member;       ///< member name, when index == no_index
  std::size_t index = no_index;  ///< array index

  /// ".spec.containers[0].image"; "." for the root.
  [[nodiscard]] std::string to_string() const;
};

/// A JSON document did not fit the C++ type.
class decode_error : public std::runtime_error {
public:
  decode_error(std::string path, const std::string& problem);
  /// The field path, e.g. ".metadata.labels.app".
  [[nodiscard]] const std::string& path() const noexcept { return path_; }

private:
  std::string path_;
};

namespace codec {

class json_reader;
class proto_reader;
class proto_writer;

/// Throws decode_error at `at`: "<path>: <problem>".
[[noreturn]] void fail(const json_path& at, const std::string& problem);
/// "expected <what>, got <JSON kind of v>".
[[noreturn]] void fail_type(const boost::json::value& v, const json_path& at, std::string_view what);
/// `text` as a quantity, parsed once; throws decode_error at `at` if it
/// is not one. The error does not quote the text: decode errors reach logs,
/// and objects may hold secrets.
[[nodiscard]] quantity to_quantity(std::string text, const json_path& at);

// Leaf codecs.
void decode(const boost::json::value& in, std::string& out, const json_path& at);
void decode(const boost::json::value& in, bool& out, const json_path& at);
void decode(const boost::json::value& in, std::int32_t& out, const json_path& at);
void decode(const boost::json::value& in, std::int64_t& out, const json_path& at);
void decode(const boost::json::value& in, double& out, const json_path& at);
void decode(const boost::json::value& in, int_or_string& out, const json_path& at);
void decode(const boost::json::value& in, quantity& out, const json_path& at);
void decode(const boost::json::value& in, timestamp& out, const json_path& at);
void decode(const boost::json::value& in, micro_timestamp& out, const json_path& at);
void decode(const boost::json::value& in, bytes& out, const json_path& at);
void decode(const boost::json::value& in, raw_json& out, const json_path& at);

void encode(const std::string& in, boost::json::value& out);
void encode(bool in, boost::json::value& out);
void encode(std::int32_t in, boost::json::value& out);
void encode(std::int64_t in, boost::json::value& out);
void encode(double in, boost::json::value& out);
void encode(const int_or_string& in, boost::json::value& out);
void encode(const quantity& in, boost::json::value& out);
void encode(const timestamp& in, boost::json::value& out);
void encode(const micro_timestamp& in, boost::json::value& out);
void encode(const bytes& in, boost::json::value& out);
void encode(const raw_json& in, boost::json::value& out);

// Type-erased entry points (implemented once, in libkube).
using decode_fn = void (*)(const boost::json::value&, void*, const json_path&);
using encode_fn = void (*)(const void*, boost::json::value&);
/// Parses `text` and decodes it with `fn`; throws decode_error (the parse
/// error has path ".").
void decode_text(std::string_view text, decode_fn fn, void* out);
/// Decodes straight from JSON text (json_reader.hpp), without a DOM.
using read_fn = void (*)(json_reader&, void*, const json_path&);
/// Decodes `text` with `read` (no DOM); when that fails, parses it and
/// decodes with `fn`, whose decode_error is thrown (its messages are the
/// reference wording).
void decode_text(std::string_view text, read_fn read, decode_fn fn, void* out);
/// Reads the reader's next value as a DOM value and decodes it with `fn`:
/// read_erased's path for types without a read_json.
void read_via_dom(json_reader& in, decode_fn fn, void* out, const json_path& at);
[[nodiscard]] std::string encode_text(encode_fn fn, const void* in);

template <class T>
void decode_erased(const boost::json::value& v, void* out, const json_path& at) {
  decode(v, *static_cast<T*>(out), at);
}
/// read_json(in, T&, at) when T has one (generated types do), else the DOM
/// codec on the next value.
template <class T>
void read_erased(json_reader& in, void* out, const json_path& at) {
  if constexpr (requires(T & o) { read_json(in, o, at); }) {
    read_json(in, *static_cast<T*>(out), at);
  } else {
    read_via_dom(in, &decode_erased<T>, out, at);
  }
}
template <class T>
void encode_erased(const void* in, boost::json::value& out) {
  encode(*static_cast<const T*>(in), out);
}

// ---- protobuf (Kubernetes' generated.proto wire format) -------------------
//
// Generated built-in types also declare, found by ADL:
//   void read_proto(kube::codec::proto_reader& in, T& out, const kube::json_path& at);
//   void write_proto(const T& in, kube::codec::proto_writer& out);
// CRD types and the few built-in types whose protobuf form differs from
// their JSON schema (CustomResourceDefinition) have none: they are JSON only.

/// The first bytes of every protobuf body the API server sends or accepts.
inline constexpr std::string_view protobuf_magic{"k8s\0", 4};
/// The media type of Kubernetes' protobuf encoding.
inline constexpr std::string_view protobuf_media_type = "application/vnd.kubernetes.protobuf";

/// A protobuf body opened: the magic, then runtime.Unknown. The views point
/// into the body.
struct protobuf_envelope {
  std::string_view api_version;  ///< typeMeta.apiVersion
  std::string_view kind;         ///< typeMeta.kind
  std::string_view raw;          ///< the object's own message
  std::string_view content_encoding;
  std::string_view content_type;
};
/// Opens a protobuf body; throws decode_error naming what is wrong (no
/// magic, a malformed envelope, a content encoding other than none).
[[nodiscard]] protobuf_envelope open_envelope(std::string_view body);
/// "k8s\0" + runtime.Unknown{typeMeta{api_version, kind}, raw}.
[[nodiscard]] std::string seal_envelope(std::string_view api_version, std::string_view kind, std::string_view raw);

using proto_read_fn = void (*)(proto_reader&, void*, const json_path&);
using proto_write_fn = void (*)(const void*, proto_writer&);
/// Sets an object's apiVersion and kind, which a protobuf message leaves to
/// its envelope (type_meta_erased<T>).
using type_meta_fn = void (*)(void*, std::string_view api_version, std::string_view kind);
/// Reads one bare message (no envelope) with `fn`; throws decode_error
/// naming the field where the bytes stopped making sense.
void decode_protobuf(std::string_view message, proto_read_fn fn, void* out);
/// Writes `in` as a bare message. When `lossy` is not null it is set to
/// whether the object held something protobuf cannot carry: unknown JSON
/// members (read from JSON), or an int_or_string integer beyond Go's int32
/// intVal. The typed client then sends JSON instead.
[[nodiscard]] std::string encode_protobuf(proto_write_fn fn, const void* in, bool* lossy = nullptr);

template <class T>
void read_proto_erased(proto_reader& in, void* out, const json_path& at) {
  read_proto(in, *static_cast<T*>(out), at);
}
template <class T>
void write_proto_erased(const void* in, proto_writer& out) {
  write_proto(*static_cast<const T*>(in), out);
}
/// type_meta_fn for T: sets T's apiVersion and kind members (when it has
/// them) from non-empty values.
template <class T>
void type_meta_erased(void* obj, std::string_view api_version, std::string_view kind) {
  auto& o = *static_cast<T*>(obj);
  if constexpr (requires {
                  o.api_version = std::string();
                  o.kind = std::string();
                }) {
    if (!api_version.empty()) o.api_version = std::string(api_version);
    if (!kind.empty()) o.kind = std::string(kind);
  }
}

}  // namespace codec

/// Whether T has a protobuf codec (every generated built-in type but the
/// apiextensions ones; no CRD type).
template <class T>
concept has_protobuf = requires(codec::proto_reader& r, T& o, const T& c, codec::proto_writer& w, const json_path& at) {
  read_proto(r, o, at);
  write_proto(c, w);
};

/// Decodes a JSON document into T; throws decode_error.
template <class T>
[[nodiscard]] T from_json(std::string_view text) {
  T out{};
  codec::decode_text(text, &codec::read_erased<T>, &codec::decode_erased<T>, &out);
  return out;
}

/// Decodes an already parsed JSON value into T; throws decode_error.
template <class T>
[[nodiscard]] T from_json_value(const boost::json::value& v) {
  T out{};
  const json_path root{};
  codec::decode_erased<T>(v, &out, root);
  return out;
}

/// Encodes T as compact JSON.
template <class T>
[[nodiscard]] std::string to_json(const T& obj) {
  return codec::encode_text(&codec::encode_erased<T>, &obj);
}

/// Decodes a protobuf body as the API server sends it ("k8s\0" and the
/// runtime.Unknown envelope) into T; apiVersion and kind come from the
/// envelope. Throws decode_error.
template <has_protobuf T>
[[nodiscard]] T from_protobuf(std::string_view body) {
  const auto env = codec::open_envelope(body);
  T out{};
  codec::decode_protobuf(env.raw, &codec::read_proto_erased<T>, &out);
  codec::type_meta_erased<T>(&out, env.api_version, env.kind);
  return out;
}

/// Encodes T as a protobuf body with its envelope; the envelope's apiVersion
/// and kind are the object's own. Unknown JSON members the object holds are
/// not written (protobuf cannot carry them).
template <has_protobuf T>
[[nodiscard]] std::string to_protobuf(const T& obj) {
  std::string_view api_version, kind;
  if constexpr (requires {
                  obj.api_version.value();
                  obj.kind.value();
                }) {
    if (obj.api_version) api_version = *obj.api_version;
    if (obj.kind) kind = *obj.kind;
  }
  return codec::seal_envelope(api_version, kind, codec::encode_protobuf(&codec::write_proto_erased<T>, &obj));
}

}  // namespace kube
