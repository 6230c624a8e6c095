// The watch decoder (sans-io): a watch body's bytes in any slices ->
// events, JSON or protobuf, each object decoded straight into its type.
// Size: about 690 lines: the JSON and protobuf framings share the event
// bookkeeping and error texts; the JSON grammar is in watch/json_grammar.hpp.
#include <kube/detail/watch_decoder.hpp>

#include "codec/json_dom_parser.hpp"
#include "codec/parse_json.hpp"
#include "watch/json_grammar.hpp"

#include <kube/codec/json_reader.hpp>

#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/monotonic_resource.hpp>

#include <algorithm>
#include <new>
#include <optional>
#include <deque>
#include <utility>

namespace kube::detail {
namespace json = boost::json;

namespace {

struct rejection {
  std::size_t index;     // first byte the grammar rejects (text.size() if none)
  json::error_code why;  // the parser's reason, from one pass over text[0, index]
};

// Coarse blocks first, then byte by byte inside the failing block, so a large
// event costs a few passes, not one per byte. The reason is taken from a
// single pass over the prefix: Boost.JSON names some errors differently
// depending on where its input was split (a surrogate pair cut in two), and
// the message must not depend on the split.
rejection first_rejected_byte(std::string_view text, const json::parse_options& opt) {
  constexpr std::size_t block = 4096;
  std::size_t good = 0;
  {
    json::basic_parser<grammar_only_handler> p(opt);
    json::error_code ec;
    while (good < text.size()) {
      const std::size_t n = std::min(block, text.size() - good);
      p.write_some(true, text.data() + good, n, ec);
      if (ec) break;
      good += n;
    }
    if (!ec) return {text.size(), {}};
  }
  std::size_t bad = text.size();
  {
    json::basic_parser<grammar_only_handler> p(opt);
    json::error_code ec;
    if (good > 0) p.write_some(true, text.data(), good, ec);
    for (std::size_t i = good; i < text.size() && !ec; ++i) {
      p.write_some(true, text.data() + i, 1, ec);
      if (ec) bad = i;
    }
  }
  json::basic_parser<grammar_only_handler> p(opt);
  json::error_code why;
  p.write_some(true, text.data(), std::min(bad + 1, text.size()), why);
  return {bad, why};
}

bool is_json_space(char c) noexcept { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

void append_escaped(std::string& out, std::string_view s) {
  static constexpr char hex[] = "0123456789abcdef";
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c >= 0x20 && c < 0x7f) {
      out += ch;
    } else {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 0xf];
    }
  }
}

// Arena for the next event, sized from the previous one so that a stream of
// similar objects needs one block per event: the DOM of a typical Kubernetes
// object takes 1.2x (string-heavy) to 3x (small fields) its JSON text.
json::storage_ptr make_arena(std::size_t last_event_size) {
  const std::size_t hint = last_event_size * 3;
  constexpr std::size_t min_block = 1024;
  constexpr std::size_t max_first_block = 1024 * 1024;
  return json::make_shared_resource<json::monotonic_resource>(std::clamp(hint, min_block, max_first_block));
}

// The grammar handler of raw_objects mode: checks the grammar, builds
// nothing, and notes what compact_envelope needs: the member count of the
// last object closed (after a whole event, the envelope's) and the deepest
// nesting seen.
struct envelope_handler : grammar_only_handler {
  std::size_t last_object_size = 0;
  std::size_t depth = 0;
  std::size_t max_depth = 0;
  void reset() noexcept { last_object_size = depth = max_depth = 0; }
  bool enter() {
    max_depth = std::max(max_depth, ++depth);
    return true;
  }
  bool on_object_begin(json::error_code&) { return enter(); }
  bool on_array_begin(json::error_code&) { return enter(); }
  bool on_object_end(std::size_t n, json::error_code&) {
    last_object_size = n;
    --depth;
    return true;
  }
  bool on_array_end(std::size_t, json::error_code&) {
    --depth;
    return true;
  }
};

// How every event of the API server begins.
constexpr std::string_view server_head = R"({"type":")";

