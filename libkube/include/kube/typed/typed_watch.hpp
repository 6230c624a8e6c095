#pragma once

// kube::typed_watch_event<T> and kube::typed_watch_stream<T>: a watch whose
// events carry T. Included by <kube/typed/api.hpp>.

#include <kube/detail/typed_core.hpp>
#include <kube/watch/watch_stream.hpp>

#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <typeinfo>

namespace kube {

/// One event of a typed watch.
///
/// `type` is added, modified, deleted or bookmark (never error: an ERROR
/// event completes async_next with its error code instead).
/// `resource_version` is the object's metadata.resourceVersion for every
/// event; for a BOOKMARK it is the only meaningful field and `object` is a
/// default T (bookmarks carry a partial object that need not fit T), and
/// `initial_events_end` is true for the bookmark that ends the initial
/// events of a streaming list (sendInitialEvents=true).
template <class T>
struct typed_watch_event {
  watch_event_type type = watch_event_type::added;
  T object{};
  std::string resource_version;
  bool initial_events_end = false;
};

/// typed_watch_event with the object in its own shared_ptr
/// (typed_watch_stream::async_next_shared), for callers that share objects,
/// as caches do: `std::shared_ptr<const T>(ev.object)` takes it without
/// moving the object again. Not null once async_next_shared succeeded; for a
/// BOOKMARK a default T.
template <class T>
struct shared_watch_event {
  watch_event_type type = watch_event_type::added;
  std::shared_ptr<T> object;
  std::string resource_version;
  bool initial_events_end = false;
};

namespace detail {

/// What a typed watch needs to know of its object type T: one static table
/// per T (event_object_ops_for<T>), so that the compiled code handles every
/// type alike.
struct event_object_ops {
  codec::decode_fn decode = nullptr;  ///< from a DOM object (bookmarks, untyped streams)
  codec::read_fn read = nullptr;      ///< from the object's text (watch_event::object_text)
  /// T's metadata.resourceVersion, a view into the object; nullptr when T
  /// has no resource_version() accessor (its events go through the DOM).
  std::string_view (*resource_version_of)(const void* object) = nullptr;
  const std::type_info* type = nullptr;  ///< T (what watch_event::decoded_type must be)
  std::shared_ptr<void> (*make)() = nullptr;
  /// Moves (or, with `copy`, copies) the decoder's T at `decoded` into `object`.
  void (*take)(void* object, void* decoded, bool copy) = nullptr;
  /// Sets the std::shared_ptr<T> at `field` to `object`, a T.
  void (*share)(void* field, std::shared_ptr<void> object) = nullptr;
};

template <class T>
void take_object(void* object, void* decoded, bool copy) {
  if (copy) {
    *static_cast<T*>(object) = *static_cast<const T*>(decoded);
  } else {
    *static_cast<T*>(object) = std::move(*static_cast<T*>(decoded));
  }
}

template <class T>
void share_object(void* field, std::shared_ptr<void> object) {
  *static_cast<std::shared_ptr<T>*>(field) = std::static_pointer_cast<T>(std::move(object));
}

/// T's metadata.resourceVersion (a view into the object), when T has the
/// resource_version() accessor generated resource kinds have; else nullptr.
template <class T>
constexpr auto resource_version_of() -> std::string_view (*)(const void*) {
  if constexpr (has_resource_version<T>) {
    return [](const void* o) { return std::string_view(static_cast<const T*>(o)->resource_version()); };
  } else {
    return nullptr;
  }
}

template <class T>
inline constexpr event_object_ops event_object_ops_for{
    &codec::decode_erased<T>, &codec::read_erased<T>, resource_version_of<T>(), &typeid(T),
    &make_object<T>,          &take_object<T>,        &share_object<T>};

/// Where a translated event goes: the event's fields, and its object either
/// filled in place (`object`, a T) or handed over as the decoder's own heap
/// T (`shared`, a std::shared_ptr<T>: no second T, no move).
struct event_slot {
  const event_object_ops* ops = nullptr;
  watch_event_type* type = nullptr;
  std::string* resource_version = nullptr;
  bool* initial_events_end = nullptr;
  void* object = nullptr;
  void* shared = nullptr;
  std::shared_ptr<void> keep;  ///< keeps the event the pointers point into
};

/// The slot of `ev`, a typed_watch_event<T> (filled in place) or a
/// shared_watch_event<T> (given the decoder's object); `ev` is kept alive
/// with the slot.
template <class T, class Event>
event_slot make_event_slot(std::shared_ptr<Event> ev) {
  event_slot s;
  s.ops = &event_object_ops_for<T>;
  s.type = &ev->type;
  s.resource_version = &ev->resource_version;
  s.initial_events_end = &ev->initial_events_end;
  if constexpr (std::is_same_v<Event, shared_watch_event<T>>) {
    s.shared = &ev->object;
  } else {
    s.object = &ev->object;
  }
  s.keep = std::move(ev);
  return s;
}

/// Translates one raw event, consuming its object (see decode_watch_event). `what` names the
/// watch in messages ("watch configmaps in namespace demo").
error_code translate_watch_event(watch_event& ev, const event_slot& out, std::string_view what, diagnostics& diag);

void typed_watch_open(typed_ptr t, watch_params p, std::shared_ptr<watch_stream> out, typed_completion h);
void typed_watch_next(typed_ptr t, watch_stream w, event_slot out, typed_completion h);

}  // namespace detail

/// Turns a raw watch event into a typed one: ADDED/MODIFIED/DELETED decode
/// the object into T (a misfit is client_errc::decode_error, the message
/// names the event type and the field path); BOOKMARK only sets
/// resource_version; ERROR returns the error the server's Status means
/// (e.g. api_errc::expired, with the Status in diag). `out` is left
/// unspecified when an error is returned.
template <class T>
error_code decode_watch_event(watch_event ev, typed_watch_event<T>& out, diagnostics& diag) {
  detail::event_slot s;
  s.ops = &detail::event_object_ops_for<T>;
  s.type = &out.type;
  s.resource_version = &out.resource_version;
  s.initial_events_end = &out.initial_events_end;
  s.object = &out.object;
  return detail::translate_watch_event(ev, s, "watch event", diag);
}

/// A watch of T's: kube::watch_stream with events decoded into T.
///
/// async_next() completes with the next typed_watch_event<T>, or:
///  - `boost::asio::error::eof` once the server ended the watch cleanly
///    (timeoutSeconds passed); start a new watch from the last
///    resource_version seen;
///  - the error of an ERROR event (e.g. api_errc::expired for a too old
///    resourceVersion: relist), with the server's Status in diagnostics;
///    the server ends the stream after it;
///  - client_errc::decode_error when an object does not fit T: that event
///    is lost, the stream stays usable;
///  - the watch_stream's own errors (malformed stream, connection).
///
/// Thread safety, cancellation and close(): as kube::watch_stream (one
/// async_next at a time; cancelling it ends the stream).
template <class T>
class typed_watch_stream {
public:
  typed_watch_stream() = default;
  typed_watch_stream(detail::typed_ptr t, watch_stream w)
      : t_(std::move(t)),
        w_(std::move(w)) {}

