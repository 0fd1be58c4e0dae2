#pragma once
// sampling_defaults: the sampling parameters a model folder's
// generation_config.json recommends (Hugging Face's keys temperature, top_p,
// top_k, min_p, repetition_penalty; do_sample false: greedy). As vLLM does,
// a front door starts a request from them, so they apply to the fields the
// request leaves out. Pure: no request type here (model/ knows none).

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.hpp"

namespace kvactor::model {

// What the file sets (each unset when the key is absent or null).
struct sampling_defaults {
  std::optional<float> temperature; // [0, 1e6]; 0 also when do_sample is false
  std::optional<float> top_p;       // (0, 1]
  std::optional<float> min_p;       // [0, 1]
  std::optional<float> repetition_penalty; // finite, > 0
  std::optional<int32_t> top_k;     // >= -1; -1 and 0: all tokens

  bool empty() const {
    return !temperature && !top_p && !min_p && !repetition_penalty && !top_k;
  }
};

// Parses generation_config.json text; `source` names it in errors ("<source>:
// key 'top_p': ..."). Keys other than the five above (and do_sample) are
// not sampling defaults and are ignored.
result<sampling_defaults> parse_sampling_defaults(std::string_view json_text,
                                                  std::string_view source);

// model_dir/generation_config.json's defaults; none when the file is absent.
result<sampling_defaults> load_sampling_defaults(const std::filesystem::path& model_dir);

// The defaults set, for a log line: "temperature 0.6, top_p 0.95, top_k 20"
// ("" when none is).
std::string to_string(const sampling_defaults& d);

} // namespace kvactor::model
