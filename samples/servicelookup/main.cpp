// servicelookup: which Services does this Pod serve?
//
// The Kubernetes API answers "which pods does Service X select?" but not the
// reverse. This sample keeps three typed informers (Pods, Services,
// EndpointSlices), indexes the EndpointSlices by the pods they point at, and
// prints a pod's answer every time it changes:
//
//   pod demo/web-1 serves: demo/web, demo/web-internal
//   pod demo/web-2 serves: (none)
//   pod demo/web-1 is gone
//
// Event handlers only queue pod keys on a workqueue; one worker coroutine,
// started once every cache has synced, computes the answers from the indexes
// (the informer -> workqueue -> worker pattern of client-go). README.md
// explains the design.
//
// usage: servicelookup [--namespace NS] [--pod [NS/]NAME] [--kubeconfig FILE] [--context NAME]
#include <kube/rest/client.hpp>
#include <kube/config/client_config.hpp>
#include <kube/informer/informer_factory.hpp>
#include <kube/workqueue/queue.hpp>

#include <kube/k8s/core/v1/pod.hpp>
#include <kube/k8s/core/v1/service.hpp>
#include <kube/k8s/discovery/v1/endpoint_slice.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <csignal>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace asio = boost::asio;
namespace ki = kube::informer;
using k8s::core::v1::Pod;
using k8s::core::v1::Service;
using k8s::discovery::v1::EndpointSlice;

namespace {

struct options {
  std::string namespace_name, pod, kubeconfig, context;  // empty namespace: all namespaces
};

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
    else if (a == "--pod")
      o.pod = value();
    else if (a == "--kubeconfig")
      o.kubeconfig = value();
    else if (a == "--context")
      o.context = value();
    else
      throw std::invalid_argument("unknown argument " + std::string(a));
  }
  if (!o.pod.empty() && o.pod.find('/') == std::string::npos) {
    if (o.namespace_name.empty()) throw std::invalid_argument("--pod NAME needs --namespace (or write --pod NS/NAME)");
    o.pod = o.namespace_name + "/" + o.pod;
  }
  return o;
}

