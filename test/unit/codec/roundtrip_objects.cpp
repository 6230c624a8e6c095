// codegen-roundtrip-objects FILE...: every object in the files (kubectl's
// `get -o json` output: a List or one object) is decoded into the generated
// type its apiVersion/kind names and re-encoded; the JSON must come back equal
// (JSON nulls aside). Prints how many objects of how many kinds were checked;
// exit status 1 on any difference or on a kind without a generated type.

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
}  // namespace

int main(int argc, char** argv) {
  std::map<std::string, int> per_kind;
  int failures = 0;
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
  }
  int total = 0;
  for (const auto& [kind, n] : per_kind) {
    std::cout << "  " << kind << ": " << n << '\n';
    total += n;
  }
  std::cout << "round-tripped " << total << " objects of " << per_kind.size() << " kinds, " << failures
            << " failures\n";
  return failures == 0 ? 0 : 1;
}
