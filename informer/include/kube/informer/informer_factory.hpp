#pragma once

#include <kube/async.hpp>
#include <kube/base/strand.hpp>
#include <kube/dynamic/metadata_api.hpp>
#include <kube/informer/typed_lister_watcher.hpp>
#include <kube/informer/shared_informer.hpp>
#include <kube/informer/transform.hpp>

#include <kube/rest/client.hpp>
#include <kube/dynamic/dynamic_api.hpp>
#include <kube/discovery/group_version_resource.hpp>
#include <kube/dynamic/unstructured.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace kube::informer {

struct informer_factory_params {
  std::string namespace_name = {};              ///< empty: all namespaces
  std::chrono::milliseconds default_resync{0};  ///< informer_params::default_resync of every informer
  bool strip_managed_fields = false;  ///< for_resource, for_type and for_metadata informers drop managedFields
  /// for_resource, for_type and for_metadata informers sync by a streaming
  /// list (WatchList) before they fall back to a list
  /// (reflector_params::streaming_list).
  bool streaming_list = true;
  watch_error_handler on_watch_error = {};  ///< given to every informer
  /// Given to every informer without its own (informer_params::on_handler_backlog).
  std::function<void(const handler_backlog&)> on_handler_backlog = {};
  /// Given to every informer without its own bound (informer_params::
  /// handler_queue_limit, handler_overflow): 0, no bound.
  std::size_t handler_queue_limit = 0;
  handler_overflow_policy handler_overflow = handler_overflow_policy::block;
  /// Given to every informer whose own informer_params::log has no sink
  /// (handler exceptions and backlogs are logged there); default: stderr.
  kube::logger log = {};
  /// Sent with every list and watch of for_resource, for_type and
  /// for_metadata informers (client-go's WithTweakListOptions for the
  /// label selector), e.g. a sharded controller's label mode.
  std::string label_selector = {};
};

/// client-go's SharedInformerFactory: one informer per resource (or per
/// key for other object types), all started by one `async_run` and awaited
/// by one `async_wait_for_sync`.
///
/// Informers requested while the factory runs are started at once. Thread
/// safety: for_resource/informer may be called from any thread (a mutex
/// guards the registry; not on any hot path). The factory must outlive its
/// async_run, and every informer it made lives as long as the factory.
class informer_factory {
public:
  informer_factory(client c, informer_factory_params options = {})
      : client_(std::move(c)),
        opts_(std::move(options)),
        strand_(kube::make_strand_executor(client_.get_executor())),
        cv_(strand_, boost::asio::steady_timer::time_point::max()) {}

  informer_factory(const informer_factory&) = delete;
  informer_factory& operator=(const informer_factory&) = delete;

  /// The informer of `gvr` over the dynamic client (created on first use).
  /// `expected_kind` (e.g. "ConfigMap") enables the wrong-kind check.
  std::shared_ptr<shared_index_informer<unstructured>> for_resource(const group_version_resource& gvr,
                                                                    const std::string& expected_kind = {});

  /// The metadata-only informer of `gvr` over kube::metadata_api (created
  /// on first use): its cache holds k8s::meta::v1::PartialObjectMetadata —
  /// names, labels, annotations, owner references, resourceVersion... but
  /// no spec, data or status. For any resource whose objects have
  /// ObjectMeta, built-in or custom; strip_managed_fields applies. Needs
  /// kube::k8s (the generated meta/v1 types).
  std::shared_ptr<shared_index_informer<partial_object_metadata>> for_metadata(const group_version_resource& gvr);

