#pragma once

// Test support: what the `cluster` fixture published about the real test
// cluster ($KUBE_TEST_CLUSTER_DIR/cluster.env, pki/, kubeconfig/).

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>

namespace kube_test {

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("test support: cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::string env_or_throw(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) throw std::runtime_error(std::string("test support: $") + name + " is not set (run through ctest)");
  return v;
}

/// KEY=VALUE lines of cluster.env.
inline std::map<std::string, std::string> cluster_env() {
  std::map<std::string, std::string> out;
  std::istringstream in(read_file(env_or_throw("KUBE_TEST_CLUSTER_DIR") + "/cluster.env"));
  for (std::string line; std::getline(in, line);) {
    if (auto eq = line.find('='); eq != std::string::npos) out[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return out;
}

/// The static tokens of the cluster: which = "admin" or "alice".
inline std::string cluster_token(const std::string& which) {
  std::istringstream in(read_file(env_or_throw("KUBE_TEST_CLUSTER_DIR") + "/pki/tokens.csv"));
  for (std::string line; std::getline(in, line);) {
    const auto c1 = line.find(','), c2 = line.find(',', c1 + 1);
    const auto user = line.substr(c1 + 1, c2 - c1 - 1);
    if ((which == "admin" && user == "kube-admin-token") || user == which) return line.substr(0, c1);
  }
  throw std::runtime_error("test support: no token for " + which);
}

}  // namespace kube_test
