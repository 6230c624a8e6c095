// One event of a protobuf watch stream: a metav1.WatchEvent {type = 1,
// object = 2 (RawExtension {raw = 1})}, whose raw is a protobuf body of its
// own ("k8s\0" and runtime.Unknown). The framing is watch_decoder's.

#include "codec/protobuf_meta.hpp"

#include <kube/codec/proto_impl.hpp>
#include <kube/detail/watch_decoder.hpp>

#include <protozero/exception.hpp>

namespace kube::detail {

bool protobuf_watch_event(std::string_view message, const watch_decoder_params& params, watch_event& out,
                          std::string& why) {
  const json_path root{};
  std::string_view type_name, raw;
  bool has_object = false;
  try {
    codec::proto_reader in(message);
    while (in.next()) {
      if (in.tag() == 1) {
        type_name = codec::pb::read_string_view(in, {&root, "type"});
      } else if (in.tag() == 2) {
        const json_path object{&root, "object"};
        has_object = true;
        codec::pb::each_field(in.message(object), 1,
                              [&](codec::proto_reader& f) { raw = codec::pb::read_view(f, object, "bytes"); });
      } else {
        in.skip();
      }
    }
  } catch (const protozero::exception& e) {
    why = std::string("malformed WatchEvent message: ") + e.what();
    return false;
  } catch (const decode_error& e) {
    why = std::string("malformed WatchEvent message: ") + e.what();
    return false;
  }
  const auto type = watch_event_type_from_string(type_name);
  if (!type) {
    why = type_name.empty() ? "watch event has no type" : "unknown watch event type";
    return false;
  }
  if (!has_object) {
    why = "watch event has no object";
    return false;
  }
  out.type = *type;
  try {
    const auto env = codec::open_envelope(raw);
    switch (*type) {
    case watch_event_type::error:
      out.object = status_from_protobuf(env.raw);
      return true;
    case watch_event_type::bookmark:
      out.object = bookmark_from_protobuf(env);
      return true;
    default:
      break;
    }
    const auto& r = params.objects;
    if (!r.make || !r.proto_read || !r.type) {
      why = "a protobuf watch stream for a type without a protobuf reader";
      return false;
    }
    auto obj = r.make();
    codec::decode_protobuf(env.raw, r.proto_read, obj.get());
    if (r.type_meta) r.type_meta(obj.get(), env.api_version, env.kind);
    out.decoded = std::move(obj);
    out.decoded_type = r.type;
  } catch (const decode_error& e) {
    // The path, never the bytes: objects may be Secrets.
    why = std::string(to_string(*type)) + " event: " + e.what();
    return false;
  }
  return true;
}

}  // namespace kube::detail
