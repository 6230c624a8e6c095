// The watch decoder on synthetic input: tolerated framing, malformed events,
// limits, large events, and the ERROR event helper.

#include "watch_test_util.hpp"

#include <kube/detail/watch_decoder.hpp>
#include <kube/error.hpp>
#include <kube/watch/watch_event.hpp>

#include <boost/json/serialize.hpp>
#include <catch2/catch.hpp>

#include <string>
#include <vector>

using kube::watch_event_type;
using watch_test::decoded;

namespace {

std::string event(std::string_view type, std::string_view name) {
  return R"({"type":")" + std::string(type) + R"(","object":{"kind":"ConfigMap","metadata":{"name":")" +
         std::string(name) + R"("}}})";
}

bool mentions(const std::string& message, const std::string& what) { return message.find(what) != std::string::npos; }

// The failure is the same at every split point: same events before it, same
// message (offset and excerpt included).
// Decoder parameters that quote up to 32 bytes of input in error messages
// (the default quotes nothing).
kube::detail::watch_decoder_params quoting() {
  kube::detail::watch_decoder_params p;
  p.error_excerpt_size = 32;
  return p;
}

decoded check_split_invariant(const std::string& body, const kube::detail::watch_decoder_params& params = {}) {
  const auto whole = watch_test::decode_whole(body, params);
  for (std::size_t cut = 0; cut <= body.size(); ++cut) {
    const auto got = watch_test::decode_cut(body, {cut}, params);
    if (!watch_test::same(got, whole)) {
      INFO("split at " << cut << ": " << got.message << " vs " << whole.message);
      FAIL("result depends on the split");
    }
  }
  CHECK(watch_test::same(watch_test::decode_bytewise(body, params), whole));
  return whole;
}

}  // namespace

TEST_CASE("event types round-trip their wire spelling", "[watch]") {
  for (auto t : {watch_event_type::added, watch_event_type::modified, watch_event_type::deleted,
                 watch_event_type::bookmark, watch_event_type::error})
    CHECK(kube::watch_event_type_from_string(kube::to_string(t)) == t);
  CHECK_FALSE(kube::watch_event_type_from_string("added"));  // the server spells them in capitals
  CHECK_FALSE(kube::watch_event_type_from_string(""));
}

TEST_CASE("CRLF, blank lines, no final newline and several events per line are accepted", "[watch]") {
  const std::string body = "\r\n" + event("ADDED", "a") + "\r\n\r\n" + event("MODIFIED", "b") + "  \t" +
                           event("DELETED", "c") + "\n\n" + event("BOOKMARK", "d");
  const auto got = check_split_invariant(body);
  REQUIRE_FALSE(got.ec);
  REQUIRE(got.events.size() == 4);
  CHECK(got.events[0].type == watch_event_type::added);
  CHECK(got.events[1].type == watch_event_type::modified);
  CHECK(got.events[2].type == watch_event_type::deleted);
  CHECK(got.events[3].type == watch_event_type::bookmark);
  CHECK(got.events[3].object.at("metadata").at("name") == "d");
}

TEST_CASE("an event is available as soon as its closing brace arrives", "[watch]") {
  kube::detail::watch_decoder d;
  const std::string e = event("ADDED", "a");
  CHECK_FALSE(d.write(e.substr(0, e.size() - 1)));
  CHECK(d.in_event());
  CHECK(d.ready() == 0);
  CHECK_FALSE(d.write(e.substr(e.size() - 1)));  // no newline needed to see it
  CHECK_FALSE(d.in_event());
  CHECK(d.ready() == 1);
  CHECK(d.bytes_consumed() == e.size());
  CHECK_FALSE(d.finish());
}

