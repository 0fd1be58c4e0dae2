#include "kernels/device.hpp"

#include <charconv>

#include "kernels/cpu_device.hpp"
#if KVACTOR_HAVE_CUDA
#include "kernels/cuda_device.hpp"
#endif

namespace kvactor::kernels {

buffer& buffer::operator=(buffer&& other) noexcept {
  if (this != &other) {
    reset();
    owner_ = std::exchange(other.owner_, nullptr);
    kind_ = other.kind_;
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void buffer::reset() {
  if (owner_ != nullptr && data_ != nullptr) owner_->release(kind_, data_, bytes_);
  owner_ = nullptr;
  data_ = nullptr;
  bytes_ = 0;
}

result<std::unique_ptr<device>> make_device(std::string_view name, const device_options& options) {
  if (name == "cpu") return std::unique_ptr<device>(std::make_unique<cpu_device>(options));
  if (name == "cuda" || name.substr(0, 5) == "cuda:") {
    device_options o = options;
    if (name.size() > 5) {
      const auto digits = name.substr(5);
      auto [end, ec] =
        std::from_chars(digits.data(), digits.data() + digits.size(), o.cuda_ordinal);
      if (ec != std::errc{} || end != digits.data() + digits.size())
        return error{"bad CUDA device name '" + std::string(name) + "' (expected cuda or cuda:N)"};
    }
#if KVACTOR_HAVE_CUDA
    auto d = cuda_device::create(o);
    if (!d) return d.error();
    return std::unique_ptr<device>(std::move(*d));
#else
    return error{"no CUDA device: kvactor was built without CUDA"};
#endif
  }
  return error{"unknown device '" + std::string(name) + "' (expected cpu or cuda)"};
}

} // namespace kvactor::kernels
