// The families kube::prometheus::metrics registers, and the hooks objects
// that record into them. Names, labels and buckets: metrics.hpp.
// Size: about 620 lines, one hooks class per metrics interface of
// kube/base/metrics.hpp (client, reflector, FIFO, controller, workqueue).
#include <kube/prometheus/metrics.hpp>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/text_serializer.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>

namespace kube::prometheus {

using ::prometheus::Counter;
using ::prometheus::Family;
using ::prometheus::Gauge;
using ::prometheus::Histogram;
using ::prometheus::Labels;
using ::prometheus::Registry;
using buckets = Histogram::BucketBoundaries;

namespace {

double seconds(kube::metrics::duration d) { return std::chrono::duration<double>(d).count(); }

// ---- buckets -------------------------------------------------------------------

// client-go's request latency and rate limiter buckets.
const buckets& request_seconds_buckets() {
  static const buckets b{0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60};
  return b;
}

// client-go's request and response size buckets: 64 B to 16 MiB.
const buckets& size_buckets() {
  static const buckets b{64, 256, 512, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216};
  return b;
}

// Reflector buckets are kube's choice: client-go names these metrics but
// never registers them. A list takes from milliseconds (a few objects) to
// a minute (a large cluster's pods); a watch lasts minutes (the apiserver
// closes it after 5 to 10, or after the timeout the reflector asks for).
const buckets& list_seconds_buckets() {
  static const buckets b{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};
  return b;
}
const buckets& items_buckets() {
  static const buckets b{1, 10, 100, 1000, 10000, 100000, 1000000};
  return b;
}
const buckets& watch_seconds_buckets() {
  static const buckets b{1, 10, 30, 60, 120, 300, 600, 900, 1800, 3600};
  return b;
}

// component-base's informer processing latency buckets (kube's handler
// durations use them too).
const buckets& processing_buckets() {
  static const buckets b{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
  return b;
}

// controller-runtime's reconcile time buckets.
const buckets& reconcile_buckets() {
  static const buckets b{0.005, 0.01, 0.025, 0.05, 0.1,  0.15, 0.2,  0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6,
                         0.7,   0.8,  0.9,   1,    1.25, 1.5,  1.75, 2,    2.5, 3,    3.5, 4,    4.5, 5,
                         6,     7,    8,     9,    10,   15,   20,   25,   30,  40,   50,  60};
  return b;
}

// client-go's workqueue buckets: 10 ns to 10 s, ten buckets a factor 10 apart.
const buckets& workqueue_buckets() {
  static const buckets b{1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, 10};
  return b;
}

Family<Counter>& counter(Registry& r, const char* name, const char* help) {
  return ::prometheus::BuildCounter().Name(name).Help(help).Register(r);
}
Family<Gauge>& gauge(Registry& r, const char* name, const char* help) {
  return ::prometheus::BuildGauge().Name(name).Help(help).Register(r);
}
Family<Histogram>& histogram(Registry& r, const char* name, const char* help) {
  return ::prometheus::BuildHistogram().Name(name).Help(help).Register(r);
}

}  // namespace

namespace detail {

// Every family, registered once per metrics object (a registry returns the
// family it already has for a name). The families belong to the registry,
// which this keeps alive for the hooks objects.
struct families {
  std::shared_ptr<Registry> registry;

  // client
  Family<Counter>& requests;
  Family<Histogram>& request_duration;
  Family<Histogram>& request_size;
  Family<Histogram>& response_size;
  Family<Histogram>& rate_limiter;
  Family<Counter>& retries;
  Family<Counter>& exec_plugin_calls;
  // reflector
  Family<Counter>& lists;
  Family<Histogram>& list_duration;
  Family<Histogram>& items_per_list;
  Family<Counter>& relists;
  Family<Counter>& watches;
  Family<Histogram>& watch_duration;
  Family<Histogram>& items_per_watch;
  Family<Counter>& watch_stalls;
  Family<Gauge>& last_resource_version;
  // informer
  Family<Gauge>& queued_items;
  Family<Histogram>& processing_latency;
  Family<Gauge>& store_resource_version;
  Family<Histogram>& handler_duration;
  Family<Counter>& handler_errors;
  Family<Gauge>& handler_queue_length;
  // controller
  Family<Counter>& reconcile_total;
  Family<Counter>& reconcile_errors;
  Family<Histogram>& reconcile_time;
  Family<Gauge>& max_concurrent_reconciles;
  Family<Gauge>& active_workers;
  Family<Histogram>& cache_wait;
  Family<Counter>& cache_wait_timeouts;
  // workqueue
  Family<Gauge>& depth;
  Family<Counter>& adds;
  Family<Histogram>& queue_duration;
  Family<Histogram>& work_duration;
  Family<Gauge>& unfinished_work;
  Family<Gauge>& longest_running;
  Family<Counter>& queue_retries;

