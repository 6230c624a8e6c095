// codegen-roundtrip-objects FILE...: every object in the files (kubectl's
// `get -o json` output: a List or one object) is decoded into the generated
// type its apiVersion/kind names and re-encoded; the JSON must come back equal
// (JSON nulls aside). Prints how many objects of how many kinds were checked;
// exit status 1 on any difference or on a kind without a generated type.
//
// When FILE.json has a twin FILE.pb (the same list as the API server's
// protobuf answer), its items are read through the generated protobuf
// codec and must equal the JSON items of the same name and resourceVersion
// (apiVersion and kind aside: protobuf list items carry none). Lists of
// JSON-only types (apiextensions) are counted as such.

#include "roundtrip_support.hpp"

#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

namespace {
const roundtrip_entry* find_entry(std::string_view api_version, std::string_view kind) {
  std::string_view group;
  std::string_view version = api_version;
  if (auto slash = api_version.find('/'); slash != std::string_view::npos) {
    group = api_version.substr(0, slash);
    version = api_version.substr(slash + 1);
  }
  for (const auto& e : roundtrip_registry()) {
    if (e.group == group && e.version == version && e.kind == kind) return &e;
  }
  return nullptr;
}

std::string key_of(const boost::json::value& item) {
  const auto* md = item.as_object().if_contains("metadata");
  if (!md || !md->is_object()) return {};
  std::string k;
  if (const auto* ns = md->as_object().if_contains("namespace"); ns && ns->is_string()) k = ns->as_string();
  k += '/';
  if (const auto* n = md->as_object().if_contains("name"); n && n->is_string()) k += n->as_string();
  return k;
}

std::string version_of(const boost::json::value& item) {
  const auto* md = item.as_object().if_contains("metadata");
  const auto* rv = md && md->is_object() ? md->as_object().if_contains("resourceVersion") : nullptr;
  return rv && rv->is_string() ? std::string(rv->as_string()) : std::string();
}

// kubectl prints objects without metadata.managedFields; the protobuf list has them.
void drop_managed_fields(boost::json::value& item) {
  if (auto* md = item.as_object().if_contains("metadata"); md && md->is_object())
    md->as_object().erase("managedFields");
}

// Objects embedded in others (a StatefulSet's volumeClaimTemplates: members
// with their own metadata) have apiVersion and kind in JSON only: protobuf
// has no field for them, in Go as here. Dropped below the top level.
void drop_embedded_type_meta(boost::json::value& v, bool top = true) {
  if (auto* o = v.if_object()) {
    if (!top && o->contains("metadata")) {
      o->erase("apiVersion");
      o->erase("kind");
    }
    for (auto& kv : *o) drop_embedded_type_meta(kv.value(), false);
  } else if (auto* a = v.if_array()) {
    for (auto& e : *a) drop_embedded_type_meta(e, false);
  }
}

// The first path where a and b differ ("" when equal).
std::string first_difference(const boost::json::value& a, const boost::json::value& b, const std::string& at = "") {
  if (a.is_object() && b.is_object()) {
    for (const auto& kv : a.as_object()) {
      const auto* other = b.as_object().if_contains(kv.key());
      if (!other) return at + "." + std::string(kv.key()) + " (only in the JSON)";
      if (auto d = first_difference(kv.value(), *other, at + "." + std::string(kv.key())); !d.empty()) return d;
    }
    for (const auto& kv : b.as_object()) {
      if (!a.as_object().contains(kv.key())) return at + "." + std::string(kv.key()) + " (only in the protobuf)";
    }
    return {};
  }
  if (a.is_array() && b.is_array() && a.as_array().size() == b.as_array().size()) {
    for (std::size_t i = 0; i < a.as_array().size(); ++i) {
      if (auto d = first_difference(a.as_array()[i], b.as_array()[i], at + "[" + std::to_string(i) + "]"); !d.empty())
        return d;
    }
    return {};
  }
  return a == b ? std::string() : at + ": " + boost::json::serialize(a) + " vs " + boost::json::serialize(b);
}

struct proto_counts {
  int compared = 0, changed = 0, json_only = 0, failures = 0;
};

// The protobuf twin of a kubectl list: its items against the JSON ones.
void compare_protobuf(const std::string& path, const std::vector<boost::json::value>& json_items,
                      proto_counts& counts) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return;
  std::stringstream ss;
  ss << in.rdbuf();
  const auto body = ss.str();
  try {
    const auto env = kube::codec::open_envelope(body);
    const auto* e = find_entry(env.api_version, env.kind);
    if (!e) {
      std::cerr << path << ": no generated type for " << env.api_version << ' ' << env.kind << '\n';
      ++counts.failures;
      return;
    }
    if (!e->proto_read) {
      ++counts.json_only;
      return;
    }
    if (!json_items.empty()) {
      const auto* av = json_items.front().as_object().if_contains("apiVersion");
      if (!av || !av->is_string() || av->as_string() != env.api_version) {
        std::cerr << path << ": the protobuf list is " << env.api_version << ", kubectl's is not; not compared\n";
        return;
      }
    }
    auto list = e->make();
    kube::codec::decode_protobuf(env.raw, e->proto_read, list.get());
    boost::json::value lv;
    e->encode(list.get(), lv);
    std::map<std::string, boost::json::value> by_key;
    for (const auto& item : json_items) {
      auto copy = item;
      copy.as_object().erase("apiVersion");
      copy.as_object().erase("kind");
      drop_managed_fields(copy);
      drop_embedded_type_meta(copy);
      by_key[key_of(item)] = drop_nulls(copy);
    }
    const auto* items = lv.as_object().if_contains("items");
    if (!items || !items->is_array()) return;
    for (auto item : items->as_array()) {
      drop_managed_fields(item);
      item = drop_nulls(item);
      const auto it = by_key.find(key_of(item));
      if (it == by_key.end() || version_of(it->second) != version_of(item)) {
        ++counts.changed;  // created, changed or deleted between the two reads
        continue;
      }
      if (item != it->second) {
        std::cerr << path << ": " << key_of(item) << " read from protobuf differs from its JSON at "
                  << first_difference(it->second, item) << '\n';
        ++counts.failures;
        continue;
      }
      ++counts.compared;
    }
  } catch (const kube::decode_error& err) {
    std::cerr << path << ": " << err.what() << '\n';
    ++counts.failures;
  }
}
}  // namespace