  /// The informer of the typed resource T (a generated or CRD type) over
  /// kube::api<T> (created on first use). strip_managed_fields applies.
  template <class T>
    requires resource<T> std::shared_ptr<shared_index_informer<T>> for_type() {
      std::string key = "typed:";
      key.append(resource_traits<T>::api_version).append("/").append(resource_traits<T>::plural);
      return informer<T>(key, [&]() {
        const auto gv = group_version::parse(resource_traits<T>::api_version).value_or(group_version{});
        auto o = params_for<T>({gv.group, gv.version, std::string(resource_traits<T>::plural)});
        auto a = resource_traits<T>::namespaced && !opts_.namespace_name.empty() ? api<T>(client_, opts_.namespace_name)
                                                                                 : api<T>(client_);
        typed_lister_watcher_params lo;
        lo.label_selector = opts_.label_selector;
        lo.strip_managed_fields = opts_.strip_managed_fields;
        auto lw = std::make_shared<typed_lister_watcher<T>>(std::move(a), std::move(lo));
        return std::pair{std::shared_ptr<lister_watcher<T>>(std::move(lw)), std::move(o)};
      });
    }

  /// The hooks of an informer from the client's metrics provider
  /// (client_params::metrics); null without one.
  [[nodiscard]] std::shared_ptr<kube::metrics::informer_metrics> informer_metrics(std::string_view name,
                                                                                  std::string_view group,
                                                                                  std::string_view version,
                                                                                  std::string_view resource) const {
    const auto& p = client_.metrics_provider();
    return p ? p->informer({.name = name, .group = group, .version = version, .resource = resource}) : nullptr;
  }

  /// The informer registered under `key`, created by `make` on first use.
  /// `make` returns {lister_watcher, informer_params}; the factory's
  /// default_resync, on_watch_error and log fill options left empty.
  template <class T, class Make>
  std::shared_ptr<shared_index_informer<T>> informer(const std::string& key, Make&& make) {
    std::lock_guard lk(m_);
    if (auto it = entries_.find(key); it != entries_.end()) {
      auto p = std::static_pointer_cast<shared_index_informer<T>>(it->second.informer);
      return p;
    }
    auto [lw, o] = std::forward<Make>(make)();
    if (o.default_resync.count() == 0) {
      o.default_resync = opts_.default_resync;
    }
    if (!o.on_watch_error) {
      o.on_watch_error = opts_.on_watch_error;
    }
    if (!o.on_handler_backlog) {
      o.on_handler_backlog = opts_.on_handler_backlog;
    }
    if (o.handler_queue_limit == 0) {
      o.handler_queue_limit = opts_.handler_queue_limit;
      o.handler_overflow = opts_.handler_overflow;
    }
    if (!o.log.sink) {
      o.log = opts_.log;
    }
    auto inf = std::make_shared<shared_index_informer<T>>(client_.get_executor(), std::move(lw), std::move(o));
    entry e;
    e.informer = inf;
    e.strand = inf->get_executor();
    e.start = [inf](boost::asio::cancellation_slot slot, std::function<void()> done) {
      inf->async_run(boost::asio::bind_cancellation_slot(slot, [done = std::move(done)](error_code) { done(); }));
    };
    e.wait_synced = [inf]() { return inf->async_wait_for_sync(boost::asio::use_awaitable); };
    e.synced = [inf]() { return inf->has_synced(); };
    e.signal = std::make_shared<boost::asio::cancellation_signal>();
    entries_.emplace(key, std::move(e));
    boost::asio::post(strand_, [this] { cv_.cancel(); });  // a running factory starts it
    return inf;
  }

  /// Runs every informer (present and future) until cancelled; then stops
  /// them all and completes with operation_aborted.
  template <class Token = kube::use_awaitable_t>
  auto async_run(Token&& token = {}) {
    return kube::async_spawn(
        strand_, [this] { return run(); }, std::forward<Token>(token));
  }

  /// Completes once every informer registered so far has synced.
  template <class Token = kube::use_awaitable_t>
  auto async_wait_for_sync(Token&& token = {}) {
    return kube::async_spawn(
        strand_, [this] { return wait_all(); }, std::forward<Token>(token));
  }