// An event laid out as the API server writes it, {"type":"T","object":{...}}
// and nothing else: its type's and its object's text, found by position
// (the object is all between `"object":` and the last '}'). Nullopt for
// another layout: spaces, an escape in the type, another order or member.
// The text is not checked to be JSON: callers know it is valid, or have
// the object read by a reader that refuses anything else.
std::optional<std::pair<std::string_view, std::string_view>> server_layout(std::string_view text) {
  constexpr std::string_view middle = R"(","object":)";
  if (!text.starts_with(server_head) || text.back() != '}') return std::nullopt;
  const std::size_t type_end = text.find_first_of("\\\"", server_head.size());
  if (type_end == std::string_view::npos || text[type_end] != '"') return std::nullopt;
  const std::size_t object_begin = type_end + middle.size();
  if (text.substr(type_end, middle.size()) != middle || object_begin >= text.size()) return std::nullopt;
  const std::string_view object = text.substr(object_begin, text.size() - 1 - object_begin);  // before the last '}'
  if (object.size() < 2 || object.front() != '{' || object.back() != '}') return std::nullopt;
  return std::pair{text.substr(server_head.size(), type_end - server_head.size()), object};
}

// The object's text of an event whose grammar was checked, without a second
// pass over it: only when its envelope has exactly two members (so the text
// server_layout finds is the object and nothing else) and the text reader
// could read it (not nested deeper than json_reader::max_depth).
std::optional<std::pair<std::string_view, std::string_view>> compact_envelope(std::string_view text,
                                                                              const envelope_handler& seen) {
  if (seen.last_object_size != 2 || seen.max_depth >= codec::json_reader::max_depth) return std::nullopt;
  return server_layout(text);
}

}  // namespace

// Builds the event of one protobuf WatchEvent message; false with `why` set
// when it is malformed (proto_watch_event.cpp).
bool protobuf_watch_event(std::string_view message, const watch_decoder_params& params, watch_event& out,
                          std::string& why);

struct watch_decoder::impl {
  explicit impl(const watch_decoder_params& p)
      : params(p),
        parser(p.max_depth),
        lines(p.raw_objects && p.objects.make && p.objects.read && p.objects.type &&
              p.max_depth > codec::json_reader::max_depth) {
    if (p.raw_objects) grammar.emplace(parse_opts(p));
  }

  static json::parse_options parse_opts(const watch_decoder_params& p) {
    json::parse_options o;
    o.max_depth = p.max_depth;
    return o;
  }

  watch_decoder_params params;
  detail::json_dom_parser parser;
  // Protobuf streams (params.protobuf): the bytes of the frame being read,
  // kept only while a frame spans write() calls.
  std::string frame;
  std::optional<json::basic_parser<envelope_handler>> grammar;  // raw_objects: validates, builds nothing
  std::deque<watch_event> queue;
  std::uint64_t consumed = 0;     // body bytes before the current write()
  std::uint64_t event_start = 0;  // offset of the current event's '{'
  std::size_t event_size = 0;     // bytes of the current event parsed so far
  std::size_t last_event_size = 0;
  bool in_event = false;
  bool finished = false;
  error_code ec;
  std::string message;
  // The current event's bytes from earlier write() calls, kept only while an
  // event spans calls: the error path needs them for the exact offset and the
  // excerpt. Events within one call are never copied.
  std::string held;
  // Line mode (an object reader was given): the bytes of a line not yet
  // complete, given to nothing else yet. `consumed` does not count them.
  const bool lines;
  std::string pending;

  // The bytes available for an excerpt: held followed by the current write,
  // contiguous in the stream, the first at offset `base`. Built at the moment
  // of failure (held changes as events complete).
  struct window {
    std::string_view a, b;
    std::uint64_t base;
  };
  window around(std::string_view in) const { return {held, in, consumed - held.size()}; }

  // Quotes stream bytes [from, to). Callers pick ranges of bytes that every
  // split has delivered by the time of the failure, so the message does not
  // depend on how the body was cut.
  std::string excerpt(const window& w, std::uint64_t from, std::uint64_t to) const {
    if (params.error_excerpt_size == 0) return {};
    const std::uint64_t total = w.a.size() + w.b.size();
    from = std::min(from - std::min(from, w.base), total);
    to = std::min(to - std::min(to, w.base), total);
    std::string bytes;
    for (std::uint64_t i = from; i < to; ++i) bytes += i < w.a.size() ? w.a[i] : w.b[i - w.a.size()];
    std::string out = " near \"";
    append_escaped(out, bytes);
    out += '"';
    return out;
  }

  // The first excerpt-size bytes of the current event (its envelope).
  std::pair<std::uint64_t, std::uint64_t> event_head() const {
    return {event_start, event_start + std::min(params.error_excerpt_size, event_size)};
  }
  // The excerpt-size bytes of the current event that end at `end`.
  std::pair<std::uint64_t, std::uint64_t> event_tail(std::uint64_t end) const {
    return {std::max(event_start, end - std::min<std::uint64_t>(end, params.error_excerpt_size)), end};
  }

