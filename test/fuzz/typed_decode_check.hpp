#pragma once

// The checks shared by the typed decoding fuzz targets (a built-in type and
// a CRD type). A generated type has two decoders (docs/guides/types.md, "Two
// decoders, one result"): read_json over the text and decode over a parsed
// DOM. For any input:
//   - decoding fails only with kube::decode_error (any other exception
//     escapes and is reported as a crash);
//   - from_json gives the DOM decoder's object, or its error message;
//   - what the text reader accepts, the DOM decoder accepts, and both give
//     the same object (compared through their encodings). The reader may
//     refuse what the DOM decoder takes only when a key repeats and an
//     earlier value is of the wrong kind: Boost.JSON keeps the last of
//     duplicate keys before the DOM decoder sees them, the reader reads them
//     all in turn (so does Go's encoding/json). from_json and the typed
//     client then fall back to the DOM, so users see the DOM's result. On the
//     DOM's own text the two accept exactly the same;
//   - an accepted object's encoding decodes again, to an object with the
//     same encoding (to_json is a fixed point after one round), but for
//     numbers with a fraction or an exponent, which may move by one ULP.

#include "fuzz_support.hpp"

#include <kube/codec/codec.hpp>
#include <kube/codec/json_reader.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <cmath>
#include <cstdio>
#include <string>
#include <string_view>

namespace fuzz {

struct decode_outcome {
  bool ok = false;
  std::string text;  ///< the object's encoding, or the error message

  bool operator==(const decode_outcome&) const = default;
};

// Equal JSON values, except that two numbers with a fraction or an exponent
// may be one ULP apart: Boost.JSON 1.74 reads such a number to within one
// ULP of the correctly rounded double (docs/guides/types.md).
inline bool same_json(const boost::json::value& a, const boost::json::value& b) {
  if (a.is_double() && b.is_double()) {
    const double x = a.get_double();
    const double y = b.get_double();
    return x == y || std::nextafter(x, y) == y;
  }
  if (a.kind() != b.kind()) return false;
  if (const auto* aa = a.if_array()) {
    const auto& ba = b.get_array();
    if (aa->size() != ba.size()) return false;
    for (std::size_t i = 0; i < aa->size(); ++i) {
      if (!same_json((*aa)[i], ba[i])) return false;
    }
    return true;
  }
  if (const auto* ao = a.if_object()) {
    const auto& bo = b.get_object();
    if (ao->size() != bo.size()) return false;
    for (const auto& kv : *ao) {
      const auto* other = bo.if_contains(kv.key());
      if (other == nullptr || !same_json(kv.value(), *other)) return false;
    }
    return true;
  }
  return a == b;
}

// A JSON text that the DOM decoder took (or our own encoding) as a DOM.
inline boost::json::value parse_deep(std::string_view text) {
  boost::json::parse_options deep;
  deep.max_depth = 4 * kube::codec::max_json_depth;
  return boost::json::parse(text, {}, deep);
}

// Two encodings (our own output, valid JSON) as equal values.
inline bool same_json(std::string_view a, std::string_view b) {
  return a == b || same_json(parse_deep(a), parse_deep(b));
}

template <class F>
decode_outcome run_decode(F f) {
  try {
    return {true, f()};
  } catch (const kube::decode_error& e) {
    return {false, e.what()};
  }
}

template <class T>
void check_typed_decode(std::string_view text, const char* target) {
  const auto reader = run_decode([&] {
    T v{};
    kube::codec::read_text(text, &kube::codec::read_erased<T>, &v);
    return kube::to_json(v);
  });
  const auto dom = run_decode([&] {
    T v{};
    kube::codec::decode_text(text, &kube::codec::decode_erased<T>, &v);
    return kube::to_json(v);
  });
  const auto api = run_decode([&] { return kube::to_json(kube::from_json<T>(text)); });
  require(api == dom, target, "from_json gives the DOM decoder's object or error");
  require(!reader.ok || dom.ok, target, "what the text reader accepts, the DOM decoder accepts");
  if (reader.ok) require(reader.text == dom.text, target, "both decoders give the same object");
  if (!dom.ok) return;
  if (!reader.ok) {
    const auto once = boost::json::serialize(parse_deep(text));  // duplicate keys gone
    const auto reread = run_decode([&] {
      T v{};
      kube::codec::read_text(once, &kube::codec::read_erased<T>, &v);
      return kube::to_json(v);
    });
    require(reread == dom, target, "on the DOM's own text the text reader gives the DOM decoder's object");
  }
  const auto again = run_decode([&] { return kube::to_json(kube::from_json<T>(dom.text)); });
  require(again.ok, target, "an encoded object decodes");
  if (!same_json(again.text, dom.text)) {
    std::fprintf(stderr, "first encoding:  %.600s\nsecond encoding: %.600s\n", dom.text.c_str(), again.text.c_str());
    require(false, target, "decoding an encoding gives the same encoding");
  }
}

}  // namespace fuzz
