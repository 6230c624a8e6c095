// Fuzz target: a list body decoded item by item as it arrives
// (kube::detail::list_decoder, items of k8s::core::v1::Pod). The first byte
// picks the format (even: JSON, odd: protobuf), the second where the rest is
// cut. The body fed whole, cut in two there, and in pieces of 7 bytes gives
// the same list or the same error. Nothing may crash, hang or read out of
// bounds (ASan, UBSan).

#include "fuzz_support.hpp"

#include <kube/k8s/core/v1/pod.hpp>
#include <kube/codec/codec.hpp>
#include <kube/detail/list_decoder.hpp>
#include <kube/detail/typed_core.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace {

constexpr const char* target = "list_decoder_fuzz";
using k8s::core::v1::Pod;

struct outcome {
  std::vector<std::string> seen;  // metadata, then each item as JSON
  std::string error;
  bool operator==(const outcome&) const = default;
};

outcome feed(std::string_view body, bool protobuf, std::size_t first, std::size_t piece) {
  outcome o;
  kube::shared_list<Pod> l;
  try {
    kube::detail::list_decoder d(kube::detail::make_shared_list_sink(l), protobuf);
    std::size_t n = first;
    while (!body.empty()) {
      const auto take = std::min(n, body.size());
      d.write(body.substr(0, take));
      body.remove_prefix(take);
      n = piece;
    }
    d.finish();
  } catch (const kube::decode_error& e) {
    o.error = e.what();  // offsets in it are body offsets: the same for any cut
    return o;
  }
  o.seen = {l.resource_version, l.continue_token,
            l.remaining_item_count ? std::to_string(*l.remaining_item_count) : "-"};
  for (const auto& p : l.items) o.seen.push_back(kube::to_json(*p));
  return o;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const bool protobuf = (data[0] & 1) != 0;
  const auto body = fuzz::text(data + 2, size - 2);
  const std::size_t cut = body.empty() ? 0 : data[1] % (body.size() + 1);
  const auto whole = feed(body, protobuf, body.size(), 1);
  fuzz::require(feed(body, protobuf, cut, body.size()) == whole, target, "a cut in two changes the outcome");
  fuzz::require(feed(body, protobuf, 7, 7) == whole, target, "pieces of 7 bytes change the outcome");
  return 0;
}