  error_code fail(std::uint64_t pos, std::string_view what, std::string_view in,
                  std::pair<std::uint64_t, std::uint64_t> quote) {
    ec = client_errc::watch_stream_error;
    message = "malformed watch stream at byte offset " + std::to_string(pos) + ": ";
    message += what;
    message += excerpt(around(in), quote.first, quote.second);
    in_event = false;
    held.clear();
    held.shrink_to_fit();
    return ec;
  }

  void start_event(std::uint64_t pos) {
    in_event = true;
    event_start = pos;
    event_size = 0;
    if (grammar) {
      grammar->reset();
      grammar->handler().reset();
    } else if (params.arena) {
      parser.reset(make_arena(last_event_size));
    } else {
      parser.reset();
    }
  }

  // The envelope's checks, the same for both modes: `type` and `object` are
  // the members' values (nullptr when absent).
  error_code check_envelope(const json::value* type, const json::value* object, std::string_view in,
                            std::optional<watch_event_type>& t) {
    if (!type) return fail(event_start, "watch event has no \"type\"", in, event_head());
    if (!type->is_string()) return fail(event_start, "watch event \"type\" is not a string", in, event_head());
    t = watch_event_type_from_string(type->get_string());
    if (!t) {
      std::string what = "unknown watch event type \"";
      const std::string_view name = type->get_string();
      append_escaped(what, name.substr(0, 32));
      what += name.size() > 32 ? "...\"" : "\"";
      return fail(event_start, what, in, event_head());
    }
    if (!object) return fail(event_start, "watch event has no \"object\"", in, event_head());
    if (!object->is_object()) {
      std::string what = "watch event \"object\" is ";
      what += object->is_array()    ? "an array"
              : object->is_string() ? "a string"
              : object->is_null()   ? "null"
                                    : "a scalar";
      what += ", not an object";
      return fail(event_start, what, in, event_head());
    }
    return {};
  }

  // raw_objects: the event's text is valid JSON (the grammar parser said so);
  // read the envelope from it, keep the object as text.
  error_code complete_raw_event(std::string_view in, std::string_view tail) {
    // The event's text: `tail` alone when it arrived in one write (the usual
    // case), else joined with the part held from earlier writes.
    std::string joined;
    std::string_view text = tail;
    if (!held.empty()) {
      joined = held;
      joined.append(tail);
      text = joined;
    }
    if (const auto fast = compact_envelope(text, grammar->handler())) {
      // The usual ADDED/MODIFIED/DELETED event: no DOM, no second pass.
      const auto t = watch_event_type_from_string(fast->first);
      if (t && *t != watch_event_type::bookmark && *t != watch_event_type::error) {
        queue.push_back(watch_event{*t, {}, std::string(fast->second), {}, nullptr});
        return {};
      }
    }
    json::value type;
    json::value object_kind;  // the object's DOM only for BOOKMARK/ERROR; else a stand-in of its kind
    std::string_view object_text;
    bool has_type = false;
    bool has_object = false;
    try {
      codec::json_reader r(text);
      r.begin_object();  // the first byte was '{'
      std::string_view key;
      while (r.next_key(key)) {
        if (key == "type") {
          type = r.value();
          has_type = true;
        } else if (key == "object") {
          object_text = r.skip();
          has_object = true;
        } else {
          (void)r.skip();
        }
      }
    } catch (const decode_error& e) {
      // The grammar was checked; only a nesting deeper than the reader's
      // limit (max_depth set above it) gets here.
      return fail(event_start, e.what(), in, event_head());
    }
    if (has_object) {
      switch (object_text.front()) {
      case '{':
        object_kind = json::object();
        break;
      case '[':
        object_kind = json::array();
        break;
      case '"':
        object_kind = "";
        break;
      case 'n':
        object_kind = nullptr;
        break;
      default:
        object_kind = 0;
        break;
      }
    }
    std::optional<watch_event_type> t;
    if (auto e = check_envelope(has_type ? &type : nullptr, has_object ? &object_kind : nullptr, in, t)) return e;
    if (*t == watch_event_type::bookmark || *t == watch_event_type::error) {
      json::error_code jec;
      json::value object = detail::parse_json(object_text, jec, {}, params.max_depth);
      if (jec)
        return fail(event_start, "watch event \"object\" holds a number too large for a double", in, event_head());
      queue.push_back(watch_event{*t, std::move(object.as_object()), {}, {}, nullptr});
    } else {
      queue.push_back(watch_event{*t, {}, std::string(object_text), {}, nullptr});
    }
    return {};
  }

