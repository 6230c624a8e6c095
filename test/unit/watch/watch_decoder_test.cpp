// The watch decoder on real apiserver output (test/data/watch, see its README):
// the same events whatever the split, through raw bytes and through Beast's
// chunked HTTP parser.

#include "watch_test_util.hpp"

#include <kube/detail/watch_decoder.hpp>
#include <kube/error.hpp>
#include <kube/watch/watch_event.hpp>

#include <boost/asio/buffer.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <catch2/catch.hpp>

#include <array>
#include <random>
#include <string>
#include <vector>

using kube::watch_event_type;
using watch_test::decoded;

namespace {

const char* const recordings[] = {"configmaps", "expired", "initial-events"};

std::string name_of(const kube::watch_event& e) {
  const auto* md = e.object.if_contains("metadata");
  if (!md || !md->is_object()) return {};
  const auto* n = md->as_object().if_contains("name");
  return n && n->is_string() ? std::string(n->as_string()) : std::string();
}

// The decoded events equal the oracle's (each line parsed on its own).
void check_against_oracle(const decoded& got, std::string_view jsonl) {
  const auto want = watch_test::oracle(jsonl);
  REQUIRE_FALSE(got.ec);
  REQUIRE(got.events.size() == want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    INFO("event " << i);
    CHECK(kube::to_string(got.events[i].type) == want[i].type);
    CHECK(got.events[i].object == want[i].object);
  }
}

// Feeds a raw HTTP response (status line, headers, chunked body) through
// Beast's parser the way a socket read loop does: bytes arrive in the given
// pieces, unconsumed bytes wait for more, the body comes out through a small
// buffer_body buffer and goes to the decoder.
decoded decode_http(std::string_view raw, const std::vector<std::size_t>& cuts) {
  namespace http = boost::beast::http;
  http::response_parser<http::buffer_body> p;
  p.body_limit(boost::none);  // a watch body has no length limit
  kube::detail::watch_decoder d;
  decoded r;
  std::array<char, 97> buf{};  // odd size: body pieces straddle chunk boundaries
  std::string pending;
  auto pump = [&] {
    while (!p.is_done()) {
      p.get().body().data = buf.data();
      p.get().body().size = buf.size();
      boost::system::error_code ec;
      const std::size_t used = p.put(boost::asio::buffer(pending), ec);
      pending.erase(0, used);
      const std::size_t produced = buf.size() - p.get().body().size;
      if (produced > 0) d.write(buf.data(), produced);
      watch_test::drain(d, r);
      if (ec == http::error::need_more) return;
      if (ec && ec != http::error::need_buffer) FAIL("beast: " << ec.message());
      if (p.is_done() || (used == 0 && produced == 0)) return;
    }
  };
  std::size_t from = 0;
  for (const std::size_t to : cuts) {
    pending.append(raw.substr(from, to - from));
    pump();
    from = to;
  }
  pending.append(raw.substr(from));
  pump();
  REQUIRE(p.is_done());
  REQUIRE(p.get().result_int() == 200);
  d.finish();
  watch_test::drain(d, r);
  r.ec = d.error();
  r.message = d.error_message();
  return r;
}

}  // namespace

TEST_CASE("recorded configmap watch decodes to the events the server sent", "[watch]") {
  const auto body = watch_test::read_data("configmaps.jsonl");
  const auto got = watch_test::decode_whole(body);
  check_against_oracle(got, body);

  // What the recording script did, in order (README.md).
  using t = watch_event_type;
  const std::vector<std::pair<t, std::string>> script{
      {t::added, "rec-initial"}, {t::bookmark, ""},          {t::added, "rec-small"},   {t::added, "rec-text"},
      {t::added, "rec-large"},   {t::modified, "rec-small"}, {t::modified, "rec-text"}, {t::deleted, "rec-small"},
      {t::deleted, "rec-large"}, {t::bookmark, ""}};
  REQUIRE(got.events.size() == script.size());
  for (std::size_t i = 0; i < script.size(); ++i) {
    INFO("event " << i);
    CHECK(got.events[i].type == script[i].first);
    CHECK(name_of(got.events[i]) == script[i].second);
  }
  // Escapes and UTF-8 are decoded, not passed through.
  const auto& data = got.events[3].object.at("data").as_object();
  CHECK(data.at("quotes").as_string() == R"(say "hi" <b> & \back\slash)");
  CHECK(data.at("unicode").as_string() == "gr\xc3\xbc\xc3\x9f"
                                          "e \xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e \xf0\x9f\x9a\x80");
  CHECK(data.at("multiline").as_string() == "line1\nline2\r\n\ttabbed");
  // The first bookmark marks the end of the initial state.
  CHECK(got.events[1].object.at("metadata").at("annotations").at("k8s.io/initial-events-end") == "true");
}

