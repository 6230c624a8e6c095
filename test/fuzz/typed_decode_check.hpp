#pragma once

// The checks shared by the typed decoding fuzz targets (a built-in type and
// a CRD type). A generated type has two decoders (docs/guides/types.md, "Two
// decoders, one result"): read_json over the text and decode over a parsed
// DOM. For any input:
//   - decoding fails only with kube::decode_error (any other exception
//     escapes and is reported as a crash);
//   - from_json gives the DOM decoder's object, or its error message;
//   - the text reader accepts exactly what the DOM decoder accepts, and both
//     give the same object (compared through their encodings);
//   - an accepted object's encoding decodes again, to an object with the
//     same encoding (to_json is a fixed point after one round).

#include "fuzz_support.hpp"

#include <kube/codec/codec.hpp>
#include <kube/codec/json_reader.hpp>

#include <string>
#include <string_view>

namespace fuzz {

struct decode_outcome {
  bool ok = false;
  std::string text;  ///< the object's encoding, or the error message

  bool operator==(const decode_outcome&) const = default;
};

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
  require(reader.ok == dom.ok, target, "the text reader accepts exactly what the DOM decoder accepts");
  if (reader.ok) require(reader.text == dom.text, target, "both decoders give the same object");
  if (!dom.ok) return;
  const auto again = run_decode([&] { return kube::to_json(kube::from_json<T>(dom.text)); });
  require(again.ok, target, "an encoded object decodes");
  require(again.text == dom.text, target, "decoding an encoding gives the same encoding");
}

}  // namespace fuzz
