// Fuzz target: Kubernetes' protobuf encoding. The first byte picks what the
// rest is:
//   even: a protobuf body ("k8s\0" + runtime.Unknown) read as a Pod. What
//         reads must write, read back equal, and write the same bytes again
//         (unknown fields included).
//         The same bytes are also walked as messages nested in
//         length-delimited fields, at every level, with the reader's own
//         message(): its depth limit must stop the walk, whatever the input.
//   odd:  a protobuf watch stream (4-byte lengths, WatchEvents of Pods) fed
//         whole and cut at a point the second byte picks: the same events
//         and the same error either way.
// Nothing may crash, hang or read out of bounds (ASan, UBSan).

#include "fuzz_support.hpp"

#include <kube/k8s/core/v1/pod.hpp>
#include <kube/codec/codec.hpp>
#include <kube/codec/proto_impl.hpp>
#include <kube/detail/typed_core.hpp>
#include <kube/detail/watch_decoder.hpp>

#include <boost/json/serialize.hpp>
#include <protozero/exception.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace {

constexpr const char* target = "protobuf_fuzz";
using k8s::core::v1::Pod;

void check_body(std::string_view body) {
  Pod pod;
  try {
    pod = kube::from_protobuf<Pod>(body);
  } catch (const kube::decode_error&) {
    return;  // refused, with a message: fine
  }
  const auto again = kube::to_protobuf(pod);
  Pod back;
  try {
    back = kube::from_protobuf<Pod>(again);
  } catch (const kube::decode_error&) {
    fuzz::require(false, target, "what was read and written back does not read");
  }
  fuzz::require(kube::to_protobuf(back) == again, target, "a second write differs from the first");
  fuzz::require(back.unknown_fields == pod.unknown_fields, target, "unknown fields changed on the way");
  (void)kube::to_json(back);
}

// Reads every length-delimited field as a message, to any depth the reader
// allows; returns the deepest level reached.
std::size_t walk(kube::codec::proto_reader in, std::size_t depth) {
  std::size_t deepest = depth;
  try {
    while (in.next()) {
      if (in.wire_type() != protozero::pbf_wire_type::length_delimited) {
        in.skip();
        continue;
      }
      deepest = std::max(deepest, walk(in.message(kube::json_path{}), depth + 1));
    }
  } catch (const protozero::exception&) {  // not a message: this level ends here
  } catch (const kube::decode_error&) {    // the depth limit
  }
  return deepest;
}

struct outcome {
  std::vector<std::string> events;  // type and the object as protobuf, or the JSON object
  bool failed = false;
  std::string message;
};

outcome feed(std::string_view stream, std::size_t cut) {
  kube::detail::watch_decoder_params p;
  p.protobuf = true;
  p.raw_objects = true;
  p.max_event_size = 1 << 16;
  p.objects = kube::detail::object_reader_of<Pod>();
  kube::detail::watch_decoder d(p);
  outcome o;
  auto drain = [&] {
    while (auto ev = d.next()) {
      std::string e(kube::to_string(ev->type));
      if (ev->decoded) {
        e += kube::to_protobuf(*static_cast<const Pod*>(ev->decoded.get()));
      } else {
        e += boost::json::serialize(ev->object);
      }
      o.events.push_back(std::move(e));
    }
  };
  bool failed = d.write(stream.substr(0, cut)).failed();
  drain();
  if (!failed) failed = d.write(stream.substr(cut)).failed();
  drain();
  if (!failed) failed = d.finish().failed();
  o.failed = failed;
  o.message = d.error_message();
  return o;
}

void check_stream(std::string_view stream, std::size_t cut) {
  const auto whole = feed(stream, stream.size());
  const auto split = feed(stream, cut);
  fuzz::require(whole.failed == split.failed, target, "a cut changed whether the stream failed");
  fuzz::require(whole.events == split.events, target, "a cut changed the events");
  fuzz::require(whole.message == split.message, target, "a cut changed the error");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const auto in = fuzz::text(data + 2, size - 2);
  if (data[0] % 2 == 0) {
    check_body(in);
    fuzz::require(walk(kube::codec::proto_reader(in), 0) <= kube::codec::max_json_depth, target,
                  "messages were read deeper than max_json_depth");
  } else {
    check_stream(in, in.empty() ? 0 : data[1] * in.size() / 256);
  }
  return 0;
}