int main(int argc, char** argv) {
  std::map<std::string, int> per_kind;
  int failures = 0;
  proto_counts proto;
  for (int i = 1; i < argc; ++i) {
    std::ifstream in(argv[i]);
    std::stringstream ss;
    ss << in.rdbuf();
    boost::system::error_code ec;
    auto doc = boost::json::parse(ss.str(), ec);
    if (ec || !doc.is_object()) {
      std::cerr << argv[i] << ": not a JSON object\n";
      return 1;
    }
    std::vector<boost::json::value> objects;
    if (const auto* items = doc.as_object().if_contains("items"); items && items->is_array()) {
      for (const auto& it : items->as_array()) objects.push_back(it);
    } else {
      objects.push_back(doc);
    }
    for (const auto& o : objects) {
      const auto* av = o.as_object().if_contains("apiVersion");
      const auto* k = o.as_object().if_contains("kind");
      if (!av || !k || !av->is_string() || !k->is_string()) {
        std::cerr << argv[i] << ": an item without apiVersion/kind\n";
        ++failures;
        continue;
      }
      const auto* e = find_entry(av->as_string(), k->as_string());
      if (!e) {
        std::cerr << argv[i] << ": no generated type for " << av->as_string().c_str() << ' ' << k->as_string().c_str()
                  << '\n';
        ++failures;
        continue;
      }
      if (auto err = roundtrip(*e, o); !err.empty()) {
        std::cerr << argv[i] << ": " << err << '\n';
        ++failures;
        continue;
      }
      ++per_kind[std::string(av->as_string()) + " " + std::string(k->as_string())];
    }
    std::string twin = argv[i];
    if (twin.size() > 5 && twin.ends_with(".json")) {
      twin.replace(twin.size() - 5, 5, ".pb");
      compare_protobuf(twin, objects, proto);
    }
  }
  failures += proto.failures;
  int total = 0;
  for (const auto& [kind, n] : per_kind) {
    std::cout << "  " << kind << ": " << n << '\n';
    total += n;
  }
  std::cout << "round-tripped " << total << " objects of " << per_kind.size() << " kinds, " << failures
            << " failures\n";
  std::cout << "protobuf: " << proto.compared << " objects equal to their JSON, " << proto.changed
            << " changed between the reads, " << proto.json_only << " lists of JSON-only types\n";
  return failures == 0 ? 0 : 1;
}
