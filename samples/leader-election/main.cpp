// leader-election: one replica of a "controller" that only works while it
// holds a Lease. Start two (or more) with different --identity; exactly one
// prints "leading"; kill it and another takes over. SIGTERM/SIGINT stop a
// replica cleanly: it releases the Lease so the next one starts at once.
// Every leadership change is also recorded as an Event on the Lease (as
// client-go's leader election does), through kube::event_recorder.
//
// usage: leader-election --identity ID [--namespace NS] [--lease NAME]
//                        [--lease-duration S] [--renew-deadline S] [--retry-period MS]
//                        [--kubeconfig FILE] [--context NAME]
#include <kube/rest/client.hpp>
#include <kube/config/client_config.hpp>
#include <kube/tools/event_recorder.hpp>
#include <kube/tools/leader_election.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <csignal>
#include <iostream>
#include <string>

namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {

struct options {
  std::string identity, namespace_name = "default", lease = "leader-election-sample", kubeconfig, context;
  long long lease_s = 15, renew_s = 10, retry_ms = 2000;
};

options parse(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(std::string(a) + " needs a value");
      return argv[++i];
    };
    if (a == "--identity")
      o.identity = value();
    else if (a == "-n" || a == "--namespace")
      o.namespace_name = value();
    else if (a == "--lease")
      o.lease = value();
    else if (a == "--lease-duration")
      o.lease_s = std::stoll(value());
    else if (a == "--renew-deadline")
      o.renew_s = std::stoll(value());
    else if (a == "--retry-period")
      o.retry_ms = std::stoll(value());
    else if (a == "--kubeconfig")
      o.kubeconfig = value();
    else if (a == "--context")
      o.context = value();
    else
      throw std::invalid_argument("unknown argument " + std::string(a));
  }
  if (o.identity.empty()) throw std::invalid_argument("--identity is required");
  return o;
}

void say(const std::string& id, const std::string& line) { std::cout << "[" << id << "] " << line << std::endl; }

}  // namespace

int main(int argc, char** argv) {
  options o;
  try {
    o = parse(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "leader-election: " << e.what()
              << "\nusage: leader-election --identity ID [--namespace NS] [--lease NAME] [--lease-duration S] "
                 "[--renew-deadline S] [--retry-period MS] [--kubeconfig FILE] [--context NAME]\n";
    return 2;
  }
  try {
    kube::load_default_params lp;
    lp.kubeconfig.explicit_path = o.kubeconfig;
    lp.overrides.context = o.context;
    const auto config = kube::client_config::load_default(lp);
    asio::io_context io;
    kube::client c(io.get_executor(), config);

    // [events-setup]
    kube::event_recorder_params ro;
    ro.component = "leader-election-sample";
    ro.host = o.identity;
    kube::event_recorder recorder(c, ro);
    asio::cancellation_signal stop_recorder;
    recorder.async_run(asio::bind_cancellation_slot(stop_recorder.slot(), [](kube::error_code) {}));
    // [events-setup-end]
    const kube::object_reference lease_ref{"coordination.k8s.io/v1", "Lease", o.namespace_name, o.lease, ""};

    // [leader-config]
    kube::leader_elector_params cfg;
    cfg.lease_namespace = o.namespace_name;
    cfg.lease_name = o.lease;
    cfg.identity = o.identity;  // unique per replica, e.g. the pod name
    cfg.lease_duration = std::chrono::seconds(o.lease_s);
    cfg.renew_deadline = std::chrono::seconds(o.renew_s);
    cfg.retry_period = std::chrono::milliseconds(o.retry_ms);
    cfg.on_started_leading = [&]() -> asio::awaitable<void> {
      say(o.identity, "leading");
      recorder.record(lease_ref, kube::event_type::normal, "LeaderElection", o.identity + " became leader");
      // The controller's work. It is cancelled (the timer throws
      // operation_aborted) when leadership is lost or the elector stops.
      asio::steady_timer tick(co_await asio::this_coro::executor);
      for (int n = 1;; ++n) {
        tick.expires_after(1s);
        co_await tick.async_wait(asio::use_awaitable);
        say(o.identity, "working " + std::to_string(n));
      }
    };
    cfg.on_stopped_leading = [&]() -> asio::awaitable<void> {
      say(o.identity, "stopped leading");
      co_return;
    };
    cfg.on_new_leader = [&](std::string who) -> asio::awaitable<void> {
      if (who != o.identity) say(o.identity, "new leader: " + who);
      co_return;
    };
    kube::leader_elector elector(c, cfg);  // throws kube::error naming a bad field
    // [leader-config-end]

    // [leader-run]
    asio::cancellation_signal stop;
    asio::signal_set signals(io, SIGINT, SIGTERM);
    signals.async_wait([&](boost::system::error_code ec, int) {
      if (!ec) stop.emit(asio::cancellation_type::terminal);  // release the Lease and return
    });
    kube::error_code result;
    elector.async_run(asio::bind_cancellation_slot(stop.slot(), [&](kube::error_code ec) {
      result = ec;
      signals.cancel();
      stop_recorder.emit(asio::cancellation_type::terminal);
    }));
    io.run();
    // [leader-run-end]
    if (result && result != asio::error::operation_aborted) {
      std::cerr << "leader-election: " << result.message() << "\n";
      return 1;
    }
    say(o.identity, "exiting");
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "leader-election: " << e.what() << "\n";
    return 1;
  }
}
