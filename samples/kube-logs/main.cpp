// kube-logs: `kubectl logs [-f] POD` with kube::async_logs (kube/streams/pod_streams.hpp).
//
//   kube-logs [-n NAMESPACE] [-c CONTAINER] [-f] [-p] [--tail N] [--since-time RFC3339]
//             [--since SECONDS] [--timestamps] [--limit-bytes N] [--kubeconfig FILE] POD
//
// The log is copied to standard output with log_stream::async_read_some
// (the stream is an Asio AsyncReadStream), not line by line: kubectl copies
// the response body as it comes, and so does this, so the output is the
// same bytes, a last line without '\n' included, and no line is ever cut
// into log_params::max_line pieces; a line reader (async_read_line) is for
// programs that look at each line. With -f it keeps printing until the
// container ends or SIGINT/SIGTERM (exit status 0). An error the server
// reports (no such pod or container, a bad --since-time) is printed with
// the server's message and gives 1.
#include <kube/streams/pod_streams.hpp>
#include <kube/k8s/core/v1/pod.hpp>
#include <kube/config/client_config.hpp>
#include <kube/exception.hpp>
#include <kube/typed/api.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <unistd.h>

#include <array>
#include <csignal>
#include <iostream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace asio = boost::asio;
using k8s::core::v1::Pod;

namespace {

constexpr const char* usage =
    "usage: kube-logs [-n NAMESPACE] [-c CONTAINER] [-f] [-p] [--tail N] [--since-time RFC3339]\n"
    "                 [--since SECONDS] [--timestamps] [--limit-bytes N] [--kubeconfig FILE] POD\n";

struct options {
  std::string pod, namespace_name, kubeconfig;
  kube::log_params log;
};

long long number(std::string_view flag, const std::string& v) {
  std::size_t used = 0;
  long long n = 0;
  try {
    n = std::stoll(v, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != v.size() || v.empty()) throw std::invalid_argument(std::string(flag) + " needs a number, not " + v);
  return n;
}

options parse(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    std::string inline_value;  // --flag=value
    bool has_inline = false;
    if (a.starts_with("--") && a.find('=') != std::string_view::npos) {
      inline_value = a.substr(a.find('=') + 1);
      a = a.substr(0, a.find('='));
      has_inline = true;
    }
    auto value = [&]() -> std::string {
      if (has_inline) return inline_value;
      if (i + 1 >= argc) throw std::invalid_argument(std::string(a) + " needs a value");
      return argv[++i];
    };
    if (a == "-n" || a == "--namespace") {
      o.namespace_name = value();
    } else if (a == "-c" || a == "--container") {
      o.log.container = value();
    } else if (a == "-f" || a == "--follow") {
      o.log.follow = true;
    } else if (a == "-p" || a == "--previous") {
      o.log.previous = true;
    } else if (a == "--timestamps") {
      o.log.timestamps = true;
    } else if (a == "--tail") {
      // kubectl's --tail=-1 means the whole log.
      if (const auto n = number(a, value()); n >= 0) o.log.tail_lines = n;
    } else if (a == "--since-time") {
      o.log.since_time = value();
    } else if (a == "--since") {
      o.log.since_seconds = number(a, value());
    } else if (a == "--limit-bytes") {
      o.log.limit_bytes = number(a, value());
    } else if (a == "--kubeconfig") {
      o.kubeconfig = value();
    } else if (!a.empty() && a[0] == '-') {
      throw std::invalid_argument("unknown flag " + std::string(a));
    } else if (o.pod.empty()) {
      o.pod = a;
    } else {
      throw std::invalid_argument("unexpected argument " + std::string(a));
    }
  }
  if (o.pod.empty()) throw std::invalid_argument("POD is required");
  return o;
}

asio::awaitable<void> run(const options& o, kube::client c, std::string ns) {
  kube::api<Pod> pods(c, ns);
  auto log = co_await kube::async_logs(pods, o.pod, o.log);  // the server's refusal throws here
  auto ex = co_await asio::this_coro::executor;

  // SIGINT/SIGTERM end a -f: close() completes the pending read.
  asio::signal_set signals(ex, SIGINT, SIGTERM);
  signals.async_wait([log](boost::system::error_code ec, int) mutable {
    if (!ec) log.close();
  });

  asio::posix::stream_descriptor out(ex, ::dup(STDOUT_FILENO));
  std::array<char, 16 * 1024> buf{};
  for (;;) {
    auto [ec, n] = co_await log.async_read_some(asio::buffer(buf), asio::as_tuple(asio::use_awaitable));
    if (ec == asio::error::eof || ec == asio::error::operation_aborted) break;  // the end, or a signal
    if (ec) throw boost::system::system_error(ec, "reading the log");
    co_await asio::async_write(out, asio::buffer(buf.data(), n), asio::use_awaitable);
  }
  signals.cancel();
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  try {
    o = parse(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "kube-logs: " << e.what() << "\n" << usage;
    return 2;
  }
  try {
    kube::load_default_params lp;
    lp.kubeconfig.explicit_path = o.kubeconfig;
    const auto config = kube::client_config::load_default(lp);
    const std::string ns = o.namespace_name.empty() ? config.namespace_name : o.namespace_name;
    asio::io_context io;
    kube::client c(io.get_executor(), config);
    std::exception_ptr failure;
    asio::co_spawn(io, run(o, c, ns), [&](std::exception_ptr e) { failure = e; });
    io.run();
    if (failure) std::rethrow_exception(failure);
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "kube-logs: " << e.what() << "\n";
    return 1;
  }
}
