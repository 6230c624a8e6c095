// sample-controller: the classic k8s.io/sample-controller with kube.
//
// Each Foo (samplecontroller.k8s.io/v1alpha1, crd.yaml) gets a Deployment
// named spec.deploymentName with spec.replicas replicas, owned by the Foo
// (ownerReference controller=true). The controller:
//   - creates the Deployment when it is missing (also after someone deletes it),
//   - scales it when the Foo's replicas change,
//   - refuses a Deployment of that name it does not own (Warning event
//     ErrResourceExists, retried with backoff),
//   - copies the Deployment's status.replicas / availableReplicas into the
//     Foo's status, with status.observedGeneration = the Foo's generation,
//   - records a Normal "Synced" event on the Foo after each successful sync,
//   - keeps a finalizer on the Foo and, when the Foo is deleted, deletes
//     the Deployment (cleanup) before letting the Foo go.
// Every reconcile is logged on stdout. Prometheus metrics (client requests,
// informers, reconciles, the workqueue; docs/guides/metrics.md) are served
// at http://ADDRESS:PORT/metrics (--metrics-bind-address, default
// 127.0.0.1:8080; port 0 picks a free one, "0" turns the server off).
//
// Sharded (docs/guides/sharding.md): run several replicas with --shard
// IDENTITY (unique per replica, e.g. the pod name); each reconciles only the
// Foos the ring of live replicas assigns to it, holding a Lease
// "sample-controller-shard-IDENTITY" in NAMESPACE as its membership.
//
// usage: sample-controller [-n NAMESPACE] [--kubeconfig FILE] [--context NAME] [--workers N]
//                          [--metrics-bind-address ADDRESS:PORT]
//                          [--shard IDENTITY [--shard-lease-seconds N] [--shard-labels]]
// --shard-labels: label mode, each replica caches only its own Foos and
// Deployments (labelled shard.kube-cpp.dev/sample-controller=IDENTITY).
#include <kube/typed/api.hpp>
#include <kube/k8s/apps/v1/deployment.hpp>
#include <kube/rest/client.hpp>
#include <kube/config/client_config.hpp>
#include <kube/controller/controller.hpp>
#include <kube/tools/finalizer.hpp>
#include <kube/tools/event_recorder.hpp>
#include <kube/exception.hpp>
#include <kube/informer/informer_factory.hpp>
#include <kube/prometheus/metrics.hpp>
#include <kube/prometheus/metrics_server.hpp>

#include <samplecontroller/foo.hpp>  // generated from crd.yaml

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include <chrono>
#include <csignal>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

namespace asio = boost::asio;
namespace kc = kube::controller;
namespace ki = kube::informer;
using Foo = samplecontroller::v1alpha1::Foo;
using Deployment = k8s::apps::v1::Deployment;

