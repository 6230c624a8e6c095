// list_decoder: a list body decoded item by item as it arrives, JSON and
// protobuf, gives what the whole-body readers give at every split, and
// refuses what they refuse.

#include "protobuf_data.hpp"

#include <kube/k8s/core/v1/pod.hpp>
#include <kube/codec/codec.hpp>
#include <kube/codec/json_reader.hpp>
#include <kube/detail/list_decoder.hpp>
#include <kube/detail/typed_core.hpp>

#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <vector>

using k8s::core::v1::Pod;
using k8s::core::v1::PodList;

namespace {

// What a caller sees of a shared list: its metadata and each item's JSON.
std::vector<std::string> seen(const kube::shared_list<Pod>& l) {
  std::vector<std::string> out{l.resource_version, l.continue_token,
                               l.remaining_item_count ? std::to_string(*l.remaining_item_count) : "-"};
  for (const auto& p : l.items) out.push_back(kube::to_json(*p));
  return out;
}

// The whole-body readers' result.
kube::shared_list<Pod> whole(const std::string& body, bool protobuf) {
  kube::shared_list<Pod> l;
  auto sink = kube::detail::make_shared_list_sink(l);
  if (protobuf) {
    const auto env = kube::codec::open_envelope(body);
    kube::codec::decode_protobuf(
        env.raw,
        [](kube::codec::proto_reader& in, void* s, const kube::json_path& at) {
          kube::detail::read_shared_list_proto(in, *static_cast<kube::detail::shared_list_sink*>(s), at);
        },
        &sink);
  } else {
    kube::codec::read_text(
        body,
        [](kube::codec::json_reader& in, void* s, const kube::json_path& at) {
          kube::detail::read_shared_list(in, *static_cast<kube::detail::shared_list_sink*>(s), at);
        },
        &sink);
  }
  return l;
}

// list_decoder fed `body` in pieces of `piece` bytes from `first` on
// (the first piece is `first` bytes).
kube::shared_list<Pod> streamed(const std::string& body, bool protobuf, std::size_t first, std::size_t piece) {
  kube::shared_list<Pod> l;
  kube::detail::list_decoder d(kube::detail::make_shared_list_sink(l), protobuf);
  std::string_view rest = body;
  std::size_t n = first;
  while (!rest.empty()) {
    const auto take = std::min(n, rest.size());
    d.write(rest.substr(0, take));
    rest.remove_prefix(take);
    n = piece;
  }
  d.finish();
  return l;
}

// Five pods as JSON, with what a byte scanner can trip on: escapes, quotes
// and brackets inside strings, non-ASCII text, numbers at the end of an
// object, members the client does not know, whitespace between tokens.
std::string json_list() {
  std::string items;
  for (int i = 0; i < 5; ++i) {
    auto p = kube::from_json<Pod>(protobuf_data("pod.json"));
    p.metadata.name = "p" + std::to_string(i);
    if (!p.metadata.labels) p.metadata.labels.emplace();
    if (!p.metadata.annotations) p.metadata.annotations.emplace();
    (*p.metadata.labels)["tricky"] = i == 2 ? "a\"]},{\\" : "plain";
    (*p.metadata.annotations)["text"] = "grüße [" + std::to_string(i) + "] {\n}";
    p.spec->termination_grace_period_seconds = 30 + i;
    if (!items.empty()) items += i % 2 ? " ,\n  " : ",";
    items += kube::to_json(p);
  }
  return "{ \"kind\" : \"PodList\",\"apiVersion\":\"v1\",\"extra\":{\"a\":[1,\"]}\",null,true,-2.5e3]},"
         "\"metadata\":{\"resourceVersion\":\"42\",\"continue\":\"c\\u0041\",\"remainingItemCount\":7},"
         "\"items\":[\n  " +
         items + "\n]\n}\n";
}

std::string protobuf_list() {
  PodList l;
  auto& md = l.metadata.emplace();
  md.resource_version = "42";
  md.continue_ = "cA";
  md.remaining_item_count = 7;
  for (int i = 0; i < 5; ++i) {
    auto p = kube::from_json<Pod>(protobuf_data("pod.json"));
    p.metadata.name = "p" + std::to_string(i);
    l.items.push_back(std::move(p));
  }
  return kube::to_protobuf(l);
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const kube::decode_error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("list_decoder: a list read as it arrives equals the whole-body read, however it is cut",
          "[codegen][list_decoder]") {
  struct body {
    const char* name;
    std::string text;
    bool protobuf;
  };
  const body bodies[] = {{"recorded JSON", protobuf_data("pods-list.json"), false},
                         {"recorded protobuf", protobuf_data("pods-list.pb"), true},
                         {"five pods, JSON", json_list(), false},
                         {"five pods, protobuf", protobuf_list(), true}};
  for (const auto& b : bodies) {
    INFO(b.name);
    const auto want = seen(whole(b.text, b.protobuf));
    REQUIRE(want.size() > 3);
    // Every cut of the first 300 bytes (the envelope, the list's metadata,
    // the first item's start), then every 37th: each cut is a whole decode,
    // and the byte-by-byte feed below resumes at every offset anyway.
    for (std::size_t cut = 0; cut <= b.text.size(); cut += cut < 300 ? 1 : 37) {
      INFO("cut at " << cut);
      REQUIRE(seen(streamed(b.text, b.protobuf, cut, b.text.size())) == want);
    }
    CHECK(seen(streamed(b.text, b.protobuf, 1, 1)) == want);
    CHECK(seen(streamed(b.text, b.protobuf, 7, 13)) == want);
  }
  const auto five = seen(whole(json_list(), false));
  CHECK(five[0] == "42");
  CHECK(five[1] == "cA");
  CHECK(five[2] == "7");
  CHECK(five.size() == 3 + 5);
}

TEST_CASE("list_decoder: truncated and malformed bodies are refused, naming the item", "[codegen][list_decoder]") {
  const auto json = json_list();
  const auto pb = protobuf_list();
  for (const std::size_t keep : {std::size_t{0}, std::size_t{1}, std::size_t{200}, json.size() - 3}) {
    INFO("JSON cut to " << keep);
    CHECK_THAT(message_of([&] { (void)streamed(json.substr(0, keep), false, keep, 1); }),
               Catch::Contains("the list body ends early"));
  }
  for (const std::size_t keep : {std::size_t{0}, std::size_t{3}, std::size_t{40}, pb.size() - 1}) {
    INFO("protobuf cut to " << keep);
    CHECK_THAT(message_of([&] { (void)streamed(pb.substr(0, keep), true, keep, 1); }),
               Catch::Contains("the list body ends early"));
  }
  // An item whose field has the wrong type: its path and its name.
  auto bad = json;
  const auto at = bad.find("\"terminationGracePeriodSeconds\":32");
  REQUIRE(at != std::string::npos);
  bad.replace(at, 34, "\"terminationGracePeriodSeconds\":\"x\"");
  CHECK_THAT(message_of([&] { (void)streamed(bad, false, bad.size(), 1); }),
             Catch::Contains(".items[2].spec.terminationGracePeriodSeconds") && Catch::Contains("p2"));
  // Broken JSON between items, and after the list.
  CHECK_THAT(message_of([&] { (void)streamed("{\"items\":[{} {}]}", false, 3, 3); }),
             Catch::Contains("expected ',' or ']'"));
  CHECK_THAT(message_of([&] { (void)streamed("{\"items\":[]} x", false, 20, 1); }),
             Catch::Contains("expected the end of the body"));
  CHECK_THAT(message_of([&] { (void)streamed("{\"items\":[{\"a\":}]}", false, 30, 1); }), Catch::Contains(".items[0]"));
  CHECK_THAT(message_of([&] { (void)streamed("[]", false, 2, 1); }), Catch::Contains("expected '{'"));
  // Protobuf: no magic, an encoded body, a varint that does not end.
  CHECK_THAT(message_of([&] { (void)streamed("{\"items\":[]}", true, 5, 1); }), Catch::Contains("k8s"));
  std::string encoded("k8s\0", 4);
  encoded += std::string("\x1a\x04gzip", 6);  // field 3, contentEncoding
  CHECK_THAT(message_of([&] { (void)streamed(encoded, true, 1, 1); }), Catch::Contains("content encoding"));
  std::string endless("k8s\0", 4);
  endless += std::string(11, '\xff');
  CHECK_THAT(message_of([&] { (void)streamed(endless, true, 15, 1); }), Catch::Contains("varint"));
}