  // The event's JSON is complete: check the envelope, queue the event.
  // `tail` is the event's text in this write (held has the earlier part).
  error_code complete_event(std::string_view in, std::string_view tail) {
    if (grammar) {
      if (auto e = complete_raw_event(in, tail)) return e;
    } else {
      json::value v = parser.release();
      auto& envelope = v.get_object();  // the first byte was '{'
      json::value* object = envelope.if_contains("object");
      std::optional<watch_event_type> t;
      if (auto e = check_envelope(envelope.if_contains("type"), object, in, t)) return e;
      if (detail::json_has_non_finite(*object))
        return fail(event_start, "watch event \"object\" holds a number too large for a double", in, event_head());
      // Move construction keeps the arena: no copy of the object.
      queue.push_back(watch_event{*t, std::move(object->get_object()), {}, {}, nullptr});
    }
    in_event = false;
    last_event_size = event_size;
    held.clear();
    if (held.capacity() > 1024 * 1024) held.shrink_to_fit();  // do not pin a buffer after one huge event
    return {};
  }

  error_code write_strict(const char* data, std::size_t n) {
    if (ec) return ec;
    const std::string_view in(data, n);
    if (finished) return fail(consumed, "data after the end of the stream", in, {consumed, consumed + 1});
    std::size_t i = 0;
    std::size_t event_begin = 0;  // index in `in` where the current event's bytes start
    while (i < n) {
      if (!in_event) {
        while (i < n && is_json_space(in[i])) ++i;
        if (i == n) break;
        if (in[i] != '{') {
          std::string what = "expected '{' to start a watch event, found '";
          append_escaped(what, in.substr(i, 1));
          what += "'";
          return fail(consumed + i, what, in, {consumed + i, consumed + i + 1});
        }
        start_event(consumed + i);
        event_begin = i;
      }
      const std::size_t room = params.max_event_size - event_size;
      const std::size_t feed = std::min(n - i, room);
      if (feed == 0)
        return fail(event_start,
                    "watch event exceeds the maximum event size of " + std::to_string(params.max_event_size) + " bytes",
                    in, event_head());
      json::error_code jec;
      const std::size_t used = grammar ? grammar->write_some(true, in.data() + i, feed, jec)
                                       : parser.write_some(in.data() + i, feed, true, jec);
      if (jec) return json_error(jec, in, event_begin, i + feed);
      i += used;
      event_size += used;
      if (grammar ? grammar->done() : parser.done()) {
        // The parser also swallows whitespace after the closing brace; the
        // event ends at the brace (split-independent sizes and excerpts).
        std::size_t end = i;
        for (; end > i - used && is_json_space(in[end - 1]); --end) --event_size;
        if (auto e = complete_event(in, in.substr(event_begin, end - event_begin))) return e;
      }
    }
    if (in_event) held.append(in.substr(event_begin));
    consumed += n;
    return {};
  }

  // Line mode: whole lines go to read_line, which reads an event the API
  // server's way (one per line) with the object reader; everything else, and
  // a line it refuses, goes to write_strict as it would without the reader.
  // A line stays in `pending` until its newline arrives, unless flush_now
  // says the general path must see its bytes now.
  error_code write(const char* data, std::size_t n) {
    if (!lines || ec || finished) return write_strict(data, n);
    std::string_view in(data, n);
    while (!in.empty()) {
      if (in_event) {
        // The general path is inside an event (a refused line left it
        // there, e.g. an event spread over lines): it takes the bytes
        // until that event ends.
        const std::size_t nl = in.find('\n');
        const std::size_t take = nl == std::string_view::npos ? in.size() : nl + 1;
        if (auto e = write_strict(in.data(), take)) return e;
        in.remove_prefix(take);
        continue;
      }
      const std::size_t nl = in.find('\n');
      if (nl == std::string_view::npos) {
        const std::size_t from = pending.size();
        pending.append(in);
        if (flush_now(from)) return flush_pending();
        return {};
      }
      std::string_view line = in.substr(0, nl);
      if (!pending.empty()) {
        pending.append(line);
        line = pending;
      }
      if (read_line(line)) {
        consumed += line.size() + 1;
        drop_pending();
      } else if (pending.empty()) {
        if (auto e = write_strict(in.data(), nl + 1)) return e;
      } else {
        pending += '\n';
        if (auto e = flush_pending()) return e;
      }
      in.remove_prefix(nl + 1);
    }
    return {};
  }

