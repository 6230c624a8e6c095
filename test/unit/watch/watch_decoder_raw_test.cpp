// raw_objects mode (typed watches): the same events, errors and messages as
// the DOM mode, at every split, with ADDED/MODIFIED/DELETED objects kept as
// their JSON text, or, with an object reader, read into a C++ object as each
// event is framed. Every case runs in both forms of the mode.

#include "json_tree_reader.hpp"
#include "watch_test_util.hpp"

#include <kube/codec/json_reader.hpp>
#include <kube/detail/watch_decoder.hpp>
#include <kube/watch/watch_event.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <catch2/catch.hpp>

#include <random>
#include <stdexcept>
#include <string>
#include <typeinfo>
#include <vector>

using kube::watch_event_type;
using watch_test::decoded;

namespace {

kube::detail::watch_decoder_params raw_params(bool reader = false) {
  kube::detail::watch_decoder_params p;
  p.raw_objects = true;
  if (reader) {
    p.objects = watch_test::tree_reader();
    p.max_depth = kube::codec::json_reader::max_depth + 1;  // as typed watches set it
  }
  return p;
}

// The DOM mode with the same nesting limit.
kube::detail::watch_decoder_params dom_params(bool reader) {
  kube::detail::watch_decoder_params p;
  p.max_depth = raw_params(reader).max_depth;
  return p;
}

// `raw` decoded the same stream as `dom`: same events (objects compared
// after parsing the raw text, or as read by the reader), same error, same
// message.
bool same_as_dom(const decoded& raw, const decoded& dom) {
  if (raw.ec != dom.ec || raw.message != dom.message || raw.events.size() != dom.events.size()) return false;
  for (std::size_t i = 0; i < raw.events.size(); ++i) {
    const auto& r = raw.events[i];
    const auto& d = dom.events[i];
    if (r.type != d.type) return false;
    const bool text_kind = r.type == watch_event_type::added || r.type == watch_event_type::modified ||
                           r.type == watch_event_type::deleted;
    if (text_kind && r.decoded) {
      if (!r.object.empty() || !r.object_text.empty() || r.decoded_type != &typeid(boost::json::value)) return false;
      const auto& v = *static_cast<const boost::json::value*>(r.decoded.get());
      if (!v.is_object() || v.get_object() != d.object) return false;
    } else if (text_kind) {
      if (!r.object.empty() || r.object_text.empty()) return false;
      if (boost::json::parse(r.object_text, {}, {.max_depth = 1000}).as_object() != d.object) return false;
    } else if (!r.object_text.empty() || r.decoded || r.object != d.object) {
      return false;
    }
  }
  return true;
}

std::size_t read_by_reader(const decoded& r) {
  std::size_t n = 0;
  for (const auto& e : r.events) n += e.decoded ? 1 : 0;
  return n;
}

std::string event(std::string_view type, std::string_view name) {
  return R"({"type":")" + std::string(type) + R"(","object":{"kind":"ConfigMap","metadata":{"name":")" +
         std::string(name) + R"("}}})";
}

}  // namespace

TEST_CASE("raw_objects: recordings decode to the DOM mode's events at every split", "[watch][raw]") {
  const bool reader = GENERATE(false, true);
  INFO("object reader: " << reader);
  std::mt19937 rng(20261130);
  for (const char* rec : {"configmaps", "expired", "initial-events"}) {
    INFO(rec);
    const auto body = watch_test::read_data(std::string(rec) + ".jsonl");
    const auto dom = watch_test::decode_whole(body, dom_params(reader));
    REQUIRE_FALSE(dom.events.empty());
    CHECK(same_as_dom(watch_test::decode_whole(body, raw_params(reader)), dom));
    CHECK(same_as_dom(watch_test::decode_bytewise(body, raw_params(reader)), dom));
    for (std::size_t cut = 0; cut <= body.size(); cut += 7) {
      if (!same_as_dom(watch_test::decode_cut(body, {cut}, raw_params(reader)), dom)) {
        INFO("split at byte " << cut);
        FAIL("different result");
      }
    }
    for (int round = 0; round < 20; ++round) {
      std::vector<std::size_t> cuts;
      std::uniform_int_distribution<std::size_t> step(1, round % 2 ? 16 : 3000);
      for (std::size_t at = step(rng); at < body.size(); at += step(rng)) cuts.push_back(at);
      CHECK(same_as_dom(watch_test::decode_cut(body, cuts, raw_params(reader)), dom));
    }
  }
}

