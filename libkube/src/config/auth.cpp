#include "codec/parse_json.hpp"
#include "config/auth.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/detail/base64.hpp>
#include <boost/json.hpp>

#include <array>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <poll.h>
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
// has expired, or the server rejected it (401). Requests that need a
// credential while the plugin runs wait for that run and share its outcome
// (client-go holds a mutex around the run for the same reason): however many
// requests start at once, the plugin runs once. The run is a coroutine of
// its own, not part of the request that started it: a request cancelled
// while it waits (a `||` timeout, a stopped informer) leaves the run going,
// its child reaped and its credential cached for the next request.
// Everything here runs on the client's strand.
class exec_auth final : public authenticator {
public:
  exec_auth(exec_params e, std::string server, asio::any_io_executor ex,
            std::shared_ptr<metrics::client_metrics> metrics)
      : exec_(std::move(e)),
        server_(std::move(server)),
        executor_(std::move(ex)),
        metrics_(std::move(metrics)) {}

  asio::awaitable<error_code> authorization(std::string& out, diagnostics& diag) override {
    const auto usable = [&] {
      return st_->cached && !(st_->cached->expiry && std::chrono::system_clock::now() >= *st_->cached->expiry);
    };
    if (!usable()) {
      // Wait for the run; it cancels the timer when it ends. A run that
      // fails at once may have ended before start_run returns.
      const auto done = st_->running ? st_->running : start_run();
      if (st_->running == done) co_await done->async_wait(asio::as_tuple(asio::use_awaitable));
      if (st_->running == done) co_return error_code(asio::error::operation_aborted);  // this request was cancelled
      // The run's outcome; a credential that has already expired is still
      // used by the requests that waited for its run (the next one runs the
      // plugin again).
      if (st_->last_ec || !st_->cached) {
        diag = st_->last_diag;
        co_return st_->last_ec ? st_->last_ec : error_code(client_errc::exec_plugin_failed);
      }
    }
    out = "Bearer " + st_->cached->token;
    co_return error_code{};
  }

  bool invalidate() override {
    st_->cached.reset();
    return true;
  }

private:
  // What a run shares with the requests; the run holds it too, so it may
  // end after the authenticator.
  struct shared_state {
    std::optional<exec_credential> cached;
    std::shared_ptr<asio::steady_timer> running;  // set while the plugin runs
    error_code last_ec;                           // the last run's outcome, for its waiters
    diagnostics last_diag;
  };

  std::shared_ptr<asio::steady_timer> start_run() {
    auto done = std::make_shared<asio::steady_timer>(executor_, asio::steady_timer::time_point::max());
    st_->running = done;
    asio::co_spawn(executor_, run(st_, exec_, server_, metrics_), asio::detached);
    return done;
  }

  static asio::awaitable<void> run(std::shared_ptr<shared_state> st, exec_params exec, std::string server,
                                   std::shared_ptr<metrics::client_metrics> metrics) {
    exec_credential cred;
    diagnostics run_diag;
    exec_run_report report;
    error_code ec;
    try {
      ec = co_await run_exec_plugin(exec, server, cred, run_diag, &report);
    } catch (const std::exception& e) {
      ec = fail(run_diag, client_errc::exec_plugin_failed, "exec plugin " + exec.command + ": " + e.what());
    }
    if (metrics) metrics->on_exec_plugin_call(report.exit_code, report.status);
    if (!ec && cred.token.empty())
      ec = fail(run_diag, client_errc::exec_plugin_failed,
                "exec plugin " + exec.command +
                    ": returned a client certificate instead of a token; only token credentials are supported");
    if (!ec) st->cached = std::move(cred);
    st->last_ec = ec;
    st->last_diag = std::move(run_diag);
    st->running->cancel();
    st->running.reset();
  }