  explicit families(std::shared_ptr<Registry> r)
      : registry(std::move(r)),
        requests(counter(*registry, "rest_client_requests_total",
                         "Attempts of requests to the apiserver, by status code, method, host and resource.")),
        request_duration(histogram(*registry, "rest_client_request_duration_seconds",
                                   "Request latency in seconds, all attempts and waits included, by verb and host.")),
        request_size(histogram(*registry, "rest_client_request_size_bytes",
                               "Size of request bodies in bytes, per attempt, by verb and host.")),
        response_size(histogram(*registry, "rest_client_response_size_bytes",
                                "Size of response bodies in bytes, per answered attempt, by verb and host.")),
        rate_limiter(histogram(*registry, "rest_client_rate_limiter_duration_seconds",
                               "Time in seconds requests waited for the client-side rate limiter, by verb and host.")),
        retries(counter(*registry, "rest_client_request_retries_total",
                        "Attempts that were tried again, by status code, verb and host.")),
        exec_plugin_calls(counter(*registry, "rest_client_exec_plugin_call_total",
                                  "Runs of exec credential plugins, by exit code and outcome.")),
        lists(counter(*registry, "reflector_lists_total", "Lists done by the reflector.")),
        list_duration(histogram(*registry, "reflector_list_duration_seconds",
                                "How long a reflector's list took, all pages, in seconds.")),
        items_per_list(histogram(*registry, "reflector_items_per_list", "Objects a reflector's list returned.")),
        relists(counter(*registry, "reflector_relists_total", "Lists done by the reflector after its first one.")),
        watches(counter(*registry, "reflector_watches_total", "Watches opened by the reflector, reconnects included.")),
        watch_duration(histogram(*registry, "reflector_watch_duration_seconds",
                                 "How long a reflector's watch lasted, in seconds.")),
        items_per_watch(histogram(*registry, "reflector_items_per_watch", "Events a reflector's watch delivered.")),
        watch_stalls(counter(*registry, "reflector_watch_stalls_total",
                             "Watches given up because nothing arrived for the idle timeout.")),
        last_resource_version(
            gauge(*registry, "reflector_last_resource_version", "The resource version the reflector last synced to.")),
        queued_items(gauge(*registry, "informer_queued_items", "Items waiting in the informer's queue.")),
        processing_latency(histogram(*registry, "informer_processing_latency_seconds",
                                     "Time in seconds to process one item popped from the informer's queue.")),
        store_resource_version(gauge(*registry, "informer_store_resource_version",
                                     "The informer store's resource version, its 15 least significant digits.")),
        handler_duration(
            histogram(*registry, "informer_handler_duration_seconds", "Time in seconds one event handler call took.")),
        handler_errors(counter(*registry, "informer_handler_errors_total", "Event handler calls that failed.")),
        handler_queue_length(
            gauge(*registry, "informer_handler_queue_length", "Notifications waiting in one event handler's queue.")),
        reconcile_total(
            counter(*registry, "controller_runtime_reconcile_total", "Reconciles done by the controller, by result.")),
        reconcile_errors(counter(*registry, "controller_runtime_reconcile_errors_total",
                                 "Reconciles of the controller that failed.")),
        reconcile_time(
            histogram(*registry, "controller_runtime_reconcile_time_seconds", "Time in seconds one reconcile took.")),
        max_concurrent_reconciles(
            gauge(*registry, "controller_runtime_max_concurrent_reconciles", "The controller's worker count.")),
        active_workers(
            gauge(*registry, "controller_runtime_active_workers", "Reconciles of the controller running now.")),
        cache_wait(histogram(*registry, "controller_runtime_read_your_writes_wait_seconds",
                             "Time in seconds a reconcile waited for the caches to observe the key's last writes.")),
        cache_wait_timeouts(counter(*registry, "controller_runtime_read_your_writes_timeouts_total",
                                    "Reconciles that stopped waiting for the caches before they caught up.")),
        depth(gauge(*registry, "workqueue_depth", "Items waiting in the workqueue.")),
        adds(counter(*registry, "workqueue_adds_total", "Items added to the workqueue (duplicates not counted).")),
        queue_duration(histogram(*registry, "workqueue_queue_duration_seconds",
                                 "Time in seconds an item waited in the workqueue before a worker took it.")),
        work_duration(histogram(*registry, "workqueue_work_duration_seconds",
                                "Time in seconds a worker held an item from the workqueue.")),
        unfinished_work(gauge(*registry, "workqueue_unfinished_work_seconds",
                              "Seconds of work in progress not yet observed by work_duration, summed over items.")),
        longest_running(gauge(*registry, "workqueue_longest_running_processor_seconds",
                              "Seconds the longest running item of the workqueue has been processed.")),
        queue_retries(
            counter(*registry, "workqueue_retries_total", "Delayed and rate-limited adds to the workqueue.")) {}
};

}  // namespace detail

namespace {

using detail::families;

// ---- client ------------------------------------------------------------------------

const char* call_status(kube::metrics::exec_plugin_status s) {
  switch (s) {
  case kube::metrics::exec_plugin_status::no_error:
    return "no_error";
  case kube::metrics::exec_plugin_status::plugin_execution_error:
    return "plugin_execution_error";
  case kube::metrics::exec_plugin_status::plugin_not_found_error:
    return "plugin_not_found_error";
  case kube::metrics::exec_plugin_status::client_internal_error:
    break;
  }
  return "client_internal_error";
}

std::string code_label(int code) { return code == 0 ? std::string("<error>") : std::to_string(code); }

// The label values of one client series: a status code (0 when the series
// has none, or for "<error>") and up to three strings. Stored as strings,
// looked up as views: no string is built for a series already seen.
struct series_key {
  int code = 0;
  std::array<std::string, 3> text;
};
struct series_view {
  int code = 0;
  std::array<std::string_view, 3> text;
};
struct series_less {
  using is_transparent = void;
  static series_view view(const series_key& k) { return {k.code, {k.text[0], k.text[1], k.text[2]}}; }
  static series_view view(const series_view& v) { return v; }
  template <class A, class B>
  bool operator()(const A& a, const B& b) const {
    const auto x = view(a);
    const auto y = view(b);
    return std::tie(x.code, x.text) < std::tie(y.code, y.text);
  }
};
series_key owned(const series_view& v) {
  return {v.code, {std::string(v.text[0]), std::string(v.text[1]), std::string(v.text[2])}};
}

// Labels change with every call, so each series is found on first use and
// kept in a map under the client's mutex: Family::Add would construct a new
// metric (for a histogram, its buckets) on every call only to throw it away
// when the series exists.
class client_hooks final : public kube::metrics::client_metrics {
public:
  explicit client_hooks(std::shared_ptr<const families> f)
      : f_(std::move(f)) {}