TEST_CASE("raw_objects: malformed streams fail with the DOM mode's error and message", "[watch][raw][malformed]") {
  const bool reader = GENERATE(false, true);
  INFO("object reader: " << reader);
  const std::string good = event("ADDED", "a") + "\n";
  const std::vector<std::string> bodies{
      good + R"({"type":"UPSERTED","object":{}})",
      good + R"({"object":{}})",
      good + R"({"type":7,"object":{}})",
      good + R"({"type":"ADDED"})",
      good + R"({"type":"ADDED","object":[1,2]})",
      good + R"({"type":"ADDED","object":"x"})",
      good + R"({"type":"ADDED","object":null})",
      good + R"({"type":"ADDED","object":3.5})",
      good + R"({"type":"MODIFIED","object":{"metadata":{"name":)" + "garbage\n" + event("DELETED", "a"),
      good + R"({"type":"ADDED","object":{"a":")" + std::string("\xc3\x28") + R"("}})",
      good + R"({"type":"ADDED","object":{"s":"\ud83d"}})",
      good + R"({"type":"ADDED","object":)" + std::string(2000, '[') + std::string(2000, ']') + "}",
      good + "[1,2]",
      good + R"({"type":"ADDED","obj)",
      good + R"({"type":"ADDED","object":{"a":1,}})",
      // the envelope's members in another order, with an unknown member
      event("ADDED", "x") + R"({"object":{"kind":"ConfigMap"},"extra":[{"y":"}"}],"type":"DELETED"})",
      // one byte off the API server's layout, each on its own line
      good + R"({"type":"ADDED","objecT":{"a":1}})" + "\n" + good,
      good + R"({"type":"ADDED","object":{"a":1},"object":{"b":2}})" + "\n" + good,
      good + R"({"type":"ADDED", "object":{"a":1}})" + "\n" + good,
      good + R"({"type":"ADDED","object":{"a":1}} )" + "\n" + good,
      good + R"({"type":"ADDED","object":{"a":1}}})" + "\n" + good,
      good + R"({"type":"ADDED","object":{"a":1}}{"type":"DELETED","object":{"a":1}})" + "\n" + good,
      good + R"({"type":"ADD\u0045D","object":{"a":1}})" + "\n" + good,
  };
  for (const auto& body : bodies) {
    INFO(body.substr(0, 200));
    const auto dom = watch_test::decode_whole(body, dom_params(reader));
    CHECK(same_as_dom(watch_test::decode_whole(body, raw_params(reader)), dom));
    CHECK(same_as_dom(watch_test::decode_bytewise(body, raw_params(reader)), dom));
  }
}

TEST_CASE("raw_objects: BOOKMARK and ERROR events keep their DOM object", "[watch][raw]") {
  const bool reader = GENERATE(false, true);
  INFO("object reader: " << reader);
  const std::string body = R"({"type":"BOOKMARK","object":{"kind":"ConfigMap","metadata":{"resourceVersion":"12"}}})"
                           "\n"
                           R"({"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired"}})";
  const auto got = watch_test::decode_whole(body, raw_params(reader));
  REQUIRE(got.events.size() == 2);
  CHECK(got.events[0].object_text.empty());
  CHECK(got.events[0].object.at("metadata").at("resourceVersion") == "12");
  CHECK(got.events[1].object.at("code") == 410);
  kube::diagnostics diag;
  CHECK(kube::watch_event_error(got.events[1], diag) == kube::api_errc::expired);
}

TEST_CASE("raw_objects: an event nested deeper than the text reader accepts fails cleanly", "[watch][raw][malformed]") {
  const bool reader = GENERATE(false, true);
  INFO("object reader: " << reader);
  auto params = raw_params(reader);
  params.max_depth = 3000;  // above json_reader::max_depth (1000)
  const std::string body = event("ADDED", "a") + "\n" + R"({"type":"ADDED","object":{"deep":)" +
                           std::string(1500, '[') + std::string(1500, ']') + "}}";
  const auto got = watch_test::decode_whole(body, params);
  CHECK(got.events.size() == 1);
  CHECK(got.ec == kube::client_errc::watch_stream_error);
  CHECK(got.message.find("nested too deeply") != std::string::npos);
}

