#pragma once

// Sans-io decoder for the body of a watch response (`GET ...?watch=true`),
// JSON or protobuf (watch_decoder_params::protobuf).
//
// The body is a sequence of JSON objects `{"type":"ADDED","object":{...}}`,
// one per line as the API server writes them. The transport feeds the
// de-chunked body bytes with write() exactly as they arrive (split anywhere,
// also inside a UTF-8 sequence, an escape or a number) and takes complete
// events with next(). No I/O, no timers: the decoder only decides.
//
// Guarantees:
//   - Split safety: the events (and any error) do not depend on how the body
//     was cut into write() calls.
//   - Linear: every byte is parsed once (boost::json::stream_parser fed
//     incrementally); one event larger than any network buffer is fine.
//     (With an object reader, see watch_decoder_params::objects, an event
//     the reader refuses is parsed a second time, by the general path.)
//   - Bounded: an event longer than watch_decoder_params::max_event_size
//     fails the stream instead of growing memory without end.
//   - Framing is JSON-sequence based like client-go's JSON framer: whitespace
//     (spaces, tabs, "\n", "\r\n") between events is skipped, a final event
//     without a newline is complete, a newline is not required between events.
//   - All or nothing: an event is queued only once it is complete and valid.
//     Events completed before a malformed one are still delivered by next();
//     then the stream is failed for good (client_errc::watch_stream_error,
//     message with the byte offset of the failure and a short excerpt).
//
// Thread safety: none; one decoder per watch stream, used by one strand.
// Errors: write()/finish() return the stream's error, which is sticky.
// Allocation failure throws std::bad_alloc and leaves the decoder failed.

#include <kube/codec/codec.hpp>
#include <kube/error.hpp>
#include <kube/watch/watch_event.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <typeinfo>

namespace kube::detail {

/// Limits and allocation strategy of a watch_decoder.
struct watch_decoder_params {
  /// Largest accepted event, in bytes of JSON text from its '{' to its '}'.
  /// Objects stored in etcd are limited to ~1.5 MiB by default; the default
  /// leaves ample room (large CRs, future limits) while still stopping a
  /// runaway stream. Must be > 0.
  std::size_t max_event_size = 64 * 1024 * 1024;  // bytes

  /// Deepest accepted nesting of objects/arrays inside one event, the
  /// envelope included (the JSON parser's default of 32 is too small for
  /// CRDs with deep schemas): one level above an object's own limit.
  std::size_t max_depth = codec::max_json_depth + 1;  // levels

  /// Place each event's object in its own boost::json::monotonic_resource:
  /// faster decoding, and freeing an event frees its whole arena at once.
  /// The object then keeps the arena alive (see watch_event). false: every
  /// node is allocated from the default resource (operator new).
  bool arena = true;

  /// Keep the objects of ADDED/MODIFIED/DELETED events as text
  /// (watch_event::object_text) instead of building a DOM: for consumers that
  /// decode straight from text (kube::codec::json_reader). Events are still
  /// checked to be valid JSON with a well-formed envelope, with the same
  /// errors; BOOKMARK and ERROR events still get their DOM object.
  bool raw_objects = false;

