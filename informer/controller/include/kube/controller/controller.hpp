#pragma once

// kube::controller::controller<T>: a reconcile loop for the primary type T
// over informers and a rate-limited workqueue (client-go's sample-controller
// pattern, controller-runtime's builder, kube-rs's Controller).
// Size: about 690 lines: controller<T> is a template over the primary type
// whose parts (owns, watches, the read-your-writes wait, sharding hooks) use
// one private state; its non-template work loop and sharding are compiled in
// informer/controller/src.
//
//   informer_factory factory(client, {.namespace_name = "demo"});
//   controller_params o;
//   o.name = "foo-controller";
//   o.workers = 2;
//   controller<Foo> ctrl(factory, o);
//   ctrl.owns<k8s::apps::v1::Deployment>();            // Deployment events -> its controller Foo
//   ctrl.watches<ConfigMap>([](const ConfigMap& cm) {  // any other type: object -> keys
//     return std::vector<std::string>{...};
//   });
//   co_spawn(io, factory.async_run(...));              // the informers (as client-go: factory.Start)
//   ctrl.async_run([&](reconcile_request<Foo> req) -> awaitable<reconcile_result> {
//     if (req.gone()) co_return reconcile_result::done();
//     ...
//     co_return reconcile_result::requeue_after(5min);
//   }, token);
//
// What is enqueued (keys "namespace/name"):
//   - the primary T: its own key on add, update (including resyncs) and delete;
//   - owned types U (owns<U>()): the key of the object's controller owner of
//     type T (ownerReferences with controller=true, kind and group of T; see
//     owner.hpp); on update both the old and the new owner;
//   - watched types U (watches<U>(map)): every key map(obj) returns, for add,
//     update (old and new object) and delete (the last known state); keys
//     that are not "namespace/name" or "name" are dropped.
//   Each of them takes an event filter (predicate.hpp): the primary's is
//   controller_params::primary_filter, owns<U>(filter), watches<U>(map,
//   filter); an event it drops enqueues nothing.
// The reconcile receives the key and the primary object from the cache
// (null when gone). The rest — results, backoff, one reconcile per key at a
// time, graceful shutdown — is the work_loop's (work_loop.hpp).
//
// async_run first waits until every informer this controller uses has
// synced and its handlers have seen the initial list, so the first
// reconcile sees complete caches. It does not run the informers: run the
// factory (or the informers you passed) next to it, and stop the controller
// before (or with) the informers. Register owns/watches before async_run.
//
// Threads: handlers run on their own strands and only enqueue (any
// thread); reconciles run on the controller's strand (see work_loop). The
// controller must outlive its async_run; its handlers stay with the
// informers and do nothing once it is gone.

#include <kube/controller/owner.hpp>
#include <kube/controller/predicate.hpp>
#include <kube/controller/reconcile.hpp>
#include <kube/controller/sharding.hpp>
#include <kube/controller/work_loop.hpp>
#include <kube/controller/write_memory.hpp>
#include <kube/logger.hpp>
#include <kube/rest/write_observer.hpp>
#include <kube/discovery/group_version.hpp>
#include <kube/informer/clock.hpp>
#include <kube/informer/informer_factory.hpp>
#include <kube/informer/key_func.hpp>
#include <kube/informer/lister.hpp>
#include <kube/informer/shared_informer.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <kube/async.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <chrono>
#include <initializer_list>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace kube::controller {

