#include "tools/stress/small_model.hpp"

#include "model/tiny/tiny_model.hpp"

#include <unistd.h>

namespace kvactor::stress {

std::variant<small_model, std::string> small_model::write(uint64_t seed) {
  model::tiny::tiny_options o;
  o.hidden_size = 64;
  o.num_layers = 2;
  o.num_heads = 4;
  o.num_kv_heads = 2;
  o.head_dim = 16;
  o.intermediate_size = 128;
  o.vocab_size = vocab_size;
  o.max_context = 1024;
  o.seed = seed;
  std::error_code ec;
  auto dir = std::filesystem::temp_directory_path(ec) /
             ("kvactor-stress-" + std::to_string(getpid()) + "-" + std::to_string(seed));
  if (ec)
    return "no temporary folder: " + ec.message();
  if (auto ok = model::tiny::write_model(dir, o); !ok)
    return dir.string() + ": " + ok.error().message;
  return small_model(dir);
}

small_model::~small_model() {
  if (dir_.empty())
    return;
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

} // namespace kvactor::stress
