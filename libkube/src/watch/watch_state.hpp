#pragma once

// Internal to libkube's sources: an open watch, read from a streamed body
// (transport/body_stream.hpp) through the watch decoder.

#include "transport/body_stream.hpp"

#include <kube/detail/watch_decoder.hpp>
#include <kube/watch/watch_stream.hpp>

#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/prefer.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <tuple>
#include <type_traits>

namespace kube::detail {

/// Where a watch's next event goes (watch_state::async_next): completed
/// once, on the client's strand, with the event or the stream's failure.
struct watch_waiter {
  virtual ~watch_waiter() = default;
  virtual void complete(result<watch_event> r) = 0;
  /// The consumer's cancellation slot (unconnected when it has none).
  boost::asio::cancellation_slot slot;
};

/// An open watch: the streamed body and its decoder. Touched only on the
/// client's strand.
struct watch_state : std::enable_shared_from_this<watch_state> {
  std::shared_ptr<body_stream> io;
  watch_decoder decoder;

  [[nodiscard]] const boost::asio::any_io_executor& strand() const { return io->strand(); }

  /// From any thread: completes `w` on the strand with the next event, the
  /// failure or eof. One waiter at a time (one async_next per stream): a
  /// second while one waits gets asio::error::in_progress. Each
  /// event is read by plain handlers on the strand, no coroutine: the
  /// per-event path of every watch and informer. The waiter's cancellation
  /// (terminal) closes the stream; the read in flight then fails with
  /// operation_aborted, which is what the waiter and later calls get.
  void async_next(std::unique_ptr<watch_waiter> w);

private:
  bool waiting = false;  ///< a waiter's read is in flight
  void want(std::unique_ptr<watch_waiter> w);
  /// Reads for `w` until an event, failure or end is known.
  void read_for(std::unique_ptr<watch_waiter> w);
  /// The next event, failure or eof when known without reading more.
  std::optional<result<watch_event>> ready();
  /// Takes in what one read brought: n bytes of body and its error.
  void took(error_code ec, std::size_t n);
  /// After a read (from the socket or the buffer) ended with `ec`: takes
  /// in its body bytes and completes `w` with what is ready (see ready()),
  /// if anything; true when it did.
  bool after_read(watch_waiter& w, error_code ec);
  void end_of_body();
  /// Ends the stream with `ec`; `why` defaults to the decoder's message for
  /// its own codes (the body stream's otherwise).
  void fail(error_code ec, std::string why = {});
};

/// How open_watch reads the events.
struct watch_open_params {
  /// The decoder keeps ADDED/MODIFIED/DELETED objects as text (typed
  /// watches read them straight into T), or, with `objects` set, reads them
  /// into the type as it frames each event.
  bool raw_objects = false;
  watch_decoder_params::object_reader objects = {};
  std::chrono::milliseconds idle_timeout{0};  ///< see stream_params
};

/// Opens a watch: open_stream, not throttled (client-go throttles log
/// streams, not watches), and a decoder for the content type the server
/// chose (JSON, or protobuf when the request asked for it).
boost::asio::awaitable<result<watch_stream>> open_watch(std::shared_ptr<client_impl> impl, request req,
                                                        watch_open_params p);

/// The library's own way into a watch_stream's state.
struct watch_stream_access {
  static const std::shared_ptr<watch_state>& state(const watch_stream& w) noexcept { return w.state_; }
};

/// The watch_waiter of `handler`, an any_completion_handler of
/// void(error_code, diagnostics, R): `deliver(result<watch_event>)` turns
/// the event into the handler's arguments on the strand (an exception
/// there becomes finish_result's code); the handler then runs on its own
/// executor, which is kept busy while the waiter waits.
template <class Handler, class Deliver>
class watch_waiter_for final : public watch_waiter {
public:
  watch_waiter_for(Handler h, Deliver deliver, const boost::asio::any_io_executor& strand)
      : work_(boost::asio::prefer(boost::asio::get_associated_executor(h, strand),
                                  boost::asio::execution::outstanding_work.tracked)),
        handler_(std::move(h)),
        deliver_(std::move(deliver)) {
    slot = boost::asio::get_associated_cancellation_slot(handler_);
  }

  void complete(result<watch_event> r) override {
    if (slot.is_connected()) slot.clear();
    using args_t = std::invoke_result_t<Deliver&, result<watch_event>>;
    args_t args;
    try {
      args = deliver_(std::move(r));
    } catch (...) {
      args = finish_result{}(std::current_exception(), result<std::tuple_element_t<2, args_t>>{});
    }
    boost::asio::dispatch(work_, [h = std::move(handler_), args = std::move(args)]() mutable {
      std::apply(std::move(h), std::move(args));
    });
  }

private:
  using work_t = decltype(boost::asio::prefer(
      std::declval<boost::asio::associated_executor_t<Handler, boost::asio::any_io_executor>>(),
      boost::asio::execution::outstanding_work.tracked));
  work_t work_;
  Handler handler_;
  Deliver deliver_;
};

template <class Handler, class Deliver>
std::unique_ptr<watch_waiter> make_watch_waiter(Handler h, Deliver deliver,
                                                const boost::asio::any_io_executor& strand) {
  return std::make_unique<watch_waiter_for<Handler, Deliver>>(std::move(h), std::move(deliver), strand);
}

}  // namespace kube::detail
