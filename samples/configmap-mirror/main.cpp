// configmap-mirror: the smallest useful reconciler. ConfigMaps labelled
// mirror=true in the source namespace are copied (data and binaryData) into
// the target namespace under the same name; a copy follows its source's
// changes, is recreated if someone deletes it, and is deleted when the source
// goes away or loses the label. A ConfigMap in the target namespace that is
// not a mirror is never touched.
//
// Mirrors carry the annotation configmap-mirror/source=<source ns>/<name>.
// (Owner references cannot cross namespaces, so the target-namespace
// informer maps a mirror back to its source with a mapping function.)
//
// usage: configmap-mirror --from SOURCE_NS --to TARGET_NS [--kubeconfig FILE] [--context NAME] [--workers N]
#include <kube/typed/api.hpp>
#include <kube/k8s/core/v1/config_map.hpp>
#include <kube/rest/client.hpp>
#include <kube/config/client_config.hpp>
#include <kube/controller/controller.hpp>
#include <kube/exception.hpp>
#include <kube/informer/informer_factory.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include <chrono>
#include <csignal>
#include <iostream>
#include <string>
#include <vector>

namespace asio = boost::asio;
namespace kc = kube::controller;
namespace ki = kube::informer;
using ConfigMap = k8s::core::v1::ConfigMap;

namespace {

constexpr const char* source_annotation = "configmap-mirror/source";

struct options {
  std::string from, to, kubeconfig, context;
  unsigned workers = 2;
};

options parse(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(std::string(a) + " needs a value");
      return argv[++i];
    };
    if (a == "--from" || a == "-n" || a == "--namespace")
      o.from = value();
    else if (a == "--to")
      o.to = value();
    else if (a == "--kubeconfig")
      o.kubeconfig = value();
    else if (a == "--context")
      o.context = value();
    else if (a == "--workers") {
      const auto v = value();
      const int n = std::stoi(v);
      if (n < 1 || n > 64) throw std::invalid_argument("--workers must be 1..64, got " + v);
      o.workers = static_cast<unsigned>(n);
    } else
      throw std::invalid_argument("unknown argument " + std::string(a));
  }
  if (o.from.empty() || o.to.empty()) throw std::invalid_argument("--from and --to are required");
  if (o.from == o.to) throw std::invalid_argument("--from and --to must be different namespaces");
  return o;
}

void say(const std::string& line) { std::cout << "[configmap-mirror] " << line << std::endl; }

std::string annotation(const ConfigMap& cm, const std::string& key) {
  if (!cm.metadata.annotations) return {};
  auto it = cm.metadata.annotations->find(key);
  return it == cm.metadata.annotations->end() ? std::string{} : it->second;
}

bool wants_mirror(const ConfigMap& cm) {
  if (cm.metadata.deletion_timestamp || !cm.metadata.labels) return false;
  auto it = cm.metadata.labels->find("mirror");
  return it != cm.metadata.labels->end() && it->second == "true";
}

// [mirror-reconcile]
class mirror {
public:
  mirror(const kube::client& c, options o, ki::lister<ConfigMap> targets)
      : o_(std::move(o)),
        target_api_(c, o_.to),
        targets_(std::move(targets)) {}

  asio::awaitable<kc::reconcile_result> reconcile(kc::reconcile_request<ConfigMap> req) {
    const std::string source = o_.from + "/" + req.name;
    auto copy = targets_.get(o_.to, req.name);
    const bool ours = copy && annotation(*copy, source_annotation) == source;

    if (req.gone() || !wants_mirror(*req.object)) {
      if (ours) {  // the source went away or lost its label: delete the mirror
        kube::delete_params del;
        del.precondition_uid = std::string(copy->uid());
        auto [ec, res] = co_await target_api_.async_delete(req.name, del, asio::as_tuple(asio::use_awaitable));
        (void)res;
        if (ec && ec != kube::api_errc::not_found) throw kube::error(ec, "delete mirror " + o_.to + "/" + req.name);
        say(req.key + ": deleted mirror " + o_.to + "/" + req.name);
      }
      co_return kc::reconcile_result::done();
    }
    if (copy && !ours) {
      say(req.key + ": " + o_.to + "/" + req.name + " exists and is not a mirror; left alone");
      co_return kc::reconcile_result::done();  // retrying cannot help; a change to either object brings us back
    }
    const ConfigMap& src = *req.object;
    if (!copy) {
      ConfigMap m;
      m.metadata.name = req.name;
      m.metadata.namespace_ = o_.to;
      m.metadata.annotations = kube::string_map<std::string>{{source_annotation, source}};
      m.data = src.data;
      m.binary_data = src.binary_data;
      co_await target_api_.async_create(m);
      say(req.key + ": created mirror " + o_.to + "/" + req.name + " (" + std::to_string(keys(src)) + " keys)");
    } else if (copy->data != src.data || copy->binary_data != src.binary_data) {
      ConfigMap m =
          *copy;  // the cached object is read-only: copy, change, replace (conditional on its resourceVersion)
      m.data = src.data;
      m.binary_data = src.binary_data;
      co_await target_api_.async_replace(m);
      say(req.key + ": updated mirror " + o_.to + "/" + req.name + " (" + std::to_string(keys(src)) + " keys)");
    }
    co_return kc::reconcile_result::done();
  }

private:
  static std::size_t keys(const ConfigMap& cm) {
    return (cm.data ? cm.data->size() : 0) + (cm.binary_data ? cm.binary_data->size() : 0);
  }