  // Whether the bytes of an unfinished line (`pending`, new bytes from
  // `from` on) may hold a complete event or an error, which the general path
  // must see now instead of at the line's end: they do not begin as the
  // API server's events do; they end with '}' and spaces (an event may end
  // there: a server that writes no newlines, or "\r\n" cut in two); the new
  // bytes hold a '}' followed by spaces and '{' (such a server has begun
  // the next event); or they exceed the largest event. Inside a string,
  // the last two only send an event the general way early: slower, same
  // result. What stays held: a line that begins as the API server's events
  // do and is not a complete event followed by spaces or another event: an
  // incomplete event (the usual case: the first piece of one), or a
  // malformed line, whose error is reported at its end or at the end of
  // the stream.
  [[nodiscard]] bool flush_now(std::size_t from) const {
    const std::size_t n = std::min(pending.size(), server_head.size());
    if (std::string_view(pending).substr(0, n) != server_head.substr(0, n)) return true;
    if (pending.size() > params.max_event_size) return true;
    const std::size_t last = pending.find_last_not_of(" \t\r\n");
    if (last != std::string::npos && pending[last] == '}') return true;
    for (std::size_t i = pending.find('}', from); i != std::string::npos; i = pending.find('}', i + 1)) {
      std::size_t j = i + 1;
      while (j < pending.size() && is_json_space(pending[j])) ++j;
      if (j < pending.size() && pending[j] == '{') return true;
    }
    return false;
  }

  error_code flush_pending() {
    const auto e = write_strict(pending.data(), pending.size());
    drop_pending();
    return e;
  }

  void drop_pending() {
    pending.clear();
    if (pending.capacity() > 1024 * 1024) pending.shrink_to_fit();  // as `held`
  }

  // One line that holds exactly one event as the API server writes it,
  // {"type":"ADDED|MODIFIED|DELETED","object":{...}}, whose object the
  // reader takes: queued, true. Anything else: nothing changed, false.
  bool read_line(std::string_view line) {
    if (line.size() > params.max_event_size) return false;
    const auto layout = server_layout(line);
    if (!layout) return false;
    const auto t = watch_event_type_from_string(layout->first);
    if (!t || *t == watch_event_type::bookmark || *t == watch_event_type::error) return false;
    std::shared_ptr<void> obj;
    try {
      obj = params.objects.make();
      // The reader refuses the object unless it is exactly one valid JSON
      // value: then the whole line is a valid event.
      codec::read_text(layout->second, params.objects.read, obj.get());
    } catch (const std::bad_alloc&) {
      throw;                           // the decoder is failed (see watch_decoder::write)
    } catch (const std::exception&) {  // NOLINT(bugprone-empty-catch): the general path decides
      return false;
    }
    watch_event ev{*t, {}, {}, std::move(obj), params.objects.type};
    queue.push_back(std::move(ev));
    last_event_size = line.size();
    return true;
  }

  // The stream_parser rejected the event somewhere in in[event_begin, end):
  // find the byte, then fail.
  error_code json_error(const json::error_code& jec, std::string_view in, std::size_t event_begin, std::size_t end) {
    std::string text = held;
    text.append(in.substr(event_begin, end - event_begin));
    const auto [bad, why] = first_rejected_byte(text, parse_opts(params));
    std::string what = "invalid JSON in the watch event starting at byte offset " + std::to_string(event_start) + " (" +
                       (why ? why : jec).message() + ")";
    return fail(event_start + bad, what, in, event_tail(event_start + bad + 1));
  }

  // ---- protobuf: 4-byte big-endian length, then a metav1.WatchEvent ----

  static constexpr std::size_t length_bytes = 4;

  error_code proto_fail(std::uint64_t pos, const std::string& what) {
    ec = client_errc::watch_stream_error;
    message = "malformed protobuf watch stream at byte offset " + std::to_string(pos) + ": " + what;
    in_event = false;
    frame.clear();
    frame.shrink_to_fit();
    return ec;
  }

  // The frame's length from its first four bytes.
  static std::size_t frame_length(const char* p) noexcept {
    const auto* u = reinterpret_cast<const unsigned char*>(p);
    return (std::size_t{u[0]} << 24) | (std::size_t{u[1]} << 16) | (std::size_t{u[2]} << 8) | std::size_t{u[3]};
  }