/// Options of controller<T>: the work loop's (name, workers, rate limiter,
/// queue clock/metrics, on_reconciled hook) plus the owner type used by
/// owns<U>() when T is not a resource type (e.g. kube::unstructured).
struct controller_params : work_loop_params {
  std::optional<owner_type> owner = std::nullopt;
  /// Read your own writes (docs/guides/controllers.md): what a reconcile
  /// writes through the factory's client (and remember_writes_of's) is
  /// remembered per key, and the key's next reconcile first waits until
  /// the controller's informers have observed those resourceVersions.
  /// Off: every reconcile reads the caches as they are.
  bool read_your_writes = true;
  /// The longest that wait lasts; the reconcile then runs on the caches as
  /// they are (controller_metrics::on_cache_wait says it did not catch up).
  std::chrono::milliseconds read_your_writes_timeout{10'000};
  /// Where a read-your-writes wait that reached its timeout is logged
  /// (warning); the default writes warnings to stderr.
  kube::logger log = {};
  /// Sharding (docs/guides/sharding.md): this replica reconciles only the
  /// keys the ring of live replicas assigns to it, and hands keys over
  /// without two replicas running one key at once. Needs the factory
  /// constructor (the client writes the membership Lease).
  std::optional<sharding_params> sharding = std::nullopt;
  /// Which events of the primary type reach the queue (predicate.hpp), e.g.
  /// generation_changed() for a controller that writes its own status. The
  /// default lets every event through.
  predicate primary_filter = {};
};

template <class T>
class controller {
public:
  using object_ptr = std::shared_ptr<const T>;
  using reconcile_fn = std::function<boost::asio::awaitable<reconcile_result>(reconcile_request<T>)>;

  /// Primary informer from the factory (factory.for_type<T>()); owns<U>() and
  /// watches<U>(map) take their informers from the same factory. The factory
  /// must outlive the controller.
  controller(informer::informer_factory& factory, controller_params options = {}) requires resource<T>
      : controller(factory.get_client().get_executor(), factory.for_type<T>(),
                   with_metrics(std::move(options), factory)) {
    factory_ = &factory;
    scope_last<T>(factory);  // the primary, tracked by the constructor above
    remember_writes_of(factory.get_client());
    if (sharding_) {
      shard_ = std::make_shared<shard_coordinator>(factory.get_client(), *sharding_, shard_hooks());
      if (sharding_->label_objects) {
        if (factory.params().label_selector != shard_label_selector(*sharding_)) {
          throw std::invalid_argument("kube::controller::controller: sharding label mode needs the factory's "
                                      "label_selector to be \"" +
                                      shard_label_selector(*sharding_) + "\", not \"" +
                                      factory.params().label_selector + "\"");
        }
        const auto& inf = primary_;
        labeled_.push_back(labeled_resource_of<T>(
            factory,
            [](const partial_object_metadata& m) -> std::optional<std::string> {
              return m.namespace_().empty() ? std::string(m.name())
                                            : std::string(m.namespace_()) + "/" + std::string(m.name());
            },
            [inf]() {
              std::vector<shard_labeled_resource::cached_object> out;
              const auto key_of = informer::default_key_func<T>();
              for (const auto& o : inf->cache()->list()) {
                out.push_back({std::string(o->namespace_()), std::string(o->name()), std::string(o->resource_version()),
                               key_of(*o)});
              }
              return out;
            }));
      }
    }
  }

  /// Any informer of T (e.g. over the dynamic client or a scripted fake).
  controller(const boost::asio::any_io_executor& ex, std::shared_ptr<informer::shared_index_informer<T>> primary,
             controller_params options = {})
      : primary_(std::move(primary)),
        owner_(options.owner),
        read_your_writes_timeout_(options.read_your_writes_timeout),
        memory_(options.read_your_writes ? std::make_shared<write_memory>() : nullptr),
        loop_(std::make_shared<work_loop>(ex, options)),
        log_(options.log),
        name_(options.name) {
    if (!primary_) {
      throw std::invalid_argument("kube::controller::controller: the primary informer is null");
    }
    if (options.sharding) {
      validate(*options.sharding);  // the factory constructor makes the coordinator
      sharding_ = std::move(options.sharding);
    }
    if constexpr (resource<T>) {
      if (!owner_) {
        owner_ = owner_type_of<T>();
      }
    }
    event_handler_for_primary(options.primary_filter);
  }

