// Decoding one kubeconfig document (YAML) into kube::kubeconfig.
// Size: about 730 lines, one decoder per clientcmd v1 type (cluster, user,
// context, exec, auth provider, extensions), all on the same scalar rules
// and message helpers below; they read as one table of fields.
//
// kubectl reads a kubeconfig by converting YAML to JSON (sigs.k8s.io/yaml,
// YAML 1.1 scalar rules: `yes`/`no`/`on`/`off`/`y`/`n` are booleans, 017 is
// octal, ...) and then decoding JSON into clientcmd's v1 types. So a plain
// `namespace: no` is a boolean and an error in a string field, and a quoted
// "true" is an error in a boolean field. We apply the same scalar rules
// directly on the YAML nodes, which keeps line/column for messages.

#include "codec/base64.hpp"
#include <kube/detail/config_files.hpp>
#include <kube/config/kubeconfig.hpp>

#include "codec/parse_json.hpp"

#include <yaml-cpp/yaml.h>

#include <boost/json/array.hpp>
#include <boost/json/serialize.hpp>

#include <array>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <set>
#include <vector>

namespace kube {
namespace {

using detail::throw_config_error;

enum class scalar_kind { null, boolean, integer, unsigned_integer, floating, string };

struct scalar {
  scalar_kind kind = scalar_kind::string;
  bool b = false;
  std::int64_t i = 0;
  std::uint64_t u = 0;
  double d = 0;
};

bool one_of(std::string_view s, std::initializer_list<std::string_view> set) {
  for (auto v : set) {
    if (s == v) return true;
  }
  return false;
}

// Go's strconv.ParseUint(s, 0, 64) on an unsigned magnitude: 0x, 0o, 0b
// prefixes, a leading 0 means octal.
bool parse_go_uint(std::string_view s, std::uint64_t& out) {
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s.remove_prefix(2);
  } else if (s.size() > 2 && s[0] == '0' && (s[1] == 'o' || s[1] == 'O')) {
    base = 8;
    s.remove_prefix(2);
  } else if (s.size() > 2 && s[0] == '0' && (s[1] == 'b' || s[1] == 'B')) {
    base = 2;
    s.remove_prefix(2);
  } else if (s.size() > 1 && s[0] == '0') {
    base = 8;
    s.remove_prefix(1);
  }
  if (s.empty()) return false;
  std::uint64_t v = 0;
  for (char c : s) {
    int dv = -1;
    if (c >= '0' && c <= '9')
      dv = c - '0';
    else if (c >= 'a' && c <= 'f')
      dv = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F')
      dv = c - 'A' + 10;
    if (dv < 0 || dv >= base) return false;
    if (v > (std::numeric_limits<std::uint64_t>::max() - static_cast<std::uint64_t>(dv)) /
                static_cast<std::uint64_t>(base)) {
      return false;
    }
    v = v * static_cast<std::uint64_t>(base) + static_cast<std::uint64_t>(dv);
  }
  out = v;
  return true;
}

// yamlStyleFloat of go-yaml v2: ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$
bool is_yaml_float(std::string_view s) {
  std::size_t i = 0;
  auto digits = [&] {
    const std::size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i - start;
  };
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (digits() == 0) return false;
  } else {
    if (digits() == 0) return false;
    if (i < s.size() && s[i] == '.') {
      ++i;
      digits();
    }
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (digits() == 0) return false;
  }
  return i == s.size();
}

