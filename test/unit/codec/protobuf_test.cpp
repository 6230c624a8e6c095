// Protobuf as the real API server writes it (test/data/protobuf, recorded
// from the test cluster): objects, lists and Status read equal to their JSON
// twins; the watch stream framing at every split; unknown fields kept;
// malformed input refused with the field's path.

#include "protobuf_data.hpp"

#include <kube/k8s/core/v1/config_map.hpp>
#include <kube/k8s/core/v1/pod.hpp>
#include <kube/k8s/meta/v1/status.hpp>
#include <kube/codec/codec.hpp>
#include <kube/codec/proto_impl.hpp>
#include <kube/detail/typed_core.hpp>
#include <kube/detail/watch_decoder.hpp>

#include <boost/json/parse.hpp>
#include <catch2/catch.hpp>
#include <protozero/buffer_string.hpp>
#include <protozero/varint.hpp>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace {

// The envelope's raw with `extra` appended (whole fields), sealed again.
std::string with_extra_fields(const std::string& body, const std::string& extra) {
  const auto env = kube::codec::open_envelope(body);
  return kube::codec::seal_envelope(env.api_version, env.kind, std::string(env.raw) + extra);
}

std::vector<kube::watch_event> decode_watch(const std::string& stream, std::size_t split) {
  kube::detail::watch_decoder_params p;
  p.protobuf = true;
  p.raw_objects = true;
  p.objects = kube::detail::object_reader_of<k8s::core::v1::ConfigMap>();
  kube::detail::watch_decoder d(p);
  std::vector<kube::watch_event> out;
  for (std::size_t at = 0; at < stream.size(); at += split) {
    REQUIRE_FALSE(d.write(std::string_view(stream).substr(at, split)));
    while (auto ev = d.next()) out.push_back(std::move(*ev));
  }
  REQUIRE_FALSE(d.finish());
  return out;
}

// A length-delimited field (a message, a string or bytes), written by hand
// so that a test can also write what no writer would.
std::string field(unsigned number, const std::string& body) {
  std::string out;
  protozero::add_varint_to_buffer(&out, number << 3 | 2);
  protozero::add_varint_to_buffer(&out, body.size());
  return out + body;
}

}  // namespace

TEST_CASE("a Pod and a PodList read from protobuf equal their JSON twins", "[codegen][protobuf]") {
  const auto pod = kube::from_protobuf<k8s::core::v1::Pod>(protobuf_data("pod.pb"));
  CHECK(kube::to_json(pod) == kube::to_json(kube::from_json<k8s::core::v1::Pod>(protobuf_data("pod.json"))));
  CHECK(pod.api_version == "v1");
  CHECK(pod.kind == "Pod");
  REQUIRE(pod.spec->volumes);
  CHECK(pod.spec->volumes->at(0).empty_dir);               // an empty message stays present
  CHECK(pod.spec->containers.at(0).liveness_probe->exec);  // an inlined Go struct
  CHECK(pod.spec->termination_grace_period_seconds == 0);  // a pointer holding zero
  CHECK_FALSE(pod.spec->node_name);                        // a value field's zero is absent
  const auto list = kube::from_protobuf<k8s::core::v1::PodList>(protobuf_data("pods-list.pb"));
  auto list_json = kube::from_json<k8s::core::v1::PodList>(protobuf_data("pods-list.json"));
  CHECK(kube::to_json(list) == kube::to_json(list_json));
}

