// Kubernetes' protobuf encoding: the leaves of the generated codecs, the
// "k8s\0" + runtime.Unknown envelope, and the type-erased entry points.

#include "codec/protobuf_meta.hpp"

#include <kube/codec/json_reader.hpp>
#include <kube/codec/proto_impl.hpp>

#include <boost/json/array.hpp>
#include <boost/json/value.hpp>

#include <protozero/exception.hpp>

#include <chrono>
#include <cmath>
#include <limits>
#include <string>

namespace kube::codec {

namespace {

using protozero::pbf_wire_type;

std::string_view wire_name(pbf_wire_type w) {
  switch (w) {
  case pbf_wire_type::varint:
    return "a varint";
  case pbf_wire_type::fixed64:
    return "a 64-bit fixed value";
  case pbf_wire_type::length_delimited:
    return "a length-delimited value";
  case pbf_wire_type::fixed32:
    return "a 32-bit fixed value";
  default:
    return "an unknown wire type";
  }
}

void expect(const proto_reader& in, pbf_wire_type w, const json_path& at, std::string_view what) {
  if (in.wire_type() != w) pb::fail_wire(in, at, what);
}

// Reads a varint field into T; Go's generated code truncates the same way
// (int32 fields are sign-extended to 64 bits on the wire).
template <class T>
T varint(proto_reader& in, const json_path& at, std::string_view what) {
  expect(in, pbf_wire_type::varint, at, what);
  return static_cast<T>(in.get_uint64());
}

}  // namespace

proto_reader proto_reader::message(const json_path& at) {
  expect(*this, pbf_wire_type::length_delimited, at, "a message");
  if (depth_ + 1 > max_json_depth)
    fail(at, "protobuf messages nested deeper than " + std::to_string(max_json_depth) + " levels");
  proto_reader sub{std::string_view(get_view())};
  sub.depth_ = depth_ + 1;
  return sub;
}

std::size_t proto_reader::count_run() const noexcept {
  std::size_t n = 1;
  try {
    proto_reader ahead = *this;
    const auto run_tag = ahead.tag();
    ahead.skip();
    while (ahead.next() && ahead.tag() == run_tag) {
      ahead.skip();
      ++n;
    }
  } catch (const protozero::exception&) {
    // counted what parsed
  }
  return n;
}

void proto_writer::put_unknown(const unknown_fields& u) {
  if (u.get() && !u.get()->empty()) note_lossy();
  // Re-added field by field: the writer takes values, not raw bytes. The
  // bytes were checked when they were read.
  proto_reader in(u.protobuf());
  while (in.next()) {
    // The tag first: protozero's getters may clear it.
    const auto tag = in.tag();
    switch (in.wire_type()) {
    case pbf_wire_type::varint:
      add_uint64(tag, in.get_uint64());
      break;
    case pbf_wire_type::fixed64:
      add_fixed64(tag, in.get_fixed64());
      break;
    case pbf_wire_type::length_delimited:
      add_bytes(tag, in.get_view());
      break;
    case pbf_wire_type::fixed32:
      add_fixed32(tag, in.get_fixed32());
      break;
    default:
      in.skip();
      break;
    }
  }
}

namespace pb {

void fail_wire(const proto_reader& in, const json_path& at, std::string_view expected) {
  fail(at, "expected " + std::string(expected) + " in protobuf, got " + std::string(wire_name(in.wire_type())));
}

void fail_malformed(const json_path& at, const std::exception& e) {
  fail(at, std::string("malformed protobuf: ") + e.what());
}

std::string_view read_view(proto_reader& in, const json_path& at, std::string_view what) {
  expect(in, pbf_wire_type::length_delimited, at, what);
  return in.get_view();
}

std::string_view read_string_view(proto_reader& in, const json_path& at) { return read_view(in, at, "a string"); }

void read(proto_reader& in, std::string& out, const json_path& at) { out = read_string_view(in, at); }

void read(proto_reader& in, bool& out, const json_path& at) { out = varint<std::uint64_t>(in, at, "a boolean") != 0; }

void read(proto_reader& in, std::int32_t& out, const json_path& at) { out = varint<std::int32_t>(in, at, "an int32"); }

void read(proto_reader& in, std::int64_t& out, const json_path& at) { out = varint<std::int64_t>(in, at, "an int64"); }

void read(proto_reader& in, double& out, const json_path& at) {
  expect(in, pbf_wire_type::fixed64, at, "a double");
  out = in.get_double();
  // JSON cannot carry NaN or an infinity, and the JSON readers refuse a
  // number too large for a double: one rule for both formats.
  if (!std::isfinite(out)) fail(at, "a double that is NaN or infinite");
}

void read(proto_reader& in, bytes& out, const json_path& at) { out.str() = read_view(in, at, "bytes"); }

void read(proto_reader& in, quantity& out, const json_path& at) {
  std::string_view text;  // into the input: copied once, into the quantity
  each_field(in.message(at), 1, [&](proto_reader& f) { text = read_string_view(f, at); });
  out = to_quantity(std::string(text), at);
}

void read(proto_reader& in, int_or_string& out, const json_path& at) {
  auto sub = in.message(at);
  std::int64_t type = 0;
  std::int32_t i = 0;
  std::string s;
  while (sub.next()) {
    switch (sub.tag()) {
    case 1:
      read(sub, type, at);
      break;
    case 2:
      read(sub, i, at);
      break;
    case 3:
      read(sub, s, at);
      break;
    default:
      sub.skip();
      break;
    }
  }
  if (type == 1) {
    out = int_or_string(std::move(s));
  } else {
    out = int_or_string(static_cast<std::int64_t>(i));
  }
}

void read(proto_reader& in, raw_json& out, const json_path& at) {
  // RawExtension, FieldsV1, apiextensions' JSON: {bytes raw = 1}, JSON text.
  std::string_view text;
  each_field(in.message(at), 1, [&](proto_reader& f) { text = read_view(f, at, "bytes"); });
  if (text.empty()) {
    out = raw_json();
    return;
  }
  json_reader::read_whole(text, out, at);
}

bool read_time(proto_reader& in, timestamp& out, const json_path& at, bool micro) {
  auto sub = in.message(at);
  if (sub.data().empty()) return false;
  std::int64_t seconds = 0;
  std::int32_t nanos = 0;
  while (sub.next()) {
    switch (sub.tag()) {
    case 1:
      read(sub, seconds, at);
      break;
    case 2:
      read(sub, nanos, at);
      break;
    default:
      sub.skip();
      break;
    }
  }
  // Years 1 to 9999, as RFC 3339 can spell them.
  constexpr std::int64_t min_seconds = -62135596800;
  constexpr std::int64_t max_seconds = 253402300799;
  if (seconds < min_seconds || seconds > max_seconds) fail(at, "a time outside the years 1 to 9999");
  if (nanos < 0 || nanos > 999999999) fail(at, "a time whose nanoseconds are out of range");
  using std::chrono::microseconds;
  const auto us = microseconds(seconds * 1000000 + (micro ? nanos / 1000 : 0));
  out = timestamp(timestamp::time_point(us));
  return true;
}

void write(proto_writer& out, protozero::pbf_tag_type tag, const std::string& v) {
  out.add_string(tag, v.data(), v.size());
}
void write(proto_writer& out, protozero::pbf_tag_type tag, bool v) { out.add_bool(tag, v); }
void write(proto_writer& out, protozero::pbf_tag_type tag, std::int32_t v) { out.add_int32(tag, v); }
void write(proto_writer& out, protozero::pbf_tag_type tag, std::int64_t v) { out.add_int64(tag, v); }
void write(proto_writer& out, protozero::pbf_tag_type tag, double v) { out.add_double(tag, v); }
void write(proto_writer& out, protozero::pbf_tag_type tag, const bytes& v) {
  out.add_bytes(tag, v.str().data(), v.str().size());
}

void write(proto_writer& out, protozero::pbf_tag_type tag, const quantity& v) {
  proto_writer sub(out, tag);
  sub.add_string(1, v.text().data(), v.text().size());
}

void write(proto_writer& out, protozero::pbf_tag_type tag, const int_or_string& v) {
  proto_writer sub(out, tag);
  // Go writes all three fields. intVal is an int32 there: a larger integer
  // has no protobuf form (the caller then sends JSON, see note_lossy).
  const bool fits = v.int_value() >= std::numeric_limits<std::int32_t>::min() &&
                    v.int_value() <= std::numeric_limits<std::int32_t>::max();
  if (!fits) sub.note_lossy();
  sub.add_int64(1, v.is_string() ? 1 : 0);
  sub.add_int32(2, fits ? static_cast<std::int32_t>(v.int_value()) : 0);
  sub.add_string(3, v.string_value().data(), v.string_value().size());
}

void write(proto_writer& out, protozero::pbf_tag_type tag, const raw_json& v) {
  proto_writer sub(out, tag);
  const auto text = v.text();
  if (!text.empty()) sub.add_bytes(1, text.data(), text.size());
}

namespace {
// read_time's counterpart: seconds, and for MicroTime the nanoseconds.
void write_time(proto_writer& out, protozero::pbf_tag_type tag, const timestamp& v, bool micro) {
  using std::chrono::duration_cast;
  using std::chrono::microseconds;
  using std::chrono::seconds;
  proto_writer sub(out, tag);
  const auto since = v.time().time_since_epoch();
  auto s = duration_cast<seconds>(since);
  if (s > since) s -= seconds(1);  // floor, for times before 1970
  sub.add_int64(1, s.count());
  if (micro) sub.add_int32(2, static_cast<std::int32_t>(duration_cast<microseconds>(since - s).count() * 1000));
}
}  // namespace

void write(proto_writer& out, protozero::pbf_tag_type tag, const timestamp& v) { write_time(out, tag, v, false); }
void write(proto_writer& out, protozero::pbf_tag_type tag, const micro_timestamp& v) { write_time(out, tag, v, true); }

}  // namespace pb

// ---- envelope and entry points ---------------------------------------------

protobuf_envelope open_envelope(std::string_view body) {
  const json_path root{};
  if (body.substr(0, protobuf_magic.size()) != protobuf_magic) {
    fail(root, "not a Kubernetes protobuf body (no \"k8s\\0\" prefix)");
  }
  protobuf_envelope env;
  try {
    proto_reader in(body.substr(protobuf_magic.size()));
    while (in.next()) {
      switch (in.tag()) {
      case 1: {  // typeMeta
        auto tm = in.message(root);
        while (tm.next()) {
          if (tm.tag() == 1 && tm.wire_type() == pbf_wire_type::length_delimited) {
            env.api_version = tm.get_view();
          } else if (tm.tag() == 2 && tm.wire_type() == pbf_wire_type::length_delimited) {
            env.kind = tm.get_view();
          } else {
            tm.skip();
          }
        }
        break;
      }
      case 2:
        env.raw = pb::read_view(in, root, "bytes");
        break;
      case 3:
        env.content_encoding = pb::read_string_view(in, root);
        break;
      case 4:
        env.content_type = pb::read_string_view(in, root);
        break;
      default:
        in.skip();
        break;
      }
    }
  } catch (const protozero::exception& e) {
    fail(root, std::string("malformed protobuf envelope: ") + e.what());
  }
  if (!env.content_encoding.empty()) {
    fail(root, "protobuf body with content encoding \"" + std::string(env.content_encoding.substr(0, 32)) +
                   "\" (only none is supported)");
  }
  return env;
}

std::string seal_envelope(std::string_view api_version, std::string_view kind, std::string_view raw) {
  std::string out(protobuf_magic);
  out.reserve(raw.size() + api_version.size() + kind.size() + 32);
  protozero::pbf_writer w(out);
  {
    protozero::pbf_writer tm(w, 1);
    tm.add_string(1, api_version.data(), api_version.size());
    tm.add_string(2, kind.data(), kind.size());
  }
  w.add_bytes(2, raw.data(), raw.size());
  w.add_string(3, "", 0);
  w.add_string(4, "", 0);
  return out;
}

void decode_protobuf(std::string_view message, proto_read_fn fn, void* out) {
  const json_path root{};
  try {
    proto_reader in(message);
    fn(in, out, root);
  } catch (const protozero::exception& e) {  // in the top-level message itself
    pb::fail_malformed(root, e);
  }
}

std::string encode_protobuf(proto_write_fn fn, const void* in, bool* lossy) {
  std::string out;
  if (lossy) *lossy = false;
  {
    proto_writer w(out, lossy);
    fn(in, w);
  }
  return out;
}

}  // namespace kube::codec

