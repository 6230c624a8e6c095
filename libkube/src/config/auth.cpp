#include "codec/parse_json.hpp"
#include "config/auth.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/detail/base64.hpp>
#include <boost/json.hpp>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <fstream>
#include <iomanip>
#include <signal.h>
#include <spawn.h>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace kube::detail {
namespace asio = boost::asio;
using namespace asio::experimental::awaitable_operators;

namespace {

std::string trim(std::string s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1);
}

error_code fail(diagnostics& diag, client_errc code, std::string message) {
  diag.set_client_message(std::move(message));
  return code;
}

class bearer_auth final : public authenticator {
public:
  explicit bearer_auth(std::string token)
      : header_("Bearer " + std::move(token)) {}
  asio::awaitable<error_code> authorization(std::string& out, diagnostics&) override {
    out = header_;
    co_return error_code{};
  }

private:
  std::string header_;
};

class basic_auth final : public authenticator {
public:
  basic_auth(const std::string& user, const std::string& password)
      : header_(basic_authorization(user, password)) {}
  asio::awaitable<error_code> authorization(std::string& out, diagnostics&) override {
    out = header_;
    co_return error_code{};
  }

private:
  std::string header_;
};

// Re-reads the token file at most every `refresh` and after a 401, so a
// rotated projected service-account token is picked up.
class token_file_auth final : public authenticator {
public:
  token_file_auth(std::string path, std::chrono::seconds refresh)
      : path_(std::move(path)),
        refresh_(refresh) {}

  asio::awaitable<error_code> authorization(std::string& out, diagnostics& diag) override {
    const auto now = std::chrono::steady_clock::now();
    if (header_.empty() || now - read_at_ >= refresh_) {
      std::ifstream in(path_);
      if (!in) co_return fail(diag, client_errc::auth_failed, "token file " + path_ + ": " + std::strerror(errno));
      std::stringstream ss;
      ss << in.rdbuf();
      const std::string token = trim(ss.str());
      if (token.empty()) co_return fail(diag, client_errc::auth_failed, "token file " + path_ + ": file is empty");
      header_ = "Bearer " + token;
      read_at_ = now;
    }
    out = header_;
    co_return error_code{};
  }

  bool invalidate() override {
    header_.clear();
    return true;
  }

private:
  std::string path_;
  std::chrono::seconds refresh_;
  std::string header_;
  std::chrono::steady_clock::time_point read_at_{};
};

// Runs the exec plugin when there is no cached credential, the cached one
// has expired, or the server rejected it (401).
class exec_auth final : public authenticator {
public:
  exec_auth(exec_params e, std::string server)
      : exec_(std::move(e)),
        server_(std::move(server)) {}

  asio::awaitable<error_code> authorization(std::string& out, diagnostics& diag) override {
    const bool expired = cached_ && cached_->expiry && std::chrono::system_clock::now() >= *cached_->expiry;
    if (!cached_ || expired) {
      exec_credential cred;
      if (auto ec = co_await run_exec_plugin(exec_, server_, cred, diag)) co_return ec;
      if (cred.token.empty())
        co_return fail(diag, client_errc::exec_plugin_failed,
                       "exec plugin " + exec_.command +
                           ": returned a client certificate instead of a token; only token credentials are supported");
      cached_ = std::move(cred);
    }
    out = "Bearer " + cached_->token;
    co_return error_code{};
  }

  bool invalidate() override {
    cached_.reset();
    return true;
  }

private:
  exec_params exec_;
  std::string server_;
  std::optional<exec_credential> cached_;
};