// raw_objects mode takes the object of an envelope written as the API server
// writes it, {"type":"T","object":{...}}, without reading it a second time.
// Whatever the layout, the result must be the DOM mode's: the events, the
// error and its message. Values of every JSON kind and a few broken ones in
// three envelope layouts, then random one-byte mutations of a recording, each
// fed whole and at random splits.
TEST_CASE("raw_objects: values of every kind in three envelope layouts decode as in DOM mode",
          "[watch][raw][malformed]") {
  const bool reader = GENERATE(false, true);
  INFO("object reader: " << reader);
  const std::string good = event("ADDED", "a") + "\n";
  const std::vector<std::string> values{
      R"("plain")", R"("a\"b\\c\/d\be\ff\ng\rh\ti")", R"("\u0041")", R"("\x")", "\"\x01\"", "\"\xc3\xa9\"", "\"\x7f\"",
      "0", "-0", "01", "-01", "-", "-a", "12345678901234567890123", "1.5", "1e5", "1E+5", "-0.0", "0.", "1e", "true",
      "false", "null", "tru", "trux", "nul", "falsey", "[]", "[ ]", "[1,]", "[,1]", "{}", "{ }",
      R"({"a" : 1 , "b":[ true ,null ]})", R"({"a":1,})", R"({"a"})", R"({"a":})", R"({a:1})", "[1 2]",
      std::string(63, '[') + std::string(63, ']'), std::string(64, '[') + std::string(64, ']'),
      std::string(65, '[') + std::string(65, ']'), std::string(70, '['),
      // with the object's own level and the envelope's: the typed watch's
      // limit (1,001) exactly, and one over
      std::string(999, '[') + std::string(999, ']'), std::string(1000, '[') + std::string(1000, ']')};
  for (const auto& v : values) {
    for (const std::string& body : {good + R"({"type":"ADDED","object":{"v":)" + v + "}}\n" + good,
                                    good + R"({"type":"MODIFIED","object":{"kind":"X"},"v":)" + v + "}\n" + good,
                                    good + R"({"object":{"v":)" + v + R"(},"type":"DELETED"})" + "\n" + good}) {
      INFO(body.substr(0, 300));
      const auto dom = watch_test::decode_whole(body, dom_params(reader));
      CHECK(same_as_dom(watch_test::decode_whole(body, raw_params(reader)), dom));
      CHECK(same_as_dom(watch_test::decode_bytewise(body, raw_params(reader)), dom));
    }
  }
}

TEST_CASE("raw_objects: mutated recordings decode as in DOM mode", "[watch][raw][malformed]") {
  const bool reader = GENERATE(false, true);
  INFO("object reader: " << reader);
  const auto original = watch_test::read_data("configmaps.jsonl");
  const std::string alphabet = std::string("{}[]\",:\\ \n0123456789-.eE+tfnrulasxb/") + '\x01' + '\x7f' + '\x80' +
                               '\xc3' + '\xa9' + '\xed' + '\xff';
  std::mt19937 rng(29112026);
  for (int round = 0; round < 600; ++round) {
    std::string body = original;
    const std::size_t at = std::uniform_int_distribution<std::size_t>(0, body.size() - 1)(rng);
    const char c = alphabet[std::uniform_int_distribution<std::size_t>(0, alphabet.size() - 1)(rng)];
    switch (round % 4) {
    case 0:
      body[at] = c;
      break;
    case 1:
      body.insert(body.begin() + static_cast<std::ptrdiff_t>(at), c);
      break;
    case 2:
      body.erase(at, 1);
      break;
    default:
      body.resize(at);
      break;
    }
    std::vector<std::size_t> cuts;
    std::uniform_int_distribution<std::size_t> step(1, round % 2 ? 9 : 700);
    for (std::size_t pos = step(rng); pos < body.size(); pos += step(rng)) cuts.push_back(pos);
    const auto dom = watch_test::decode_whole(body, dom_params(reader));
    const auto raw_whole = watch_test::decode_whole(body, raw_params(reader));
    const auto raw_cut = watch_test::decode_cut(body, cuts, raw_params(reader));
    if (!same_as_dom(raw_whole, dom) || !same_as_dom(raw_cut, dom)) {
      INFO("round " << round << ", byte " << at << ", error: " << dom.message);
      FAIL("a mutated recording decoded differently from the DOM mode");
    }
  }
}

