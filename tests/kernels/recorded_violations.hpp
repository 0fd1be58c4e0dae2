#pragma once
// For the CUDA shim's own tests: collects the shim's violation reports
// instead of aborting, for one test's lifetime.

#include <mutex>
#include <string>
#include <vector>

#include "kernels/cuda_shim/shim.hpp"

namespace kvactor::cuda_shim {

class recorded_violations {
public:
  recorded_violations() {
    previous_ = set_violation_handler([this](const std::string& m) {
      std::lock_guard lock{mutex_};
      messages_.push_back(m);
    });
  }
  ~recorded_violations() { set_violation_handler(previous_); }
  std::vector<std::string> messages() {
    std::lock_guard lock{mutex_};
    return messages_;
  }
  size_t count() { return messages().size(); }

private:
  std::mutex mutex_;
  std::vector<std::string> messages_;
  violation_fn previous_;
};

} // namespace kvactor::cuda_shim
