#pragma once

// A raw_json read by the text reader (json_reader::read), as generated
// read_json functions read managedFields' fieldsV1.

#include <kube/codec/json_reader.hpp>
#include <kube/codec/value_types.hpp>

#include <string_view>

inline kube::raw_json read_raw(std::string_view text) {
  kube::raw_json out;
  kube::codec::read_text(
      text,
      [](kube::codec::json_reader& in, void* o, const kube::json_path& at) {
        in.read(*static_cast<kube::raw_json*>(o), at);
      },
      &out);
  return out;
}
