#pragma once
// export_gguf: a loaded model's config and weights as a GGUF file, the
// way llama.cpp's converter lays them out (gguf_weights.cpp has the names;
// Llama's q and k rows reordered head by head for llama.cpp's RoPE), its
// matrices in fp32 or quantised (gguf_matrices), and a byte-level BPE
// tokenizer's keys. What kvactor-make-tiny writes for `--gguf=...` and the
// GGUF tests read back.

#include <filesystem>
#include <optional>

#include "base/result.hpp"
#include "model/config.hpp"
#include "model/gguf/gguf_writer.hpp"
#include "model/quant/quant_format.hpp"
#include "model/tokenizer/tokenizer_spec.hpp"
#include "model/weights.hpp"

namespace kvactor::model {

// How an exported file stores its matrices: fp32 (no format), all in one
// block format, or mixed as llama.cpp's Q4_K_M and Q5_K_M files mix them
// (`k_mix`): Q4_K (Q5_K), with attn_v and ffn_down of every other layer
// (from the first) and the output matrix in Q6_K, the token embedding
// quantised too (in the base format; tied, as the output). As
// llama-quantize does, a K format on rows that are not whole super-blocks
// (a width not a multiple of 256) falls back to a format of 32-value
// blocks: Q2_K and Q3_K to Q4_0, Q4_K to Q5_0, Q5_K to Q5_1, Q6_K to Q8_0,
// IQ4_XS to IQ4_NL.
struct gguf_matrices {
  std::optional<quant_format> format;
  bool k_mix = false;

  gguf_matrices(std::optional<quant_format> f = std::nullopt) : format(f) {}
  // "f32", a quant_name(), "q4_k_m" or "q5_k_m"; nullopt for any other.
  static std::optional<gguf_matrices> parse(std::string_view name);
  // The format of `tensor` (its GGUF name without the "blk.N." prefix) of
  // layer `layer` (-1: outside the layers), whose rows are `cols` wide.
  std::optional<quant_format> of(std::string_view tensor, int64_t layer, int64_t cols) const;
};

// Writes `metadata` (which may hold the tokenizer's keys) plus the model's
// keys and tensors to `path`. Matrices go out as `matrices` says; norms and
// biases as fp32; the embedding as fp32 but in the mixes.
// The keys of a byte-level BPE tokenizer (GGUF's "gpt2" model): every
// token with its type (added special tokens control, other added tokens
// user-defined), the merges, the pre-tokenizer's name (llama-bpe, qwen2 or
// gpt-2 for its split pattern; the qwen2 reader normalises to NFC, as Qwen's
// tokenizer.json does), BOS / EOS from `config`, add_bos_token when
// the post-processor adds a prefix. Errors name what GGUF cannot say.
status add_gguf_tokenizer(const tokenizer_spec& spec, const model_config& config,
                          gguf_writer& w);

status export_gguf(const model_config& config, const model_weights& weights,
                   const gguf_matrices& matrices, gguf_writer metadata,
                   const std::filesystem::path& path);

} // namespace kvactor::model