  controller(const controller&) = delete;
  controller& operator=(const controller&) = delete;
  /// The handlers stay registered with the informers but hold only a
  /// weak reference to the work loop: after the controller is gone they do
  /// nothing. (They are not removed: the informer's remove_handler posts
  /// work that must not outlive the informer, which the factory may destroy
  /// right after the controller.)
  ~controller() = default;

  /// Events on U enqueue U's controller owner of type T; `filter` chooses
  /// which events count (predicate.hpp; default: all). From the factory.
  template <class U>
  requires resource<U> controller& owns(predicate filter = {}) {
    auto inf = require_factory().template for_type<U>();
    owns<U>(inf, std::move(filter));
    scope_last<U>(*factory_);
    if (sharding_ && sharding_->label_objects) {
      // Label mode: a child carries its controller owner's label.
      const owner_type owner = *owner_;
      labeled_.push_back(labeled_resource_of<U>(
          *factory_, [owner](const partial_object_metadata& m) { return controller_owner_key(m, owner); },
          [inf, owner]() {
            std::vector<shard_labeled_resource::cached_object> out;
            for (const auto& o : inf->cache()->list()) {
              if (auto k = controller_owner_key(*o, owner)) {
                out.push_back({std::string(o->namespace_()), std::string(o->name()), std::string(o->resource_version()),
                               std::move(*k)});
              }
            }
            return out;
          }));
    }
    return *this;
  }

  /// The same over a given informer of U.
  template <class U>
  controller& owns(std::shared_ptr<informer::shared_index_informer<U>> inf, predicate filter = {}) {
    if (!owner_) {
      throw std::logic_error("kube::controller::controller::owns: set controller_params::owner for this type");
    }
    const owner_type owner = *owner_;
    return watches<U>(
        std::move(inf),
        [owner](const U& obj) {
          std::vector<std::string> keys;
          if (auto k = controller_owner_key(obj, owner)) {
            keys.push_back(std::move(*k));
          }
          return keys;
        },
        std::move(filter));
  }

  /// Events on U enqueue the keys `map(const U&)` returns (a container of
  /// strings); `filter` chooses which events count (predicate.hpp; default:
  /// all). From the factory.
  template <class U, class Map>
  requires resource<U> controller& watches(Map map, predicate filter = {}) {
    watches<U>(require_factory().template for_type<U>(), std::move(map), std::move(filter));
    scope_last<U>(*factory_);
    return *this;
  }

  /// The same over a given informer of U.
  template <class U, class Map>
  controller& watches(std::shared_ptr<informer::shared_index_informer<U>> inf, Map map, predicate filter = {}) {
    if (!inf) {
      throw std::invalid_argument("kube::controller::controller::watches: the informer is null");
    }
    // Maps objects to keys and enqueues each distinct valid key once.
    auto enqueue_mapped = [wl = std::weak_ptr<work_loop>(loop_),
                           map = std::move(map)](std::initializer_list<const std::shared_ptr<const U>*> objs) {
      auto loop = wl.lock();
      if (!loop) {
        return;  // the controller is gone
      }
      std::vector<std::string> keys;
      for (const auto* obj : objs) {
        if (!*obj) {
          continue;
        }
        for (const auto& k : map(**obj)) {
          std::string key(k);
          // A key that cannot name an object is dropped; duplicates once.
          if (parse_key(key) && std::find(keys.begin(), keys.end(), key) == keys.end()) {
            keys.push_back(std::move(key));
          }
        }
      }
      for (const auto& k : keys) {
        loop->enqueue(k);
      }
    };
    informer::event_handler<U> h;
    h.on_add = [enqueue_mapped, filter](const std::shared_ptr<const U>& o, bool) {
      if (passes<U>(filter, event_kind::added, nullptr, o.get())) {
        enqueue_mapped({&o});
      }
    };
    h.on_update = [enqueue_mapped, filter](const std::shared_ptr<const U>& a, const std::shared_ptr<const U>& b) {
      if (passes<U>(filter, event_kind::updated, a.get(), b.get())) {
        enqueue_mapped({&a, &b});  // the old and the new owner (once if the same)
      }
    };
    h.on_delete = [enqueue_mapped, filter](const informer::deleted_object<U>& d) {
      const auto& o = informer::object_of(d);
      if (passes<U>(filter, event_kind::deleted, nullptr, o.get())) {
        enqueue_mapped({&o});
      }
    };
    track(inf, std::move(h));
    return *this;
  }

