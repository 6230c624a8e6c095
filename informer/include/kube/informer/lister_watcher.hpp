#pragma once

// The Reflector's view of the API: list one page, open a watch, read typed
// events. An interface, not a concrete client, so the Reflector works over
// the dynamic client (dynamic_lister_watcher), a typed api<T> adapter, a
// scripted fake (fake_lister_watcher) or a wrapper (e.g. one that counts
// requests).

#include <kube/diagnostics.hpp>
#include <kube/error.hpp>
#include <kube/rest/list_params.hpp>
#include <kube/watch/watch_event.hpp>
#include <kube/with_diagnostics.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kube::informer {

/// One page of a list: items, the list's resourceVersion and the continue
/// token (empty on the last page).
template <class T>
struct list_result {
  std::vector<std::shared_ptr<const T>> items;
  std::string resource_version;
  std::string continue_token;
};

/// The outcome of `lister_watcher::list`: `ec` (with `diag`) or a page.
template <class T>
struct list_outcome {
  error_code ec;
  diagnostics diag;
  list_result<T> result;
};

/// The client's watch event types, kept as they are (no translation).
using event_type = kube::watch_event_type;

/// The annotation of the bookmark that ends the initial events of a
/// streaming list (metav1.InitialEventsAnnotationKey).
inline constexpr std::string_view initial_events_end_annotation = "k8s.io/initial-events-end";

/// One typed watch event.
///
/// - added / modified / deleted: `object` is set (never null) and
///   `resource_version` is its metadata.resourceVersion.
/// - bookmark: `object` may be null; `resource_version` is the progress
///   mark; `initial_events_end` is true for the bookmark that ends the
///   initial events of a streaming list.
/// - error: `ec` and `diag` say what went wrong: the server's ERROR event
///   (kube.api codes, e.g. expired for 410), a malformed event
///   (client_errc::watch_stream_error), an object of the wrong kind or one
///   that cannot be decoded (client_errc::decode_error), or a broken
///   connection (an Asio/system code). The stream is done after an error.
template <class T>
struct event {
  event_type type = event_type::added;
  std::shared_ptr<const T> object;
  std::string resource_version;
  bool initial_events_end = false;
  error_code ec;
  diagnostics diag;
};

/// An open watch. `next()` gives the next event, or nullopt once the server
/// ended the stream cleanly (timeoutSeconds passed). After an error event
/// or nullopt the stream is done. Cancelling the awaiting coroutine
/// (terminal) aborts `next()` with an exception (operation_aborted).
/// `close()` drops the connection. The SDK's streams (typed, dynamic,
/// metadata) take close() from any thread, as the client's
/// watch_stream::close does; the scripted fake is single-threaded.
template <class T>
class event_stream {
public:
  event_stream() = default;
  event_stream(const event_stream&) = delete;
  event_stream& operator=(const event_stream&) = delete;
  virtual ~event_stream() = default;

  virtual boost::asio::awaitable<std::optional<event<T>>> next() = 0;
  virtual void close() = 0;
};

/// The outcome of `lister_watcher::watch`: `ec` (with `diag`) when the
/// server refused the watch (e.g. 410, 429, a refused sendInitialEvents), or
/// an open stream.
template <class T>
struct watch_outcome {
  error_code ec;
  diagnostics diag;
  std::unique_ptr<event_stream<T>> stream;
};

/// List and watch one kind of object (client-go's ListerWatcher).
///
/// `list` returns ONE page as `params` asks (limit, continue,
/// resourceVersion, resourceVersionMatch); the Reflector does the paging.
/// `watch` opens a watch as `params` asks. Errors are returned, never
/// thrown, except cancellation: when the awaiting coroutine is cancelled
/// (terminal) both may throw boost::system::system_error(operation_aborted).
///
/// Implementations are used from the informer's strand only; they need no
/// thread safety of their own. Objects must have name(), namespace_() and
/// resource_version() accessors (kube::unstructured and generated types
/// do); the Reflector relies on nothing else.
template <class T>
class lister_watcher {
public:
  lister_watcher() = default;
  lister_watcher(const lister_watcher&) = delete;
  lister_watcher& operator=(const lister_watcher&) = delete;
  virtual ~lister_watcher() = default;

  virtual boost::asio::awaitable<list_outcome<T>> list(const list_params& params) = 0;
  virtual boost::asio::awaitable<watch_outcome<T>> watch(const watch_params& params) = 0;
};

namespace detail {

/// The completion token the lister_watchers give the client: the error
/// code and the diagnostics come back as values, so a failed list or the
/// normal end of a watch costs no exception.
inline auto outcome_token(diagnostics& diag) {
  return kube::with_diagnostics(diag, boost::asio::as_tuple(boost::asio::use_awaitable));
}

/// Cancellation leaves list/watch/next as an exception, as their contract says.
inline void throw_if_aborted(error_code ec) {
  if (ec == boost::asio::error::operation_aborted) {
    throw boost::system::system_error(ec);
  }
}

/// Fills selectors the caller left empty with the lister_watcher's own.
inline void default_selectors(std::string& label, std::string& field, const std::string& default_label,
                              const std::string& default_field) {
  if (label.empty()) {
    label = default_label;
  }
  if (field.empty()) {
    field = default_field;
  }
}

/// The glue every lister_watcher over a client shares: the caller's
/// `params` with the default selectors of `opts` (its label_selector and
/// field_selector), the client's call `call(params, token)` (with
/// outcome_token), its error kept in the outcome, and `take(answer,
/// outcome)` for what it answered.
template <class Outcome, class Params, class Options, class Call, class Take>
boost::asio::awaitable<Outcome> list_or_watch(const Params& params, const Options& opts, Call call, Take take) {
  Outcome out;
  Params p = params;
  default_selectors(p.label_selector, p.field_selector, opts.label_selector, opts.field_selector);
  // Not inside the co_await (g++ 12 and temporaries: docs/guides/client.md).
  auto op = call(p, outcome_token(out.diag));
  auto [ec, answer] = co_await std::move(op);
  throw_if_aborted(ec);
  if (ec) {
    out.ec = ec;
  } else {
    take(answer, out);
  }
  co_return out;
}

/// What a failed read of a watch stream (`ec`, `diag`) means for
/// event_stream::next(): nullopt at the clean end (eof), an error event
/// otherwise; cancellation throws.
template <class T>
std::optional<event<T>> read_failure(error_code ec, diagnostics& diag) {
  if (ec == boost::asio::error::eof) {
    return std::nullopt;
  }
  throw_if_aborted(ec);
  event<T> out;
  out.type = event_type::error;
  out.ec = ec;
  out.diag = std::move(diag);
  return out;
}

}  // namespace detail

}  // namespace kube::informer