// go-yaml v2's resolve() for plain scalars.
scalar resolve_plain(std::string_view s) {
  scalar r;
  if (one_of(s, {"", "~", "null", "Null", "NULL"})) {
    r.kind = scalar_kind::null;
    return r;
  }
  if (one_of(s, {"y", "Y", "yes", "Yes", "YES", "on", "On", "ON", "true", "True", "TRUE"})) {
    r.kind = scalar_kind::boolean;
    r.b = true;
    return r;
  }
  if (one_of(s, {"n", "N", "no", "No", "NO", "off", "Off", "OFF", "false", "False", "FALSE"})) {
    r.kind = scalar_kind::boolean;
    return r;
  }
  if (one_of(s, {".nan", ".NaN", ".NAN"})) {
    r.kind = scalar_kind::floating;
    r.d = std::numeric_limits<double>::quiet_NaN();
    return r;
  }
  if (one_of(s, {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF"})) {
    r.kind = scalar_kind::floating;
    r.d = s.front() == '-' ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
    return r;
  }
  const char c0 = s.front();
  if (!((c0 >= '0' && c0 <= '9') || c0 == '+' || c0 == '-' || c0 == '.')) {
    return r;
  }
  std::string plain;
  for (char c : s) {
    if (c != '_') plain += c;
  }
  std::string_view mag = plain;
  const bool neg = !mag.empty() && mag.front() == '-';
  if (!mag.empty() && (mag.front() == '-' || mag.front() == '+')) mag.remove_prefix(1);
  std::uint64_t u = 0;
  if (parse_go_uint(mag, u) || (mag == "0" && (u = 0, true))) {
    if (!neg && u <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      r.kind = scalar_kind::integer;
      r.i = static_cast<std::int64_t>(u);
      return r;
    }
    if (neg && u <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) + 1) {
      r.kind = scalar_kind::integer;
      r.i = u == static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) + 1
                ? std::numeric_limits<std::int64_t>::min()
                : -static_cast<std::int64_t>(u);
      return r;
    }
    if (!neg) {
      r.kind = scalar_kind::unsigned_integer;
      r.u = u;
      return r;
    }
  }
  if (is_yaml_float(plain)) {
    r.kind = scalar_kind::floating;
    r.d = std::strtod(plain.c_str(), nullptr);
    return r;
  }
  return r;
}

scalar resolve(const YAML::Node& n) {
  if (n.IsNull()) {
    scalar r;
    r.kind = scalar_kind::null;
    return r;
  }
  const std::string& tag = n.Tag();
  // "!" marks a quoted or block scalar; an explicit !!str keeps the text too.
  if (tag == "!" || tag == "tag:yaml.org,2002:str") {
    return scalar{};
  }
  if (tag == "?" || tag.rfind("tag:yaml.org,2002:", 0) == 0) {
    return resolve_plain(n.Scalar());
  }
  return scalar{};
}

std::string scalar_kind_name(const scalar& s) {
  switch (s.kind) {
  case scalar_kind::null:
    return "null";
  case scalar_kind::boolean:
    return "a boolean";
  case scalar_kind::integer:
  case scalar_kind::unsigned_integer:
  case scalar_kind::floating:
    return "a number";
  case scalar_kind::string:
    return "a string";
  }
  return "a value";
}

std::string node_kind_name(const YAML::Node& n) {
  switch (n.Type()) {
  case YAML::NodeType::Map:
    return "a map";
  case YAML::NodeType::Sequence:
    return "a list";
  case YAML::NodeType::Scalar:
    return scalar_kind_name(resolve(n));
  default:
    return "null";
  }
}

boost::json::value to_json_value(const YAML::Node& n);

// sigs.k8s.io/yaml turns non-string map keys into their text (true, 15, ...).
std::string key_text(const YAML::Node& k) {
  if (!k.IsScalar()) {
    return k.IsNull() ? "null" : "";
  }
  const scalar s = resolve(k);
  switch (s.kind) {
  case scalar_kind::null:
    return "null";
  case scalar_kind::boolean:
    return s.b ? "true" : "false";
  case scalar_kind::integer:
    return std::to_string(s.i);
  case scalar_kind::unsigned_integer:
    return std::to_string(s.u);
  case scalar_kind::floating:
    return boost::json::serialize(boost::json::value(s.d));
  case scalar_kind::string:
    break;
  }
  return k.Scalar();
}

boost::json::value to_json_value(const YAML::Node& n) {
  switch (n.Type()) {
  case YAML::NodeType::Map: {
    boost::json::object o;
    for (const auto& kv : n) {
      o[key_text(kv.first)] = to_json_value(kv.second);
    }
    return o;
  }
  case YAML::NodeType::Sequence: {
    boost::json::array a;
    for (const auto& e : n) {
      a.push_back(to_json_value(e));
    }
    return a;
  }
  case YAML::NodeType::Scalar: {
    const scalar s = resolve(n);
    switch (s.kind) {
    case scalar_kind::null:
      return nullptr;
    case scalar_kind::boolean:
      return s.b;
    case scalar_kind::integer:
      return s.i;
    case scalar_kind::unsigned_integer:
      return s.u;
    case scalar_kind::floating:
      return s.d;
    case scalar_kind::string:
      return boost::json::string(n.Scalar());
    }
    return nullptr;
  }
  default:
    return nullptr;
  }
}