  /// Queues a key of T by hand (any thread). std::invalid_argument for a
  /// key that is not "namespace/name" or "name".
  void enqueue(const std::string& key) {
    if (!parse_key(key)) {
      throw std::invalid_argument("kube::controller::controller::enqueue: malformed key \"" + key +
                                  "\" (want namespace/name or name)");
    }
    loop_->enqueue(key);
  }

  /// Writes through `c` (any copy of it) count as this controller's own
  /// (controller_params::read_your_writes): the factory's client is
  /// registered by the factory constructor; a controller over informers
  /// given by hand registers the clients its reconciles write with. No
  /// effect with read_your_writes off.
  void remember_writes_of(const kube::client& c) {
    if (memory_) {
      kube::add_write_observer(c, memory_);
    }
  }

  /// What the reconciles wrote and the next reconciles will wait for (null
  /// with read_your_writes off).
  [[nodiscard]] const std::shared_ptr<write_memory>& writes() const noexcept { return memory_; }

  /// Runs until cancelled; completion void(error_code): operation_aborted
  /// after a graceful stop (see work_loop).
  template <class Token = kube::use_awaitable_t>
  auto async_run(reconcile_fn reconcile, Token&& token = {}) {
    if (!reconcile) {
      throw std::invalid_argument("kube::controller::controller::async_run: reconcile is empty");
    }
    auto wrapped = [this,
                    r = std::move(reconcile)](const std::string& key) -> boost::asio::awaitable<reconcile_result> {
      reconcile_request<T> req;
      req.key = key;
      if (auto k = parse_key(key)) {
        req.namespace_ = std::move(k->namespace_);
        req.name = std::move(k->name);
      } else {
        // Not reachable through enqueue() or the handlers (they check);
        // reported as an error if it happens anyway.
        co_return reconcile_result::failed(make_error_code(boost::system::errc::invalid_argument),
                                           "malformed key \"" + key + "\" (want namespace/name or name)");
      }
      // Sharded: only keys this replica owns, and only once every replica
      // has acknowledged the view that gives them to it (the others keep
      // them until then, and give them back through on_agreed).
      std::optional<shard_turn> turn;
      if (shard_) {
        if (shard_->try_start(key) != shard_decision::mine) {
          co_return reconcile_result::done();
        }
        turn.emplace(*shard_, key);
      }
      if (memory_) {
        co_await catch_up(key);
      }
      req.object = primary_->cache()->get_by_key(key);
      if (!req.object && !labeled_.empty()) {
        // Label mode: not in this replica's cache may mean "not labelled for
        // it yet" rather than deleted; only a deleted object is reported gone.
        const bool exists = co_await shard_->primary_exists(key);
        if (exists) {
          co_return reconcile_result::done();  // its label brings it back
        }
      }
      // Admitted before the waits above (up to read_your_writes_timeout): if
      // this replica's renewal fell behind meanwhile, another may own the
      // key by now. Checked again with nothing awaited between here and
      // the reconcile's start; a waiting key comes back through on_agreed.
      if (shard_ && shard_->confirm(key) != shard_decision::mine) {
        co_return reconcile_result::done();
      }
      // The writes made until the reconcile ends are remembered for the key.
      std::optional<reconcile_writes> remembered;
      if (memory_) {
        remembered.emplace(*memory_, key);
      }
      // The request is passed outside the co_await expression (g++ 12 and
      // class temporaries inside co_await: see docs/guides/client.md).
      auto op = r(std::move(req));
      co_return co_await std::move(op);
    };
    if (memory_) {
      std::vector<watched_resource> resources;
      watched_.clear();
      for (std::size_t i = 0; i < tracked_.size(); ++i) {
        const auto& t = tracked_[i];
        if (t.wait_for_resource_version) {
          resources.push_back({t.group, t.resource, t.namespace_name, t.label_selector});
          watched_.push_back(i);
        }
      }
      memory_->set_resources(std::move(resources));
    }
    if (sharding_ && !shard_) {
      throw std::logic_error("kube::controller::controller: sharding needs the factory constructor");
    }
    if (shard_) {
      if (!labeled_.empty()) {
        shard_->label(labeled_);
      }
      return kube::async_spawn(
          loop_->get_executor(), [this, w = std::move(wrapped)]() mutable { return run_sharded(std::move(w)); },
          std::forward<Token>(token));
    }
    return loop_->async_run(
        std::move(wrapped), [this] { return wait_synced(); }, std::forward<Token>(token));
  }