  exec_params exec_;
  std::string server_;
  asio::any_io_executor executor_;
  std::shared_ptr<metrics::client_metrics> metrics_;  // null: none
  std::shared_ptr<shared_state> st_ = std::make_shared<shared_state>();
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

std::vector<std::string> exec_plugin_environment(const exec_params& e, char** inherited, const std::string& info) {
  // The kubeconfig's entries win over inherited ones (client-go appends them
  // and Go's exec keeps the last value of a name; with duplicates in the
  // array, getenv would find the inherited one first).
  const auto replaced = [&](std::string_view entry) {
    const auto name = entry.substr(0, entry.find('='));
    if (name == "KUBERNETES_EXEC_INFO") return true;
    for (const auto& kv : e.env)
      if (kv.first == name) return true;
    return false;
  };
  std::vector<std::string> out;
  for (char** p = inherited; p != nullptr && *p != nullptr; ++p) {
    if (!replaced(*p)) out.emplace_back(*p);
  }
  for (const auto& [k, v] : e.env) out.push_back(k + "=" + v);
  out.push_back("KUBERNETES_EXEC_INFO=" + info);
  return out;
}

namespace {
// The last non-empty line of what a plugin wrote, printable, at most 300
// characters: plugins put the reason for a failure there.
std::string last_line(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.remove_suffix(1);
  if (const auto nl = text.find_last_of('\n'); nl != std::string_view::npos) text.remove_prefix(nl + 1);
  std::string out;
  for (const char c : text.substr(0, 300)) out += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? '?' : c;
  return out;
}
}  // namespace

asio::awaitable<error_code> run_exec_plugin(const exec_params& e, const std::string& cluster_server,
                                            exec_credential& out, diagnostics& diag, exec_run_report* report) {
  exec_run_report ignored_report;
  if (report == nullptr) report = &ignored_report;
  using metrics::exec_plugin_status;
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

  std::vector<std::string> env_strings = exec_plugin_environment(e, environ, info);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_strings{e.command};
  argv_strings.insert(argv_strings.end(), e.args.begin(), e.args.end());
  std::vector<char*> argv;
  for (auto& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);

  // stdin from /dev/null (the plugin is never interactive here), stdout to
  // us, stderr passed through to this process's stderr as client-go leaves
  // it (what the plugin says there is for the user); its last line is kept
  // for the error if the run fails, as that is where plugins say why.
  // Every other descriptor is closed in the child, so the plugin inherits no
  // connection of ours, whatever the rest of the process opened without
  // close-on-exec.
  int out_pipe[2];
  int err_pipe[2];
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
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, e.command.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(out_pipe[1]);
  close(err_pipe[1]);

  // Kills and reaps the child if this coroutine is destroyed before it has
  // (its io_context went away mid-run): no zombie is left behind.
  struct child_reaper {
    pid_t pid;
    bool reaped = false;
    explicit child_reaper(pid_t p)
        : pid(p) {}
    child_reaper(const child_reaper&) = delete;
    child_reaper& operator=(const child_reaper&) = delete;
    ~child_reaper() {
      if (reaped || pid <= 0) return;
      kill(pid, SIGKILL);
      while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {}
    }
  } child(rc == 0 ? pid : -1);

  auto ex = co_await asio::this_coro::executor;
  asio::posix::stream_descriptor out_fd(ex, out_pipe[0]);
  asio::posix::stream_descriptor err_fd(ex, err_pipe[0]);
  if (rc != 0) {
    std::string msg = rc == ENOENT ? "the exec credential plugin \"" + e.command +
                                         "\" of the kubeconfig's user was not found - is it installed, and on PATH?"
                                   : who + ": cannot run it: " + std::strerror(rc);
    if (!e.install_hint.empty()) msg += " " + e.install_hint;
    report->status = exec_plugin_status::plugin_not_found_error;
    co_return fail(diag, client_errc::exec_plugin_failed, msg);
  }

  // What the plugin writes on stderr goes on to ours as it comes; at least
  // the last 4 KiB are kept. Pumped until the plugin is reaped (a
  // descendant may hold its stderr open for longer), then drained of what
  // is left. The I/O thread never blocks on our stderr: a piece (at most
  // 4 KiB, PIPE_BUF) is passed on only when stderr can take it now.
  std::string stderr_tail;
  const auto pass_on = [&](const char* data, std::size_t n) {
    pollfd ready{STDERR_FILENO, POLLOUT, 0};
    if (n > 0 && ::poll(&ready, 1, 0) == 1 && (ready.revents & POLLOUT) != 0) {
      for (std::size_t done = 0; done < n;) {
        const auto w = ::write(STDERR_FILENO, data + done, n - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) break;
        done += static_cast<std::size_t>(w);
      }
    }
    stderr_tail.append(data, n);
    if (stderr_tail.size() > 8192) stderr_tail.erase(0, stderr_tail.size() - 4096);
  };
  std::array<char, 4096> err_buf{};
  const auto pump_stderr = [&]() -> asio::awaitable<void> {
    for (;;) {
      auto [rec, n] = co_await err_fd.async_read_some(asio::buffer(err_buf), asio::as_tuple(asio::use_awaitable));
      pass_on(err_buf.data(), n);
      if (rec) break;
    }
    // At its end: wait for the run to finish, which cancels this wait.
    if ((co_await asio::this_coro::cancellation_state).cancelled() != asio::cancellation_type::none) co_return;
    asio::steady_timer until_done(ex, asio::steady_timer::time_point::max());
    co_await until_done.async_wait(asio::as_tuple(asio::use_awaitable));
  };

  // Read stdout to its end, then wait for the exit, both within the
  // timeout. The exit is polled (WNOHANG) on a timer, never waited for on
  // the I/O thread: a plugin may close its stdout and linger.
  const auto deadline = std::chrono::steady_clock::now() + e.timeout;
  std::string stdout_data;
  bool timed_out = false;
  int status = 0;
  const auto run = [&]() -> asio::awaitable<void> {
    asio::steady_timer timer(ex, deadline);
    const auto read = co_await (
        asio::async_read(out_fd, asio::dynamic_buffer(stdout_data, 1 << 20), asio::as_tuple(asio::use_awaitable)) ||
        timer.async_wait(asio::as_tuple(asio::use_awaitable)));
    timed_out = read.index() == 1;  // else eof, or 1 MiB read (the rest is not wanted)
    error_code ignored;
    out_fd.close(ignored);  // a plugin still writing gets EPIPE and can exit
    for (auto pause = std::chrono::milliseconds(1);;) {
      const pid_t w = waitpid(pid, &status, WNOHANG);
      if (w == pid || (w < 0 && errno != EINTR)) {
        child.reaped = true;
        break;
      }
      if (w == 0 && !timed_out && std::chrono::steady_clock::now() >= deadline) timed_out = true;
      if (w == 0 && timed_out) kill(pid, SIGKILL);  // then reaped on a next turn
      timer.expires_after(pause);
      co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
      pause = std::min(pause * 2, std::chrono::milliseconds(50));
    }
  };
  co_await (run() || pump_stderr());
  {
    error_code nb;
    err_fd.non_blocking(true, nb);
    for (error_code rec; !nb && !rec;) {
      const auto n = err_fd.read_some(asio::buffer(err_buf), rec);
      pass_on(err_buf.data(), n);
    }
  }

  if (WIFEXITED(status)) report->exit_code = WEXITSTATUS(status);
  report->status = exec_plugin_status::plugin_execution_error;
  const auto said = last_line(stderr_tail);
  const std::string said_text = said.empty() ? " (it wrote nothing on stderr)" : "; its stderr ended with: " + said;
  if (timed_out)
    co_return fail(diag, client_errc::exec_plugin_failed,
                   who + ": timed out after " + std::to_string(e.timeout.count()) + " ms" + said_text);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    co_return fail(diag, client_errc::exec_plugin_failed,
                   who + ": " +
                       (WIFEXITED(status) ? "exited with status " + std::to_string(WEXITSTATUS(status))
                                          : "killed by signal " + std::to_string(WTERMSIG(status))) +
                       said_text);
  }
  // As client-go counts it: the run succeeded, whatever its output says.
  report->status = exec_plugin_status::no_error;
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

std::string describe_credentials(const transport_params& s) {
  std::string what;
  if (!s.token.empty())
    what = "the bearer token of the kubeconfig's user";
  else if (!s.token_file.empty())
    what = "the token in " + s.token_file;
  else if (s.has_exec)
    what = "the credentials of the exec plugin " + s.exec.command;
  else if (!s.username.empty() || !s.password.empty())
    what = "basic auth as user \"" + s.username + "\"";
  if (!s.client_cert_pem.empty()) {
    what += what.empty() ? "" : " and ";
    what +=
        "the client certificate " +
        (s.client_cert_file.empty() ? std::string("of the kubeconfig (client-certificate-data)") : s.client_cert_file);
  }
  return what.empty() ? "an anonymous request (the kubeconfig's user has no credentials)" : what;
}

std::unique_ptr<authenticator> make_authenticator(const transport_params& s, asio::any_io_executor ex,
                                                  std::shared_ptr<metrics::client_metrics> metrics) {
  if (!s.token.empty()) return std::make_unique<bearer_auth>(s.token);
  if (!s.token_file.empty()) return std::make_unique<token_file_auth>(s.token_file, s.token_file_refresh);
  if (s.has_exec) return std::make_unique<exec_auth>(s.exec, s.server, ex, std::move(metrics));
  if (!s.username.empty() || !s.password.empty()) return std::make_unique<basic_auth>(s.username, s.password);
  return nullptr;
}

}  // namespace kube::detail
