// kube-shard-replica: one replica of a sharded controller<ConfigMap>, driven
// by sharding_test.sh (several of them run at once against the real cluster).
//
// Each reconcile GETs the ConfigMap from the server and, unless this replica
// already reconciled its current data["gen"], marks it in progress
// (annotation test.kube-cpp.dev/in-progress = this replica), waits 30 ms,
// and clears the mark while recording reconciled-by / reconciled-gen. Both
// writes are conditional on the resourceVersion read, so a second replica
// working on the same key at the same time shows as a conflict or as a mark
// found set. It prints, one line each (flushed):
//   READY                               the informers synced
//   OVERLAP <key> <marker>              found another's (or a dead replica's) mark
//   OVERLAP-CONFLICT <key> mark|clear   a conditional write lost to another writer
//   SKIP <key>                          already reconciled by this replica
//   RECONCILED <key> <self> gen=<gen>
//   ERROR <key> <what>: <message>       any other failure (retried)
//   CACHE <n> RSS_KB <rss> HWM_KB <hwm> on SIGUSR1: the objects in the primary
//                                       informer's cache, VmRSS and VmHWM
//                                       (/proc/self/status)
// The sharding coordinator's log (joins, views, removals) goes to stderr as
//   LOG <epoch seconds> <level> <line>
//
// --label-mode: sharding_params::label_objects, and the factory selects
// this replica's objects (shard_label_selector): its cache holds its share.
// --unsharded: no sharding (no --ring): one plain controller over every
// ConfigMap of the namespace (the baseline of test/bench/sharding/run.sh).
//
// usage: kube-shard-replica --namespace NS --identity ID (--ring RING [--label-mode] | --unsharded)
//                           [--lease-seconds N]
#include <kube/typed/api.hpp>
#include <kube/k8s/core/v1/config_map.hpp>
#include <kube/config/client_config.hpp>
#include <kube/controller/controller.hpp>
#include <kube/error.hpp>
#include <kube/informer/informer_factory.hpp>
#include <kube/rest/client.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <csignal>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace asio = boost::asio;
namespace kc = kube::controller;
namespace ki = kube::informer;
using ConfigMap = k8s::core::v1::ConfigMap;

namespace {

constexpr std::string_view usage =
    "usage: kube-shard-replica --namespace NS --identity ID (--ring RING [--label-mode] | --unsharded)\n"
    "                          [--lease-seconds N]\n";

constexpr std::string_view marker_annotation = "test.kube-cpp.dev/in-progress";
constexpr std::string_view by_annotation = "test.kube-cpp.dev/reconciled-by";
constexpr std::string_view gen_annotation = "test.kube-cpp.dev/reconciled-gen";

struct options {
  std::string namespace_name, identity, ring;
  int lease_seconds = 4;
  bool label_mode = false;
  bool unsharded = false;
};

options parse(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(std::string(a) + " needs a value");
      return argv[++i];
    };
    if (a == "--namespace" || a == "-n")
      o.namespace_name = value();
    else if (a == "--identity")
      o.identity = value();
    else if (a == "--ring")
      o.ring = value();
    else if (a == "--label-mode")
      o.label_mode = true;
    else if (a == "--unsharded")
      o.unsharded = true;
    else if (a == "--lease-seconds") {
      const auto v = value();
      o.lease_seconds = std::stoi(v);
      if (o.lease_seconds < 2 || o.lease_seconds > 3600)
        throw std::invalid_argument("--lease-seconds must be 2..3600, got " + v);
    } else
      throw std::invalid_argument("unknown argument " + std::string(a));
  }
  if (o.namespace_name.empty() || o.identity.empty())
    throw std::invalid_argument("--namespace and --identity are required");
  if (o.unsharded && (o.label_mode || !o.ring.empty()))
    throw std::invalid_argument("--unsharded takes neither --ring nor --label-mode");
  if (!o.unsharded && o.ring.empty()) throw std::invalid_argument("--ring (or --unsharded) is required");
  return o;
}

