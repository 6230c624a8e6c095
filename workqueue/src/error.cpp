#include <kube/workqueue/error.hpp>

#include <string>

namespace kube::workqueue {
namespace {

class category final : public boost::system::error_category {
public:
  const char* name() const noexcept override { return "kube.workqueue"; }
  std::string message(int ev) const override {
    switch (static_cast<errc>(ev)) {
    case errc::shut_down:
      return "work queue is shut down";
    }
    return "unknown kube.workqueue error " + std::to_string(ev);
  }
};

}  // namespace

const boost::system::error_category& workqueue_category() noexcept {
  static const category instance;
  return instance;
}

}  // namespace kube::workqueue