  /// raw_objects only: read each ADDED/MODIFIED/DELETED object straight
  /// into a new C++ object (watch_event::decoded) instead of keeping its
  /// text. Used when all three members are set and max_depth exceeds
  /// codec::json_reader::max_depth (the envelope is one level more).
  ///
  /// An event laid out as the API server writes it, one per line
  /// (`{"type":"T","object":{...}}` and a newline), is not checked by the
  /// JSON grammar first: `read` checks the object as it reads it (the text
  /// reader refuses invalid JSON and nesting deeper than its limit), and
  /// the envelope around it is compared byte for byte. Whatever `read`
  /// refuses (bad JSON, an object that does not fit the type) and any other
  /// layout goes the general way, so events, errors and messages are those
  /// of raw_objects without a reader. One difference in timing: the bytes
  /// of a line that begins like the API server's events are held until the
  /// line ends, so an error inside such a line is reported at its end (or
  /// at the end of the stream) rather than at its first bad byte. A
  /// complete event followed by a newline, spaces or the start of another
  /// event is not held (see flush_now in the source); one followed on its
  /// line by bytes that cannot follow an event (a malformed stream) waits
  /// with that error for the line's end.
  struct object_reader {
    std::shared_ptr<void> (*make)() = nullptr;  ///< a new default object of the type
    codec::read_fn read = nullptr;              ///< reads one object into it (codec::read_erased<T>)
    const std::type_info* type = nullptr;       ///< the type (watch_event::decoded_type)
    /// Reads one object from protobuf (codec::read_proto_erased<T>); nullptr: the type has none.
    codec::proto_read_fn proto_read = nullptr;
    /// Sets apiVersion and kind, which a protobuf message leaves to its envelope.
    codec::type_meta_fn type_meta = nullptr;
  };
  object_reader objects{};

  /// The body is Kubernetes' protobuf watch stream (Content-Type
  /// application/vnd.kubernetes.protobuf;stream=watch) instead of JSON:
  /// each event is a 4-byte big-endian length and a metav1.WatchEvent whose
  /// object is a protobuf body ("k8s\0" and runtime.Unknown). ADDED,
  /// MODIFIED and DELETED objects are read with objects.proto_read (which
  /// must be set) into watch_event::decoded; BOOKMARK and ERROR events get
  /// the JSON object the JSON stream would have carried (metadata only, or
  /// the Status). The same guarantees hold: split safety, the size limit
  /// (max_event_size bounds a frame), all or nothing, a sticky error. An
  /// object that does not fit the type fails the stream, naming the field.
  bool protobuf = false;

  /// How many bytes of the input around the failure an error message quotes
  /// (non-printable bytes escaped), for debugging a decoder. 0, the default,
  /// quotes nothing: error messages reach logs and hooks, and the bytes of a
  /// malformed event may be a Secret's data.
  std::size_t error_excerpt_size = 0;  // bytes
};

/// Incremental decoder of one watch response body. See the file comment.
/// Movable; a moved-from decoder may only be destroyed or assigned to.
class watch_decoder {
public:
  explicit watch_decoder(const watch_decoder_params& params = {});
  ~watch_decoder();
  watch_decoder(watch_decoder&&) noexcept;
  watch_decoder& operator=(watch_decoder&&) noexcept;
  watch_decoder(const watch_decoder&) = delete;
  watch_decoder& operator=(const watch_decoder&) = delete;

  /// Consumes `n` body bytes (any split). Complete events become available
  /// through next(). Returns the stream's error: empty while healthy,
  /// client_errc::watch_stream_error once failed (further input is ignored).
  error_code write(const char* data, std::size_t n);
  error_code write(std::string_view data) { return write(data.data(), data.size()); }

  /// Declares the end of the body (the server closed the stream). An event
  /// cut short is an error; trailing whitespace is not. Later write() calls
  /// fail the stream.
  error_code finish();

  /// Takes the oldest complete event; nullopt when none is queued.
  /// (An optional, not an out-parameter: the event's object lives in its own
  /// arena, and move-assigning it into an object with another storage would
  /// copy it; move construction keeps it free.)
  [[nodiscard]] std::optional<watch_event> next();

  /// Number of complete events queued.
  [[nodiscard]] std::size_t ready() const noexcept;

  /// The sticky error (empty while healthy) and its explanation (byte offset,
  /// what was wrong, excerpt).
  [[nodiscard]] error_code error() const noexcept;
  [[nodiscard]] const std::string& error_message() const noexcept;

  /// Body bytes consumed so far (the offset errors are reported against);
  /// with an object reader, the bytes of an unfinished line are not yet
  /// counted.
  [[nodiscard]] std::uint64_t bytes_consumed() const noexcept;

  /// True while an event has started but not yet completed.
  [[nodiscard]] bool in_event() const noexcept;

private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace kube::detail