  /// Label mode: the label {key, value} to put on the objects a reconcile
  /// creates, so that they reach this replica's informers at once (else
  /// the replica labels them after it sees them unlabelled). Empty
  /// otherwise.
  [[nodiscard]] std::optional<std::pair<std::string, std::string>> shard_label() const {
    if (!sharding_ || !sharding_->label_objects) {
      return std::nullopt;
    }
    return std::pair{shard_label_key(*sharding_), sharding_->identity};
  }

  /// The sharding coordinator (null without controller_params::sharding).
  [[nodiscard]] const std::shared_ptr<shard_coordinator>& shard() const noexcept { return shard_; }

  /// The primary informer and a lister over its cache (any thread).
  [[nodiscard]] const std::shared_ptr<informer::shared_index_informer<T>>& primary() const noexcept { return primary_; }
  [[nodiscard]] informer::lister<T> primary_lister(informer::labels_func<T> labels = {}) const {
    return primary_->make_lister(std::move(labels));
  }
  [[nodiscard]] work_loop& loop() noexcept { return *loop_; }
  [[nodiscard]] const work_loop& loop() const noexcept { return *loop_; }
  [[nodiscard]] work_loop_stats stats() const noexcept { return loop_->stats(); }

private:
  struct tracked {
    /// Completes once the informer has synced and the handler has received
    /// its cache.
    std::function<boost::asio::awaitable<void>()> wait_synced;
    /// The informer's resource, and its async_wait_for_resource_version
    /// (empty: not a resource type, not waited for).
    std::string group, resource;
    std::string namespace_name;  ///< the one it watches, when known (a factory's); empty: any
    std::string label_selector;  ///< the one it lists with, when known (a factory's); empty: everything
    std::function<boost::asio::awaitable<std::tuple<error_code>>(std::string)> wait_for_resource_version;
  };

  // A started key, finished when the reconcile ends (also by an exception).
  struct shard_turn {
    shard_turn(shard_coordinator& c, const std::string& k)
        : coordinator(c),
          key(k) {}
    shard_turn(const shard_turn&) = delete;
    shard_turn& operator=(const shard_turn&) = delete;
    ~shard_turn() { coordinator.finish(key); }
    shard_coordinator& coordinator;
    std::string key;
  };

  // Label mode: resource U of the factory, labelled by the coordinator.
  template <class U>
  static shard_labeled_resource
  labeled_resource_of(const informer::informer_factory& f,
                      std::function<std::optional<std::string>(const partial_object_metadata&)> key_of,
                      std::function<std::vector<shard_labeled_resource::cached_object>()> cached) {
    const auto gv = group_version::parse(resource_traits<U>::api_version).value_or(group_version{});
    shard_labeled_resource r;
    r.gvr = group_version_resource{gv.group, gv.version, std::string(resource_traits<U>::plural)};
    r.namespace_name = resource_traits<U>::namespaced ? f.namespace_name() : std::string();
    r.key_of = std::move(key_of);
    r.cached = std::move(cached);
    return r;
  }