  /// True if every informer registered so far has synced.
  [[nodiscard]] bool has_synced() const {
    std::lock_guard lk(m_);
    for (const auto& [k, e] : entries_) {
      if (!e.synced()) {
        return false;
      }
    }
    return true;
  }

  [[nodiscard]] const client& get_client() const noexcept { return client_; }
  /// The namespace its informers of namespaced resources watch (empty: all).
  [[nodiscard]] const std::string& namespace_name() const noexcept { return opts_.namespace_name; }
  [[nodiscard]] const informer_factory_params& params() const noexcept { return opts_; }

private:
  /// What the factory's own informers (for_resource, for_metadata,
  /// for_type) share: named after the resource, its metrics hooks, the
  /// factory's list mode.
  template <class T>
  [[nodiscard]] informer_params<T> params_for(const group_version_resource& gvr) const {
    informer_params<T> o;
    o.reflector.streaming_list = opts_.streaming_list;
    o.name = gvr.resource;
    o.metrics = informer_metrics(o.name, gvr.group, gvr.version, gvr.resource);
    return o;
  }

  struct entry {
    std::shared_ptr<void> informer;
    boost::asio::any_io_executor strand;
    std::function<void(boost::asio::cancellation_slot, std::function<void()>)> start;
    std::function<boost::asio::awaitable<void>()> wait_synced;
    std::function<bool()> synced;
    std::shared_ptr<boost::asio::cancellation_signal> signal;
    bool started = false;
  };

  void start_pending() {
    std::lock_guard lk(m_);
    for (auto& [k, e] : entries_) {
      if (e.started) {
        continue;
      }
      e.started = true;
      ++active_;
      auto sig = e.signal;
      // async_run's initiation runs here; the informer's coroutine runs on
      // its own strand, where the cancellation signal is emitted too.
      boost::asio::post(e.strand, [start = e.start, sig, this] {
        start(sig->slot(), [this] {
          boost::asio::post(strand_, [this] {
            --active_;
            cv_.cancel();
          });
        });
      });
    }
  }

  boost::asio::awaitable<void> run() {
    if (running_) {
      throw boost::system::system_error(make_error_code(client_errc::already_running));
    }
    running_ = true;
    for (;;) {
      start_pending();
      auto [ec] = co_await cv_.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
      (void)ec;
      auto cs = co_await boost::asio::this_coro::cancellation_state;
      if (cs.cancelled() != boost::asio::cancellation_type::none) {
        break;
      }
    }
    // Stop every informer, wait until all have stopped.
    co_await boost::asio::this_coro::reset_cancellation_state();
    co_await boost::asio::this_coro::throw_if_cancelled(false);
    {
      std::lock_guard lk(m_);
      for (auto& [k, e] : entries_) {
        if (e.started) {
          boost::asio::post(e.strand, [sig = e.signal] { sig->emit(boost::asio::cancellation_type::terminal); });
        }
      }
    }
    while (active_ > 0) {
      auto [ec] = co_await cv_.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
      (void)ec;
    }
    {
      std::lock_guard lk(m_);
      for (auto& [k, e] : entries_) {
        e.started = false;
        e.signal = std::make_shared<boost::asio::cancellation_signal>();
      }
    }
    running_ = false;
    throw boost::system::system_error(boost::asio::error::operation_aborted);
  }

  boost::asio::awaitable<void> wait_all() {
    std::vector<std::function<boost::asio::awaitable<void>()>> waits;
    {
      std::lock_guard lk(m_);
      for (auto& [k, e] : entries_) {
        waits.push_back(e.wait_synced);
      }
    }
    for (auto& w : waits) {
      co_await w();
    }
  }

  client client_;
  informer_factory_params opts_;
  boost::asio::any_io_executor strand_;  // a strand (make_strand_executor)
  boost::asio::steady_timer cv_;
  mutable std::mutex m_;
  std::map<std::string, entry> entries_;
  std::size_t active_ = 0;  // strand_ only
  bool running_ = false;    // strand_ only
};

}  // namespace kube::informer