  void on_attempt(const kube::metrics::request_attempt& a) noexcept override {
    try {
      Counter* requests = nullptr;
      Histogram* request_size = nullptr;
      Histogram* response_size = nullptr;
      {
        std::lock_guard lock(mutex_);
        requests = request_counter(a);
        auto& s = verb_host(a.method, a.host);
        request_size = series(s.request_size, f_->request_size, size_buckets(), a.method, a.host);
        if (a.code != 0) response_size = series(s.response_size, f_->response_size, size_buckets(), a.method, a.host);
      }
      requests->Increment();
      request_size->Observe(static_cast<double>(a.request_bytes));
      if (response_size) response_size->Observe(static_cast<double>(a.response_bytes));
    } catch (...) {  // a hook never throws: the sample is dropped
    }
  }

  void on_retry(const kube::metrics::request_attempt& a) noexcept override {
    try {
      Counter* retries = nullptr;
      {
        std::lock_guard lock(mutex_);
        const series_view key{a.code, {a.method, a.host, {}}};
        auto it = retries_.find(key);
        if (it == retries_.end()) {
          auto& c = f_->retries.Add(
              {{"code", code_label(a.code)}, {"verb", std::string(a.method)}, {"host", std::string(a.host)}});
          it = retries_.emplace(owned(key), &c).first;
        }
        retries = it->second;
      }
      retries->Increment();
    } catch (...) {}
  }