void say(const std::string& line) { std::cout << line << std::endl; }  // endl: flushed

// A "Vm...:   123 kB" field of /proc/self/status, in kB (-1: not found).
long proc_status_kb(std::string_view field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.size() > field.size() && line.compare(0, field.size(), field) == 0 && line[field.size()] == ':') {
      return std::stol(line.substr(field.size() + 1));
    }
  }
  return -1;
}

std::string value_or_empty(const std::optional<kube::string_map<std::string>>& m, std::string_view key) {
  if (!m) return {};
  const auto it = m->find(key);
  return it == m->end() ? std::string() : it->second;
}

void set_annotation(ConfigMap& cm, std::string_view key, const std::string& value) {
  auto& a = cm.metadata.annotations;
  if (!a) a.emplace();
  (*a)[std::string(key)] = value;
}

class replica {
public:
  replica(const kube::client& c, const std::string& ns, std::string self)
      : cms_(c, ns),
        self_(std::move(self)) {}

  asio::awaitable<kc::reconcile_result> reconcile(kc::reconcile_request<ConfigMap> req) {
    if (req.gone()) co_return kc::reconcile_result::done();
    const std::string key = req.key;
    const std::string name = req.name;

    auto get_op = cms_.async_get(name, asio::as_tuple(asio::use_awaitable));
    auto [gec, cm] = co_await std::move(get_op);
    if (gec == kube::api_errc::not_found) co_return kc::reconcile_result::done();
    if (gec) co_return error(key, "get", gec);

    const std::string gen = value_or_empty(cm.data, "gen");
    const std::string marker = value_or_empty(cm.metadata.annotations, marker_annotation);
    const std::string by = value_or_empty(cm.metadata.annotations, by_annotation);
    const std::string rgen = value_or_empty(cm.metadata.annotations, gen_annotation);
    if (!marker.empty()) {
      say("OVERLAP " + key + " " + marker);  // overwritten below
    } else if (by == self_ && rgen == gen) {
      say("SKIP " + key);
      co_return kc::reconcile_result::done();
    }

    // Mark, conditional on the resourceVersion just read (cm carries it).
    set_annotation(cm, marker_annotation, self_);
    auto mark_op = cms_.async_replace(cm, asio::as_tuple(asio::use_awaitable));
    auto [mec, marked] = co_await std::move(mark_op);
    if (mec == kube::api_errc::conflict) {
      say("OVERLAP-CONFLICT " + key + " mark");
      co_return kc::reconcile_result::failed(mec, "conflict writing the mark");
    }
    if (mec) co_return error(key, "mark", mec);

    asio::steady_timer t(co_await asio::this_coro::executor);
    t.expires_after(std::chrono::milliseconds(30));
    co_await t.async_wait(asio::use_awaitable);

    // Clear, conditional on the resourceVersion of the mark's write.
    set_annotation(marked, marker_annotation, "");
    set_annotation(marked, by_annotation, self_);
    set_annotation(marked, gen_annotation, gen);
    auto clear_op = cms_.async_replace(marked, asio::as_tuple(asio::use_awaitable));
    auto [cec, cleared] = co_await std::move(clear_op);
    (void)cleared;
    if (cec == kube::api_errc::conflict) {
      say("OVERLAP-CONFLICT " + key + " clear");
      co_return kc::reconcile_result::failed(cec, "conflict clearing the mark");
    }
    if (cec) co_return error(key, "clear", cec);
    say("RECONCILED " + key + " " + self_ + " gen=" + gen);
    co_return kc::reconcile_result::done();
  }

private:
  static kc::reconcile_result error(const std::string& key, const std::string& what, const kube::error_code& ec) {
    say("ERROR " + key + " " + what + ": " + ec.message());
    return kc::reconcile_result::failed(ec, what + ": " + ec.message());
  }

  kube::api<ConfigMap> cms_;
  std::string self_;
};

}  // namespace

