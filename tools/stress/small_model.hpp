#pragma once
// small_model: the model a stress run uses when none is given — a tiny model
// much smaller than the default one (2 layers, hidden 64, vocab 512), written
// into a temporary folder that is removed again.

#include <filesystem>
#include <string>
#include <variant>

namespace kvactor::stress {

class small_model {
public:
  // Writes the model; the folder or an error message.
  static std::variant<small_model, std::string> write(uint64_t seed);
  small_model(small_model&& other) noexcept : dir_(std::move(other.dir_)) { other.dir_.clear(); }
  small_model(const small_model&) = delete;
  ~small_model();

  const std::filesystem::path& dir() const { return dir_; }
  static constexpr int32_t vocab_size = 512;

private:
  explicit small_model(std::filesystem::path dir) : dir_(std::move(dir)) {}
  std::filesystem::path dir_;
};

} // namespace kvactor::stress