TEST_CASE("managedFields text read from protobuf shares the buffer of equal text already held", "[codegen][protobuf]") {
  const auto first = kube::from_protobuf<k8s::core::v1::Pod>(protobuf_data("pod.pb"));
  const auto again = kube::from_protobuf<k8s::core::v1::Pod>(protobuf_data("pod.pb"));
  const auto from_json = kube::from_json<k8s::core::v1::Pod>(protobuf_data("pod.json"));
  REQUIRE(first.metadata.managed_fields);
  REQUIRE_FALSE(first.metadata.managed_fields->empty());
  for (std::size_t i = 0; i < first.metadata.managed_fields->size(); ++i) {
    const auto& a = first.metadata.managed_fields->at(i).fields_v1;
    const auto& b = again.metadata.managed_fields->at(i).fields_v1;
    const auto& c = from_json.metadata.managed_fields->at(i).fields_v1;
    REQUIRE(a);
    CHECK_FALSE(a->text().empty());
    CHECK(a->text().data() == b->text().data());  // found in the pool: shared, not read again
    CHECK(a->text().data() == c->text().data());
  }
  // Text no live value holds is read and checked: not JSON, refused.
  const auto bad = kube::codec::seal_envelope(
      "v1", "Pod", field(1, field(17, field(7, field(1, "{\"f:x\":{},}")))));  // metadata.managedFields[0].fieldsV1.Raw
  CHECK_THROWS_WITH(kube::from_protobuf<k8s::core::v1::Pod>(bad),
                    Catch::Contains(".metadata.managedFields[0].fieldsV1"));
}

TEST_CASE("written back, a Pod read from protobuf gives the same bytes", "[codegen][protobuf]") {
  const auto body = protobuf_data("pod.pb");
  const auto pod = kube::from_protobuf<k8s::core::v1::Pod>(body);
  const auto again = kube::to_protobuf(pod);
  CHECK(kube::to_json(kube::from_protobuf<k8s::core::v1::Pod>(again)) == kube::to_json(pod));
  CHECK(kube::codec::open_envelope(again).kind == "Pod");
}

TEST_CASE("a repeated field reads whole whether its elements come together or apart", "[codegen][protobuf]") {
  // PodSpec.containers is field 2, restartPolicy field 3; Container.name is field 1, image field 2.
  auto container = [](const std::string& name) { return field(2, field(1, name) + field(2, "")); };
  auto pod_with_spec = [](const std::string& spec) {
    return kube::codec::seal_envelope("v1", "Pod", field(1, field(1, "p")) + field(2, spec));
  };
  auto names = [](const k8s::core::v1::Pod& pod) {
    std::vector<std::string> out;
    for (const auto& c : pod.spec->containers) out.push_back(c.name);
    return out;
  };
  const std::vector<std::string> abc{"a", "b", "c"};
  const auto together = kube::from_protobuf<k8s::core::v1::Pod>(
      pod_with_spec(container("a") + container("b") + container("c") + field(3, "Always")));
  CHECK(names(together) == abc);
  CHECK_FALSE(together.spec->containers[0].image);  // an empty value field is absent
  const auto apart = kube::from_protobuf<k8s::core::v1::Pod>(
      pod_with_spec(container("a") + field(3, "Always") + container("b") + container("c")));
  CHECK(names(apart) == abc);
  CHECK(apart.spec->restart_policy == "Always");
  CHECK(apart.spec->containers.capacity() == 3);  // no spare room kept
  CHECK_THROWS_AS(kube::from_protobuf<k8s::core::v1::Pod>(pod_with_spec(container("a") + container("b") + "\x12\x09")),
                  kube::decode_error);
}

TEST_CASE("count_run counts the fields in a row that share the current tag", "[codegen][protobuf]") {
  // Field 2 three times (a varint, bytes, a varint), field 3, field 2 again.
  const std::string bytes("\x10\x01\x12\x02xy\x10\x05\x18\x07\x10\x09", 12);
  kube::codec::proto_reader in(bytes);
  std::vector<std::size_t> runs;
  while (in.next()) {
    runs.push_back(in.count_run());
    in.skip();
  }
  CHECK(runs == std::vector<std::size_t>{3, 2, 1, 1, 1});
  // Bytes that do not parse end the count, without an error: reading them fails later.
  const std::string cut("\x12\x01x\x12\x09x", 6);
  kube::codec::proto_reader at_cut(cut);
  REQUIRE(at_cut.next());
  CHECK(at_cut.count_run() == 1);
}