namespace {

constexpr std::string_view finalizer_name = "samplecontroller.k8s.io/cleanup";

constexpr std::string_view usage =
    "usage: sample-controller [-n NAMESPACE] [--kubeconfig FILE] [--context NAME] [--workers N]\n"
    "                         [--metrics-bind-address ADDRESS:PORT]\n"
    "                         [--shard IDENTITY [--shard-lease-seconds N] [--shard-labels]]\n";

struct options {
  std::string namespace_name = "default", kubeconfig, context;
  unsigned workers = 2;
  std::string metrics_address = "127.0.0.1:8080";  // "0": no metrics server
  std::string shard;                               // this replica's identity; empty: not sharded
  int shard_lease_seconds = 15;
  bool shard_labels = false;
};

std::string replica;  // " shard-IDENTITY" in the log prefix when sharded

// "ADDRESS:PORT" (an IPv6 address in brackets) for the metrics server.
kube::prometheus::metrics_server_params metrics_endpoint(const std::string& s) {
  const auto colon = s.rfind(':');
  if (colon == std::string::npos || colon + 1 == s.size()) {
    throw std::invalid_argument("--metrics-bind-address wants ADDRESS:PORT, got \"" + s + "\"");
  }
  kube::prometheus::metrics_server_params p;
  p.address = s.substr(0, colon);
  if (p.address.size() >= 2 && p.address.front() == '[' && p.address.back() == ']') {
    p.address = p.address.substr(1, p.address.size() - 2);
  }
  const auto digits = s.substr(colon + 1);
  if (digits.size() > 5 || digits.find_first_not_of("0123456789") != std::string::npos || std::stoi(digits) > 65535) {
    throw std::invalid_argument("--metrics-bind-address: \"" + digits + "\" is not a port (0..65535)");
  }
  p.port = static_cast<unsigned short>(std::stoi(digits));
  return p;
}

options parse(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(std::string(a) + " needs a value");
      return argv[++i];
    };
    if (a == "-n" || a == "--namespace")
      o.namespace_name = value();
    else if (a == "--kubeconfig")
      o.kubeconfig = value();
    else if (a == "--context")
      o.context = value();
    else if (a == "--workers") {
      const auto v = value();
      const int n = std::stoi(v);
      if (n < 1 || n > 64) throw std::invalid_argument("--workers must be 1..64, got " + v);
      o.workers = static_cast<unsigned>(n);
    } else if (a == "--metrics-bind-address") {
      o.metrics_address = value();
      if (o.metrics_address != "0") (void)metrics_endpoint(o.metrics_address);  // refused here, with the usage
    } else if (a == "--shard") {
      o.shard = value();
    } else if (a == "--shard-labels") {
      o.shard_labels = true;
    } else if (a == "--shard-lease-seconds") {
      const auto v = value();
      const int n = std::stoi(v);
      if (n < 3 || n > 300) throw std::invalid_argument("--shard-lease-seconds must be 3..300, got " + v);
      o.shard_lease_seconds = n;
    } else
      throw std::invalid_argument("unknown argument " + std::string(a));
  }
  if (o.shard_labels && o.shard.empty()) throw std::invalid_argument("--shard-labels needs --shard IDENTITY");
  return o;
}

void say(const std::string& line) { std::cout << "[sample-controller" << replica << "] " << line << std::endl; }

// [owned]
bool owned_by(const Deployment& d, const Foo& foo) {
  if (!d.metadata.owner_references) return false;
  for (const auto& ref : *d.metadata.owner_references) {
    if (ref.controller.value_or(false)) return ref.uid == foo.uid();
  }
  return false;
}

// `shard_label`: a sharded controller's label (label mode), so that the new
// Deployment reaches this replica's cache at once.
Deployment new_deployment(const Foo& foo, const std::optional<std::pair<std::string, std::string>>& shard_label = {}) {
  const kube::string_map<std::string> labels{{"app", "nginx"}, {"controller", std::string(foo.name())}};
  Deployment d;
  d.metadata.name = foo.spec->deployment_name;
  d.metadata.namespace_ = std::string(foo.namespace_());
  d.metadata.labels = labels;
  if (shard_label) (*d.metadata.labels)[shard_label->first] = shard_label->second;
  k8s::meta::v1::OwnerReference ref;  // the Foo controls this Deployment
  ref.api_version = std::string(kube::resource_traits<Foo>::api_version);
  ref.kind = std::string(kube::resource_traits<Foo>::kind);
  ref.name = std::string(foo.name());
  ref.uid = std::string(foo.uid());
  ref.controller = true;
  ref.block_owner_deletion = true;
  d.metadata.owner_references.emplace().push_back(ref);
  auto& spec = d.spec.emplace();
  spec.replicas = foo.spec->replicas.value_or(1);
  spec.selector.match_labels = labels;
  spec.template_.metadata.emplace().labels = labels;
  auto& c = spec.template_.spec.emplace().containers.emplace_back();
  c.name = "nginx";
  c.image = "nginx:latest";
  return d;
}
// [owned-end]

