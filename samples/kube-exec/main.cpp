// kube-exec: `kubectl exec [-i] POD -- COMMAND...` with kube::async_exec (kube/streams/pod_streams.hpp).
//
//   kube-exec [-n NAMESPACE] [-c CONTAINER] [-i] [--kubeconfig FILE] POD -- COMMAND [ARG...]
//
// The command's standard output and error are copied to ours as they
// arrive; with -i our standard input goes to the command until it ends
// (then its stdin is closed). The exit status is the command's (an error
// the server reports, such as a missing pod or container, is printed with
// the server's message and gives 1).
#include <kube/streams/pod_streams.hpp>
#include <kube/k8s/core/v1/pod.hpp>
#include <kube/config/client_config.hpp>
#include <kube/exception.hpp>
#include <kube/typed/api.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <unistd.h>

#include <array>
#include <iostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace asio = boost::asio;
using k8s::core::v1::Pod;

namespace {

struct options {
  std::string pod, namespace_name, container, kubeconfig;
  bool with_stdin = false;
  std::vector<std::string> command;
};

options parse(int argc, char** argv) {
  options o;
  int i = 1;
  for (; i < argc; ++i) {
    const std::string_view a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(std::string(a) + " needs a value");
      return argv[++i];
    };
    if (a == "--") {
      ++i;
      break;
    }
    if (a == "-n" || a == "--namespace") {
      o.namespace_name = value();
    } else if (a == "-c" || a == "--container") {
      o.container = value();
    } else if (a == "-i" || a == "--stdin") {
      o.with_stdin = true;
    } else if (a == "--kubeconfig") {
      o.kubeconfig = value();
    } else if (!a.empty() && a[0] == '-') {
      throw std::invalid_argument("unknown flag " + std::string(a));
    } else if (o.pod.empty()) {
      o.pod = a;
    } else {
      throw std::invalid_argument("unexpected argument " + std::string(a) + " (the command goes after --)");
    }
  }
  for (; i < argc; ++i) o.command.emplace_back(argv[i]);
  if (o.pod.empty() || o.command.empty()) throw std::invalid_argument("POD and a COMMAND after -- are required");
  return o;
}

// Copies one of the command's output streams to a file descriptor of ours.
asio::awaitable<void> copy_out(kube::remote_process::reader from, int fd) {
  asio::posix::stream_descriptor to(co_await asio::this_coro::executor, ::dup(fd));
  std::array<char, 16 * 1024> buf{};
  for (;;) {
    auto [ec, n] = co_await from.async_read_some(asio::buffer(buf), asio::as_tuple(asio::use_awaitable));
    if (ec) co_return;  // eof at the end; a broken stream is reported by async_wait
    co_await asio::async_write(to, asio::buffer(buf.data(), n), asio::use_awaitable);
  }
}

// Copies our standard input to the command's, then closes it.
asio::awaitable<void> copy_in(kube::remote_process p) {
  asio::posix::stream_descriptor from(co_await asio::this_coro::executor, ::dup(STDIN_FILENO));
  std::array<char, 16 * 1024> buf{};
  for (;;) {
    auto [ec, n] = co_await from.async_read_some(asio::buffer(buf), asio::as_tuple(asio::use_awaitable));
    if (ec) break;
    auto [wec, wn] =
        co_await asio::async_write(p.in(), asio::buffer(buf.data(), n), asio::as_tuple(asio::use_awaitable));
    (void)wn;
    if (wec) co_return;
  }
  co_await p.async_close_stdin(asio::as_tuple(asio::use_awaitable));
}

asio::awaitable<int> run(const options& o, kube::client c, std::string ns) {
  kube::api<Pod> pods(c, ns);
  kube::remote_command_params params;
  params.container = o.container;
  params.with_stdin = o.with_stdin;
  auto p = co_await kube::async_exec(pods, o.pod, o.command, params);
  auto ex = co_await asio::this_coro::executor;
  if (o.with_stdin) asio::co_spawn(ex, copy_in(p), asio::detached);
  asio::co_spawn(ex, copy_out(p.err(), STDERR_FILENO), asio::detached);
  co_await copy_out(p.out(), STDOUT_FILENO);
  const auto exit = co_await p.async_wait();
  p.close();
  co_return exit.code;
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  try {
    o = parse(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "kube-exec: " << e.what()
              << "\nusage: kube-exec [-n NAMESPACE] [-c CONTAINER] [-i] [--kubeconfig FILE] POD -- COMMAND [ARG...]\n";
    return 2;
  }
  try {
    kube::load_default_params lp;
    lp.kubeconfig.explicit_path = o.kubeconfig;
    const auto config = kube::client_config::load_default(lp);
    const std::string ns = o.namespace_name.empty() ? config.namespace_name : o.namespace_name;
    asio::io_context io;
    kube::client c(io.get_executor(), config);
    int code = 1;
    std::exception_ptr failure;
    asio::co_spawn(io, run(o, c, ns), [&](std::exception_ptr e, int rc) {
      failure = e;
      code = rc;
      io.stop();  // the copy of stdin may still wait for input
    });
    io.run();
    if (failure) std::rethrow_exception(failure);
    return code;
  } catch (const std::exception& e) {
    std::cerr << "kube-exec: " << e.what() << "\n";
    return 1;
  }
}
