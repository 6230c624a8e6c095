#pragma once

// Decode a JSON value into the registered C++ type, encode it again, and
// compare: the two documents must be equal once JSON nulls are dropped (the
// generated types read null as "absent").

#include "roundtrip_registry.hpp"

#include <kube/codec/json_reader.hpp>

#include <boost/json.hpp>

#include <string>
#include <string_view>

inline boost::json::value drop_nulls(const boost::json::value& v) {
  if (const auto* o = v.if_object()) {
    boost::json::object out;
    for (const auto& kv : *o) {
      if (!kv.value().is_null()) out[kv.key()] = drop_nulls(kv.value());
    }
    return out;
  }
  if (const auto* a = v.if_array()) {
    boost::json::array out;
    for (const auto& e : *a) out.push_back(drop_nulls(e));
    return out;
  }
  return v;
}

/// `text` with a newline and two spaces after every '{', '[', ',' and ':'
/// outside strings: the same document as the server's pretty output would be.
inline std::string spaced(std::string_view text) {
  std::string out;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    out += c;
    if (in_string) {
      if (c == '\\' && i + 1 < text.size()) out += text[++i];
      if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[' || c == ',' || c == ':') {
      out += "\n  ";
    }
  }
  return out;
}

/// Empty on success, else what went wrong. Decodes through the DOM and
/// straight from the text (json_reader, compact and spaced): the DOM decode
/// must re-encode to `in`, and the text decodes must encode exactly as it.
inline std::string roundtrip(const roundtrip_entry& e, const boost::json::value& in) {
  auto obj = e.make();
  try {
    const kube::json_path root{};
    e.decode(in, obj.get(), root);
  } catch (const kube::decode_error& err) {
    return std::string(e.schema) + ": decode failed: " + err.what();
  }
  boost::json::value out;
  e.encode(obj.get(), out);
  if (drop_nulls(out) != drop_nulls(in)) {
    return std::string(e.schema) + ": re-encoded JSON differs\n  in:  " + boost::json::serialize(drop_nulls(in)) +
           "\n  out: " + boost::json::serialize(drop_nulls(out));
  }
  const auto compact = boost::json::serialize(in);
  for (const auto& text : {compact, spaced(compact)}) {
    auto read = e.make();
    try {
      kube::codec::read_text(text, e.read, read.get());
    } catch (const kube::decode_error& err) {
      return std::string(e.schema) + ": read_json failed: " + err.what();
    }
    boost::json::value read_out;
    e.encode(read.get(), read_out);
    if (read_out != out) {
      return std::string(e.schema) + ": read_json and decode differ\n  decode:    " + boost::json::serialize(out) +
             "\n  read_json: " + boost::json::serialize(read_out);
    }
  }
  return {};
}

/// Empty on success, else what went wrong. Decodes the sample from JSON,
/// writes it as protobuf, reads that back, and compares the JSON it encodes
/// to `expected` (the sample as protobuf carries it: kube-codegen's
/// proto_expected). The bytes read back must write the same bytes again.
inline std::string proto_roundtrip(const roundtrip_entry& e, const boost::json::value& sample,
                                   const boost::json::value& expected) {
  auto obj = e.make();
  const kube::json_path root{};
  try {
    e.decode(sample, obj.get(), root);
  } catch (const kube::decode_error& err) {
    return std::string(e.schema) + ": decode failed: " + err.what();
  }
  const auto bytes = kube::codec::encode_protobuf(e.proto_write, obj.get());
  auto back = e.make();
  try {
    kube::codec::decode_protobuf(bytes, e.proto_read, back.get());
  } catch (const kube::decode_error& err) {
    return std::string(e.schema) + ": protobuf read failed: " + err.what();
  }
  boost::json::value out;
  e.encode(back.get(), out);
  if (drop_nulls(out) != drop_nulls(expected)) {
    return std::string(e.schema) +
           ": read back through protobuf differs\n  expected: " + boost::json::serialize(drop_nulls(expected)) +
           "\n  got:      " + boost::json::serialize(drop_nulls(out));
  }
  const auto again = kube::codec::encode_protobuf(e.proto_write, back.get());
  auto third = e.make();
  kube::codec::decode_protobuf(again, e.proto_read, third.get());
  if (kube::codec::encode_protobuf(e.proto_write, third.get()) != again) {
    return std::string(e.schema) + ": protobuf write is not stable";
  }
  return {};
}
