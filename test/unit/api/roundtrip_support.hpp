#pragma once

// Decode a JSON value into the registered C++ type, encode it again, and
// compare: the two documents must be equal once JSON nulls are dropped (the
// generated types read null as "absent").

#include "roundtrip_registry.hpp"

#include <boost/json.hpp>

#include <string>

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

/// Empty on success, else what went wrong.
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
  return {};
}