// ---- Status and bookmark metadata, read by hand -----------------------------

namespace kube::detail {

namespace {

using codec::proto_reader;
namespace pb = codec::pb;

boost::json::object status_cause(proto_reader in, const json_path& at) {
  boost::json::object o;
  while (in.next()) {
    const char* key = in.tag() == 1 ? "reason" : in.tag() == 2 ? "message" : in.tag() == 3 ? "field" : nullptr;
    if (key) {
      o[key] = pb::read_string_view(in, at);
    } else {
      in.skip();
    }
  }
  return o;
}

boost::json::object status_details(proto_reader in, const json_path& at) {
  boost::json::object o;
  boost::json::array causes;
  while (in.next()) {
    switch (in.tag()) {
    case 1:
      o["name"] = pb::read_string_view(in, at);
      break;
    case 2:
      o["group"] = pb::read_string_view(in, at);
      break;
    case 3:
      o["kind"] = pb::read_string_view(in, at);
      break;
    case 6:
      o["uid"] = pb::read_string_view(in, at);
      break;
    case 4:
      causes.push_back(status_cause(in.message(at), at));
      break;
    case 5: {
      std::int32_t s = 0;
      pb::read(in, s, at);
      o["retryAfterSeconds"] = s;
      break;
    }
    default:
      in.skip();
      break;
    }
  }
  if (!causes.empty()) o["causes"] = std::move(causes);
  return o;
}

}  // namespace

boost::json::object status_from_protobuf(std::string_view message) {
  const json_path root{};
  boost::json::object o{{"apiVersion", "v1"}, {"kind", "Status"}};
  try {
    proto_reader in(message);
    while (in.next()) {
      switch (in.tag()) {
      case 2:
        o["status"] = pb::read_string_view(in, root);
        break;
      case 3:
        o["message"] = pb::read_string_view(in, root);
        break;
      case 4:
        o["reason"] = pb::read_string_view(in, root);
        break;
      case 5:
        o["details"] = status_details(in.message(root), root);
        break;
      case 6: {
        std::int32_t code = 0;
        pb::read(in, code, root);
        o["code"] = code;
        break;
      }
      default:
        in.skip();
        break;
      }
    }
  } catch (const protozero::exception& e) {
    pb::fail_malformed(root, e);
  }
  return o;
}

boost::json::object bookmark_from_protobuf(const codec::protobuf_envelope& env) {
  const json_path root{};
  boost::json::object md;
  try {
    proto_reader in(env.raw);
    while (in.next()) {
      if (in.tag() != 1) {
        in.skip();
        continue;
      }
      auto meta = in.message(root);
      while (meta.next()) {
        if (meta.tag() == 6) {
          md["resourceVersion"] = pb::read_string_view(meta, root);
        } else if (meta.tag() == 12) {  // map<string, string> annotations
          const auto entry = meta.message(root);
          std::string_view key, value;
          codec::pb::each_field(entry, 1, [&](proto_reader& f) { key = pb::read_string_view(f, root); });
          codec::pb::each_field(entry, 2, [&](proto_reader& f) { value = pb::read_string_view(f, root); });
          auto& a = md["annotations"];
          if (!a.is_object()) a.emplace_object();
          a.as_object()[key] = value;
        } else {
          meta.skip();
        }
      }
    }
  } catch (const protozero::exception& e) {
    pb::fail_malformed(root, e);
  }
  return {{"apiVersion", env.api_version}, {"kind", env.kind}, {"metadata", std::move(md)}};
}

}  // namespace kube::detail