  shard_coordinator_hooks shard_hooks() {
    shard_coordinator_hooks h;
    h.on_agreed = [wl = std::weak_ptr<work_loop>(loop_), primary = primary_, this](bool new_view) {
      auto loop = wl.lock();
      if (!loop || !shard_) {
        return;
      }
      for (const auto& k : shard_->take_waiting()) {
        loop->enqueue(k);
      }
      if (new_view) {
        // The keys this replica gained (its handlers dropped them while
        // they were another's).
        for (const auto& k : primary->cache()->list_keys()) {
          if (shard_->decide(k) == shard_decision::mine) {
            loop->enqueue(k);
          }
        }
      }
    };
    return h;
  }

  // The work loop and the membership, stopped together: the work loop
  // drains first (graceful), then the coordinator releases the Lease.
  template <class Reconcile>
  boost::asio::awaitable<void> run_sharded(Reconcile wrapped) {
    using namespace boost::asio::experimental::awaitable_operators;
    auto ready = [this]() -> boost::asio::awaitable<void> {
      co_await wait_synced();
      co_await shard_->async_wait_joined(boost::asio::use_awaitable);
    };
    boost::asio::cancellation_signal stop_shard;
    auto shard_done = std::make_shared<boost::asio::steady_timer>(loop_->get_executor(),
                                                                  boost::asio::steady_timer::time_point::max());
    error_code shard_ec;
    bool shard_finished = false;
    shard_->async_run(boost::asio::bind_cancellation_slot(
        stop_shard.slot(), boost::asio::bind_executor(loop_->get_executor(), [&, shard_done](error_code ec) {
          shard_ec = ec;
          shard_finished = true;
          shard_done->cancel();
        })));
    // The membership ending by itself (an error) stops the work loop too.
    auto watch_shard = [&]() -> boost::asio::awaitable<void> {
      while (!shard_finished) {
        auto [wec] = co_await shard_done->async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
        (void)wec;
        auto cs = co_await boost::asio::this_coro::cancellation_state;
        if (cs.cancelled() != boost::asio::cancellation_type::none) {
          co_return;
        }
      }
    };
    auto run_loop =
        loop_->async_run(std::move(wrapped), std::move(ready), boost::asio::as_tuple(boost::asio::use_awaitable));
    auto both = co_await (std::move(run_loop) || watch_shard());
    const error_code ec = both.index() == 0 ? std::get<0>(std::get<0>(both)) : error_code{};
    // Not cancellable from here on: the Lease must be released.
    co_await boost::asio::this_coro::reset_cancellation_state();
    co_await boost::asio::this_coro::throw_if_cancelled(false);
    stop_shard.emit(boost::asio::cancellation_type::terminal);
    while (!shard_finished) {
      auto [wec] = co_await shard_done->async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
      (void)wec;
    }
    if (shard_ec && shard_ec != boost::asio::error::operation_aborted) {
      throw boost::system::system_error(shard_ec);
    }
    throw boost::system::system_error(ec ? ec : make_error_code(boost::asio::error::operation_aborted));
  }

  // The informer just tracked came from `f`: a namespaced U is watched in
  // the factory's namespace only (writes elsewhere are not waited for).
  template <class U>
  void scope_last(const informer::informer_factory& f) {
    if constexpr (resource<U>) {
      if (resource_traits<U>::namespaced && !tracked_.empty()) {
        tracked_.back().namespace_name = f.namespace_name();
      }
      if (!tracked_.empty()) {
        tracked_.back().label_selector = f.params().label_selector;
      }
    }
  }