  void on_request(std::string_view method, std::string_view host, std::string_view resource,
                  kube::metrics::duration took) noexcept override {
    (void)resource;  // client-go's latency has no such label; requests_total has it
    try {
      Histogram* h = nullptr;
      {
        std::lock_guard lock(mutex_);
        h = series(verb_host(method, host).duration, f_->request_duration, request_seconds_buckets(), method, host);
      }
      h->Observe(seconds(took));
    } catch (...) {}
  }

  void on_rate_limiter_wait(std::string_view method, std::string_view host,
                            kube::metrics::duration waited) noexcept override {
    try {
      Histogram* h = nullptr;
      {
        std::lock_guard lock(mutex_);
        h = series(verb_host(method, host).rate_limiter, f_->rate_limiter, request_seconds_buckets(), method, host);
      }
      h->Observe(seconds(waited));
    } catch (...) {}
  }

  void on_exec_plugin_call(int exit_code, kube::metrics::exec_plugin_status status) noexcept override {
    // A plugin that could not be run has no exit code; client-go writes 1
    // (its failureExitCode) so that code!="0" selects every failure.
    const bool not_run = status == kube::metrics::exec_plugin_status::plugin_not_found_error ||
                         status == kube::metrics::exec_plugin_status::client_internal_error;
    if (not_run && exit_code == -1) exit_code = 1;
    try {  // rare: straight to the family
      f_->exec_plugin_calls.Add({{"code", std::to_string(exit_code)}, {"call_status", call_status(status)}})
          .Increment();
    } catch (...) {}
  }

private:
  // The histograms labelled {verb, host}, each made on first use.
  struct verb_host_series {
    Histogram* duration = nullptr;
    Histogram* request_size = nullptr;
    Histogram* response_size = nullptr;
    Histogram* rate_limiter = nullptr;
  };

  std::shared_ptr<const families> f_;
  std::mutex mutex_;
  std::map<series_key, verb_host_series, series_less> verb_host_;  // {verb, host}
  std::map<series_key, Counter*, series_less> requests_;           // code, {method, host, resource}
  std::map<series_key, Counter*, series_less> retries_;            // code, {verb, host}

  // Under mutex_.
  verb_host_series& verb_host(std::string_view verb, std::string_view host) {
    const series_view key{0, {verb, host, {}}};
    auto it = verb_host_.find(key);
    if (it == verb_host_.end()) it = verb_host_.emplace(owned(key), verb_host_series{}).first;
    return it->second;
  }

  static Histogram* series(Histogram*& slot, Family<Histogram>& family, const buckets& b, std::string_view verb,
                           std::string_view host) {
    if (!slot) slot = &family.Add({{"verb", std::string(verb)}, {"host", std::string(host)}}, b);
    return slot;
  }

  // Under mutex_.
  Counter* request_counter(const kube::metrics::request_attempt& a) {
    const series_view key{a.code, {a.method, a.host, a.resource}};
    auto it = requests_.find(key);
    if (it == requests_.end()) {
      auto& c = f_->requests.Add({{"code", code_label(a.code)},
                                  {"method", std::string(a.method)},
                                  {"host", std::string(a.host)},
                                  {"resource", std::string(a.resource)}});
      it = requests_.emplace(owned(key), &c).first;
    }
    return it->second;
  }
};

// ---- informers -----------------------------------------------------------------------

// A resourceVersion as a number: all decimal digits, else nothing.
bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

class informer_hooks final : public kube::metrics::informer_metrics {
public:
  informer_hooks(std::shared_ptr<const families> f, const Labels& reflector, const Labels& informer)
      : f_(std::move(f)),
        lists_(f_->lists.Add(reflector)),
        list_duration_(f_->list_duration.Add(reflector, list_seconds_buckets())),
        items_per_list_(f_->items_per_list.Add(reflector, items_buckets())),
        relists_(f_->relists.Add(reflector)),
        watches_(f_->watches.Add(reflector)),
        watch_duration_(f_->watch_duration.Add(reflector, watch_seconds_buckets())),
        items_per_watch_(f_->items_per_watch.Add(reflector, items_buckets())),
        watch_stalls_(f_->watch_stalls.Add(reflector)),
        last_resource_version_(f_->last_resource_version.Add(reflector)),
        queued_items_(f_->queued_items.Add(informer)),
        processing_latency_(f_->processing_latency.Add(informer, processing_buckets())),
        store_resource_version_(f_->store_resource_version.Add(informer)),
        handler_duration_(f_->handler_duration.Add(informer, processing_buckets())),
        handler_errors_(f_->handler_errors.Add(informer)),
        informer_labels_(informer) {}