// An alias (*name) stands for the whole node its anchor (&name) marks, so a
// few bytes of YAML can stand for gigabytes ("billion laughs"): an anchor of
// ten aliases of an anchor of ten aliases... Every walk over the nodes
// (ours, and the JSON conversion) sees the expanded tree. Without aliases,
// the nodes and scalar bytes of a document never exceed about twice its
// size; a document whose expanded size goes past 8 times its size plus
// 64 KiB is refused before anything walks it (go-yaml, under kubectl,
// refuses "excessive aliasing" the same way). The walk charges each node
// when it is queued, so it stops within the budget in time and memory.
void check_alias_expansion(const std::vector<YAML::Node>& roots, std::size_t input_size, const std::string& origin) {
  const std::size_t budget = 8 * input_size + 65536;
  std::size_t cost = 0;
  const auto charge = [&](std::size_t n) {
    cost += n;
    if (cost > budget) {
      throw_config_error(client_errc::invalid_config,
                         origin + ": the YAML expands through aliases (*name) to more than " + std::to_string(budget) +
                             " nodes and bytes, 8 times its own size: refused as an alias bomb");
    }
  };
  std::vector<YAML::Node> todo;
  const auto queue = [&](const YAML::Node& n) {
    charge(1);
    todo.push_back(n);
  };
  for (const auto& r : roots) queue(r);
  while (!todo.empty()) {
    const YAML::Node n = todo.back();
    todo.pop_back();
    if (n.IsScalar()) {
      charge(n.Scalar().size());
    } else if (n.IsMap()) {
      for (const auto& kv : n) {
        queue(kv.first);
        queue(kv.second);
      }
    } else if (n.IsSequence()) {
      for (const auto& e : n) queue(e);
    }
  }
}

class decoder {
public:
  decoder(const std::string& origin, bool resolve_paths)
      : origin_(origin),
        resolve_paths_(resolve_paths) {
    if (resolve_paths_) {
      base_ = detail::absolute_path(detail::dir_path(origin));
    }
  }

  [[noreturn]] void fail(const YAML::Node& n, const std::string& path, const std::string& what) const {
    std::string msg = origin_ + ": " + (path.empty() ? std::string{} : path + ": ") + what;
    const YAML::Mark m = n.Mark();
    if (!m.is_null()) {
      msg += " (line " + std::to_string(m.line + 1) + ", column " + std::to_string(m.column + 1) + ")";
    }
    throw_config_error(client_errc::invalid_config, msg);
  }

  kubeconfig decode(const YAML::Node& root) {
    kubeconfig kc;
    if (!root || root.IsNull()) {
      return kc;
    }
    if (!root.IsMap()) {
      fail(root, "", "a kubeconfig must be a map, got " + node_kind_name(root));
    }
    for (const auto& kv : root) {
      const std::string key = key_text(kv.first);
      const YAML::Node& v = kv.second;
      if (key == "apiVersion") {
        const std::string av = get_string(v, key);
        if (!av.empty() && av != "v1") fail(v, key, "unsupported version \"" + av + "\" (want v1)");
      } else if (key == "kind") {
        const std::string k = get_string(v, key);
        if (!k.empty() && k != "Config") fail(v, key, "unsupported kind \"" + k + "\" (want Config)");
      } else if (key == "current-context") {
        kc.current_context = get_string(v, key);
      } else if (key == "preferences") {
        decode_preferences(v, kc.prefs);
      } else if (key == "clusters") {
        decode_named_list(
            v, key, "cluster", kc.clusters,
            [this](const YAML::Node& n, const std::string& p, kubeconfig::cluster& c) { decode_cluster(n, p, c); });
      } else if (key == "users") {
        decode_named_list(
            v, key, "user", kc.users,
            [this](const YAML::Node& n, const std::string& p, kubeconfig::auth_info& u) { decode_user(n, p, u); });
      } else if (key == "contexts") {
        decode_named_list(
            v, key, "context", kc.contexts,
            [this](const YAML::Node& n, const std::string& p, kubeconfig::context& c) { decode_context(n, p, c); });
      } else if (key == "extensions") {
        kc.extensions = get_extensions(v, key);
      }
      // Unknown fields are ignored, as clientcmd's (non-strict) decoder does.
    }
    return kc;
  }

private:
  std::string get_string(const YAML::Node& n, const std::string& path) const {
    if (n.IsNull()) return {};
    if (!n.IsScalar()) fail(n, path, "expected a string, got " + node_kind_name(n));
    const scalar s = resolve(n);
    if (s.kind == scalar_kind::null) return {};
    if (s.kind != scalar_kind::string) {
      fail(n, path, "expected a string, got " + scalar_kind_name(s) + " (quote the value)");
    }
    return n.Scalar();
  }