TEST_CASE("every two-piece split of each recording yields the same events", "[watch][split]") {
  for (const char* rec : recordings) {
    const auto body = watch_test::read_data(std::string(rec) + ".jsonl");
    const auto whole = watch_test::decode_whole(body);
    check_against_oracle(whole, body);
    for (std::size_t cut = 0; cut <= body.size(); ++cut) {
      const auto got = watch_test::decode_cut(body, {cut});
      if (!watch_test::same(got, whole)) {
        INFO(rec << " split at byte " << cut << ": " << got.events.size() << " events, " << got.message);
        FAIL("different result");
      }
    }
  }
}

TEST_CASE("byte-by-byte and random splits of each recording yield the same events", "[watch][split]") {
  std::mt19937 rng(20240611);
  for (const char* rec : recordings) {
    INFO(rec);
    const auto body = watch_test::read_data(std::string(rec) + ".jsonl");
    const auto whole = watch_test::decode_whole(body);
    CHECK(watch_test::same(watch_test::decode_bytewise(body), whole));
    for (int round = 0; round < 50; ++round) {
      std::vector<std::size_t> cuts;
      std::uniform_int_distribution<std::size_t> step(1, round % 2 ? 16 : 3000);
      for (std::size_t at = step(rng); at < body.size(); at += step(rng)) cuts.push_back(at);
      CHECK(watch_test::same(watch_test::decode_cut(body, cuts), whole));
    }
  }
}

TEST_CASE("the arena and the heap allocation modes decode the same events", "[watch]") {
  const auto body = watch_test::read_data("configmaps.jsonl");
  kube::detail::watch_decoder_params heap;
  heap.arena = false;
  CHECK(watch_test::same(watch_test::decode_whole(body, heap), watch_test::decode_whole(body)));
}

TEST_CASE("events stay valid after the decoder is gone", "[watch]") {
  const auto body = watch_test::read_data("configmaps.jsonl");
  std::vector<kube::watch_event> kept;
  {
    kube::detail::watch_decoder d;
    REQUIRE_FALSE(d.write(body));
    while (auto e = d.next()) kept.push_back(std::move(*e));
  }
  REQUIRE(kept.size() == 10);
  // Read every event after the decoder (and its parser) was destroyed.
  CHECK(name_of(kept[4]) == "rec-large");
  CHECK(kept[4].object.at("data").at("blob").as_string().size() > 4500);
  CHECK(kept[9].object.at("metadata").at("resourceVersion").is_string());
}

TEST_CASE("the recorded chunked HTTP response decodes the same at every split point", "[watch][http]") {
  for (const char* rec : recordings) {
    INFO(rec);
    const auto raw = watch_test::read_data(std::string(rec) + ".http");
    const auto body = watch_test::read_data(std::string(rec) + ".jsonl");
    const auto want = watch_test::decode_whole(body);
    check_against_oracle(want, body);
    REQUIRE(watch_test::same(decode_http(raw, {}), want));
    for (std::size_t cut = 0; cut <= raw.size(); ++cut) {
      const auto got = decode_http(raw, {cut});
      if (!watch_test::same(got, want)) {
        INFO("split at byte " << cut << ": " << got.events.size() << " events, " << got.message);
        FAIL("different result");
      }
    }
    // A socket delivering one byte at a time.
    std::vector<std::size_t> every;
    for (std::size_t i = 1; i < raw.size(); ++i) every.push_back(i);
    CHECK(watch_test::same(decode_http(raw, every), want));
  }
}

TEST_CASE("the recorded ERROR event maps to api_errc::expired with the Status", "[watch]") {
  const auto got = watch_test::decode_whole(watch_test::read_data("expired.jsonl"));
  REQUIRE_FALSE(got.ec);
  REQUIRE(got.events.size() == 1);
  const auto& ev = got.events[0];
  CHECK(ev.type == watch_event_type::error);
  kube::diagnostics diag;
  const kube::error_code ec = kube::watch_event_error(ev, diag);
  CHECK(ec == kube::api_errc::expired);
  CHECK(kube::is_resource_expired(ec));
  REQUIRE(diag.server_status());
  CHECK(diag.server_status()->at("code") == 410);
  CHECK(diag.server_message().find("too old resource version") != std::string::npos);
  CHECK(diag.client_message().find("410 Expired") != std::string::npos);
}

TEST_CASE("a double in an event reads correctly rounded, whatever the split", "[watch]") {
  // Boost.JSON 1.81 reads this two ulps low; Go reads it exactly.
  const std::string body = R"({"type":"ADDED","object":{"kind":"Widget","x":9.007199666666666E52}})"
                           "\n"
                           R"({"type":"BOOKMARK","object":{"kind":"Widget","x":9.007199666666666E52}})"
                           "\n";
  for (const auto& got : {watch_test::decode_whole(body), watch_test::decode_bytewise(body)}) {
    REQUIRE_FALSE(got.ec);
    REQUIRE(got.events.size() == 2);
    for (const auto& e : got.events) CHECK(e.object.at("x").as_double() == 9.007199666666666E52);
  }
}