class foo_controller {
public:
  foo_controller(const kube::client& c, const std::string& ns, kube::event_recorder& recorder,
                 ki::lister<Deployment> deployments,
                 std::optional<std::pair<std::string, std::string>> shard_label = std::nullopt)
      : foos_(c, ns),
        deployments_api_(c, ns),
        recorder_(recorder),
        deployments_(std::move(deployments)),
        shard_label_(std::move(shard_label)) {}

  // [reconcile]
  asio::awaitable<kc::reconcile_result> reconcile(kc::reconcile_request<Foo> req) {
    if (req.gone()) {
      say("reconcile " + req.key + ": Foo is gone, nothing to do");
      co_return kc::reconcile_result::done();
    }
    const Foo& foo = *req.object;

    // Finalizer: added while the Foo lives; on deletion delete the Deployment, then let the Foo go.
    const std::function<asio::awaitable<void>(const Foo&)> cleanup = [this](const Foo& f) {
      return delete_deployment(f);
    };
    const auto fin = co_await kube::finalizers::handle(foos_, req.object, finalizer_name, cleanup);
    if (fin == kube::finalizers::action::finalized) {
      say("reconcile " + req.key + ": Foo deleted; cleaned up, finalizer removed");
      co_return kc::reconcile_result::done();
    }
    if (fin == kube::finalizers::action::added) say("reconcile " + req.key + ": finalizer added");
    if (kube::finalizers::is_being_deleted(foo)) co_return kc::reconcile_result::done();  // not ours to finish

    if (!foo.spec || foo.spec->deployment_name.empty()) {
      say("reconcile " + req.key + ": spec.deploymentName is empty, skipping");  // invalid spec: no retry
      co_return kc::reconcile_result::done();
    }
    const auto& name = foo.spec->deployment_name;
    // The cache has the Deployment this Foo's last reconcile created: the controller waited for the
    // informer to observe it before this reconcile (read your own writes), so no second create.
    auto dep = deployments_.get(req.namespace_, name);
    if (!dep) {
      const Deployment want = new_deployment(foo, shard_label_);
      const Deployment made = co_await deployments_api_.async_create(want);
      say("reconcile " + req.key + ": created Deployment " + name + " with " +
          std::to_string(made.spec->replicas.value_or(1)) + " replicas");
      dep = std::make_shared<const Deployment>(made);
    }
    if (!owned_by(*dep, foo)) {
      const auto msg = "Resource \"" + name + "\" already exists and is not managed by Foo";
      recorder_.record(ref_of(foo), kube::event_type::warning, "ErrResourceExists", msg);
      const kube::error_code exists = kube::api_errc::already_exists;
      co_return kc::reconcile_result::failed(exists, msg);
    }
    const auto want_replicas = foo.spec->replicas.value_or(1);
    if (dep->spec && dep->spec->replicas.value_or(1) != want_replicas) {
      // Cached objects are read-only: copy, change, replace (conditional on its resourceVersion).
      Deployment scaled = *dep;
      const auto from = scaled.spec->replicas.value_or(1);
      scaled.spec->replicas = want_replicas;
      const Deployment written = co_await deployments_api_.async_replace(scaled);
      say("reconcile " + req.key + ": scaled Deployment " + name + " " + std::to_string(from) + " -> " +
          std::to_string(written.spec->replicas.value_or(1)));
      dep = std::make_shared<const Deployment>(written);
    }
    co_await update_status(foo, *dep);
    recorder_.record(ref_of(foo), kube::event_type::normal, "Synced", "Foo synced successfully");
    co_return kc::reconcile_result::done();
  }
  // [reconcile-end]

private:
  static kube::object_reference ref_of(const Foo& foo) {
    return kube::object_reference{std::string(kube::resource_traits<Foo>::api_version),
                                  std::string(kube::resource_traits<Foo>::kind), std::string(foo.namespace_()),
                                  std::string(foo.name()), std::string(foo.uid())};
  }

