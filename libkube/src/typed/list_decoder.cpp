#include <kube/detail/list_decoder.hpp>

#include "codec/parse_json.hpp"

#include <kube/codec/json_reader.hpp>
#include <kube/codec/proto_impl.hpp>
#include <kube/error.hpp>

#include <boost/json/value.hpp>

namespace kube::detail {

namespace {

enum json_state : int {
  j_begin,       // before the list's '{'
  j_first_key,   // after '{': a key or '}'
  j_key,         // after ',': a key
  j_colon,       // after a key
  j_items,       // the value of "items": '[' or null
  j_first_item,  // after '[': an item or ']'
  j_after_item,  // ',' or ']'
  j_item,        // after ',' in items: an item
  j_member_end,  // after a member: ',' or '}'
  j_value,       // the value of a member other than items
  j_done,        // after the list's '}': whitespace only
};

enum proto_state : int {
  p_magic,     // before "k8s\0"
  p_envelope,  // at a field of runtime.Unknown
  p_list,      // inside its raw field, the List message
};

constexpr bool is_ws(char c) noexcept { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// A varint at [p, end): false when it is not complete yet; throws when it
// runs past ten bytes.
bool varint(const char* p, const char* end, std::uint64_t& v, std::size_t& n, const json_path& at) {
  v = 0;
  for (std::size_t i = 0; i < 10; ++i) {
    if (p + i == end) return false;
    const auto b = static_cast<unsigned char>(p[i]);
    v |= static_cast<std::uint64_t>(b & 0x7f) << (7 * i);
    if ((b & 0x80) == 0) {
      n = i + 1;
      return true;
    }
  }
  codec::fail(at, "malformed protobuf: a varint longer than ten bytes");
}

}  // namespace

list_decoder::list_decoder(const shared_list_sink& sink, bool protobuf)
    : sink_(sink),
      protobuf_(protobuf),
      state_(protobuf ? static_cast<int>(p_magic) : static_cast<int>(j_begin)) {
  if (protobuf_ && !sink_.proto_item) codec::fail({}, "the item type has no protobuf codec");
  reset_shared_list(sink_);
}

void list_decoder::write(std::string_view bytes) {
  if (failed_) codec::fail({}, "the list decoder failed before");
  pending_.append(bytes);
  try {
    while (protobuf_ ? step_protobuf() : step_json()) {}
  } catch (...) {
    failed_ = true;
    throw;
  }
  // Drop what was read; what is left is (part of) one unit.
  pending_.erase(0, pos_);
  offset_ += pos_;
  pos_ = 0;
}

void list_decoder::finish() {
  if (failed_) codec::fail({}, "the list decoder failed before");
  failed_ = true;  // whatever happens, nothing more
  const bool complete = protobuf_ ? state_ == p_envelope && pending_.empty() : state_ == j_done;
  if (!complete) {
    codec::fail({}, "the list body ends early, after " + std::to_string(offset_ + pending_.size()) + " bytes and " +
                        std::to_string(items_) + " items");
  }
}

// ---- protobuf ---------------------------------------------------------------

bool list_decoder::step_protobuf() {
  const json_path root{};
  const char* p = pending_.data() + pos_;
  const char* end = pending_.data() + pending_.size();
  if (state_ == p_magic) {
    if (end - p < static_cast<std::ptrdiff_t>(codec::protobuf_magic.size())) return false;
    if (std::string_view(p, codec::protobuf_magic.size()) != codec::protobuf_magic)
      codec::fail(root, "not a Kubernetes protobuf body (no \"k8s\\0\" prefix)");
    pos_ += codec::protobuf_magic.size();
    state_ = p_envelope;
    return true;
  }
  if (p == end) return false;
  if (state_ == p_list && list_left_ == 0) {
    state_ = p_envelope;
    return true;
  }
  // A field's key, and its length when it has one.
  std::uint64_t key = 0, len = 0;
  std::size_t n = 0, m = 0;
  if (!varint(p, end, key, n, root)) return false;
  const auto field = key >> 3;
  const auto wire = static_cast<unsigned>(key & 7);
  switch (wire) {
  case 0:
    if (!varint(p + n, end, len, m, root)) return false;
    len = 0;
    n += m;
    break;
  case 1:
    len = 8;
    break;
  case 5:
    len = 4;
    break;
  case 2:
    if (!varint(p + n, end, len, m, root)) return false;
    n += m;
    break;
  default:
    codec::fail(root, "malformed protobuf: wire type " + std::to_string(wire) + " at body offset " +
                          std::to_string(offset_ + pos_));
  }
  if (state_ == p_envelope) {
    if (field == 2 && wire == 2) {  // raw: the List, read field by field as it comes
      pos_ += n;
      list_left_ = len;
      state_ = p_list;
      return true;
    }
    if (static_cast<std::uint64_t>(end - p - static_cast<std::ptrdiff_t>(n)) < len) return false;
    if (field == 3 && wire == 2 && len > 0) {
      codec::fail(root, "protobuf body with content encoding \"" +
                            std::string(p + n, static_cast<std::size_t>(std::min<std::uint64_t>(len, 32))) +
                            "\" (only none is supported)");
    }
    pos_ += n + len;  // typeMeta, contentType: a list does not need them
    return true;
  }
  // Inside the List.
  if (n + len > list_left_) {
    codec::fail(root, "malformed protobuf: a field of the list runs past its end (body offset " +
                          std::to_string(offset_ + pos_) + ")");
  }
  if (static_cast<std::uint64_t>(end - p - static_cast<std::ptrdiff_t>(n)) < len) return false;
  const std::string_view bytes(p + n, static_cast<std::size_t>(len));
  if (field == 1 && wire == 2) {
    const json_path here{&root, "metadata"};
    codec::proto_reader md(bytes);
    try {
      read_list_meta_proto(md, sink_, here);
    } catch (const protozero::exception& e) {
      codec::pb::fail_malformed(here, e);
    }
  } else if (field == 2 && wire == 2) {
    const json_path items{&root, "items"};
    const json_path item{&items, {}, items_++};
    codec::proto_reader r(bytes);
    read_shared_item_proto(r, sink_, item);
  }
  pos_ += n + len;
  list_left_ -= n + len;
  return true;
}

// ---- JSON -------------------------------------------------------------------

void list_decoder::syntax(const char* expected) const {
  codec::fail({}, std::string("the list body is not valid JSON: expected ") + expected + " at byte " +
                      std::to_string(offset_ + pos_));
}

bool list_decoder::step_json() {
  const char* const base = pending_.data() + pos_;
  const char* const end = pending_.data() + pending_.size();
  const char* p = base;
  if (scan_.at == 0) {
    while (p != end && is_ws(*p)) ++p;
    pos_ += static_cast<std::size_t>(p - base);
    if (p == end) return false;
  }
  // One punctuation byte.
  const auto take = [&](char c) {
    if (*p != c) return false;
    ++pos_;
    return true;
  };
  switch (state_) {
  case j_begin:
    if (!take('{')) syntax("'{'");
    state_ = j_first_key;
    return true;
  case j_first_key:
    if (take('}')) {
      state_ = j_done;
      return true;
    }
    [[fallthrough]];
  case j_key:
    if (*p != '"') syntax("a member name");
    break;  // scanned below
  case j_colon:
    if (!take(':')) syntax("':'");
    state_ = key_ == "items" ? j_items : j_value;
    return true;
  case j_items:
    if (take('[')) {
      state_ = j_first_item;
      return true;
    }
    break;  // null, or an error: scanned below as a member value
  case j_first_item:
    if (take(']')) {
      state_ = j_member_end;
      return true;
    }
    break;
  case j_after_item:
    if (take(',')) {
      state_ = j_item;
      return true;
    }
    if (take(']')) {
      state_ = j_member_end;
      return true;
    }
    syntax("',' or ']'");
  case j_member_end:
    if (take(',')) {
      state_ = j_key;
      return true;
    }
    if (take('}')) {
      state_ = j_done;
      return true;
    }
    syntax("',' or '}'");
  case j_done:
    syntax("the end of the body");
  default:
    break;  // j_item, j_value: scanned below
  }

  // A value (or a key) starts at pos_: find its end, resuming a scan that
  // an earlier write left unfinished.
  const char* const v = pending_.data() + pos_;
  const char* q = v + scan_.at;
  const char first = *v;
  bool complete = false;
  if (first == '{' || first == '[' || first == '"') {
    if (scan_.at == 0) {
      scan_.depth = 0;
      scan_.in_string = false;
      scan_.escape = false;
    }
    for (; q != end; ++q) {
      const char c = *q;
      if (scan_.in_string) {
        if (scan_.escape) {
          scan_.escape = false;
        } else if (c == '\\') {
          scan_.escape = true;
        } else if (c == '"') {
          scan_.in_string = false;
          if (scan_.depth == 0) {
            ++q;
            complete = true;
            break;
          }
        }
      } else if (c == '"') {
        scan_.in_string = true;
      } else if (c == '{' || c == '[') {
        ++scan_.depth;
      } else if (c == '}' || c == ']') {
        if (scan_.depth == 0) syntax("a value");  // the grammar check below names it too
        if (--scan_.depth == 0) {
          ++q;
          complete = true;
          break;
        }
      }
    }
  } else {
    // A number or a literal ends at a delimiter; one at the very end of
    // what arrived may go on.
    while (q != end && !is_ws(*q) && *q != ',' && *q != ']' && *q != '}') ++q;
    complete = q != end;
  }
  if (!complete) {
    scan_.at = static_cast<std::size_t>(q - v);
    return false;
  }
  scan_ = {};
  const std::string_view text(v, static_cast<std::size_t>(q - v));
  switch (state_) {
  case j_first_key:
  case j_key: {
    if (text.find('\\') == std::string_view::npos) {
      key_.assign(text.substr(1, text.size() - 2));
    } else {
      error_code ec;
      const auto k = parse_json(text, ec);
      if (ec || !k.is_string()) syntax("a member name");
      key_.assign(k.as_string().data(), k.as_string().size());
    }
    state_ = j_colon;
    break;
  }
  case j_first_item:
  case j_item:
    json_item(text);
    state_ = j_after_item;
    break;
  default:  // j_items (null), j_value
    json_member(key_, text);
    state_ = j_member_end;
    break;
  }
  pos_ += text.size();
  return true;
}

void list_decoder::json_item(std::string_view text) {
  const json_path root{};
  const json_path items{&root, "items"};
  const std::size_t i = items_++;
  const json_path item{&items, {}, i};
  void* out = sink_.add_item(sink_.items);
  try {
    codec::read_text(text, sink_.read_item, out);
    return;
  } catch (const std::exception&) {  // NOLINT(bugprone-empty-catch): the DOM path below names the problem
  }
  // The reader refused it: decode a fresh item through the DOM, whose
  // messages name the field, and the object by its name.
  sink_.drop_last(sink_.items);
  out = sink_.add_item(sink_.items);
  error_code ec;
  const auto dom = parse_json(text, ec);
  if (ec) codec::fail(item, "not valid JSON (" + ec.message() + ")");
  try {
    sink_.decode_item(dom, out, item);
  } catch (const decode_error& e) {
    const auto named = object_named(dom);
    if (named.empty()) throw;
    std::string problem = e.what();
    if (problem.rfind(e.path() + ": ", 0) == 0) problem.erase(0, e.path().size() + 2);
    throw decode_error(e.path(), problem + named);
  }
}

void list_decoder::json_member(std::string_view key, std::string_view text) {
  const json_path root{};
  if (key == "metadata") {
    codec::read_text(
        text,
        [](codec::json_reader& in, void* self, const json_path&) {
          const auto* d = static_cast<list_decoder*>(self);
          const json_path top{};
          const json_path md{&top, "metadata"};
          read_list_meta(in, d->sink_, md);
        },
        this);
    return;
  }
  if (key == "items") {  // null: no items
    if (text != "null") codec::fail({&root, "items"}, "expected an array");
    return;
  }
  // apiVersion, kind, members newer than this client: checked, not kept.
  error_code ec;
  (void)parse_json(text, ec);
  if (ec) codec::fail({&root, key}, "not valid JSON (" + ec.message() + ")");
}

}  // namespace kube::detail
