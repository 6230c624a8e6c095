// Fuzz target for kube::detail::watch_decoder (libFuzzer entry point).
//
// The input is a watch response body. Besides "no crash, no UB, no leak"
// (the sanitizers' job) it checks the decoder's promises and aborts when one
// is broken:
//   - the result (events, error code, error message) is the same whether the
//     body arrives whole, byte by byte, or in input-dependent pieces;
//   - the arena and heap allocation modes agree;
//   - raw_objects mode (objects kept as text, or read by an object reader
//     as each event is framed) agrees with the DOM mode;
//   - a failed stream explains itself with a byte offset;
//   - with a small max_event_size, splitting still does not matter.

#include "json_tree_reader.hpp"

#include <kube/detail/watch_decoder.hpp>
#include <kube/watch/watch_event.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace {

struct result {
  std::vector<kube::watch_event> events;
  kube::error_code ec;
  std::string message;

  bool operator==(const result& o) const {
    if (ec != o.ec || message != o.message || events.size() != o.events.size()) return false;
    for (std::size_t i = 0; i < events.size(); ++i)
      if (events[i].type != o.events[i].type || events[i].object != o.events[i].object) return false;
    return true;
  }
};

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "watch_decoder_fuzz: broken promise: %s\n", what);
    std::abort();
  }
}

// Feeds `body` in pieces whose sizes come from `step(i)`, 0 meaning "the rest".
template <class Step>
result decode(std::string_view body, const kube::detail::watch_decoder_params& params, Step step) {
  kube::detail::watch_decoder d(params);
  result r;
  std::size_t at = 0;
  for (std::size_t i = 0; at < body.size(); ++i) {
    std::size_t n = step(i);
    if (n == 0 || n > body.size() - at) n = body.size() - at;
    const auto ec = d.write(body.data() + at, n);
    check(ec == d.error(), "write() returns the sticky error");
    at += n;
    while (auto e = d.next()) r.events.push_back(std::move(*e));
  }
  d.finish();
  while (auto e = d.next()) r.events.push_back(std::move(*e));
  r.ec = d.error();
  r.message = d.error_message();
  return r;
}

// raw_objects decoded the same body as the DOM mode: same error and message,
// same events, each ADDED/MODIFIED/DELETED object's text parsing to the DOM
// mode's object.
bool same_as_dom(const result& raw, const result& dom) {
  if (raw.ec != dom.ec || raw.message != dom.message || raw.events.size() != dom.events.size()) return false;
  for (std::size_t i = 0; i < raw.events.size(); ++i) {
    const auto& r = raw.events[i];
    const auto& d = dom.events[i];
    if (r.type != d.type) return false;
    if (r.decoded) {
      const auto& v = *static_cast<const boost::json::value*>(r.decoded.get());
      if (!r.object_text.empty() || !v.is_object() || v.get_object() != d.object) return false;
      continue;
    }
    if (r.object_text.empty()) {
      if (r.object != d.object) return false;
      continue;
    }
    boost::json::parse_options opt;
    opt.max_depth = 1000;
    boost::json::error_code ec;
    const auto v = boost::json::parse(r.object_text, ec, {}, opt);
    if (ec || !v.is_object() || v.get_object() != d.object) return false;
  }
  return true;
}

void check_result(const result& r) {
  if (r.ec) {
    check(r.ec == kube::client_errc::watch_stream_error, "failures are watch_stream_error");
    check(r.message.find("byte offset ") != std::string::npos, "the message names a byte offset");
  } else {
    check(r.message.empty(), "no message without an error");
  }
  for (const auto& e : r.events) {
    kube::diagnostics diag;
    const auto ec = kube::watch_event_error(e, diag);
    check((e.type == kube::watch_event_type::error) == static_cast<bool>(diag.server_status()),
          "only ERROR events carry a Status into diagnostics");
    check(e.type != kube::watch_event_type::error || ec, "an ERROR event is an error");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  const kube::detail::watch_decoder_params defaults;

  const result whole = decode(body, defaults, [](std::size_t) { return std::size_t{0}; });
  check_result(whole);
  check(decode(body, defaults, [](std::size_t) { return std::size_t{1}; }) == whole, "byte-by-byte equals whole");
  // Piece sizes taken from the input itself, so the fuzzer explores splits.
  auto from_input = [&](std::size_t i) { return size == 0 ? std::size_t{1} : 1 + data[(i * 7) % size] % 61; };
  check(decode(body, defaults, from_input) == whole, "input-driven pieces equal whole");

  kube::detail::watch_decoder_params heap = defaults;
  heap.arena = false;
  check(decode(body, heap, from_input) == whole, "heap mode equals arena mode");

  kube::detail::watch_decoder_params raw = defaults;
  raw.raw_objects = true;
  check(same_as_dom(decode(body, raw, [](std::size_t) { return std::size_t{0}; }), whole),
        "raw objects equal DOM, whole");
  check(same_as_dom(decode(body, raw, from_input), whole), "raw objects equal DOM, in pieces");

  // With an object reader (typed watches: the envelope one level above
  // the reader's limit), against the DOM mode with the same limit.
  kube::detail::watch_decoder_params deeper = defaults;
  deeper.max_depth = kube::codec::json_reader::max_depth + 1;
  const result whole_deeper = decode(body, deeper, [](std::size_t) { return std::size_t{0}; });
  kube::detail::watch_decoder_params reader = deeper;
  reader.raw_objects = true;
  reader.objects = watch_test::tree_reader();  // test/unit/watch/json_tree_reader.hpp
  check(same_as_dom(decode(body, reader, [](std::size_t) { return std::size_t{0}; }), whole_deeper),
        "objects read by a reader equal DOM, whole");
  check(same_as_dom(decode(body, reader, from_input), whole_deeper), "objects read by a reader equal DOM, in pieces");
  kube::detail::watch_decoder_params reader_small = reader;
  reader_small.max_event_size = 1 + size % 257;
  deeper.max_event_size = reader_small.max_event_size;
  check(same_as_dom(decode(body, reader_small, from_input),
                    decode(body, deeper, [](std::size_t) { return std::size_t{0}; })),
        "objects read by a reader equal DOM, small events");

  kube::detail::watch_decoder_params small = defaults;
  small.max_event_size = 1 + size % 257;
  small.max_depth = 1 + size % 7;
  small.error_excerpt_size = size % 5;
  const result limited = decode(body, small, [](std::size_t) { return std::size_t{0}; });
  check_result(limited);
  check(decode(body, small, [](std::size_t) { return std::size_t{1}; }) == limited, "limits do not depend on splits");
  return 0;
}
