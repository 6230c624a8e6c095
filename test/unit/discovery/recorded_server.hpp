#pragma once

// The recorded discovery documents of test/data/discovery, served to a
// discovery_planner the way the real apiserver served them.

#include <kube/discovery/discovery_document.hpp>
#include <kube/discovery/discovery_planner.hpp>

#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <sstream>
#include <string>

namespace kube_test {

inline std::string data_path(const std::string& rel) { return std::string(KUBE_DISCOVERY_DATA) + "/" + rel; }

inline std::string read_data(const std::string& rel) {
  std::ifstream in(data_path(rel), std::ios::binary);
  REQUIRE(in.good());
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// What content-types.txt says the server sent for each recorded file.
inline const std::map<std::string, std::string>& content_types() {
  static const auto m = [] {
    std::map<std::string, std::string> r;
    std::istringstream in(read_data("content-types.txt"));
    std::string file, type;
    while (in >> file >> type) r[file] = type;
    return r;
  }();
  return m;
}

struct recorded_answer {
  int status = 200;
  std::string content_type;
  std::string body;
};

// How the fake server answers: like the recorded v1.34 server, or like an
// older one that ignores the aggregated media type.
enum class server_mode { aggregated, legacy_only };

inline recorded_answer answer(const kube::discovery_request& req, server_mode mode) {
  const bool wants_aggregated = req.accept.find("as=APIGroupDiscoveryList") != std::string::npos;
  std::string file;
  if ((req.path == "/api" || req.path == "/apis") && wants_aggregated && mode == server_mode::aggregated)
    file = "aggregated" + req.path + ".json";
  else if (req.path == "/api" || req.path == "/apis")
    file = "legacy" + req.path + ".json";
  else {
    std::string name = req.path.substr(1);
    for (auto& c : name)
      if (c == '/') c = '_';
    file = "legacy/" + name + ".json";
  }
  const auto it = content_types().find(file);
  if (it == content_types().end())
    return {404, "application/json",
            R"({"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404})"};
  return {200, it->second, read_data(file)};
}

// Runs a planner to completion against the recorded server.
inline kube::discovery_document discover(server_mode mode, kube::discovery_params params = {},
                                         int* requests = nullptr) {
  kube::discovery_planner p(params);
  int n = 0;
  while (!p.done()) {
    const auto reqs = p.take_requests();
    REQUIRE_FALSE(reqs.empty());
    for (const auto& req : reqs) {
      ++n;
      const auto a = answer(req, mode);
      kube::diagnostics diag;
      const auto ec = p.on_response(req, {a.status, a.content_type, a.body}, diag);
      INFO(req.path << ": " << diag.client_message());
      REQUIRE_FALSE(ec);
    }
  }
  if (requests) *requests = n;
  return std::move(p).result();
}

}  // namespace kube_test