int main(int argc, char** argv) {
  options o;
  try {
    o = parse(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "kube-shard-replica: " << e.what() << "\n" << usage;
    return 2;
  }
  try {
    auto config = kube::client_config::load_default();
    // No client-side throttling: at the default 5 QPS (three requests a
    // reconcile) 1,000 keys would take minutes.
    config.qps = 0;
    asio::io_context io;
    kube::client c(io.get_executor(), config);

    kc::sharding_params sp;
    sp.ring = o.ring;
    sp.lease_namespace = o.namespace_name;
    sp.identity = o.identity;
    sp.lease_duration = std::chrono::seconds(o.lease_seconds);
    sp.renew_deadline = std::chrono::milliseconds(o.lease_seconds * 750);
    sp.retry_period = std::chrono::seconds(1);
    // Joins, views, removals: to stderr, with the wall clock (epoch seconds)
    // for the script's timings.
    sp.log.level = kube::log_level::info;
    sp.log.sink = [](kube::log_level l, std::string_view line) {
      const auto ms =
          std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
              .count();
      std::cerr << "LOG " << ms / 1000 << "." << std::setw(3) << std::setfill('0') << ms % 1000 << " "
                << kube::to_string(l) << " " << line << std::endl;
    };
    sp.label_objects = o.label_mode;

    ki::informer_factory_params fo;
    fo.namespace_name = o.namespace_name;
    fo.strip_managed_fields = true;
    // Label mode: this replica's informers hold only the objects labelled for it.
    if (o.label_mode) fo.label_selector = kc::shard_label_selector(sp);
    ki::informer_factory factory(c, fo);

    kc::controller_params co;
    co.name = "shard-replica";
    co.workers = 4;
    if (!o.unsharded) co.sharding = sp;
    kc::controller<ConfigMap> ctrl(factory, co);
    replica logic(c, o.namespace_name, o.identity);

    asio::cancellation_signal stop_ctrl, stop_informers;
    factory.async_run(asio::bind_cancellation_slot(stop_informers.slot(), [](kube::error_code) {}));
    factory.async_wait_for_sync([](kube::error_code ec) {
      if (!ec) say("READY");
    });
    asio::signal_set signals(io, SIGINT, SIGTERM);
    signals.async_wait([&](boost::system::error_code ec, int) {
      if (ec) return;
      std::cerr << "kube-shard-replica " << o.identity << ": stopping\n";
      stop_ctrl.emit(asio::cancellation_type::terminal);
    });
    // SIGUSR1: what the cache holds and what the process uses, one line.
    asio::signal_set report(io, SIGUSR1);
    std::function<void()> await_report = [&] {
      report.async_wait([&](boost::system::error_code ec, int) {
        if (ec) return;
        say("CACHE " + std::to_string(ctrl.primary()->cache()->size()) + " RSS_KB " +
            std::to_string(proc_status_kb("VmRSS")) + " HWM_KB " + std::to_string(proc_status_kb("VmHWM")));
        await_report();
      });
    };
    await_report();
    kube::error_code result;
    ctrl.async_run([&](kc::reconcile_request<ConfigMap> req) { return logic.reconcile(std::move(req)); },
                   asio::bind_cancellation_slot(stop_ctrl.slot(), [&](kube::error_code ec) {
                     // The workers have drained and the Lease is released: stop the informers.
                     result = ec;
                     signals.cancel();
                     report.cancel();
                     stop_informers.emit(asio::cancellation_type::terminal);
                   }));
    io.run();
    if (result && result != asio::error::operation_aborted) {
      std::cerr << "kube-shard-replica " << o.identity << ": " << result.message() << "\n";
      return 1;
    }
    const auto s = ctrl.stats();
    std::cerr << "kube-shard-replica " << o.identity << ": stopped after " << s.reconciles << " reconciles ("
              << s.failed << " failed)\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "kube-shard-replica " << o.identity << ": " << e.what() << "\n";
    return 1;
  }
}
