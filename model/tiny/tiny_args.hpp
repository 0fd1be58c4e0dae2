#pragma once
// Command-line options of kvactor-make-tiny, parsed without side effects.

#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"
#include "model/tiny/tiny_model.hpp"

namespace kvactor::model::tiny {

struct tiny_args {
  std::filesystem::path out;
  tiny_options options;
  // Also write the model as DIR/model-<type>.gguf for each of these
  // (gguf_matrices::parse names: f32, q8_0, q4_0, q4_1, q5_0, q5_1, q2_k,
  // q3_k, q4_k, q5_k, q6_k, iq4_nl, iq4_xs, q4_k_m, q5_k_m).
  std::vector<std::string> gguf;
  bool help = false;
};

// Parses "--key=value" arguments (argv without the program name).
result<tiny_args> parse_args(std::span<const std::string_view> args);

// The --help text.
std::string usage();

} // namespace kvactor::model::tiny