  bool get_bool(const YAML::Node& n, const std::string& path) const {
    if (n.IsNull()) return false;
    if (!n.IsScalar()) fail(n, path, "expected a boolean, got " + node_kind_name(n));
    const scalar s = resolve(n);
    if (s.kind == scalar_kind::null) return false;
    if (s.kind != scalar_kind::boolean) fail(n, path, "expected a boolean, got " + scalar_kind_name(s));
    return s.b;
  }

  // `*-data`: base64 text in the file. The value is never echoed (it may be a key).
  std::string get_data(const YAML::Node& n, const std::string& path) const {
    const std::string text = get_string(n, path);
    std::size_t bad = 0;
    auto decoded = detail::base64_decode(text, bad);
    if (!decoded) fail(n, path, "invalid base64 at byte " + std::to_string(bad));
    return std::move(*decoded);
  }

  std::vector<std::string> get_string_list(const YAML::Node& n, const std::string& path) const {
    std::vector<std::string> out;
    if (n.IsNull()) return out;
    if (!n.IsSequence()) fail(n, path, "expected a list of strings, got " + node_kind_name(n));
    std::size_t i = 0;
    for (const auto& e : n) {
      out.push_back(get_string(e, path + "[" + std::to_string(i++) + "]"));
    }
    return out;
  }

  std::map<std::string, boost::json::value> get_extensions(const YAML::Node& n, const std::string& path) const {
    std::map<std::string, boost::json::value> out;
    if (n.IsNull()) return out;
    if (!n.IsSequence()) fail(n, path, "expected a list of {name, extension}, got " + node_kind_name(n));
    std::size_t i = 0;
    for (const auto& e : n) {
      std::string p = path + "[" + std::to_string(i++) + "]";
      if (!e.IsNull() && !e.IsMap()) {
        fail(e, p, "expected a map, got " + node_kind_name(e));
      }
      std::string name;
      boost::json::value ext;
      if (e.IsMap()) {
        for (const auto& kv : e) {
          const std::string k = key_text(kv.first);
          if (k == "name")
            name = get_string(kv.second, p + ".name");
          else if (k == "extension") {
            ext = to_json_value(kv.second);
            // client-go turns an extension into JSON, which has no .inf or .nan.
            if (detail::json_has_non_finite(ext))
              fail(kv.second, p + ".extension", "holds .inf or .nan, which JSON cannot");
          }
        }
      }
      if (out.contains(name)) fail(e, p, "duplicate extension name \"" + name + "\"");
      out.emplace(name, std::move(ext));
    }
    return out;
  }

  template <class T, class F>
  void decode_named_list(const YAML::Node& n, const std::string& list, const char* item_key,
                         std::map<std::string, T>& out, F&& decode_item) const {
    if (n.IsNull()) return;
    if (!n.IsSequence()) fail(n, list, "expected a list, got " + node_kind_name(n));
    std::size_t i = 0;
    for (const auto& e : n) {
      std::string p = list + "[" + std::to_string(i++) + "]";
      if (e.IsNull()) {
        // `- ` alone is an entry with an empty name and nothing set.
      } else if (!e.IsMap()) {
        fail(e, p, "expected a map, got " + node_kind_name(e));
      }
      std::string name;
      YAML::Node body;
      if (e.IsMap()) {
        for (const auto& kv : e) {
          const std::string k = key_text(kv.first);
          if (k == "name")
            name = get_string(kv.second, p + ".name");
          else if (k == item_key)
            body = kv.second;
        }
      }
      p = list + "[name=" + name + "]";
      if (out.contains(name)) {
        fail(e, p, "duplicate name \"" + name + "\" in " + list);
      }
      T item{};
      if (body && !body.IsNull()) {
        if (!body.IsMap()) fail(body, p + "." + item_key, "expected a map, got " + node_kind_name(body));
        decode_item(body, p + "." + item_key, item);
      }
      item.location_of_origin = origin_;
      out.emplace(std::move(name), std::move(item));
    }
  }

