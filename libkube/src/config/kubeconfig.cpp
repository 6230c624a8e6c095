// Loading and merging kubeconfig files with clientcmd's rules
// (tools/clientcmd/loader.go), and writing the merged document back in the
// JSON shape `kubectl config view --raw -o json` prints.

#include "codec/base64.hpp"
#include <kube/detail/config_files.hpp>
#include <kube/exception.hpp>
#include <kube/config/kubeconfig.hpp>

#include <boost/json/array.hpp>

#include <set>

namespace kube {

std::vector<std::string> kubeconfig::default_precedence() {
  std::vector<std::string> out;
  const auto env = detail::get_env("KUBECONFIG");
  if (env && !env->empty()) {
    // filepath.SplitList, then deduplicate keeping the first occurrence.
    std::set<std::string> seen;
    std::size_t i = 0;
    while (i <= env->size()) {
      const std::size_t j = std::min(env->find(':', i), env->size());
      std::string item = env->substr(i, j - i);
      if (seen.insert(item).second) {
        out.push_back(std::move(item));
      }
      i = j + 1;
    }
    return out;
  }
  // homedir.HomeDir() is $HOME on Linux, even when it is empty.
  out.push_back(detail::join_path(detail::get_env("HOME").value_or(""), ".kube/config"));
  return out;
}

void kubeconfig::merge_from(const kubeconfig& other) {
  // Map entries: the first file to define a name keeps the whole entry.
  for (const auto& [name, c] : other.clusters) clusters.emplace(name, c);
  for (const auto& [name, u] : other.users) users.emplace(name, u);
  for (const auto& [name, c] : other.contexts) contexts.emplace(name, c);
  for (const auto& [name, e] : other.extensions) extensions.emplace(name, e);
  for (const auto& [name, e] : other.prefs.extensions) prefs.extensions.emplace(name, e);
  // Plain values: the first non-zero value wins.
  if (current_context.empty()) current_context = other.current_context;
  prefs.colors = prefs.colors || other.prefs.colors;
  files.insert(files.end(), other.files.begin(), other.files.end());
  missing_files.insert(missing_files.end(), other.missing_files.begin(), other.missing_files.end());
}

kubeconfig kubeconfig::load_file(const std::string& path, bool resolve_paths) {
  const std::string text = detail::read_config_file(path, "kubeconfig");
  return parse(text, path, resolve_paths);
}

kubeconfig kubeconfig::load(const kubeconfig_load_params& params) {
  kubeconfig merged;
  if (!params.explicit_path.empty()) {
    // An explicitly named file must exist (kubectl --kubeconfig).
    return load_file(params.explicit_path, params.resolve_paths);
  }
  const std::vector<std::string> list = params.precedence ? *params.precedence : default_precedence();
  for (const auto& file : list) {
    if (file.empty()) {
      continue;
    }
    auto text = detail::read_config_file_if_exists(file, "kubeconfig");
    if (!text) {
      merged.missing_files.push_back(file);
      continue;
    }
    merged.merge_from(parse(*text, file, params.resolve_paths));
  }
  return merged;
}

kubeconfig kubeconfig::load(const kubeconfig_load_params& params, error_code& ec, diagnostics& diag) {
  ec.clear();
  diag.clear();
  try {
    return load(params);
  } catch (const kube::error& e) {
    ec = e.code();
    diag = e.diag();
  }
  return {};
}

std::string kubeconfig::describe_files() const {
  std::string out;
  for (const auto& f : files) {
    if (!out.empty()) out += ", ";
    out += f;
  }
  return out.empty() ? std::string("none") : out;
}

namespace {

namespace json = boost::json;

void put_extensions(json::object& o, const std::map<std::string, json::value>& exts) {
  if (exts.empty()) return;  // omitempty
  json::array a;
  for (const auto& [name, v] : exts) {
    a.push_back(json::object{{"name", name}, {"extension", v}});
  }
  o["extensions"] = std::move(a);
}

void put_string(json::object& o, std::string_view key, const std::string& v) {
  if (!v.empty()) o[key] = v;  // omitempty
}

void put_data(json::object& o, std::string_view key, const std::string& bytes) {
  if (!bytes.empty()) o[key] = detail::base64_encode(bytes);
}

json::value string_list(const std::vector<std::string>& v) {
  json::array a;
  for (const auto& s : v) a.push_back(json::string(s));
  return a;
}

json::object cluster_json(const kubeconfig::cluster& c) {
  json::object o;
  o["server"] = c.server;  // not omitempty in clientcmd v1
  put_string(o, "tls-server-name", c.tls_server_name);
  if (c.insecure_skip_tls_verify) o["insecure-skip-tls-verify"] = true;
  put_string(o, "certificate-authority", c.certificate_authority);
  put_data(o, "certificate-authority-data", c.certificate_authority_data);
  put_string(o, "proxy-url", c.proxy_url);
  if (c.disable_compression) o["disable-compression"] = true;
  put_extensions(o, c.extensions);
  return o;
}

json::object user_json(const kubeconfig::auth_info& u) {
  json::object o;
  put_string(o, "client-certificate", u.client_certificate);
  put_data(o, "client-certificate-data", u.client_certificate_data);
  put_string(o, "client-key", u.client_key);
  put_data(o, "client-key-data", u.client_key_data.reveal());
  put_string(o, "token", u.token.reveal());
  put_string(o, "tokenFile", u.token_file);
  put_string(o, "as", u.as);
  put_string(o, "as-uid", u.as_uid);
  if (!u.as_groups.empty()) o["as-groups"] = string_list(u.as_groups);
  if (!u.as_user_extra.empty()) {
    json::object extra;
    for (const auto& [k, v] : u.as_user_extra) extra[k] = string_list(v);
    o["as-user-extra"] = std::move(extra);
  }
  put_string(o, "username", u.username);
  put_string(o, "password", u.password.reveal());
  if (u.auth_provider) {
    json::object ap{{"name", u.auth_provider->name}};
    if (u.auth_provider->config.empty()) {
      ap["config"] = nullptr;
    } else {
      json::object cfg;
      for (const auto& [k, v] : u.auth_provider->config) cfg[k] = v.reveal();
      ap["config"] = std::move(cfg);
    }
    o["auth-provider"] = std::move(ap);
  }
  if (u.exec) {
    const auto& ex = *u.exec;
    json::object e;
    e["command"] = ex.command;
    e["args"] = ex.args.empty() ? json::value(nullptr) : string_list(ex.args);
    if (ex.env.empty()) {
      e["env"] = nullptr;
    } else {
      json::array env;
      for (const auto& var : ex.env) env.push_back(json::object{{"name", var.name}, {"value", var.value}});
      e["env"] = std::move(env);
    }
    put_string(e, "apiVersion", ex.api_version);
    put_string(e, "installHint", ex.install_hint);
    e["provideClusterInfo"] = ex.provide_cluster_info;
    put_string(e, "interactiveMode", ex.interactive_mode);
    o["exec"] = std::move(e);
  }
  put_extensions(o, u.extensions);
  return o;
}

json::object context_json(const kubeconfig::context& c) {
  json::object o;
  o["cluster"] = c.cluster;
  o["user"] = c.user;
  put_string(o, "namespace", c.namespace_name);
  put_extensions(o, c.extensions);
  return o;
}

template <class T, class F>
json::value named_list(const std::map<std::string, T>& m, std::string_view item_key, F&& to_json) {
  if (m.empty()) return nullptr;  // a nil slice in Go
  json::array a;
  for (const auto& [name, item] : m) {  // std::map: sorted by name, as clientcmd sorts
    a.push_back(json::object{{"name", name}, {item_key, to_json(item)}});
  }
  return a;
}

}  // namespace

boost::json::object kubeconfig::to_json() const {
  json::object o;
  o["kind"] = "Config";
  o["apiVersion"] = "v1";
  json::object p;
  if (prefs.colors) p["colors"] = true;
  put_extensions(p, prefs.extensions);
  o["preferences"] = std::move(p);
  o["clusters"] = named_list(clusters, "cluster", cluster_json);
  o["users"] = named_list(users, "user", user_json);
  o["contexts"] = named_list(contexts, "context", context_json);
  o["current-context"] = current_context;
  put_extensions(o, extensions);
  return o;
}

}  // namespace kube