  /// Completion: void(error_code, typed_watch_event<T>).
  template <class Token = use_awaitable_t>
  auto async_next(Token&& token = {}) {
    return detail::typed_initiate<typed_watch_event<T>>(
        [t = t_, w = w_](std::shared_ptr<typed_watch_event<T>> out, detail::typed_completion h) mutable {
          detail::typed_watch_next(std::move(t), std::move(w), detail::make_event_slot<T>(std::move(out)),
                                   std::move(h));
        },
        std::forward<Token>(token));
  }

  /// As async_next, with the object in its own shared_ptr: the one the
  /// watch decoder read it into (no second object, no move).
  /// Completion: void(error_code, shared_watch_event<T>).
  template <class Token = use_awaitable_t>
  auto async_next_shared(Token&& token = {}) {
    return detail::typed_initiate<shared_watch_event<T>>(
        [t = t_, w = w_](std::shared_ptr<shared_watch_event<T>> out, detail::typed_completion h) mutable {
          detail::typed_watch_next(std::move(t), std::move(w), detail::make_event_slot<T>(std::move(out)),
                                   std::move(h));
        },
        std::forward<Token>(token));
  }

  /// Closes the connection; a pending async_next completes with operation_aborted.
  void close() { w_.close(); }
  [[nodiscard]] bool is_open() const noexcept { return w_.is_open(); }
  /// The untyped stream underneath.
  [[nodiscard]] const watch_stream& raw() const noexcept { return w_; }

private:
  detail::typed_ptr t_;
  watch_stream w_;
};

}  // namespace kube