  // One complete frame (length and message) at stream offset `pos`.
  error_code proto_event(std::string_view f, std::uint64_t pos) {
    watch_event ev;
    std::string why;
    if (!protobuf_watch_event(f.substr(length_bytes), params, ev, why)) return proto_fail(pos, why);
    queue.push_back(std::move(ev));
    return {};
  }

  error_code proto_write(const char* data, std::size_t n) {
    if (ec) return ec;
    if (finished) return proto_fail(consumed, "data after the end of the stream");
    std::string_view in(data, n);
    // Moves up to `want` bytes of the input to the frame being gathered.
    const auto gather = [&](std::size_t want) {
      const std::size_t take = std::min(want, in.size());
      frame.append(in.substr(0, take));
      in.remove_prefix(take);
      consumed += take;
    };
    while (!in.empty()) {
      const std::uint64_t start = consumed - frame.size();
      in_event = true;
      // The length: from this write, or gathered across writes.
      const bool here = frame.empty() && in.size() >= length_bytes;
      if (!here && frame.size() < length_bytes) {
        gather(length_bytes - frame.size());
        if (frame.size() < length_bytes) break;
      }
      const std::size_t len = frame_length(here ? in.data() : frame.data());
      if (len > params.max_event_size) return proto_fail(start, too_large(len));
      const std::size_t whole = length_bytes + len;
      if (here && in.size() >= whole) {  // the whole frame in this write: no copy
        if (auto e = proto_event(in.substr(0, whole), start)) return e;
        in.remove_prefix(whole);
        consumed += whole;
      } else {
        frame.reserve(whole);
        gather(whole - frame.size());
        if (frame.size() < whole) break;
        if (auto e = proto_event(frame, start)) return e;
        frame.clear();
      }
      in_event = false;
    }
    return {};
  }

  std::string too_large(std::size_t len) const {
    return "a watch event of " + std::to_string(len) + " bytes, more than max_event_size (" +
           std::to_string(params.max_event_size) + ")";
  }

  error_code proto_finish() {
    if (ec) return ec;
    finished = true;
    if (in_event) {
      return proto_fail(consumed - frame.size(),
                        "the stream ended inside a watch event (" + std::to_string(frame.size()) + " bytes received)");
    }
    return {};
  }

  error_code finish() {
    if (ec) return ec;
    if (!pending.empty()) {
      // The last line had no newline: the general path takes it.
      if (auto e = flush_pending()) return e;
    }
    finished = true;
    if (in_event)
      return fail(consumed,
                  "the stream ended inside the watch event starting at byte offset " + std::to_string(event_start) +
                      " (" + std::to_string(event_size) + " bytes received)",
                  {}, event_tail(consumed));
    return {};
  }
};

watch_decoder::watch_decoder(const watch_decoder_params& params)
    : impl_(std::make_unique<impl>(params)) {}
watch_decoder::~watch_decoder() = default;
watch_decoder::watch_decoder(watch_decoder&&) noexcept = default;
watch_decoder& watch_decoder::operator=(watch_decoder&&) noexcept = default;

error_code watch_decoder::write(const char* data, std::size_t n) {
  try {
    if (impl_->params.protobuf) return impl_->proto_write(data, n);
    return impl_->write(data, n);
  } catch (...) {
    // Only allocation can throw; the parser is unusable afterwards.
    impl_->ec = client_errc::watch_stream_error;
    impl_->message = "malformed watch stream: allocation failed while decoding";
    throw;
  }
}

error_code watch_decoder::finish() {
  if (impl_->params.protobuf) return impl_->proto_finish();
  return impl_->finish();
}

std::optional<watch_event> watch_decoder::next() {
  if (impl_->queue.empty()) return std::nullopt;
  std::optional<watch_event> ev(std::move(impl_->queue.front()));
  impl_->queue.pop_front();
  return ev;
}

std::size_t watch_decoder::ready() const noexcept { return impl_->queue.size(); }
error_code watch_decoder::error() const noexcept { return impl_->ec; }
const std::string& watch_decoder::error_message() const noexcept { return impl_->message; }
std::uint64_t watch_decoder::bytes_consumed() const noexcept { return impl_->consumed; }
bool watch_decoder::in_event() const noexcept {
  if (impl_->in_event) return true;
  return std::any_of(impl_->pending.begin(), impl_->pending.end(), [](char c) { return !is_json_space(c); });
}

}  // namespace kube::detail