  options o_;
  kube::api<ConfigMap> target_api_;
  ki::lister<ConfigMap> targets_;
};
// [mirror-reconcile-end]

}  // namespace

int main(int argc, char** argv) {
  options o;
  try {
    o = parse(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "configmap-mirror: " << e.what()
              << "\nusage: configmap-mirror --from SOURCE_NS --to TARGET_NS [--kubeconfig FILE] [--context NAME] "
                 "[--workers N]\n";
    return 2;
  }
  try {
    kube::load_default_params lp;
    lp.kubeconfig.explicit_path = o.kubeconfig;
    lp.overrides.context = o.context;
    const auto config = kube::client_config::load_default(lp);
    asio::io_context io;
    kube::client c(io.get_executor(), config);

    // [mirror-setup]
    ki::informer_factory_params so, to;
    so.namespace_name = o.from;
    so.strip_managed_fields = true;
    to.namespace_name = o.to;
    to.strip_managed_fields = true;
    ki::informer_factory sources(c, so), targets(c, to);
    auto target_informer = targets.for_type<ConfigMap>();

    kc::controller_params co;
    co.name = "configmap-mirror";
    co.workers = o.workers;
    co.on_reconciled = [](const kc::reconcile_outcome& r) {
      const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(r.took).count();
      std::string line = "worker " + std::to_string(r.worker) + ": " + r.key + " -> " + kc::to_string(r.action) + " (" +
                         std::to_string(ms) + " ms)";
      if (!r.error.empty()) line += ", retry " + std::to_string(r.retries) + ": " + r.error;
      say(line);
    };
    kc::controller<ConfigMap> ctrl(sources, co);  // primary: ConfigMaps of the source namespace
    const std::string from = o.from;
    ctrl.watches<ConfigMap>(target_informer, [from](const ConfigMap& m) {  // a mirror -> its source's key
      std::vector<std::string> keys;
      const auto src = annotation(m, source_annotation);
      if (src == from + "/" + std::string(m.name())) keys.push_back(src);
      return keys;
    });
    mirror logic(c, o, target_informer->make_lister());
    // [mirror-setup-end]

    asio::cancellation_signal stop_ctrl, stop_sources, stop_targets;
    sources.async_run(asio::bind_cancellation_slot(stop_sources.slot(), [](kube::error_code) {}));
    targets.async_run(asio::bind_cancellation_slot(stop_targets.slot(), [](kube::error_code) {}));
    asio::signal_set signals(io, SIGINT, SIGTERM);
    signals.async_wait([&](boost::system::error_code ec, int) {
      if (!ec) stop_ctrl.emit(asio::cancellation_type::terminal);
    });
    kube::error_code result;
    ctrl.async_run([&](kc::reconcile_request<ConfigMap> req) { return logic.reconcile(std::move(req)); },
                   asio::bind_cancellation_slot(stop_ctrl.slot(), [&](kube::error_code ec) {
                     result = ec;  // in-flight reconciles have finished
                     signals.cancel();
                     stop_sources.emit(asio::cancellation_type::terminal);
                     stop_targets.emit(asio::cancellation_type::terminal);
                   }));
    sources.async_wait_for_sync([&](kube::error_code ec) {
      if (ec) return;
      targets.async_wait_for_sync([&](kube::error_code ec2) {
        if (!ec2) say("caches synced; mirroring ConfigMaps labelled mirror=true from " + o.from + " to " + o.to);
      });
    });
    io.run();
    if (result && result != asio::error::operation_aborted) {
      std::cerr << "configmap-mirror: " << result.message() << "\n";
      return 1;
    }
    say("stopped after " + std::to_string(ctrl.stats().reconciles) + " reconciles");
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "configmap-mirror: " << e.what() << "\n";
    return 1;
  }
}