  void decode_preferences(const YAML::Node& n, kubeconfig::preferences& p) const {
    if (n.IsNull()) return;
    if (!n.IsMap()) fail(n, "preferences", "expected a map, got " + node_kind_name(n));
    for (const auto& kv : n) {
      const std::string k = key_text(kv.first);
      if (k == "colors")
        p.colors = get_bool(kv.second, "preferences.colors");
      else if (k == "extensions")
        p.extensions = get_extensions(kv.second, "preferences.extensions");
    }
  }

  void decode_cluster(const YAML::Node& n, const std::string& path, kubeconfig::cluster& c) const {
    for (const auto& kv : n) {
      const std::string k = key_text(kv.first);
      const std::string p = path + "." + k;
      const YAML::Node& v = kv.second;
      if (k == "server")
        c.server = get_string(v, p);
      else if (k == "tls-server-name")
        c.tls_server_name = get_string(v, p);
      else if (k == "insecure-skip-tls-verify")
        c.insecure_skip_tls_verify = get_bool(v, p);
      else if (k == "certificate-authority")
        c.certificate_authority = get_string(v, p);
      else if (k == "certificate-authority-data")
        c.certificate_authority_data = get_data(v, p);
      else if (k == "proxy-url")
        c.proxy_url = get_string(v, p);
      else if (k == "disable-compression")
        c.disable_compression = get_bool(v, p);
      else if (k == "extensions")
        c.extensions = get_extensions(v, p);
    }
    resolve_ref(c.certificate_authority);
  }

  void decode_user(const YAML::Node& n, const std::string& path, kubeconfig::auth_info& u) const {
    for (const auto& kv : n) {
      const std::string k = key_text(kv.first);
      const std::string p = path + "." + k;
      const YAML::Node& v = kv.second;
      if (k == "client-certificate")
        u.client_certificate = get_string(v, p);
      else if (k == "client-certificate-data")
        u.client_certificate_data = get_data(v, p);
      else if (k == "client-key")
        u.client_key = get_string(v, p);
      else if (k == "client-key-data")
        u.client_key_data = secret_string(get_data(v, p));
      else if (k == "token")
        u.token = secret_string(get_string(v, p));
      else if (k == "tokenFile")
        u.token_file = get_string(v, p);
      else if (k == "as")
        u.as = get_string(v, p);
      else if (k == "as-uid")
        u.as_uid = get_string(v, p);
      else if (k == "as-groups")
        u.as_groups = get_string_list(v, p);
      else if (k == "as-user-extra")
        u.as_user_extra = get_user_extra(v, p);
      else if (k == "username")
        u.username = get_string(v, p);
      else if (k == "password")
        u.password = secret_string(get_string(v, p));
      else if (k == "auth-provider")
        u.auth_provider = get_auth_provider(v, p);
      else if (k == "exec")
        u.exec = get_exec(v, p);
      else if (k == "extensions")
        u.extensions = get_extensions(v, p);
    }
    resolve_ref(u.client_certificate);
    resolve_ref(u.client_key);
    resolve_ref(u.token_file);
    if (u.exec && u.exec->command.find('/') != std::string::npos) {
      resolve_ref(u.exec->command);
    }
  }

  void decode_context(const YAML::Node& n, const std::string& path, kubeconfig::context& c) const {
    for (const auto& kv : n) {
      const std::string k = key_text(kv.first);
      const std::string p = path + "." + k;
      const YAML::Node& v = kv.second;
      if (k == "cluster")
        c.cluster = get_string(v, p);
      else if (k == "user")
        c.user = get_string(v, p);
      else if (k == "namespace")
        c.namespace_name = get_string(v, p);
      else if (k == "extensions")
        c.extensions = get_extensions(v, p);
    }
  }

  std::map<std::string, std::vector<std::string>> get_user_extra(const YAML::Node& n, const std::string& path) const {
    std::map<std::string, std::vector<std::string>> out;
    if (n.IsNull()) return out;
    if (!n.IsMap()) fail(n, path, "expected a map of string lists, got " + node_kind_name(n));
    for (const auto& kv : n) {
      const std::string k = key_text(kv.first);
      out[k] = get_string_list(kv.second, path + "." + k);
    }
    return out;
  }

