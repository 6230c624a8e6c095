// kube-port-forward: `kubectl port-forward POD [LOCAL:]REMOTE` with
// kube::port_forwarder.
//
//   kube-port-forward [-n NAMESPACE] [--address ADDR] [--kubeconfig FILE] POD [LOCAL:]REMOTE
//
// Checks that the pod is Running (as kubectl does), listens on ADDR:LOCAL
// (127.0.0.1; LOCAL omitted or empty: a free port, LOCAL alone: the same
// as REMOTE), prints "Forwarding from ADDR:LOCAL -> REMOTE" like kubectl,
// and forwards every connection to the pod's port over its own WebSocket
// through the apiserver until SIGINT/SIGTERM (exit status 0). A connection
// that cannot be forwarded is closed and logged; the others go on. One
// port pair per run.
#include <kube/k8s/core/v1/pod.hpp>
#include <kube/config/client_config.hpp>
#include <kube/exception.hpp>
#include <kube/streams/port_forward.hpp>
#include <kube/typed/api.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <charconv>
#include <iostream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace asio = boost::asio;
using k8s::core::v1::Pod;

namespace {

constexpr std::string_view usage =
    "usage: kube-port-forward [-n NAMESPACE] [--address ADDR] [--kubeconfig FILE] POD [LOCAL:]REMOTE\n";

struct options {
  std::string pod, namespace_name, kubeconfig;
  kube::port_forward_params listen;
  std::uint16_t remote = 0;
};

std::uint16_t port_of(std::string_view s, std::string_view what) {
  unsigned v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end != s.data() + s.size() || v > 65535) {
    throw std::invalid_argument(std::string(what) + " port \"" + std::string(s) + "\" is not a number from 0 to 65535");
  }
  return static_cast<std::uint16_t>(v);
}

options parse(int argc, char** argv) {
  options o;
  std::string ports;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(std::string(a) + " needs a value");
      return argv[++i];
    };
    if (a == "-n" || a == "--namespace") {
      o.namespace_name = value();
    } else if (a == "--address") {
      o.listen.address = value();
    } else if (a == "--kubeconfig") {
      o.kubeconfig = value();
    } else if (!a.empty() && a[0] == '-') {
      throw std::invalid_argument("unknown flag " + std::string(a));
    } else if (o.pod.empty()) {
      o.pod = std::string(a.starts_with("pod/") ? a.substr(4) : a);
    } else if (ports.empty()) {
      ports = a;
    } else {
      throw std::invalid_argument("one port pair per run, got a second: " + std::string(a));
    }
  }
  if (o.pod.empty() || ports.empty()) throw std::invalid_argument("POD and [LOCAL:]REMOTE are required");
  const auto colon = ports.find(':');
  if (colon == std::string::npos) {  // "8080": the same port on both sides, as kubectl
    o.remote = port_of(ports, "remote");
    o.listen.local_port = o.remote;
  } else {
    o.remote = port_of(ports.substr(colon + 1), "remote");
    o.listen.local_port = colon == 0 ? 0 : port_of(ports.substr(0, colon), "local");
  }
  if (o.remote == 0) throw std::invalid_argument("the remote port must be above 0");
  return o;
}

asio::awaitable<void> run(const options& o, kube::client c, std::string ns) {
  kube::api<Pod> pods(c, ns);
  const auto pod = co_await pods.async_get(o.pod);  // a missing pod throws here, with the server's message
  const std::string phase = pod.status && pod.status->phase ? *pod.status->phase : std::string();
  if (phase != "Running") {
    throw std::runtime_error("unable to forward port because pod " + o.pod + " is not running (phase " +
                             (phase.empty() ? "unknown" : phase) + ")");
  }
  kube::port_forwarder fwd(c, ns, o.pod, o.remote, o.listen);
  std::cout << "Forwarding from " << o.listen.address << ":" << fwd.local_port() << " -> " << o.remote << std::endl;

  // SIGINT/SIGTERM: cancelling async_run closes every forwarded connection.
  auto ex = co_await asio::this_coro::executor;
  asio::signal_set signals(ex, SIGINT, SIGTERM);
  asio::cancellation_signal stop;
  signals.async_wait([&stop](boost::system::error_code ec, int) {
    if (!ec) stop.emit(asio::cancellation_type::terminal);
  });
  auto [ec] = co_await fwd.async_run(asio::bind_cancellation_slot(stop.slot(), asio::as_tuple(asio::use_awaitable)));
  signals.cancel();
  if (ec && ec != asio::error::operation_aborted) throw boost::system::system_error(ec, "port-forward");
  const auto st = fwd.stats();
  std::cerr << "kube-port-forward: " << st.accepted << " connection(s) forwarded, " << st.failed << " failed\n";
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  try {
    o = parse(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "kube-port-forward: " << e.what() << "\n" << usage;
    return 2;
  }
  try {
    kube::load_default_params lp;
    lp.kubeconfig.explicit_path = o.kubeconfig;
    auto config = kube::client_config::load_default(lp);
    const std::string ns = o.namespace_name.empty() ? config.namespace_name : o.namespace_name;
    asio::io_context io;
    kube::client c(io.get_executor(), config);
    std::exception_ptr failure;
    asio::co_spawn(io, run(o, c, ns), [&](std::exception_ptr e) { failure = e; });
    io.run();
    if (failure) std::rethrow_exception(failure);
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "kube-port-forward: " << e.what() << "\n";
    return 1;
  }
}