  asio::awaitable<void> update_status(const Foo& foo, const Deployment& dep) {
    const std::int32_t available = dep.status ? dep.status->available_replicas.value_or(0) : 0;
    const std::int32_t replicas = dep.status ? dep.status->replicas.value_or(0) : 0;
    const std::int64_t generation = foo.metadata.generation.value_or(0);
    const auto& st = foo.status;
    if (st && st->available_replicas == available && st->replicas == replicas &&
        st->observed_generation == generation) {
      co_return;  // unchanged: no write
    }
    const std::string body = R"({"status":{"availableReplicas":)" + std::to_string(available) + R"(,"replicas":)" +
                             std::to_string(replicas) + R"(,"observedGeneration":)" + std::to_string(generation) + "}}";
    const std::string name(foo.name());
    co_await foos_.async_patch_status(name, kube::patch_type::merge, body);
    say("reconcile " + std::string(foo.namespace_()) + "/" + name +
        ": status availableReplicas=" + std::to_string(available) + " replicas=" + std::to_string(replicas) +
        " observedGeneration=" + std::to_string(generation));
  }

  asio::awaitable<void> delete_deployment(const Foo& foo) {
    if (!foo.spec || foo.spec->deployment_name.empty()) co_return;
    const std::string name = foo.spec->deployment_name;
    auto dep = deployments_.get(foo.namespace_(), name);
    if (!dep || !owned_by(*dep, foo)) co_return;  // never delete what is not ours
    kube::delete_params del;
    del.precondition_uid = std::string(dep->uid());
    auto [ec, res] = co_await deployments_api_.async_delete(name, del, asio::as_tuple(asio::use_awaitable));
    (void)res;
    if (ec && ec != kube::api_errc::not_found) throw kube::error(ec, "delete Deployment " + name);
    say("cleanup " + std::string(foo.namespace_()) + "/" + std::string(foo.name()) + ": deleted Deployment " + name);
  }

  kube::api<Foo> foos_;
  kube::api<Deployment> deployments_api_;
  kube::event_recorder& recorder_;
  ki::lister<Deployment> deployments_;
  std::optional<std::pair<std::string, std::string>> shard_label_;
};

}  // namespace