// [indexes]
// Index "pod": an EndpointSlice -> the pods ("ns/name") of its ready
// endpoints. by_index("pod", "demo/web-1") then gives every slice that sends
// traffic to demo/web-1: the reverse lookup the API does not have.
constexpr const char* by_pod = "pod";
std::vector<std::string> pods_of(const EndpointSlice& slice) {
  std::vector<std::string> out;
  for (const auto& ep : slice.endpoints) {
    // conditions.ready unset means ready (API docs); a not-ready pod gets no traffic.
    if (ep.conditions && !ep.conditions->ready.value_or(true)) continue;
    const auto& ref = ep.target_ref;
    if (!ref || ref->kind.value_or("") != "Pod" || !ref->name) continue;
    out.push_back(ref->namespace_.value_or(std::string(slice.namespace_())) + "/" + *ref->name);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// Index "service": an EndpointSlice -> its Service ("ns/name"), from the
// label every EndpointSlice of a Service carries. Used to find the pods
// whose answer changes when a Service comes or goes.
constexpr const char* by_service = "service";
std::string service_of(const EndpointSlice& slice) {
  const auto& labels = slice.metadata.labels;
  if (!labels) return {};
  auto it = labels->find("kubernetes.io/service-name");
  return it == labels->end() ? std::string() : std::string(slice.namespace_()) + "/" + it->second;
}
// [indexes]

// The informers retry on their own (with backoff); say why, e.g. RBAC.
void log_watch_error(const ki::watch_failure& f) {
  std::cerr << "servicelookup: watch error: " << kube::error_message(f.ec, f.diag) << "; retrying in "
            << f.retry_in.count() << " ms" << (f.relist ? " with a relist" : "") << std::endl;
}

// A handler's queue reached informer_params::handler_backlog_warning
// notifications: it is slower than the events (nothing is dropped).
void log_backlog(const ki::handler_backlog& b) {
  std::cerr << "servicelookup: event handler " << b.handler_id << " has " << b.pending << " notifications waiting"
            << std::endl;
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  try {
    o = parse(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "servicelookup: " << e.what()
              << "\nusage: servicelookup [--namespace NS] [--pod [NS/]NAME] [--kubeconfig FILE] [--context NAME]\n";
    return 2;
  }
  try {
    kube::load_default_params lp;
    lp.kubeconfig.explicit_path = o.kubeconfig;
    lp.overrides.context = o.context;
    asio::io_context io;
    kube::client c(io.get_executor(), kube::client_config::load_default(lp));

    ki::informer_factory factory(c, {.namespace_name = o.namespace_name,
                                     .strip_managed_fields = true,
                                     .on_watch_error = log_watch_error,
                                     .on_handler_backlog = log_backlog});
    auto pods = factory.for_type<Pod>();
    auto services = factory.for_type<Service>();
    auto slices = factory.for_type<EndpointSlice>();
    slices->add_indexers({
        {by_pod, pods_of},
        {by_service,
         [](const EndpointSlice& s) {
           auto svc = service_of(s);
           return svc.empty() ? std::vector<std::string>{} : std::vector{svc};
         }},
    });

    // [handlers]
    // Each handler runs on a strand of its own, fed by its own queue, so a
    // slow one delays only itself; on this one-thread io_context a handler
    // that blocks would still hold the thread. These only say which pods
    // may have a new answer. The workqueue is thread-safe and holds a key
    // once however often it is added before a worker takes it.
    kube::workqueue::queue<std::string> queue(io.get_executor());
    auto enqueue = [&](const std::string& pod_key) {
      if (o.pod.empty() || pod_key == o.pod) queue.add(pod_key);
    };
    auto enqueue_all_pods = [&] {
      for (const auto& p : pods->cache()->list()) enqueue(ki::meta_namespace_key(*p));
    };
    auto enqueue_slice = [&](const std::shared_ptr<const EndpointSlice>& s) {
      if (!s) return enqueue_all_pods();  // a tombstone without its object: recheck everything
      for (const auto& p : pods_of(*s)) enqueue(p);
    };
    auto enqueue_service = [&](const std::shared_ptr<const Service>& svc) {
      if (!svc) return enqueue_all_pods();
      for (const auto& s : slices->cache()->by_index(by_service, ki::meta_namespace_key(*svc))) enqueue_slice(s);
    };
    pods->add_handler({
        [&](const auto& p, bool) { enqueue(ki::meta_namespace_key(*p)); },
        {},  // a pod's own changes do not change which Services it serves
        [&](const ki::deleted_object<Pod>& d) {
          if (const auto& p = ki::object_of(d))
            enqueue(ki::meta_namespace_key(*p));
          else
            enqueue_all_pods();
        },
    });
    slices->add_handler({
        [&](const auto& s, bool) { enqueue_slice(s); },
        [&](const auto& old_s, const auto& new_s) {
          enqueue_slice(old_s);
          enqueue_slice(new_s);
        },
        [&](const ki::deleted_object<EndpointSlice>& d) { enqueue_slice(ki::object_of(d)); },
    });
    services->add_handler({
        [&](const auto& svc, bool) { enqueue_service(svc); },
        {},
        [&](const ki::deleted_object<Service>& d) { enqueue_service(ki::object_of(d)); },
    });
    // [handlers]

    // [answer]
    // The answer for one pod, from the caches only: the slices that point at
    // it (index "pod"), kept when their Service still exists (a deleted
    // Service's slices linger until the garbage collector removes them).
    auto answer = [&](const std::string& pod_key) {
      std::set<std::string> names;
      for (const auto& s : slices->cache()->by_index(by_pod, pod_key)) {
        auto svc = service_of(*s);
        if (!svc.empty() && services->cache()->get_by_key(svc)) names.insert(svc);
      }
      std::string out;
      for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
      return out.empty() ? std::string("(none)") : out;
    };

    // One worker, started after every cache has synced, so the first answer
    // it prints is already complete. `printed` is touched by it alone.
    auto worker = [&]() -> asio::awaitable<void> {
      co_await factory.async_wait_for_sync(asio::use_awaitable);
      std::cout << "synced: " << pods->cache()->size() << " pods, " << services->cache()->size() << " services, "
                << slices->cache()->size() << " endpointslices" << std::endl;
      std::map<std::string, std::string> printed;
      for (;;) {
        auto [ec, pod_key] = co_await queue.async_get(asio::as_tuple(asio::deferred));
        if (ec) co_return;  // shut down
        if (!pods->cache()->get_by_key(pod_key)) {
          if (printed.erase(pod_key) > 0) std::cout << "pod " << pod_key << " is gone" << std::endl;
        } else if (auto a = answer(pod_key); printed[pod_key] != a) {
          printed[pod_key] = a;
          std::cout << "pod " << pod_key << " serves: " << a << std::endl;
        }
        queue.done(pod_key);
      }
    };
    // [answer]

    // Run until SIGINT/SIGTERM: cancel the informers and the worker (it may
    // still be waiting for the sync), shut the queue down; io.run() returns
    // once everything has stopped.
    asio::cancellation_signal stop_informers, stop_worker;
    asio::signal_set signals(io, SIGINT, SIGTERM);
    signals.async_wait([&](boost::system::error_code ec, int) {
      if (ec) return;
      stop_informers.emit(asio::cancellation_type::terminal);
      stop_worker.emit(asio::cancellation_type::terminal);
      queue.shutdown();
    });
    factory.async_run(asio::bind_cancellation_slot(stop_informers.slot(), [](kube::error_code) {}));
    int status = 0;
    asio::co_spawn(io, worker(), asio::bind_cancellation_slot(stop_worker.slot(), [&](std::exception_ptr e) {
                     if (!e) return;
                     try {
                       std::rethrow_exception(e);
                     } catch (const boost::system::system_error& ex) {
                       if (ex.code() == asio::error::operation_aborted) return;  // stopped while waiting for the sync
                       std::cerr << "servicelookup: " << ex.what() << std::endl;
                     } catch (const std::exception& ex) {
                       std::cerr << "servicelookup: " << ex.what() << std::endl;
                     }
                     status = 1;
                     stop_informers.emit(asio::cancellation_type::terminal);
                     signals.cancel();
                   }));
    io.run();
    return status;
  } catch (const std::exception& e) {
    std::cerr << "servicelookup: " << e.what() << "\n";
    return 1;
  }
}
