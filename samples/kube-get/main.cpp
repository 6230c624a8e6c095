// kube-get: `kubectl get TYPE` for any resource the server serves, through
// discovery, the RESTMapper and the dynamic client.
//
//   kube-get TYPE [NAME] [-n NAMESPACE | -A] [-l SELECTOR]
//            [-w [--timeout S] [--resource-version RV]] [--request-timeout S]
//            [--kubeconfig FILE] [--context NAME]
//
// TYPE is anything kubectl accepts: pods, po, pod, Pod, deploy,
// deployments.apps, deployments.v1.apps, a CRD's plural or short name.
// Prints NAME (and NAMESPACE with -A), one object per line; with -w, then
// prints "EVENT NAME" lines as changes arrive until --timeout seconds pass.
// Every failure is one line naming the server or file and the likely cause
// (docs/guides/errors.md).
#include <kube/rest/client.hpp>
#include <kube/config/client_config.hpp>
#include <kube/discovery/discovery_client.hpp>
#include <kube/dynamic/dynamic_api.hpp>
#include <kube/exception.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <string_view>

namespace asio = boost::asio;

namespace {

struct options {
  std::string type, name, namespace_name, selector, kubeconfig, context, resource_version;
  bool all_namespaces = false, watch = false;
  long long timeout = 30;
  long long request_timeout = 0;  // s; 0: none, as kubectl's default
};

// "5" or "5s", as kubectl's --request-timeout takes whole seconds.
long long seconds(std::string v) {
  if (v.ends_with('s')) v.pop_back();
  std::size_t used = 0;
  long long n = -1;
  try {
    n = std::stoll(v, &used);
  } catch (const std::exception&) {  // NOLINT(bugprone-empty-catch): reported below
  }
  if (n < 0 || used != v.size())
    throw std::invalid_argument("--request-timeout: \"" + v + "\" is not a number of seconds");
  return n;
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
    else if (a == "-A" || a == "--all-namespaces")
      o.all_namespaces = true;
    else if (a == "-l" || a == "--selector")
      o.selector = value();
    else if (a == "-w" || a == "--watch")
      o.watch = true;
    else if (a == "--timeout")
      o.timeout = std::stoll(value());
    else if (a == "--request-timeout")
      o.request_timeout = seconds(value());
    else if (a == "--resource-version")
      o.resource_version = value();
    else if (a == "--kubeconfig")
      o.kubeconfig = value();
    else if (a == "--context")
      o.context = value();
    else if (!a.empty() && a[0] == '-')
      throw std::invalid_argument("unknown flag " + std::string(a));
    else if (o.type.empty())
      o.type = a;
    else if (o.name.empty())
      o.name = a;
    else
      throw std::invalid_argument("unexpected argument " + std::string(a));
  }
  if (o.type.empty()) throw std::invalid_argument("TYPE is required");
  return o;
}

asio::awaitable<void> run(const options& o, kube::client c, std::string default_ns) {
  kube::discovery_client discovery(c);
  auto doc = co_await discovery.async_discover();
  kube::rest_mapper mapper(doc);
  kube::error_code ec;
  kube::diagnostics diag;
  const auto* res = mapper.resolve(o.type, ec, diag);
  if (!res) {
    // kubectl refreshes its cache when a name does not resolve (a new CRD).
    doc = co_await discovery.async_discover(true);
    mapper = kube::rest_mapper(doc);
    res = &mapper.resolve(o.type);  // throws kube::error naming the type
  }
  std::string ns;
  if (res->namespaced && !o.all_namespaces) ns = o.namespace_name.empty() ? default_ns : o.namespace_name;
  kube::dynamic_api api(c, {res->group, res->version, res->plural}, ns);
  const bool show_ns = res->namespaced && o.all_namespaces;

  kube::list_params lp;
  lp.label_selector = o.selector;
  if (!o.name.empty()) lp.field_selector = "metadata.name=" + o.name;
  auto list = co_await api.async_list_all(lp);
  std::cout << (show_ns ? "NAMESPACE  NAME\n" : "NAME\n");
  for (const auto& item : list.items) std::cout << (show_ns ? item.namespace_() + "  " : "") << item.name() << "\n";
  std::cout.flush();
  if (!o.watch) co_return;

  kube::watch_params wp;
  wp.label_selector = lp.label_selector;
  wp.field_selector = lp.field_selector;
  // --resource-version: watch from there instead of the list's version.
  wp.resource_version = o.resource_version.empty() ? list.resource_version : o.resource_version;
  wp.timeout_seconds = o.timeout;
  auto w = co_await api.async_watch(wp);
  for (;;) {
    auto [wec, ev] = co_await w.async_next(asio::as_tuple(asio::use_awaitable));
    if (wec) break;  // eof at --timeout
    if (ev.type == kube::watch_event_type::bookmark) continue;
    if (ev.type == kube::watch_event_type::error) {
      kube::diagnostics d;
      const auto code = kube::watch_event_error(ev, d);
      d.set_client_message("watch " + o.type + " from resourceVersion " + wp.resource_version + ": " +
                           d.client_message());
      throw kube::error(code, std::move(d));
    }
    const kube::unstructured obj(ev.object);
    std::cout << kube::to_string(ev.type) << " " << (show_ns ? obj.namespace_() + "/" : "") << obj.name() << std::endl;
  }
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  try {
    o = parse(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "kube-get: " << e.what()
              << "\nusage: kube-get TYPE [NAME] [-n NS | -A] [-l SELECTOR] [-w [--timeout S] [--resource-version RV]] "
                 "[--request-timeout S] [--kubeconfig FILE] [--context NAME]\n";
    return 2;
  }
  try {
    kube::load_default_params lp;
    lp.kubeconfig.explicit_path = o.kubeconfig;
    lp.overrides.context = o.context;
    const auto config = kube::client_config::load_default(lp);
    asio::io_context io;
    kube::client_params cp;
    if (o.request_timeout > 0) cp.timeout = cp.connect_timeout = std::chrono::seconds(o.request_timeout);
    kube::client c(io.get_executor(), config, cp);
    std::exception_ptr failure;
    asio::co_spawn(io, run(o, c, config.namespace_name), [&](std::exception_ptr e) { failure = e; });
    io.run();
    if (failure) std::rethrow_exception(failure);
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "kube-get: " << e.what() << "\n";
    return 1;
  }
}
