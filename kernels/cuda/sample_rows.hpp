#pragma once
// What the device's sampler reads and writes per sampled row (plain
// structs, shared by the kernels of sample_ops.cuh and the host code that
// packs a step's rows, model/device_sampling.hpp).

#include <stdint.h>

namespace kvactor::kernels::gpu {

inline constexpr int max_sample_logprobs = 20;

// A change to one token's logit before the filters, in the CPU sampler's
// order: + bias, banned (-inf), the repetition penalty, - sub. At most one
// edit per token and row. The adjust kernel writes the logit it found to
// `raw` (the log probabilities are those of the unchanged row).
enum logit_edit_flags : uint32_t {
  edit_bias = 1,
  edit_ban = 2,
  edit_repeat = 4,
  edit_sub = 8,
};

struct logit_edit {
  int32_t token = 0;
  uint32_t flags = 0;
  float bias = 0.0f;
  float sub = 0.0f; // frequency_penalty * count + presence_penalty
  float raw = 0.0f;
};

// One sampled row of the step's logits (row i of the logits is entry i).
struct sample_row {
  double u = 0;                // the draw, uniform in [0, 1)
  float inv_temperature = 0;   // 0: greedy
  int32_t top_k = 0;           // <= 0: all
  float top_p = 1.0f;          // 1: all
  float min_p = 0.0f;          // 0: none
  float repetition_penalty = 1.0f;
  int32_t edits_begin = 0;     // [edits_begin, edits_end) of the step's edits
  int32_t edits_end = 0;
  int32_t num_logprobs = -1;   // -1: none; else the alternatives wanted (<= max_sample_logprobs)
};

// What comes back to the host per row.
struct sampled_row {
  double log_total = 0;        // log sum exp of the unchanged row (num_logprobs >= 0)
  int32_t token = 0;
  int32_t no_finite_logit = 0; // 1: the row held no finite logit (NaN, +-inf), `token` is none
  float logprob = 0.0f;        // of `token`, when num_logprobs >= 0
  int32_t top_ids[max_sample_logprobs] = {};
  float top_logprobs[max_sample_logprobs] = {};
};

} // namespace kvactor::kernels::gpu
