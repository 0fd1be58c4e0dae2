#pragma once
// What a request asks of sampling (sampler.hpp draws the token). A plain
// struct, so that the scheduler's step plans carry it without the model
// library.

#include <cstdint>

namespace kvactor::model {

struct sampling_params {
  float temperature = 1.0f; // <= 0: greedy
  int32_t top_k = 0;   // keep the k most likely tokens; 0: all
  float top_p = 1.0f;       // keep the smallest set whose probability reaches top_p; 1: all
  uint64_t seed = 0;   // per request

  bool is_greedy() const { return temperature <= 0.0f || top_k == 1; }
};

} // namespace kvactor::model
