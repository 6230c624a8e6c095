#pragma once

// A pull reader over one complete JSON text, for generated sources: they
// decode a response straight into C++ objects (read_json) without building
// a boost::json DOM first. That halves the work of a large list and removes
// its DOM (about four times the size of the text) from the peak memory.
//
// The reader takes the common shapes itself: objects, arrays, null, plain
// ASCII strings without escapes, integers, booleans. Anything else (an
// escape, a non-ASCII byte, a fraction or an exponent, a value of another
// JSON kind than the field wants) is handed to boost::json: the value's text
// is parsed on its own and decoded by the same DOM codec as from_json_value,
// so the result and every error message are the DOM path's.
//
// Invalid JSON throws decode_error with path "." and the byte offset. A
// caller that wants the DOM path's exact wording for bad input (the typed
// client does) decodes the text again through the DOM when this throws.
//
// Included only by compiled sources (generated *.cpp and libkube), like
// codec_impl.hpp.
//
// Thread safety: a reader is used by one thread.

#include <kube/codec/codec.hpp>

#include <boost/json/storage_ptr.hpp>
#include <boost/json/value.hpp>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>

namespace kube::codec {

/// Pull reader over a complete JSON text. See the file comment.
class json_reader {
public:
  /// Deepest nesting of objects and arrays accepted, counted from the
  /// text's root (values handed to boost::json included).
  static constexpr std::size_t max_depth = max_json_depth;

  /// `text` must outlive the reader and every key it returns.
  explicit json_reader(std::string_view text) noexcept
      : begin_(text.data()),
        p_(text.data()),
        end_(text.data() + text.size()) {}

  /// Consumes '{' when the next value is an object; false (nothing consumed)
  /// otherwise.
  bool begin_object();
  /// The next member's key (the reader is then at its value), or false once
  /// the object's '}' has been consumed. The key stays valid while the reader
  /// lives.
  bool next_key(std::string_view& key);
  /// Consumes '[' when the next value is an array; false otherwise.
  bool begin_array();
  /// True when another element follows (the reader is at it), false once the
  /// array's ']' has been consumed.
  bool next_element();
  /// Consumes `null` when it is next.
  bool try_null();

  /// The next value as a DOM value (any kind), consumed.
  boost::json::value value(boost::json::storage_ptr sp = {});
  /// Skips the next value and returns its text. Finds the value's end
  /// only: use it on text already known to be valid JSON.
  std::string_view skip();

  /// Leaf reads: fast for the expected kind, the DOM codec otherwise.
  void read(std::string& out, const json_path& at);
  void read(bool& out, const json_path& at);
  void read(std::int32_t& out, const json_path& at);
  void read(std::int64_t& out, const json_path& at);
  /// Keeps the value's text when it is already what raw_json stores
  /// (compact, no numbers, no escapes other than quote and backslash),
  /// else decodes it through the DOM.
  void read(raw_json& out, const json_path& at);
  /// Reads `text`, the whole of one JSON value (protobuf carries
  /// RawExtension and FieldsV1 as bytes), into `out`. Text equal to one a
  /// live raw_json already holds is shared without being read again (the
  /// pool holds only text that was checked); other text is read as above.
  static void read_whole(std::string_view text, raw_json& out, const json_path& at);

  /// Only whitespace may follow the root value.
  void finish();
  /// Bytes consumed so far.
  [[nodiscard]] std::size_t offset() const noexcept { return static_cast<std::size_t>(p_ - begin_); }

private:
  [[noreturn]] void syntax(std::string_view what) const;
  void skip_ws() noexcept;
  bool plain_string(const char* at, std::string_view& s, const char*& after) const noexcept;
  bool plain_integer(const char* at, std::int64_t& v, const char*& after) const noexcept;
  [[nodiscard]] bool delimiter(const char* at) const noexcept;
  std::string_view key_slow();
  void enter();

  const char* begin_;
  const char* p_;
  const char* end_;
  std::size_t depth_ = 0;
  bool first_ = false;            // at the first member/element of the open container
  std::deque<std::string> keys_;  // keys that needed unescaping
};

/// Decodes `text` with `fn` through a json_reader (the whole text must be
/// one value); throws decode_error.
void read_text(std::string_view text, read_fn fn, void* out);

}  // namespace kube::codec