  void on_list(std::size_t items, kube::metrics::duration took, bool relist) noexcept override {
    lists_.Increment();
    if (relist) relists_.Increment();
    list_duration_.Observe(seconds(took));
    items_per_list_.Observe(static_cast<double>(items));
  }
  void on_watch() noexcept override { watches_.Increment(); }
  void on_watch_end(std::size_t events, kube::metrics::duration took) noexcept override {
    watch_duration_.Observe(seconds(took));
    items_per_watch_.Observe(static_cast<double>(events));
  }
  void on_watch_stall() noexcept override { watch_stalls_.Increment(); }

  void on_resource_version(std::string_view rv) noexcept override {
    if (!all_digits(rv)) return;  // not a number: the gauges keep their value
    // Digits only. Up to 19 of them fit a uint64_t, whose conversion rounds
    // as reading the text as a double would (libc++ 16 has no from_chars for
    // double); a longer one is summed up digit by digit (and rounds).
    double full = 0;
    if (std::uint64_t whole = 0; rv.size() <= 19) {
      std::from_chars(rv.data(), rv.data() + rv.size(), whole);
      full = static_cast<double>(whole);
    } else {
      for (const char c : rv) full = full * 10 + (c - '0');
    }
    // client-go 1.36 keeps the 15 least significant digits: every such
    // number is exact in a double, so the gauge still changes with each
    // new version where the full one would round several to one value.
    const auto tail = rv.substr(rv.size() > 15 ? rv.size() - 15 : 0);
    std::uint64_t low = 0;
    std::from_chars(tail.data(), tail.data() + tail.size(), low);  // < 10^15: fits
    last_resource_version_.Set(full);
    store_resource_version_.Set(static_cast<double>(low));
  }

  void on_queued(std::size_t items) noexcept override { queued_items_.Set(static_cast<double>(items)); }
  void on_processed(kube::metrics::duration took) noexcept override { processing_latency_.Observe(seconds(took)); }
  void on_handler(kube::metrics::duration took, bool failed) noexcept override {
    handler_duration_.Observe(seconds(took));
    if (failed) handler_errors_.Increment();
  }
  void on_handler_queue(std::uint64_t handler, std::size_t length) noexcept override {
    try {
      const std::lock_guard lock(queues_m_);
      auto& g = queues_[handler];
      if (g == nullptr) {
        auto labels = informer_labels_;
        labels["handler"] = std::to_string(handler);
        g = &f_->handler_queue_length.Add(labels);
      }
      g->Set(static_cast<double>(length));
    } catch (...) {  // NOLINT(bugprone-empty-catch): out of memory: the gauge keeps its value
    }
  }

private:
  std::shared_ptr<const families> f_;
  Counter& lists_;
  Histogram& list_duration_;
  Histogram& items_per_list_;
  Counter& relists_;
  Counter& watches_;
  Histogram& watch_duration_;
  Histogram& items_per_watch_;
  Counter& watch_stalls_;
  Gauge& last_resource_version_;
  Gauge& queued_items_;
  Histogram& processing_latency_;
  Gauge& store_resource_version_;
  Histogram& handler_duration_;
  Counter& handler_errors_;
  Labels informer_labels_;
  std::mutex queues_m_;
  std::map<std::uint64_t, Gauge*> queues_;  // by handler id
};

// ---- controllers ---------------------------------------------------------------------

class controller_hooks final : public kube::metrics::controller_metrics {
public:
  controller_hooks(std::shared_ptr<const families> f, const std::string& name)
      : f_(std::move(f)),
        results_{&result(name, "success"), &result(name, "error"), &result(name, "requeue"),
                 &result(name, "requeue_after")},
        errors_(f_->reconcile_errors.Add({{"controller", name}})),
        time_(f_->reconcile_time.Add({{"controller", name}}, reconcile_buckets())),
        workers_(f_->max_concurrent_reconciles.Add({{"controller", name}})),
        active_(f_->active_workers.Add({{"controller", name}})),
        cache_wait_(f_->cache_wait.Add({{"controller", name}}, reconcile_buckets())),
        cache_wait_timeouts_(f_->cache_wait_timeouts.Add({{"controller", name}})) {}