int main(int argc, char** argv) {
  options o;
  try {
    o = parse(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "sample-controller: " << e.what() << "\n" << usage;
    return 2;
  }
  try {
    kube::load_default_params lp;
    lp.kubeconfig.explicit_path = o.kubeconfig;
    lp.overrides.context = o.context;
    const auto config = kube::client_config::load_default(lp);
    asio::io_context io;
    // [metrics]
    // One provider for everything: the client reports its requests, and the
    // factory's informers and the controller take their hooks from it.
    auto metrics = std::make_shared<kube::prometheus::metrics>();
    kube::client_params cp;
    cp.metrics = metrics;
    kube::client c(io.get_executor(), config, cp);
    std::optional<kube::prometheus::metrics_server> metrics_server;
    if (o.metrics_address != "0") {
      metrics_server.emplace(io.get_executor(), metrics, metrics_endpoint(o.metrics_address));
    }
    // [metrics-end]

    kube::event_recorder_params ro;
    ro.component = "sample-controller";
    kube::event_recorder recorder(c, ro);

    // [setup]
    kc::controller_params co;
    ki::informer_factory_params fo;
    fo.namespace_name = o.namespace_name;
    fo.strip_managed_fields = true;
    // The controller's handlers only turn events into keys: past 4,096
    // waiting notifications a handler's queue keeps the latest state of
    // each object instead of every step (docs/guides/informer.md).
    fo.handler_queue_limit = 4096;
    fo.handler_overflow = ki::handler_overflow_policy::coalesce;
    if (!o.shard.empty()) {
      // [sharding]
      kc::sharding_params sp;
      sp.ring = "sample-controller";
      sp.lease_namespace = o.namespace_name;
      sp.identity = o.shard;
      sp.lease_duration = std::chrono::seconds(o.shard_lease_seconds);
      sp.renew_deadline = sp.lease_duration * 2 / 3;
      sp.retry_period = sp.lease_duration / 5;
      sp.log.level = kube::log_level::info;  // joins, acknowledged views, removed replicas
      // Label mode: this replica's informers select only its objects.
      sp.label_objects = o.shard_labels;
      if (sp.label_objects) fo.label_selector = kc::shard_label_selector(sp);
      co.sharding = sp;
      // [sharding-end]
      replica = " " + o.shard;
    }
    ki::informer_factory factory(c, fo);

    co.name = "sample-controller";
    co.workers = o.workers;
    // Its own status writes (status.availableReplicas) leave metadata.generation
    // as it is: filtered out, they do not wake it again; a spec change does.
    co.primary_filter = kc::generation_changed();
    co.on_reconciled = [](const kc::reconcile_outcome& r) {
      const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(r.took).count();
      std::string line = "worker " + std::to_string(r.worker) + ": " + r.key + " -> " + kc::to_string(r.action) + " (" +
                         std::to_string(ms) + " ms)";
      if (!r.error.empty()) line += ", retry " + std::to_string(r.retries) + ": " + r.error;
      say(line);
    };
    kc::controller<Foo> ctrl(factory, co);  // watches Foos
    ctrl.owns<Deployment>();                // a Deployment's events reconcile its controlling Foo
    foo_controller logic(c, o.namespace_name, recorder, factory.for_type<Deployment>()->make_lister(),
                         ctrl.shard_label());
    // [setup-end]

    // [run]
    asio::cancellation_signal stop_ctrl, stop_informers, stop_recorder, stop_metrics;
    if (metrics_server) {
      metrics_server->async_run(asio::bind_cancellation_slot(stop_metrics.slot(), [](kube::error_code) {}));
      say("serving metrics on http://" + o.metrics_address.substr(0, o.metrics_address.rfind(':')) + ":" +
          std::to_string(metrics_server->port()) + "/metrics");
    }
    factory.async_run(asio::bind_cancellation_slot(stop_informers.slot(), [](kube::error_code) {}));
    recorder.async_run(asio::bind_cancellation_slot(stop_recorder.slot(), [](kube::error_code) {}));
    factory.async_wait_for_sync([&](kube::error_code ec) {
      if (!ec) say("caches synced; " + std::to_string(o.workers) + " workers in namespace " + o.namespace_name);
    });
    asio::signal_set signals(io, SIGINT, SIGTERM);
    signals.async_wait([&](boost::system::error_code ec, int) {
      if (ec) return;
      say("stopping: waiting for in-flight reconciles");
      stop_ctrl.emit(asio::cancellation_type::terminal);
    });
    kube::error_code result;
    ctrl.async_run([&](kc::reconcile_request<Foo> req) { return logic.reconcile(std::move(req)); },
                   asio::bind_cancellation_slot(stop_ctrl.slot(), [&](kube::error_code ec) {
                     // The workers have drained: now stop the informers and the recorder.
                     result = ec;
                     signals.cancel();
                     stop_informers.emit(asio::cancellation_type::terminal);
                     stop_recorder.emit(asio::cancellation_type::terminal);
                     stop_metrics.emit(asio::cancellation_type::terminal);
                   }));
    io.run();
    // [run-end]
    if (result && result != asio::error::operation_aborted) {
      std::cerr << "sample-controller: " << result.message() << "\n";
      return 1;
    }
    const auto s = ctrl.stats();
    say("stopped after " + std::to_string(s.reconciles) + " reconciles (" + std::to_string(s.failed) + " failed)");
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "sample-controller: " << e.what() << "\n";
    return 1;
  }
}
