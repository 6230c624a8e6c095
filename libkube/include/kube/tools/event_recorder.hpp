#pragma once

// Events about objects, as client-go's tools/record writes them: core/v1
// Events (the `count` form; see docs/guides/events.md for why not
// events.k8s.io/v1), with its EventCorrelator:
//   - deduplication: an event identical to one sent before (same source,
//     object, type, reason and message) patches the existing Event's count
//     and lastTimestamp instead of creating a new Event;
//   - aggregation: when one object gets 10 or more events with the same
//     reason but different messages within 10 minutes, further ones are
//     folded into one Event "(combined from similar events): <message>";
//   - spam filter: a token bucket per source+object+type (burst 25, one
//     token more every 5 minutes) drops the excess.
// record() only queues (bounded; drops and counts when full); async_run
// writes to the apiserver in the background.

#include <kube/rest/client.hpp>
#include <kube/detail/initiate.hpp>
#include <kube/error.hpp>
#include <kube/dynamic/unstructured.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/object.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>

namespace kube {

/// The object an event is about (core/v1 ObjectReference).
struct object_reference {
  std::string api_version;
  std::string kind;
  std::string namespace_;  ///< empty for cluster-scoped objects (the Event goes to "default")
  std::string name;
  std::string uid;
  std::string resource_version = {};
  std::string field_path = {};

  /// From an object's apiVersion, kind and metadata.
  [[nodiscard]] static object_reference of(const unstructured& obj);
};

enum class event_type { normal, warning };
[[nodiscard]] const char* to_string(event_type t) noexcept;  ///< "Normal", "Warning"

/// One call of record().
struct event_record {
  object_reference object;
  event_type type = event_type::normal;
  std::string reason;   ///< UpperCamelCase, e.g. "Synced"
  std::string message;  ///< human readable
};

/// Who reports (core/v1 EventSource) and the correlator's limits (client-go's defaults).
struct event_recorder_params {
  std::string component;  ///< required: the controller's name (Event.source.component)
  std::string host = {};  ///< Event.source.host, optional

  std::size_t queue_capacity = 1000;  ///< record() drops (and counts) beyond this many queued events
  std::size_t cache_size = 4096;      ///< LRU entries of each correlator cache

  unsigned spam_burst = 25;                                    ///< events per source+object+type at once ...
  std::chrono::seconds spam_refill = std::chrono::minutes(5);  ///< ... then one more per this interval

  std::size_t aggregate_max_events = 10;                             ///< distinct messages before combining
  std::chrono::seconds aggregate_window = std::chrono::minutes(10);  ///< since the last similar event

  unsigned max_tries = 12;  ///< writes that fail on the network are retried this often ...
  std::chrono::milliseconds retry_interval = std::chrono::seconds(10);  ///< ... after this pause (first one jittered)

  /// Wall clock for timestamps, names and the windows; empty: system_clock::now.
  std::function<std::chrono::system_clock::time_point()> now = {};
};

/// client-go's EventCorrelator without I/O: decides, for each recorded
/// event, whether to drop it (spam), create a new Event, or patch an
/// existing one, and builds the request body. Times are explicit, so unit
/// tests drive it with a manual clock.
///
/// Thread safety: none; event_recorder uses it from its run coroutine only.
class event_correlator {
public:
  explicit event_correlator(const event_recorder_params& options);
  ~event_correlator();
  event_correlator(event_correlator&&) noexcept;
  event_correlator& operator=(event_correlator&&) noexcept;

  struct result {
    bool skip = false;          ///< dropped by the spam filter
    bool update = false;        ///< patch the existing Event `name` with `patch`; else create `event`
    std::string key;            ///< the cache key (pass to update_state)
    std::string name;           ///< the Event's metadata.name
    std::string namespace_;     ///< the Event's namespace
    long long count = 1;        ///< the Event's count after this occurrence
    std::string message;        ///< possibly "(combined from similar events): ..."
    boost::json::object event;  ///< the whole core/v1 Event (for create)
    std::string patch;          ///< merge patch: count, lastTimestamp, message (for update)
  };

  [[nodiscard]] result correlate(const event_record& e, std::chrono::system_clock::time_point now);

  /// After the server accepted a create/patch: remember its name and count
  /// under `key` (client-go's UpdateState).
  void update_state(const std::string& key, const std::string& name, long long count);

private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

namespace detail {
class event_recorder_impl;
void event_recorder_start(std::shared_ptr<event_recorder_impl> impl,
                          boost::asio::any_completion_handler<void(error_code)> handler);
}  // namespace detail

/// Counters of an event_recorder (read from any thread).
struct event_recorder_stats {
  std::uint64_t recorded = 0;  ///< accepted by record()
  std::uint64_t dropped = 0;   ///< refused by record(): queue full or invalid
  std::uint64_t filtered = 0;  ///< dropped by the spam filter
  std::uint64_t created = 0;   ///< Events created
  std::uint64_t patched = 0;   ///< Events whose count was patched
  std::uint64_t failed = 0;    ///< given up (server refused, or tries exhausted)
};

/// Records core/v1 Events for objects. `record` is cheap and never blocks
/// or throws: it queues (or drops and counts when the queue is full);
/// `async_run` correlates and writes them until cancelled.
///
/// async_run(token): completion void(error_code); runs until cancelled
/// (terminal cancellation) and completes with asio::error::operation_aborted;
/// events still queued then are not written. A second concurrent async_run
/// completes at once with client_errc::already_running.
/// Write failures are logged through the client's logger and counted, never
/// thrown: server refusals (kube.api errors) are not retried (client-go
/// does the same), network failures are retried max_tries times.
///
/// Thread safety: record() and stats() may be called from any thread; the
/// writer runs on the client's strand.
class event_recorder {
public:
  /// Throws kube::error(client_errc::invalid_config) when options.component is empty.
  event_recorder(client c, event_recorder_params options);

  /// Queues an event about `object`. Thread safe, non-blocking. An event
  /// without reason, or without object name or kind, is dropped and counted.
  void record(const object_reference& object, event_type type, std::string_view reason, std::string_view message);

  template <class Token = use_awaitable_t>
  auto async_run(Token&& token = {}) {
    return detail::initiate_void(
        [impl = impl_](auto handler) mutable { detail::event_recorder_start(std::move(impl), std::move(handler)); },
        std::forward<Token>(token));
  }

  [[nodiscard]] event_recorder_stats stats() const;
  /// Events queued and not yet processed.
  [[nodiscard]] std::size_t queued() const;

private:
  std::shared_ptr<detail::event_recorder_impl> impl_;
};

}  // namespace kube