  std::optional<kubeconfig::auth_provider_config> get_auth_provider(const YAML::Node& n,
                                                                    const std::string& path) const {
    if (n.IsNull()) return std::nullopt;
    if (!n.IsMap()) fail(n, path, "expected a map, got " + node_kind_name(n));
    kubeconfig::auth_provider_config ap;
    for (const auto& kv : n) {
      const std::string k = key_text(kv.first);
      if (k == "name") {
        ap.name = get_string(kv.second, path + ".name");
      } else if (k == "config") {
        const YAML::Node& c = kv.second;
        if (c.IsNull()) continue;
        if (!c.IsMap()) fail(c, path + ".config", "expected a map of strings, got " + node_kind_name(c));
        for (const auto& ckv : c) {
          const std::string ck = key_text(ckv.first);
          ap.config[ck] = secret_string(get_string(ckv.second, path + ".config." + ck));
        }
      }
    }
    return ap;
  }

  std::optional<kubeconfig::exec_config> get_exec(const YAML::Node& n, const std::string& path) const {
    if (n.IsNull()) return std::nullopt;
    if (!n.IsMap()) fail(n, path, "expected a map, got " + node_kind_name(n));
    kubeconfig::exec_config ex;
    for (const auto& kv : n) {
      const std::string k = key_text(kv.first);
      const std::string p = path + "." + k;
      const YAML::Node& v = kv.second;
      if (k == "command")
        ex.command = get_string(v, p);
      else if (k == "args")
        ex.args = get_string_list(v, p);
      else if (k == "apiVersion")
        ex.api_version = get_string(v, p);
      else if (k == "installHint")
        ex.install_hint = get_string(v, p);
      else if (k == "provideClusterInfo")
        ex.provide_cluster_info = get_bool(v, p);
      else if (k == "interactiveMode")
        ex.interactive_mode = get_string(v, p);
      else if (k == "env") {
        if (v.IsNull()) continue;
        if (!v.IsSequence()) fail(v, p, "expected a list of {name, value}, got " + node_kind_name(v));
        std::size_t i = 0;
        for (const auto& e : v) {
          const std::string ep = p + "[" + std::to_string(i++) + "]";
          kubeconfig::exec_env_var var;
          if (!e.IsNull()) {
            if (!e.IsMap()) fail(e, ep, "expected a map, got " + node_kind_name(e));
            for (const auto& ekv : e) {
              const std::string ek = key_text(ekv.first);
              if (ek == "name")
                var.name = get_string(ekv.second, ep + ".name");
              else if (ek == "value")
                var.value = get_string(ekv.second, ep + ".value");
            }
          }
          ex.env.push_back(std::move(var));
        }
      }
    }
    // clientcmd's v1 defaulting: older plugin APIs may use stdin by default.
    if (ex.interactive_mode.empty() && (ex.api_version == "client.authentication.k8s.io/v1beta1" ||
                                        ex.api_version == "client.authentication.k8s.io/v1alpha1")) {
      ex.interactive_mode = "IfAvailable";
    }
    return ex;
  }

  void resolve_ref(std::string& ref) const {
    if (resolve_paths_ && !ref.empty() && ref.front() != '/') {
      ref = detail::join_path(base_, ref);
    }
  }

  const std::string& origin_;
  bool resolve_paths_;
  std::string base_;
};

}  // namespace

kubeconfig kubeconfig::parse(std::string_view yaml, const std::string& origin, bool resolve_paths) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    // yaml-cpp's messages describe the syntax, never the content.
    std::string msg = origin + ": malformed YAML: " + e.msg;
    if (!e.mark.is_null()) {
      msg += " (line " + std::to_string(e.mark.line + 1) + ", column " + std::to_string(e.mark.column + 1) + ")";
    }
    throw_config_error(client_errc::invalid_config, msg);
  }
  check_alias_expansion({root}, yaml.size(), origin);
  decoder d(origin, resolve_paths);
  kubeconfig kc = d.decode(root);
  kc.files.push_back(origin);
  return kc;
}

std::string detail::yaml_to_json(std::string_view yaml, const std::string& origin) {
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(std::string(yaml));
  } catch (const YAML::Exception& e) {
    std::string msg = origin + ": malformed YAML: " + e.msg;
    if (!e.mark.is_null()) {
      msg += " (line " + std::to_string(e.mark.line + 1) + ", column " + std::to_string(e.mark.column + 1) + ")";
    }
    throw_config_error(client_errc::invalid_config, msg);
  }
  boost::json::array out;
  check_alias_expansion(docs, yaml.size(), origin);
  for (const auto& d : docs) {
    if (d && !d.IsNull()) out.push_back(to_json_value(d));
  }
  if (out.size() == 1) return boost::json::serialize(out[0]);
  return boost::json::serialize(out);
}

}  // namespace kube