  void on_workers(unsigned count) noexcept override { workers_.Set(count); }
  void on_active(unsigned active) noexcept override { active_.Set(active); }
  void on_reconcile(kube::metrics::reconcile_label r, kube::metrics::duration took) noexcept override {
    const auto i = static_cast<std::size_t>(r);
    if (i < results_.size()) results_[i]->Increment();
    if (r == kube::metrics::reconcile_label::error) errors_.Increment();
    time_.Observe(seconds(took));
  }
  void on_cache_wait(kube::metrics::duration took, bool caught_up) noexcept override {
    cache_wait_.Observe(seconds(took));
    if (!caught_up) cache_wait_timeouts_.Increment();
  }

private:
  std::shared_ptr<const families> f_;
  std::array<Counter*, 4> results_;  // indexed by reconcile_label
  Counter& errors_;
  Histogram& time_;
  Gauge& workers_;
  Gauge& active_;
  Histogram& cache_wait_;
  Counter& cache_wait_timeouts_;

  Counter& result(const std::string& name, const char* label) {
    return f_->reconcile_total.Add({{"controller", name}, {"result", label}});
  }
};

// ---- workqueues ----------------------------------------------------------------------

class workqueue_hooks final : public kube::metrics::workqueue_metrics {
public:
  workqueue_hooks(std::shared_ptr<const families> f, const Labels& labels)
      : f_(std::move(f)),
        depth_(f_->depth.Add(labels)),
        adds_(f_->adds.Add(labels)),
        queue_duration_(f_->queue_duration.Add(labels, workqueue_buckets())),
        work_duration_(f_->work_duration.Add(labels, workqueue_buckets())),
        unfinished_(f_->unfinished_work.Add(labels)),
        longest_(f_->longest_running.Add(labels)),
        retries_(f_->queue_retries.Add(labels)) {}

  void on_add() noexcept override {
    adds_.Increment();
    depth_.Increment();
  }
  void on_get(kube::metrics::duration queued) noexcept override {
    depth_.Decrement();
    queue_duration_.Observe(seconds(queued));
  }
  void on_done(kube::metrics::duration worked) noexcept override { work_duration_.Observe(seconds(worked)); }
  void on_retry() noexcept override { retries_.Increment(); }
  void on_unfinished_work(kube::metrics::duration total, kube::metrics::duration longest) noexcept override {
    unfinished_.Set(seconds(total));
    longest_.Set(seconds(longest));
  }

private:
  std::shared_ptr<const families> f_;
  Gauge& depth_;
  Counter& adds_;
  Histogram& queue_duration_;
  Histogram& work_duration_;
  Gauge& unfinished_;
  Gauge& longest_;
  Counter& retries_;
};

std::shared_ptr<Registry> not_null(std::shared_ptr<Registry> r) {
  if (!r) throw std::invalid_argument("kube::prometheus::metrics: the registry is null");
  return r;
}

}  // namespace

// ---- the provider --------------------------------------------------------------------

metrics::metrics(std::shared_ptr<Registry> registry)
    : registry_(not_null(std::move(registry))),
      families_(std::make_shared<const detail::families>(registry_)) {}

metrics::~metrics() = default;

std::string metrics::render() const { return ::prometheus::TextSerializer{}.Serialize(registry_->Collect()); }

std::shared_ptr<kube::metrics::client_metrics> metrics::client() { return std::make_shared<client_hooks>(families_); }

std::shared_ptr<kube::metrics::informer_metrics> metrics::informer(const kube::metrics::informer_id& id) {
  const Labels reflector{{"name", std::string(id.name)}};
  const Labels informer{{"name", std::string(id.name)},
                        {"group", std::string(id.group)},
                        {"version", std::string(id.version)},
                        {"resource", std::string(id.resource)}};
  return std::make_shared<informer_hooks>(families_, reflector, informer);
}

std::shared_ptr<kube::metrics::controller_metrics> metrics::controller(std::string_view name) {
  return std::make_shared<controller_hooks>(families_, std::string(name));
}

std::shared_ptr<kube::metrics::workqueue_metrics> metrics::workqueue(std::string_view name) {
  return std::make_shared<workqueue_hooks>(families_, Labels{{"name", std::string(name)}});
}

}  // namespace kube::prometheus