// With an object reader, the events of a recording from the API server (one
// per line) are all read by the reader, none kept as text.
TEST_CASE("object reader: every event of a recording is read as it is framed", "[watch][raw]") {
  for (const char* rec : {"configmaps", "initial-events"}) {
    INFO(rec);
    const auto body = watch_test::read_data(std::string(rec) + ".jsonl");
    const auto got = watch_test::decode_whole(body, raw_params(true));
    std::size_t objects = 0;
    for (const auto& e : got.events)
      objects += e.type != watch_event_type::bookmark && e.type != watch_event_type::error ? 1 : 0;
    REQUIRE(objects > 0);
    CHECK(read_by_reader(got) == objects);
    CHECK(same_as_dom(got, watch_test::decode_whole(body, dom_params(true))));
    // Each line cut in two (as a 7 KB event arrives in two TLS records):
    // still read by the reader, unless the first piece ends with '}'.
    std::vector<std::size_t> cuts;
    std::size_t ending_in_brace = 0;
    for (std::size_t begin = 0; begin < body.size();) {
      const std::size_t end = std::min(body.find('\n', begin), body.size());
      const std::size_t mid = begin + (end - begin) / 2;
      cuts.push_back(mid);
      ending_in_brace += body[mid - 1] == '}' ? 1 : 0;
      cuts.push_back(std::min(end + 1, body.size()));
      begin = end + 1;
    }
    cuts.pop_back();
    const auto cut = watch_test::decode_cut(body, cuts, raw_params(true));
    CHECK(same_as_dom(cut, watch_test::decode_whole(body, dom_params(true))));
    CHECK(read_by_reader(cut) + ending_in_brace >= objects);
  }
}

namespace {
// Refuses any object with a member "refuse", as a typed reader refuses an
// object that does not fit its type.
void read_or_refuse(kube::codec::json_reader& in, void* out, const kube::json_path& at) {
  watch_test::read_tree_erased(in, out, at);
  if (static_cast<boost::json::value*>(out)->as_object().contains("refuse")) throw std::runtime_error("refused");
}
}  // namespace

TEST_CASE("object reader: an object the reader refuses is kept as text, as without a reader", "[watch][raw]") {
  auto params = raw_params(true);
  params.objects.read = &read_or_refuse;
  const std::string body =
      event("ADDED", "a") + "\n" + R"({"type":"MODIFIED","object":{"refuse":1}})" + "\n" + event("DELETED", "a") + "\n";
  const auto got = watch_test::decode_whole(body, params);
  REQUIRE(got.events.size() == 3);
  CHECK(got.events[0].decoded);
  CHECK_FALSE(got.events[1].decoded);
  CHECK(got.events[1].object_text == R"({"refuse":1})");
  CHECK(got.events[2].decoded);
  CHECK(same_as_dom(got, watch_test::decode_whole(body, dom_params(true))));
}

// With a reader, a complete event is delivered by the write() that
// completes it, as without one, even when no newline follows it.
TEST_CASE("object reader: an event is delivered by the write that completes it", "[watch][raw]") {
  const std::string a = event("ADDED", "a");
  const std::string b = event("DELETED", "b");
  struct step {
    std::string write;
    std::size_t ready;  // events complete after this write
  };
  const std::vector<std::vector<step>> cases{
      {{a.substr(0, 20), 0}, {a.substr(20), 1}},                               // no newline after it
      {{a + " ", 1}},                                                          // a space after it
      {{a + "\r", 1}, {"\n" + b.substr(0, 30), 1}, {b.substr(30) + "\n", 2}},  // CRLF cut in two
      {{a + b.substr(0, 30), 1}, {b.substr(30), 2}},                           // the next one begun, no newline
      {{a + "\t " + b.substr(0, 30), 1}, {b.substr(30), 2}},                   // spaces between, no newline
      {{R"({"type":"MODIFIED",)"
        "\n"
        R"("object":{"metadata":{"name":"x"}}})",
        1}},  // over two lines
  };
  for (const bool reader : {false, true}) {
    for (const auto& steps : cases) {
      INFO("object reader: " << reader << ", first write: " << steps.front().write);
      kube::detail::watch_decoder d(raw_params(reader));
      for (const auto& s : steps) {
        CHECK_FALSE(d.write(s.write));
        CHECK(d.ready() == s.ready);
      }
    }
  }
  // An error is reported by the write that holds it when the bytes do not
  // begin like an event.
  kube::detail::watch_decoder d(raw_params(true));
  CHECK(d.write(a + "\nhello") == kube::client_errc::watch_stream_error);
  CHECK(d.ready() == 1);
  // Half an event, then the end: the general path's error.
  kube::detail::watch_decoder half(raw_params(true));
  half.write(R"({"type":"ADDED","object":{)");
  CHECK(half.in_event());
  half.finish();
  CHECK(half.error() == kube::client_errc::watch_stream_error);
  CHECK(half.error_message().find("the stream ended inside the watch event") != std::string::npos);
}