  // One reconcile's writes: from its start to its end (also when it throws
  // or is cancelled).
  struct reconcile_writes {
    reconcile_writes(write_memory& m, const std::string& k)
        : memory(m),
          key(k),
          id(m.begin()) {}
    reconcile_writes(const reconcile_writes&) = delete;
    reconcile_writes& operator=(const reconcile_writes&) = delete;
    ~reconcile_writes() { memory.end(id, key); }
    write_memory& memory;
    std::string key;
    std::uint64_t id;
  };

  // Waits (bounded, by the work loop's clock) until the informers have
  // observed what the key's earlier reconciles wrote.
  boost::asio::awaitable<void> catch_up(const std::string& key) {
    const std::vector<written_version> pending = memory_->take(key);
    if (pending.empty()) {
      co_return;
    }
    using namespace boost::asio::experimental::awaitable_operators;
    const kube::clock& clk = loop_->queue().time_source();
    const auto start = clk.now();
    const auto deadline = start + read_your_writes_timeout_;
    // Each write waits on the one informer it was kept for (write_memory:
    // the informers whose namespace and selector could show it).
    bool caught_up = true;
    std::string behind;  // the resources not caught up, for the log line
    for (const auto& w : pending) {
      if (w.watched >= watched_.size()) {
        continue;
      }
      const auto& t = tracked_[watched_[w.watched]];
      const auto left = deadline - clk.now();
      bool ok = left > kube::clock::duration::zero();
      if (ok) {
        auto done = co_await (t.wait_for_resource_version(w.resource_version) || bound(clk, left));
        ok = done.index() == 0 && !std::get<0>(std::get<0>(done));  // else the bound passed, or the informer stopped
      }
      if (!ok) {
        caught_up = false;
        behind += (behind.empty() ? "" : ", ") + (w.group.empty() ? w.resource : w.resource + "." + w.group) +
                  (t.namespace_name.empty() ? "" : " in " + t.namespace_name) + " at resourceVersion " +
                  w.resource_version;
      }
    }
    if (const auto& m = loop_->metrics()) {
      m->on_cache_wait(clk.now() - start, caught_up);
    }
    if (!caught_up && log_.enabled(log_level::warning)) {
      log_.log(log_level::warning, "controller " + name_ + ": " + key + ": the caches did not show " + behind +
                                       " (written by the key's last reconcile) within " +
                                       std::to_string(read_your_writes_timeout_.count()) +
                                       " ms (read_your_writes_timeout); reconciling on the caches as they are");
    }
  }

  // Completes after `d`, also when cancelled: the wait it bounds is
  // cancelled with it.
  static boost::asio::awaitable<void> bound(const kube::clock& clk, kube::clock::duration d) {
    try {
      co_await informer::sleep(clk, d);
    } catch (const boost::system::system_error&) {  // NOLINT(bugprone-empty-catch): cancelled
    }
  }

  // The factory's client's metrics provider, unless the options name one.
  static controller_params with_metrics(controller_params o, const informer::informer_factory& f) {
    if (!o.metrics) {
      o.metrics = f.get_client().metrics_provider();
    }
    return o;
  }

  informer::informer_factory& require_factory() const {
    if (factory_ == nullptr) {
      throw std::logic_error(
          "kube::controller::controller: owns<U>()/watches<U>(map) without an informer need the factory constructor");
    }
    return *factory_;
  }

