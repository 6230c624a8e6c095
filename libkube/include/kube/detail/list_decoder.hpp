#pragma once

// Sans-io decoder for the body of a list response into a shared list, item
// by item as the body arrives, JSON or protobuf (a "k8s\0" envelope whose
// raw message is the List). The transport feeds the de-chunked, decoded
// (gunzipped) body bytes with write() exactly as they arrive; each item is
// read into the sink as soon as its last byte is in, and its bytes are
// dropped. So a list is never held whole as text: the decoder holds one
// item's bytes at most (plus the part of a network read after it).
//
// The result equals the whole-body decoders' (read_shared_list,
// read_shared_list_proto) whatever the split; an error names the item
// (".items[12]") and the problem, as theirs do. Errors throw decode_error;
// the decoder is then failed for good.
//
// Thread safety: none; one decoder per list response.

#include <kube/detail/typed_core.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace kube::detail {

class list_decoder {
public:
  /// `protobuf`: the body is Kubernetes' protobuf encoding; else JSON.
  list_decoder(const shared_list_sink& sink, bool protobuf);

  /// The next bytes of the body; throws decode_error.
  void write(std::string_view bytes);
  /// The body is complete; throws decode_error if the list is not.
  void finish();
  /// Items read so far.
  [[nodiscard]] std::size_t items() const noexcept { return items_; }

private:
  // Each step reads one unit (a protobuf field, a JSON member, an item)
  // from pending_ at pos_; false when it needs more bytes.
  bool step_protobuf();
  bool step_json();
  void json_item(std::string_view text);
  void json_member(std::string_view key, std::string_view text);
  [[noreturn]] void syntax(const char* expected) const;

  shared_list_sink sink_;
  bool protobuf_;
  bool failed_ = false;
  std::string pending_;  // bytes not yet consumed, from pos_
  std::size_t pos_ = 0;
  std::size_t offset_ = 0;  // body offset of pending_[0]
  std::size_t items_ = 0;
  int state_ = 0;
  // protobuf: bytes of the List message (envelope field 2) not yet read.
  std::uint64_t list_left_ = 0;
  // JSON: where a scan of an unfinished value stopped, to resume there.
  struct scan_state {
    std::size_t at = 0;  // offset in pending_ from pos_
    std::size_t depth = 0;
    bool in_string = false;
    bool escape = false;
  } scan_;
  std::string key_;
};

}  // namespace kube::detail