TEST_CASE("an event larger than 1 MiB decodes through 1-byte writes in linear time", "[watch][large]") {
  // 2.5 MiB in one string plus 20k small members: a quadratic decoder would
  // need ~10^12 steps for the byte-by-byte feed and time out.
  boost::json::object obj;
  obj["kind"] = "ConfigMap";
  obj["metadata"] = {{"name", "huge"}};
  boost::json::object data;
  data["blob"] = std::string(2'500'000, 'z') + "\\\"\xc3\xa9";
  for (int i = 0; i < 20000; ++i) data["k" + std::to_string(i)] = i;
  obj["data"] = std::move(data);
  const std::string body =
      R"({"type":"MODIFIED","object":)" + boost::json::serialize(obj) + "}\n" + event("DELETED", "huge");
  REQUIRE(body.size() > 2'500'000);

  const auto bytewise = watch_test::decode_bytewise(body);
  REQUIRE_FALSE(bytewise.ec);
  REQUIRE(bytewise.events.size() == 2);
  CHECK(bytewise.events[0].type == watch_event_type::modified);
  CHECK(bytewise.events[0].object == obj);
  CHECK(bytewise.events[1].type == watch_event_type::deleted);
  CHECK(watch_test::same(watch_test::decode_cut(body, {1, 4096, 1'000'000, 2'600'000}), bytewise));
}

TEST_CASE("an event of exactly max_event_size bytes is accepted, one byte more fails the stream", "[watch][limit]") {
  const std::string e = event("ADDED", "limit");
  kube::detail::watch_decoder_params params;
  params.max_event_size = e.size();
  const std::string first = event("ADDED", "x");  // shorter than the limit
  {
    const auto got = check_split_invariant(first + "\n" + e + "\n", params);
    CHECK_FALSE(got.ec);
    CHECK(got.events.size() == 2);
  }
  params.max_event_size = e.size() - 1;
  const std::size_t start = first.size() + 1;
  const auto got = check_split_invariant(first + "\n" + e + "\n" + first, params);
  CHECK(got.ec == kube::client_errc::watch_stream_error);
  REQUIRE(got.events.size() == 1);  // the event before the oversized one survives
  CHECK(mentions(got.message, "byte offset " + std::to_string(start) + ":"));
  CHECK(mentions(got.message, "maximum event size of " + std::to_string(e.size() - 1) + " bytes"));
}