TEST_CASE("protobuf messages nest at most max_json_depth deep, as JSON does", "[codegen][protobuf]") {
  // Field 1 holding field 1 holding ... `levels` messages in all.
  auto nested = [](std::size_t levels) {
    std::string body;
    for (std::size_t i = 0; i < levels; ++i) body = field(1, body);
    return body;
  };
  // Reads every level the way a message reader does; gives the depth reached.
  auto descend = [](const std::string& bytes) {
    std::size_t depth = 0;
    kube::codec::proto_reader in(bytes);
    const kube::json_path at{};
    while (in.next()) {
      in = in.message(at);
      ++depth;
    }
    return depth;
  };
  CHECK(descend(nested(kube::codec::max_json_depth)) == kube::codec::max_json_depth);
  CHECK_THROWS_WITH(descend(nested(kube::codec::max_json_depth + 1)),
                    Catch::Contains("protobuf messages nested deeper than 1000 levels"));
}

TEST_CASE("a protobuf double that is NaN or infinite is refused, as JSON refuses 1e999", "[codegen][protobuf]") {
  auto fixed64_field = [](double d) {
    std::string out("\x09", 1);  // field 1, wire type 1 (fixed64)
    char raw[8];
    std::memcpy(raw, &d, 8);  // little-endian on every platform we build for
    return out + std::string(raw, 8);
  };
  for (const double bad : {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                           -std::numeric_limits<double>::infinity()}) {
    const auto bytes = fixed64_field(bad);
    kube::codec::proto_reader in(bytes);
    REQUIRE(in.next());
    double out = 0;
    const kube::json_path root{};
    const kube::json_path at{&root, "maximum"};
    CHECK_THROWS_WITH(kube::codec::pb::read(in, out, at), ".maximum: a double that is NaN or infinite");
  }
  const auto ok = fixed64_field(1.5);
  kube::codec::proto_reader in(ok);
  REQUIRE(in.next());
  double out = 0;
  kube::codec::pb::read(in, out, kube::json_path{});
  CHECK(out == 1.5);
}

TEST_CASE("a Status error read from protobuf", "[codegen][protobuf]") {
  const auto st = kube::from_protobuf<k8s::meta::v1::Status>(protobuf_data("status-404.pb"));
  CHECK(st.kind == "Status");
  CHECK(st.reason == "NotFound");
  CHECK(st.code == 404);
  CHECK(st.details->name == "no-such-pod");
}

TEST_CASE("unknown protobuf fields survive a read and a write, at the top and nested", "[codegen][protobuf]") {
  // Field 99 of Pod (a string "future") and field 99 inside its ObjectMeta.
  const std::string top = std::string("\x9a\x06\x06", 3) + "future";
  auto body = with_extra_fields(protobuf_data("pod.pb"), top);
  auto pod = kube::from_protobuf<k8s::core::v1::Pod>(body);
  CHECK(pod.unknown_fields.protobuf() == top);
  CHECK(pod.unknown_fields.size() == 0);  // no JSON members
  const auto again = kube::to_protobuf(pod);
  CHECK(kube::codec::open_envelope(again).raw.find(top) != std::string_view::npos);
  CHECK(kube::from_protobuf<k8s::core::v1::Pod>(again).unknown_fields.protobuf() == top);
  // A reader that does not know metadata.name keeps it as an unknown field:
  // the same bytes come back whatever this version knows.
  const std::string meta_extra = std::string("\x0a\x0a\x9a\x06\x07", 5) + "nested!";
  auto nested = kube::from_protobuf<k8s::core::v1::Pod>(with_extra_fields(protobuf_data("pod.pb"), meta_extra));
  CHECK(nested.metadata.unknown_fields.protobuf() == std::string("\x9a\x06\x07", 3) + "nested!");
  CHECK(nested.metadata.name == "rec-pod");  // merged into the earlier metadata
}