  void event_handler_for_primary(const predicate& filter) {
    informer::event_handler<T> h;
    auto key_of = informer::default_key_func<T>();
    static_assert(informer::has_object_meta<T>, "the primary type needs namespace_() and name()");
    const std::weak_ptr<work_loop> wl = loop_;  // the handlers may outlive the controller
    h.on_add = [wl, key_of, filter](const object_ptr& o, bool) {
      if (!passes<T>(filter, event_kind::added, nullptr, o.get())) {
        return;
      }
      if (auto l = wl.lock()) l->enqueue(key_of(*o));
    };
    h.on_update = [wl, key_of, filter](const object_ptr& old, const object_ptr& o) {
      if (!passes<T>(filter, event_kind::updated, old.get(), o.get())) {
        return;
      }
      if (auto l = wl.lock()) l->enqueue(key_of(*o));
    };
    h.on_delete = [wl, key_of, filter](const informer::deleted_object<T>& d) {
      if (!passes<T>(filter, event_kind::deleted, nullptr, informer::object_of(d).get())) {
        return;
      }
      auto l = wl.lock();
      if (!l) {
        return;
      }
      if (const auto* t = std::get_if<informer::deleted_final_state_unknown<T>>(&d)) {
        l->enqueue(t->key);
      } else if (const auto& o = std::get<object_ptr>(d)) {
        l->enqueue(key_of(*o));
      }
    };
    track(primary_, std::move(h));
  }

  // Whether `filter` lets the event through, given the objects (null when
  // absent). An unstructured object whose metadata does not decode passes:
  // its reconcile sees it and can say what is wrong.
  template <class U>
  static bool passes(const predicate& filter, event_kind kind, const U* old_obj, const U* obj) {
    if (filter.passes_all()) {
      return true;
    }
    if constexpr (has_typed_metadata<U>) {
      return filter(event_view{kind, old_obj ? &old_obj->metadata : nullptr, obj ? &obj->metadata : nullptr});
    } else {
      static_assert(std::is_same_v<U, unstructured>,
                    "an event filter needs a generated type (its metadata member) or kube::unstructured");
      try {
        std::optional<k8s::meta::v1::ObjectMeta> old_meta, meta;
        if (old_obj) {
          old_meta = metadata_of(*old_obj);
        }
        if (obj) {
          meta = metadata_of(*obj);
        }
        return filter(event_view{kind, old_meta ? &*old_meta : nullptr, meta ? &*meta : nullptr});
      } catch (const std::exception&) {
        return true;
      }
    }
  }

  template <class U>
  void track(const std::shared_ptr<informer::shared_index_informer<U>>& inf, informer::event_handler<U> h) {
    if (loop_->started()) {
      throw std::logic_error("kube::controller::controller: register owns/watches before async_run");
    }
    auto reg = inf->add_handler(std::move(h));
    tracked t;
    t.wait_synced = [reg]() -> boost::asio::awaitable<void> {
      // The handler has run for every object of the informer's first list.
      co_await reg->async_wait_for_sync(boost::asio::use_awaitable);
    };
    if constexpr (resource<U>) {
      t.group = group_version::parse(resource_traits<U>::api_version).value_or(group_version{}).group;
      t.resource = std::string(resource_traits<U>::plural);
      t.wait_for_resource_version = [inf](std::string rv) {
        return inf->async_wait_for_resource_version(std::move(rv), boost::asio::as_tuple(boost::asio::use_awaitable));
      };
    }
    tracked_.push_back(std::move(t));
  }

  boost::asio::awaitable<void> wait_synced() {
    for (auto& t : tracked_) {
      co_await t.wait_synced();
    }
  }

  std::shared_ptr<informer::shared_index_informer<T>> primary_;
  std::optional<owner_type> owner_;
  informer::informer_factory* factory_ = nullptr;
  std::chrono::milliseconds read_your_writes_timeout_;
  std::shared_ptr<write_memory> memory_;  // null: read_your_writes off
  std::shared_ptr<work_loop> loop_;
  std::vector<tracked> tracked_;
  std::vector<std::size_t> watched_;  // write_memory's resource i is tracked_[watched_[i]]
  kube::logger log_;
  std::string name_;
  std::optional<sharding_params> sharding_;
  std::shared_ptr<shard_coordinator> shard_;     // null: not sharded
  std::vector<shard_labeled_resource> labeled_;  // label mode
};

}  // namespace kube::controller