TEST_CASE("a huge event fails at the limit without waiting for its end", "[watch][limit]") {
  kube::detail::watch_decoder_params params;
  params.max_event_size = 1024 * 1024;
  kube::detail::watch_decoder d(params);
  CHECK_FALSE(d.write(R"({"type":"ADDED","object":{"data":")"));
  const std::string chunk(64 * 1024, 'a');
  kube::error_code ec;
  std::size_t fed = 0;
  while (!ec && fed < 8 * 1024 * 1024) {
    ec = d.write(chunk);
    fed += chunk.size();
  }
  CHECK(ec == kube::client_errc::watch_stream_error);
  CHECK(fed <= 1024 * 1024 + chunk.size());  // stopped right at the limit
  CHECK(mentions(d.error_message(), "byte offset 0:"));
}

TEST_CASE("truncated JSON followed by garbage fails at the garbage byte", "[watch][malformed]") {
  const std::string good = event("ADDED", "a") + "\n";
  const std::string cut = R"({"type":"MODIFIED","object":{"metadata":{"name":)";
  const std::string body = good + cut + "garbage\n" + event("DELETED", "a") + "\n";
  const auto got = check_split_invariant(body, quoting());
  CHECK(got.ec == kube::client_errc::watch_stream_error);
  REQUIRE(got.events.size() == 1);  // never the half event, never anything after it
  CHECK(got.events[0].type == watch_event_type::added);
  const std::size_t bad = good.size() + cut.size();
  CHECK(body[bad] == 'g');
  CHECK(mentions(got.message, "byte offset " + std::to_string(bad) + ":"));
  CHECK(mentions(got.message, "starting at byte offset " + std::to_string(good.size())));
  // The excerpt ends at the offending byte, whatever followed it.
  CHECK(mentions(got.message, R"(near "\",\"object\":{\"metadata\":{\"name\":g")"));
}

TEST_CASE("a syntax error deep inside a large event spanning writes is located exactly", "[watch][malformed]") {
  std::string body = R"({"type":"ADDED","object":{"data":{"a":")" + std::string(300'000, 'q') + R"(","b":tru})";
  const std::size_t bad = body.rfind('}');  // "tru}" is where the grammar breaks
  const auto got = watch_test::decode_cut(body, {7, 4096, 100'000, 299'999});
  CHECK(got.ec == kube::client_errc::watch_stream_error);
  CHECK(mentions(got.message, "byte offset " + std::to_string(bad) + ":"));
  CHECK(watch_test::same(watch_test::decode_cut(body, {150'000}), got));
}

TEST_CASE("unknown, missing or mistyped envelope fields fail at the event's offset", "[watch][malformed]") {
  const std::string good = event("ADDED", "a") + "\n";
  struct bad_case {
    std::string line;
    std::string says;
  };
  const std::vector<bad_case> cases{
      {R"({"type":"UPSERTED","object":{}})", R"(unknown watch event type "UPSERTED")"},
      {R"({"type":"added","object":{}})", R"(unknown watch event type "added")"},
      {R"({"object":{}})", R"(has no "type")"},
      {R"({"type":7,"object":{}})", R"("type" is not a string)"},
      {R"({"type":"ADDED"})", R"(has no "object")"},
      {R"({"type":"ADDED","object":[1,2]})", "is an array, not an object"},
      {R"({"type":"ADDED","object":"x"})", "is a string, not an object"},
      {R"({"type":"ADDED","object":null})", "is null, not an object"},
      {R"({"type":"ADDED","object":3.5})", "is a scalar, not an object"},
      {R"({"type":"ADDED","object":{"n":[1E400]}})", "holds a number too large for a double"},
  };
  for (const auto& c : cases) {
    INFO(c.line);
    const auto got = check_split_invariant(good + c.line + "\n" + good, quoting());
    CHECK(got.ec == kube::client_errc::watch_stream_error);
    CHECK(got.events.size() == 1);
    CHECK(mentions(got.message, "byte offset " + std::to_string(good.size()) + ":"));
    CHECK(mentions(got.message, c.says));
    // The excerpt quotes the event's head (escaped), not its neighbours.
    CHECK(mentions(got.message, R"(near "{)"));
  }
}

TEST_CASE("a top-level value that is not an object fails at its first byte", "[watch][malformed]") {
  for (const std::string& v :
       std::vector<std::string>{"[1,2]", "\"ADDED\"", "42", "null", "\xef\xbb\xbf{}", std::string(1, '\0')}) {
    const std::string body = event("ADDED", "a") + "\n " + v + "\n";
    const auto got = check_split_invariant(body);
    CHECK(got.ec == kube::client_errc::watch_stream_error);
    CHECK(got.events.size() == 1);
    CHECK(mentions(got.message, "byte offset " + std::to_string(body.size() - v.size() - 1) + ":"));
    CHECK(mentions(got.message, "expected '{'"));
  }
}

TEST_CASE("invalid UTF-8 and excessive nesting are malformed events", "[watch][malformed]") {
  const std::string bad_utf8 = R"({"type":"ADDED","object":{"a":")" + std::string("\xc3\x28") + R"("}})";
  auto got = check_split_invariant(bad_utf8);
  CHECK(got.ec == kube::client_errc::watch_stream_error);
  CHECK(mentions(got.message, "invalid JSON"));

  // Lone and broken surrogates: Boost.JSON names these differently depending
  // on where the escape is cut; the decoder's message must not.
  for (const std::string s : {R"(\ude80)", R"(\ud83d)", R"(\ud83dx)", R"(\u00ed83d\ude80)", R"(\ud83d\u0041)"}) {
    INFO(s);
    got = check_split_invariant(R"({"type":"ADDED","object":{"s":")" + s + R"("}})");
    CHECK(got.ec == kube::client_errc::watch_stream_error);
  }

  kube::detail::watch_decoder_params params;
  params.max_depth = 10;
  std::string deep = R"({"type":"ADDED","object":)";
  for (int i = 0; i < 12; ++i) deep += "{\"x\":";
  deep += "1";
  for (int i = 0; i < 12; ++i) deep += "}";
  deep += "}";
  got = check_split_invariant(deep, params);
  CHECK(got.ec == kube::client_errc::watch_stream_error);
  CHECK(got.events.empty());
  // Nesting within the default limit (1000) is fine: CRD schemas nest deeply.
  CHECK_FALSE(watch_test::decode_whole(deep).ec);
}

TEST_CASE("a stream that ends inside an event fails at finish", "[watch][malformed]") {
  const std::string good = event("ADDED", "a") + "\n";
  const std::string body = good + R"({"type":"ADDED","obj)";
  const auto got = check_split_invariant(body);
  CHECK(got.ec == kube::client_errc::watch_stream_error);
  CHECK(got.events.size() == 1);
  CHECK(mentions(got.message, "byte offset " + std::to_string(body.size()) + ":"));
  CHECK(mentions(got.message, "ended inside the watch event starting at byte offset " + std::to_string(good.size())));
}

TEST_CASE("after an error the decoder stays failed and ignores input", "[watch][malformed]") {
  kube::detail::watch_decoder d;
  const auto ec = d.write("{\"type\":\"ADDED\",\"object\":}\n");
  CHECK(ec == kube::client_errc::watch_stream_error);
  const std::string message = d.error_message();
  CHECK(d.write(event("ADDED", "later") + "\n") == ec);
  CHECK(d.finish() == ec);
  CHECK_FALSE(d.next());
  CHECK(d.error_message() == message);
}

TEST_CASE("data after finish fails the stream", "[watch][malformed]") {
  kube::detail::watch_decoder d;
  CHECK_FALSE(d.write(event("ADDED", "a")));
  CHECK_FALSE(d.finish());
  CHECK(d.write("\n") == kube::client_errc::watch_stream_error);
  CHECK(d.next());  // the complete event is still delivered
}

TEST_CASE("by default no input byte reaches the message (a malformed Secret keeps its data)", "[watch][malformed]") {
  const std::string body = R"({"type":"ADDED","object":{"data":{"token":"c2VjcmV0"x}}})";
  const auto got = watch_test::decode_whole(body);
  CHECK(got.ec == kube::client_errc::watch_stream_error);
  CHECK_FALSE(mentions(got.message, "c2VjcmV0"));
  CHECK_FALSE(mentions(got.message, "near"));
  CHECK(mentions(got.message, "byte offset " + std::to_string(body.find("\"x") + 1) + ":"));
  // Asked for an excerpt, the same failure quotes the bytes before it.
  CHECK(mentions(watch_test::decode_whole(body, quoting()).message, "c2VjcmV0"));
}

TEST_CASE("watch_event_error maps the Status of an ERROR event and ignores other events", "[watch]") {
  kube::watch_event ev;
  ev.type = watch_event_type::error;
  ev.object =
      boost::json::parse(R"({"kind":"Status","status":"Failure","message":"gone away","reason":"Gone","code":410})")
          .as_object();
  kube::diagnostics diag;
  CHECK(kube::watch_event_error(ev, diag) == kube::api_errc::gone);
  CHECK(diag.server_message() == "gone away");

  // No reason: the code decides; neither: unknown.
  ev.object = boost::json::parse(R"({"kind":"Status","code":500})").as_object();
  CHECK(kube::watch_event_error(ev, diag) == kube::api_errc::internal_error);
  ev.object = boost::json::parse(R"({"kind":"Status"})").as_object();
  CHECK(kube::watch_event_error(ev, diag) == kube::api_errc::unknown);

  kube::diagnostics untouched;
  ev.type = watch_event_type::added;
  CHECK_FALSE(kube::watch_event_error(ev, untouched));
  CHECK_FALSE(untouched.server_status());
  CHECK(untouched.client_message().empty());
}
