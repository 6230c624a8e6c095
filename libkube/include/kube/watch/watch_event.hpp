#pragma once

// One event of a Kubernetes watch stream (metav1.WatchEvent).
//
// A watch response body is a sequence of JSON objects
// `{"type":"ADDED","object":{...}}`; kube::detail::watch_decoder turns the
// bytes into watch_event values, the watch handle hands them to the caller.

#include <kube/diagnostics.hpp>
#include <kube/error.hpp>

#include <boost/json/object.hpp>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <typeinfo>

namespace kube {

/// The event kinds the API server sends (metav1.WatchEvent.type).
enum class watch_event_type {
  added,     ///< "ADDED": the object was created (or is part of the initial state)
  modified,  ///< "MODIFIED": the object changed
  deleted,   ///< "DELETED": the object's last state before deletion
  bookmark,  ///< "BOOKMARK": only metadata.resourceVersion (and annotations) are meaningful
  error,     ///< "ERROR": the object is a metav1.Status; the server ends the watch after it
};

/// The wire spelling: "ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR".
[[nodiscard]] std::string_view to_string(watch_event_type t) noexcept;

/// Parses the wire spelling (exact, case-sensitive, as the server sends it);
/// nullopt for anything else.
[[nodiscard]] std::optional<watch_event_type> watch_event_type_from_string(std::string_view s) noexcept;

/// One decoded watch event.
///
/// `object` is the Kubernetes object for ADDED/MODIFIED/DELETED, a partial
/// object carrying metadata.resourceVersion for BOOKMARK, and a metav1.Status
/// for ERROR (see watch_event_error).
///
/// Memory: the decoder may place `object` in a per-event arena
/// (boost::json::monotonic_resource, see watch_decoder_params::arena). The
/// object then owns that arena through its storage_ptr: it stays valid for as
/// long as the object lives, and erasing members frees nothing until the
/// object is destroyed. To keep a long-lived, shrinkable copy, copy it into a
/// value with the default storage.
///
/// Thread safety: a plain value; distinct events may be used concurrently.
/// An arena is not thread-safe, and a copy made with the copy constructor
/// allocates from the original's arena: before an object is shared with
/// other threads (a cache), copy it into the default storage
/// (`boost::json::object(std::move(ev.object), boost::json::storage_ptr())`),
/// as the dynamic informer does.
struct watch_event {
  watch_event_type type = watch_event_type::added;
  boost::json::object object;
  /// Set instead of `object` for ADDED/MODIFIED/DELETED events by a decoder
  /// made with watch_decoder_params::raw_objects (typed watches, which
  /// decode the object straight from its text): the object's JSON text,
  /// already checked to be a JSON object. Empty otherwise.
  std::string object_text;
  /// Set instead of `object_text` when the decoder was given an object
  /// reader (watch_decoder_params::objects): the object already read into
  /// the reader's C++ type, `decoded_type`. Copies of the event share it.
  std::shared_ptr<void> decoded;
  const std::type_info* decoded_type = nullptr;
};

/// Turns an ERROR event into the error the server meant.
///
/// Returns api_errc_from_status(Status.reason, Status.code) — e.g.
/// api_errc::expired for "410 Expired: too old resource version", the signal
/// to relist — and stores the Status in `diag` (server_status) with a client
/// message naming the event. A Status without reason or code maps to
/// api_errc::unknown. For events that are not ERROR, returns an empty
/// error_code and leaves `diag` untouched.
[[nodiscard]] error_code watch_event_error(const watch_event& ev, diagnostics& diag);

}  // namespace kube