TEST_CASE("malformed protobuf is refused with the field's path, never a crash", "[codegen][protobuf]") {
  using k8s::core::v1::Pod;
  // metadata (field 1) as a varint instead of a message
  auto bad_wire = kube::codec::seal_envelope("v1", "Pod", std::string("\x08\x01", 2));
  CHECK_THROWS_WITH(kube::from_protobuf<Pod>(bad_wire), ".metadata: expected a message in protobuf, got a varint");
  auto truncated = protobuf_data("pod.pb");
  truncated.resize(truncated.size() / 2);
  CHECK_THROWS_AS(kube::from_protobuf<Pod>(truncated), kube::decode_error);
  CHECK_THROWS_WITH(kube::from_protobuf<Pod>("{\"kind\":\"Pod\"}"), Catch::Contains("no \"k8s\\0\" prefix"));
  // spec.containers[0].resources.limits{cpu: "bad!"}: the path, the size, not the text
  const auto bad_quantity = kube::codec::seal_envelope(
      "v1", "Pod",
      field(2, field(2, field(1, "c") + field(8, field(1, field(1, "cpu") + field(2, field(1, "bad!")))))));
  CHECK_THROWS_WITH(kube::from_protobuf<Pod>(bad_quantity),
                    ".spec.containers[0].resources.limits.cpu: not a valid quantity (4 bytes)");
  const auto body = protobuf_data("pod.pb");
  for (std::size_t n = 0; n < body.size(); n += 7) {  // every cut: an error or a smaller object
    try {
      (void)kube::from_protobuf<Pod>(body.substr(0, n));
    } catch (const kube::decode_error&) {  // NOLINT(bugprone-empty-catch)
    }
  }
}

TEST_CASE("the recorded protobuf watch stream decodes alike at every split", "[codegen][protobuf][watch]") {
  const auto stream = protobuf_data("configmaps-watch.pb");
  const auto whole = decode_watch(stream, stream.size());
  std::vector<kube::watch_event_type> types;
  for (const auto& ev : whole) types.push_back(ev.type);
  using t = kube::watch_event_type;
  REQUIRE(types == std::vector<t>{t::bookmark, t::added, t::modified, t::deleted, t::bookmark});
  CHECK(whole[0].object.at("metadata").at("annotations").at("k8s.io/initial-events-end") == "true");
  const auto& added = *static_cast<const k8s::core::v1::ConfigMap*>(whole[1].decoded.get());
  CHECK(added.name() == "rec-watch");
  CHECK(added.kind == "ConfigMap");
  CHECK(added.data->at("text") == "grüße \"hi\"");
  const auto& modified = *static_cast<const k8s::core::v1::ConfigMap*>(whole[2].decoded.get());
  CHECK(modified.data->at("added") == "later");
  for (std::size_t split = 1; split < stream.size(); ++split) {
    const auto events = decode_watch(stream, split);
    REQUIRE(events.size() == whole.size());
    for (std::size_t i = 0; i < events.size(); ++i) {
      CHECK(events[i].type == whole[i].type);
      CHECK(events[i].object == whole[i].object);
      if (whole[i].decoded) {
        CHECK(kube::to_json(*static_cast<const k8s::core::v1::ConfigMap*>(events[i].decoded.get())) ==
              kube::to_json(*static_cast<const k8s::core::v1::ConfigMap*>(whole[i].decoded.get())));
      }
    }
  }
}

TEST_CASE("a protobuf watch stream cut or oversized fails with the offset", "[codegen][protobuf][watch]") {
  const auto stream = protobuf_data("configmaps-watch.pb");
  kube::detail::watch_decoder_params p;
  p.protobuf = true;
  kube::detail::watch_decoder cut(p);
  CHECK_FALSE(cut.write(std::string_view(stream).substr(0, 10)));
  CHECK(cut.finish());
  CHECK(cut.error_message().find("ended inside a watch event") != std::string::npos);
  p.max_event_size = 16;
  kube::detail::watch_decoder small(p);
  CHECK(small.write(stream));
  CHECK(small.error_message().find("more than max_event_size") != std::string::npos);
  kube::detail::watch_decoder garbage(kube::detail::watch_decoder_params{.protobuf = true});
  CHECK(garbage.write(std::string("\x00\x00\x00\x02\x08\x01", 6)));  // type as a varint
  CHECK(garbage.error_message().find("byte offset 0") != std::string::npos);
}

