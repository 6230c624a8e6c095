#pragma once
// The object reader the watch decoder tests and the fuzz target give the
// decoder (watch_decoder_params::objects): a JSON tree read the way
// generated read_json reads a type, objects member by member through the
// text reader's structural calls, anything else (arrays too, as generated
// code reads an unknown member or a free-form field) through value(). It
// accepts any valid JSON object, so every event the general path accepts,
// this reader accepts too.
#include <kube/codec/json_reader.hpp>
#include <kube/detail/watch_decoder.hpp>

#include <boost/json/value.hpp>

#include <memory>
#include <string_view>
#include <typeinfo>

namespace watch_test {

inline void read_tree(kube::codec::json_reader& in, boost::json::value& out) {
  if (in.begin_object()) {
    auto& o = out.emplace_object();
    std::string_view key;
    while (in.next_key(key)) read_tree(in, o[key]);
  } else {
    out = in.value();
  }
}

inline void read_tree_erased(kube::codec::json_reader& in, void* out, const kube::json_path&) {
  read_tree(in, *static_cast<boost::json::value*>(out));
}

inline std::shared_ptr<void> make_tree() { return std::make_shared<boost::json::value>(); }

/// The reader for watch_decoder_params::objects; objects are boost::json::value.
inline kube::detail::watch_decoder_params::object_reader tree_reader() {
  return {&make_tree, &read_tree_erased, &typeid(boost::json::value)};
}

}  // namespace watch_test
