// Conformance: for every case in test/data/kubeconfig/<case>/, our merged
// kubeconfig equals what kubectl reports for the same KUBECONFIG (or
// --kubeconfig), compared field by field:
//   - `kubectl config view --raw -o json`  vs kubeconfig::load(resolve_paths=false).to_json()
//     (kubectl's `config view` prints paths as written);
//   - `kubectl config view --flatten -o json` vs our model with every
//     certificate file read from the path we resolved against the defining
//     file's directory (so relative-path resolution is checked by kubectl too);
//   - when kubectl fails to load, we fail too, and our message names the file
//     kubectl names.
//
// case.conf keys: kubeconfig=<KUBECONFIG value> (absent: unset), explicit=<path>
// (--kubeconfig), home=<dir> ($HOME, default: a directory that does not
// exist), kubectl_args=<args> + kubectl_error=<text> (run a different kubectl
// command that must fail with that text; used where `config view` differs
// from every other command).

#include <kube/exception.hpp>
#include <kube/config/kubeconfig.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

const fs::path data_dir{KUBE_TEST_KUBECONFIG_DATA};

std::map<std::string, std::string> read_case(const fs::path& dir) {
  std::map<std::string, std::string> conf;
  std::ifstream in(dir / "case.conf");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const auto eq = line.find('=');
    if (eq != std::string::npos) conf[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return conf;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct run_result {
  int status = -1;
  std::string out;
  std::string err;
};

// kubectl runs in the case directory with a clean environment: only PATH,
// HOME and (when the case sets it) KUBECONFIG.
run_result run_kubectl(const fs::path& dir, const std::map<std::string, std::string>& conf, const std::string& args) {
  const fs::path err_file = fs::temp_directory_path() / ("kube-conformance-" + std::to_string(::getpid()) + ".err");
  std::string cmd = "cd '" + dir.string() + "' && env -i PATH=/usr/local/bin:/usr/bin:/bin HOME='" +
                    (dir / (conf.contains("home") ? conf.at("home") : std::string("no-home"))).string() + "'";
  if (conf.contains("kubeconfig")) cmd += " KUBECONFIG='" + conf.at("kubeconfig") + "'";
  cmd += " kubectl " + args;
  if (conf.contains("explicit")) cmd += " --kubeconfig='" + conf.at("explicit") + "'";
  cmd += " 2>'" + err_file.string() + "'";
  run_result r;
  FILE* p = ::popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  r.status = ::pclose(p);
  r.err = slurp(err_file);
  fs::remove(err_file);
  return r;
}

// Our side runs in the same directory with the same HOME and KUBECONFIG.
class case_env {
public:
  case_env(const fs::path& dir, const std::map<std::string, std::string>& conf)
      : old_cwd_(fs::current_path()) {
    fs::current_path(dir);
    ::setenv("HOME", (dir / (conf.contains("home") ? conf.at("home") : std::string("no-home"))).c_str(), 1);
    if (conf.contains("kubeconfig")) {
      ::setenv("KUBECONFIG", conf.at("kubeconfig").c_str(), 1);
    } else {
      ::unsetenv("KUBECONFIG");
    }
  }
  case_env(const case_env&) = delete;
  case_env& operator=(const case_env&) = delete;
  ~case_env() { fs::current_path(old_cwd_); }

private:
  fs::path old_cwd_;
};

bool nullish(const json::value& v) { return v.is_null() || (v.is_array() && v.as_array().empty()); }

// Field-by-field comparison. Go's nil and empty slices print as null and []
// and mean the same, so those two are equal; numbers compare by value.
void compare(const json::value& ours, const json::value& theirs, const std::string& path,
             std::vector<std::string>& diffs) {
  if (nullish(ours) && nullish(theirs)) return;
  if (ours.is_number() && theirs.is_number()) {
    if (ours.to_number<double>() != theirs.to_number<double>()) {
      diffs.push_back(path + ": ours " + json::serialize(ours) + ", kubectl " + json::serialize(theirs));
    }
    return;
  }
  if (ours.is_object() && theirs.is_object()) {
    const auto& a = ours.as_object();
    const auto& b = theirs.as_object();
    for (const auto& kv : a) {
      const std::string p = path + "." + std::string(kv.key());
      if (!b.contains(kv.key()))
        diffs.push_back(p + ": only in ours: " + json::serialize(kv.value()));
      else
        compare(kv.value(), b.at(kv.key()), p, diffs);
    }
    for (const auto& kv : b) {
      if (!a.contains(kv.key())) {
        diffs.push_back(path + "." + std::string(kv.key()) + ": only in kubectl: " + json::serialize(kv.value()));
      }
    }
    return;
  }
  if (ours.is_array() && theirs.is_array()) {
    const auto& a = ours.as_array();
    const auto& b = theirs.as_array();
    if (a.size() != b.size()) {
      diffs.push_back(path + ": ours has " + std::to_string(a.size()) + " items, kubectl " + std::to_string(b.size()));
      return;
    }
    for (std::size_t i = 0; i < a.size(); ++i) compare(a[i], b[i], path + "[" + std::to_string(i) + "]", diffs);
    return;
  }
  if (ours != theirs)
    diffs.push_back(path + ": ours " + json::serialize(ours) + ", kubectl " + json::serialize(theirs));
}

kube::kubeconfig load_ours(const std::map<std::string, std::string>& conf, bool resolve) {
  kube::kubeconfig_load_params params;
  params.resolve_paths = resolve;
  if (conf.contains("explicit")) params.explicit_path = conf.at("explicit");
  return kube::kubeconfig::load(params);
}

// clientcmd's FlattenConfig: file contents replace the path fields; a field
// with both a path and data is an error.
void flatten_field(std::string& raw_path, const std::string& resolved_path, std::string& data) {
  if (raw_path.empty()) return;
  if (!data.empty()) throw std::runtime_error("cannot have values for both path and contents");
  std::ifstream in(resolved_path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + resolved_path);
  data = slurp(resolved_path);
  raw_path.clear();
}

json::object flatten(kube::kubeconfig raw, const kube::kubeconfig& resolved) {
  for (auto& [name, c] : raw.clusters) {
    flatten_field(c.certificate_authority, resolved.clusters.at(name).certificate_authority,
                  c.certificate_authority_data);
  }
  for (auto& [name, u] : raw.users) {
    const auto& r = resolved.users.at(name);
    flatten_field(u.client_certificate, r.client_certificate, u.client_certificate_data);
    std::string key = u.client_key_data.reveal();
    flatten_field(u.client_key, r.client_key, key);
    u.client_key_data = kube::secret_string(key);
  }
  return raw.to_json();
}

std::vector<fs::path> cases() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(data_dir)) {
    if (e.is_directory() && fs::exists(e.path() / "case.conf")) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string quoted_file_in(const std::string& kubectl_err) {
  const std::string marker = "error loading config file \"";
  const auto at = kubectl_err.find(marker);
  if (at == std::string::npos) return {};
  const auto start = at + marker.size();
  return kubectl_err.substr(start, kubectl_err.find('"', start) - start);
}

}  // namespace

TEST_CASE("the corpus has at least 20 cases", "[kubeconfig][conformance]") { CHECK(cases().size() >= 20); }

TEST_CASE("merged kubeconfig equals kubectl config view for every corpus case", "[kubeconfig][conformance]") {
  for (const auto& dir : cases()) {
    const auto conf = read_case(dir);
    DYNAMIC_SECTION(dir.filename().string()) {
      if (conf.contains("kubectl_args")) {
        // Both sides must refuse, for the reason kubectl gives.
        const auto k = run_kubectl(dir, conf, conf.at("kubectl_args"));
        INFO("kubectl stderr: " << k.err);
        CHECK(k.status != 0);
        CHECK(k.err.find(conf.at("kubectl_error")) != std::string::npos);
        case_env env(dir, conf);
        CHECK_THROWS_AS(load_ours(conf, false), kube::error);
        continue;
      }

      const auto raw = run_kubectl(dir, conf, "config view --raw -o json");
      INFO("kubectl stderr: " << raw.err);
      case_env env(dir, conf);
      if (raw.status != 0) {
        // kubectl could not load the files: neither may we, and our message
        // names the same file.
        try {
          (void)load_ours(conf, false);
          FAIL("kubectl failed to load this case but we loaded it");
        } catch (const kube::error& e) {
          CHECK((e.code() == kube::client_errc::invalid_config || e.code() == kube::client_errc::file_error));
          const std::string file = quoted_file_in(raw.err);
          CHECK_FALSE(file.empty());
          CHECK(std::string(e.what()).find(file) != std::string::npos);
        }
        continue;
      }

      const kube::kubeconfig ours_raw = load_ours(conf, false);
      std::vector<std::string> diffs;
      compare(ours_raw.to_json(), json::parse(raw.out), "", diffs);
      for (const auto& d : diffs) UNSCOPED_INFO("view --raw: " << d);
      CHECK(diffs.empty());

      const auto flat = run_kubectl(dir, conf, "config view --flatten -o json");
      INFO("kubectl --flatten stderr: " << flat.err);
      const kube::kubeconfig ours_resolved = load_ours(conf, true);
      if (flat.status != 0) {
        CHECK_THROWS(flatten(ours_raw, ours_resolved));
      } else {
        std::vector<std::string> fdiffs;
        compare(flatten(ours_raw, ours_resolved), json::parse(flat.out), "", fdiffs);
        for (const auto& d : fdiffs) UNSCOPED_INFO("view --flatten: " << d);
        CHECK(fdiffs.empty());
      }
    }
  }
}