// RFC 3339 as the apiserver writes it ("2026-11-29T19:00:00Z", optional
// fraction and numeric offset).
bool parse_rfc3339(std::string_view s, std::chrono::system_clock::time_point& out) {
  std::tm tm{};
  std::istringstream in{std::string(s)};
  in >> std::get_time(&tm, "%Y-%m-%dT%H:%M:%S");
  if (in.fail()) return false;
  std::string rest;
  std::getline(in, rest);
  std::size_t i = 0;
  if (i < rest.size() && rest[i] == '.') {
    ++i;
    while (i < rest.size() && std::isdigit(static_cast<unsigned char>(rest[i]))) ++i;
  }
  long offset = 0;
  if (i < rest.size() && (rest[i] == 'Z' || rest[i] == 'z')) {
    ++i;
  } else if (i + 6 <= rest.size() && (rest[i] == '+' || rest[i] == '-') && rest[i + 3] == ':') {
    const long h = std::stol(rest.substr(i + 1, 2)), m = std::stol(rest.substr(i + 4, 2));
    offset = (rest[i] == '+' ? 1 : -1) * (h * 3600 + m * 60);
    i += 6;
  } else {
    return false;
  }
  if (i != rest.size()) return false;
  out = std::chrono::system_clock::from_time_t(timegm(&tm)) - std::chrono::seconds(offset);
  return true;
}

}  // namespace

error_code parse_exec_credential(std::string_view json, const std::string& expected_api_version, exec_credential& out,
                                 diagnostics& diag) {
  boost::system::error_code jec;
  auto doc = detail::parse_json(json, jec);
  if (jec || !doc.is_object())
    return fail(diag, client_errc::exec_plugin_failed, "exec plugin output is not a JSON object (ExecCredential)");
  const auto& obj = doc.as_object();
  const auto str = [](const boost::json::object& o, const char* k) -> std::string {
    const auto* v = o.if_contains(k);
    return v && v->is_string() ? std::string(v->as_string()) : std::string();
  };
  if (str(obj, "kind") != "ExecCredential")
    return fail(diag, client_errc::exec_plugin_failed, "exec plugin output: kind is not ExecCredential");
  if (str(obj, "apiVersion") != expected_api_version)
    return fail(diag, client_errc::exec_plugin_failed,
                "exec plugin output: apiVersion \"" + str(obj, "apiVersion") + "\" does not match the configured \"" +
                    expected_api_version + "\"");
  const auto* status = obj.if_contains("status");
  if (!status || !status->is_object())
    return fail(diag, client_errc::exec_plugin_failed, "exec plugin output: status is missing");
  const auto& st = status->as_object();
  out.token = str(st, "token");
  out.client_certificate_pem = str(st, "clientCertificateData");
  out.client_key_pem = str(st, "clientKeyData");
  if (out.token.empty() && (out.client_certificate_pem.empty() || out.client_key_pem.empty()))
    return fail(diag, client_errc::exec_plugin_failed,
                "exec plugin output: status has neither token nor clientCertificateData+clientKeyData");
  if (const auto exp = str(st, "expirationTimestamp"); !exp.empty()) {
    std::chrono::system_clock::time_point t;
    if (!parse_rfc3339(exp, t))
      return fail(diag, client_errc::exec_plugin_failed,
                  "exec plugin output: status.expirationTimestamp \"" + exp + "\" is not RFC 3339");
    out.expiry = t;
  }
  return {};
}

