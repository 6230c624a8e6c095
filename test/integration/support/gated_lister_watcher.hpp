#pragma once

// Test support: a lister_watcher that can cut an informer off the server (as
// if its network were down) while a test changes things behind its back, and
// counts the list and watch requests that got through.

#include <kube/informer/lister_watcher.hpp>
#include <kube/dynamic/unstructured.hpp>

#include <boost/asio/error.hpp>

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>

namespace kube_test {
namespace asio = boost::asio;

class gated_lister_watcher final : public kube::informer::lister_watcher<kube::unstructured> {
public:
  explicit gated_lister_watcher(std::shared_ptr<kube::informer::lister_watcher<kube::unstructured>> inner)
      : inner_(std::move(inner)) {}

  std::atomic<int> list_requests{0};  // lists and streaming lists (watches with sendInitialEvents)
  std::atomic<int> watch_requests{0};

  void pause() {
    paused_ = true;
    std::lock_guard lk(m_);
    if (current_) current_->close();  // kube::watch_stream::close is thread-safe
  }
  void resume() { paused_ = false; }

  asio::awaitable<kube::informer::list_outcome<kube::unstructured>> list(const kube::list_params& p) override {
    if (paused_) co_return refused<kube::informer::list_outcome<kube::unstructured>>();
    ++list_requests;
    co_return co_await inner_->list(p);
  }
  asio::awaitable<kube::informer::watch_outcome<kube::unstructured>> watch(const kube::watch_params& p) override {
    if (paused_) co_return refused<kube::informer::watch_outcome<kube::unstructured>>();
    ++watch_requests;
    if (p.send_initial_events) ++list_requests;
    auto o = co_await inner_->watch(p);
    if (o.stream) o.stream = std::make_unique<gated_stream>(this, std::move(o.stream));
    co_return o;
  }

private:
  template <class R>
  static R refused() {
    R r;
    r.ec = asio::error::connection_refused;
    r.diag.set_client_message("gated: paused by the test");
    return r;
  }

  struct gated_stream final : kube::informer::event_stream<kube::unstructured> {
    gated_stream(gated_lister_watcher* g, std::unique_ptr<kube::informer::event_stream<kube::unstructured>> s)
        : g_(g),
          s_(std::move(s)) {
      std::lock_guard lk(g_->m_);
      g_->current_ = s_.get();
    }
    ~gated_stream() override {
      std::lock_guard lk(g_->m_);
      if (g_->current_ == s_.get()) g_->current_ = nullptr;
    }
    asio::awaitable<std::optional<kube::informer::event<kube::unstructured>>> next() override {
      if (g_->paused_) co_return cut();
      try {
        co_return co_await s_->next();
      } catch (const boost::system::system_error& e) {
        if (!g_->paused_ || e.code() != asio::error::operation_aborted) throw;
      }
      co_return cut();
    }
    void close() override { s_->close(); }
    static kube::informer::event<kube::unstructured> cut() {
      kube::informer::event<kube::unstructured> e;
      e.type = kube::informer::event_type::error;
      e.ec = asio::error::connection_reset;
      return e;
    }
    gated_lister_watcher* g_;
    std::unique_ptr<kube::informer::event_stream<kube::unstructured>> s_;
  };

  std::shared_ptr<kube::informer::lister_watcher<kube::unstructured>> inner_;
  std::atomic<bool> paused_{false};
  std::mutex m_;
  kube::informer::event_stream<kube::unstructured>* current_ = nullptr;
};

}  // namespace kube_test
