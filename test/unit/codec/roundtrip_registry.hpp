#pragma once

// Maps every generated type to its codec, by OpenAPI schema name and by
// group/version/kind (the registry source is generated from the spec).

#include <kube/codec/codec.hpp>

#include <functional>
#include <memory>
#include <string_view>
#include <vector>

struct roundtrip_entry {
  std::string_view schema;
  std::string_view group;
  std::string_view version;
  std::string_view kind;
  kube::codec::decode_fn decode;
  kube::codec::read_fn read;
  kube::codec::encode_fn encode;
  kube::codec::proto_read_fn proto_read;    ///< nullptr: the type is JSON only
  kube::codec::proto_write_fn proto_write;  ///< nullptr: the type is JSON only
  std::function<std::shared_ptr<void>()> make;
};

const std::vector<roundtrip_entry>& roundtrip_registry();