asio::awaitable<error_code> run_exec_plugin(const exec_params& e, const std::string& cluster_server,
                                            exec_credential& out, diagnostics& diag) {
  const std::string who = "exec plugin " + e.command;
  if (e.api_version != "client.authentication.k8s.io/v1" && e.api_version != "client.authentication.k8s.io/v1beta1")
    co_return fail(diag, client_errc::exec_plugin_failed,
                   who + ": unsupported apiVersion \"" + e.api_version +
                       "\" (use client.authentication.k8s.io/v1 or v1beta1)");

  // KUBERNETES_EXEC_INFO tells the plugin what is asked of it.
  boost::json::object spec{{"interactive", false}};
  if (e.provide_cluster_info) spec["cluster"] = boost::json::object{{"server", cluster_server}};
  const std::string info = boost::json::serialize(
      boost::json::object{{"apiVersion", e.api_version}, {"kind", "ExecCredential"}, {"spec", spec}});

  std::vector<std::string> env_strings;
  for (char** p = environ; *p; ++p) {
    if (std::strncmp(*p, "KUBERNETES_EXEC_INFO=", 21) != 0) env_strings.emplace_back(*p);
  }
  for (const auto& [k, v] : e.env) env_strings.push_back(k + "=" + v);
  env_strings.push_back("KUBERNETES_EXEC_INFO=" + info);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_strings{e.command};
  argv_strings.insert(argv_strings.end(), e.args.begin(), e.args.end());
  std::vector<char*> argv;
  for (auto& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);

  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) co_return fail(diag, client_errc::exec_plugin_failed, who + ": pipe failed");
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    close(out_pipe[0]);
    close(out_pipe[1]);
    co_return fail(diag, client_errc::exec_plugin_failed, who + ": pipe failed");
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, e.command.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(out_pipe[1]);
  close(err_pipe[1]);

  auto ex = co_await asio::this_coro::executor;
  asio::posix::stream_descriptor out_fd(ex, out_pipe[0]), err_fd(ex, err_pipe[0]);
  if (rc != 0) {
    std::string msg = who + ": cannot run it: " + std::strerror(rc);
    if (!e.install_hint.empty()) msg += "\n" + e.install_hint;
    co_return fail(diag, client_errc::exec_plugin_failed, msg);
  }

  std::string stdout_data, stderr_data;
  auto read_all = [](asio::posix::stream_descriptor& fd, std::string& into) -> asio::awaitable<void> {
    auto [ec, n] =
        co_await asio::async_read(fd, asio::dynamic_buffer(into, 1 << 20), asio::as_tuple(asio::use_awaitable));
    (void)ec;  // eof ends the read; output beyond 1 MiB is cut
    (void)n;
  };
  asio::steady_timer timer(ex, e.timeout);
  auto outcome = co_await ((read_all(out_fd, stdout_data) && read_all(err_fd, stderr_data)) ||
                           timer.async_wait(asio::as_tuple(asio::use_awaitable)));
  const bool timed_out = outcome.index() == 1;
  if (timed_out) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}

  // The plugin's stderr helps the user; it is its own output, not ours to
  // leak, but cap it.
  const std::string err_text = trim(stderr_data.substr(0, 4096));
  if (timed_out)
    co_return fail(diag, client_errc::exec_plugin_failed,
                   who + ": timed out after " + std::to_string(e.timeout.count()) + " ms" +
                       (err_text.empty() ? "" : "; stderr: " + err_text));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string msg = who + ": " +
                      (WIFEXITED(status) ? "exited with status " + std::to_string(WEXITSTATUS(status))
                                         : "killed by signal " + std::to_string(WTERMSIG(status)));
    if (!err_text.empty()) msg += "; stderr: " + err_text;
    co_return fail(diag, client_errc::exec_plugin_failed, msg);
  }
  if (auto ec = parse_exec_credential(stdout_data, e.api_version, out, diag)) {
    diag.set_client_message(who + ": " + diag.client_message());
    co_return ec;
  }
  co_return error_code{};
}

std::string basic_authorization(std::string_view user, std::string_view password) {
  std::string plain;
  plain.append(user).append(":").append(password);
  std::string enc(boost::beast::detail::base64::encoded_size(plain.size()), '\0');
  enc.resize(boost::beast::detail::base64::encode(enc.data(), plain.data(), plain.size()));
  return "Basic " + enc;
}

std::unique_ptr<authenticator> make_authenticator(const transport_params& s, asio::any_io_executor) {
  if (!s.token.empty()) return std::make_unique<bearer_auth>(s.token);
  if (!s.token_file.empty()) return std::make_unique<token_file_auth>(s.token_file, s.token_file_refresh);
  if (s.has_exec) return std::make_unique<exec_auth>(s.exec, s.server);
  if (!s.username.empty() || !s.password.empty()) return std::make_unique<basic_auth>(s.username, s.password);
  return nullptr;
}

}  // namespace kube::detail