namespace {
// The least of three runs of f, in seconds.
template <class F>
double fastest_of_three(F f) {
  double best = 1e9;
  for (int i = 0; i < 3; ++i) {
    const auto start = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}
}  // namespace

TEST_CASE("a map decodes in O(n log n) whatever the order of its keys, in JSON text, DOM and protobuf",
          "[codegen][protobuf]") {
  // ConfigMap.data (field 2 in protobuf: entries {key = 1, value = 2}) with
  // 20,000 keys sent in order and reversed; in protobuf also interleaved
  // with another field. Inserting each key where it belongs made the
  // reversed map quadratic: about 2e8 moves of an entry here. The bound
  // compares the two orders in one run: the sort costs 3-7x under ASan at
  // -O0, the quadratic decoder was 500-1,900x; the bound, 30x, stays far
  // from both.
  constexpr int n = 20000;
  std::vector<std::string> keys;
  for (int i = 0; i < n; ++i) keys.push_back("key-" + std::to_string(100000 + i));
  auto json = [&](bool reversed) {
    std::string t = R"({"kind":"ConfigMap","apiVersion":"v1","data":{)";
    for (int i = 0; i < n; ++i) t += (i ? ",\"" : "\"") + keys[reversed ? n - 1 - i : i] + R"(":"v")";
    return t + "}}";
  };
  auto proto = [&](bool reversed, bool interleaved) {
    std::string body;
    for (int i = 0; i < n; ++i) {
      body += field(2, field(1, keys[reversed ? n - 1 - i : i]) + field(2, "v"));
      if (interleaved) body += field(99, "x");  // an unknown field between entries
    }
    return kube::codec::seal_envelope("v1", "ConfigMap", body);
  };
  auto check_sorted = [&](const k8s::core::v1::ConfigMap& cm) {
    REQUIRE(cm.data);
    REQUIRE(cm.data->size() == static_cast<std::size_t>(n));
    CHECK(cm.data->begin()->first == keys.front());
    CHECK(cm.data->rbegin()->first == keys.back());
    CHECK(cm.data->contains(keys[n / 2]));
    CHECK(std::is_sorted(cm.data->begin(), cm.data->end()));
  };
  const auto text_fwd = json(false), text_rev = json(true);
  const auto pb_fwd = proto(false, true), pb_rev = proto(true, true);
  check_sorted(kube::from_json<k8s::core::v1::ConfigMap>(text_rev));
  check_sorted(kube::from_json_value<k8s::core::v1::ConfigMap>(boost::json::parse(text_rev)));
  check_sorted(kube::from_protobuf<k8s::core::v1::ConfigMap>(pb_rev));
  const auto dom_fwd = boost::json::parse(text_fwd), dom_rev = boost::json::parse(text_rev);
  const double text_ratio = fastest_of_three([&] { (void)kube::from_json<k8s::core::v1::ConfigMap>(text_rev); }) /
                            fastest_of_three([&] { (void)kube::from_json<k8s::core::v1::ConfigMap>(text_fwd); });
  const double dom_ratio = fastest_of_three([&] { (void)kube::from_json_value<k8s::core::v1::ConfigMap>(dom_rev); }) /
                           fastest_of_three([&] { (void)kube::from_json_value<k8s::core::v1::ConfigMap>(dom_fwd); });
  const double pb_ratio = fastest_of_three([&] { (void)kube::from_protobuf<k8s::core::v1::ConfigMap>(pb_rev); }) /
                          fastest_of_three([&] { (void)kube::from_protobuf<k8s::core::v1::ConfigMap>(pb_fwd); });
  INFO("reversed / in order: text " << text_ratio << ", DOM " << dom_ratio << ", protobuf " << pb_ratio);
  CHECK(text_ratio < 30);
  CHECK(dom_ratio < 30);
  CHECK(pb_ratio < 30);

  // Of a key sent twice, the last value wins, in every order.
  const auto dup = kube::from_protobuf<k8s::core::v1::ConfigMap>(
      kube::codec::seal_envelope("v1", "ConfigMap",
                                 field(2, field(1, "b") + field(2, "1")) + field(2, field(1, "a") + field(2, "x")) +
                                     field(2, field(1, "b") + field(2, "2"))));
  REQUIRE(dup.data);
  CHECK(*dup.data == kube::string_map<std::string>{{"a", "x"}, {"b", "2"}});
}
