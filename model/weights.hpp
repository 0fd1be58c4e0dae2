#pragma once
// model_weights: every tensor of a Llama / Qwen2 / Qwen3 checkpoint, found by its
// Hugging Face name, checked against the config and converted once to the
// dtype the forward pass computes with.
//
//   model.embed_tokens.weight                    [vocab, hidden]
//   model.layers.N.input_layernorm.weight        [hidden]
//   model.layers.N.self_attn.q_proj.weight       [heads * head_dim, hidden]
//   model.layers.N.self_attn.k_proj.weight       [kv_heads * head_dim, hidden]
//   model.layers.N.self_attn.v_proj.weight       [kv_heads * head_dim, hidden]
//   model.layers.N.self_attn.o_proj.weight       [hidden, heads * head_dim]
//   model.layers.N.self_attn.{q,k,v}_proj.bias   [heads * head_dim], [kv_heads * head_dim] (Qwen2)
//   model.layers.N.self_attn.q_norm.weight       [head_dim]          (Qwen3)
//   model.layers.N.self_attn.k_norm.weight       [head_dim]          (Qwen3)
//   model.layers.N.post_attention_layernorm.weight [hidden]
//   model.layers.N.mlp.gate_proj.weight          [intermediate, hidden]
//   model.layers.N.mlp.up_proj.weight            [intermediate, hidden]
//   model.layers.N.mlp.down_proj.weight          [hidden, intermediate]
//   model.norm.weight                            [hidden]
//   lm_head.weight                               [vocab, hidden]  (absent when tied)
//
// Linear weights are [out, in], row-major, as nn.Linear stores them: y = x W^T.

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/config.hpp"
#include "model/dtype.hpp"
#include "base/result.hpp"
#include "model/quant/quant_format.hpp"
#include "model/safetensors.hpp"

namespace kvactor::model {

class gguf_file;

// A typed, read-only view of one weight tensor in memory (mapped or owned):
// elements of `type`, or (quant set) a matrix of quantised blocks, each row
// quant_row_bytes(*quant, cols()) long.
struct weight_view {
  const void* data = nullptr;
  dtype type = dtype::f32;
  int rank = 0;                       // 1 (norm weights) or 2 (matrices)
  std::array<int64_t, 2> dims{}; // [rows, cols] or [n, 0]
  std::optional<quant_format> quant;

  int64_t rows() const { return dims[0]; }
  int64_t cols() const { return rank == 2 ? dims[1] : 1; }
  int64_t num_elements() const { return rows() * cols(); }
  const float* f32() const {
    KVACTOR_ASSERT(type == dtype::f32 && !quant, "weight is not fp32");
    return static_cast<const float*>(data);
  }
  // bf16 bit patterns (the upper halves of fp32 values).
  const uint16_t* bf16() const {
    KVACTOR_ASSERT(type == dtype::bf16 && !quant, "weight is not bf16");
    return static_cast<const uint16_t*>(data);
  }
  const std::byte* blocks() const {
    KVACTOR_ASSERT(quant.has_value(), "weight is not quantised");
    return static_cast<const std::byte*>(data);
  }
};

struct layer_weights {
  weight_view input_layernorm;
  weight_view q_proj, k_proj, v_proj, o_proj;
  std::optional<weight_view> q_bias, k_bias, v_bias; // Qwen2 only
  std::optional<weight_view> q_norm, k_norm;         // Qwen3 only
  weight_view post_attention_layernorm;
  weight_view gate_proj, up_proj, down_proj;
};

class model_weights {
public:
  // Loads every tensor of the layout above from `files`, which the result
  // keeps (and so keeps mapped). Matrices (embedding, projections, LM head)
  // come back in `matrix_dtype` (f32 or bf16): a tensor already in that dtype
  // is used in place in the mapping, others are converted once here. Norm
  // weights always come back as fp32.
  static result<model_weights> load(const model_config& config, safetensors_set files,
                                    dtype matrix_dtype = dtype::f32);

  // The same tensors from a GGUF file under its names (token_embd,
  // blk.N.attn_q, ..., output; model/gguf/gguf_weights.cpp), which the
  // result keeps mapped. Block-quantised matrices (quant_format.hpp) are
  // used in place (weight_view::quant); F32, F16 and BF16 ones as load() treats them.
  // Llama's q and k rows come back in Hugging Face's order.
  static result<model_weights> load_gguf(const model_config& config,
                                         std::shared_ptr<const gguf_file> file,
                                         dtype matrix_dtype = dtype::f32);

  model_weights(model_weights&&) = default;
  model_weights& operator=(model_weights&&) = default;

  dtype matrix_dtype() const { return matrix_dtype_; }
  const weight_view& embed_tokens() const { return embed_tokens_; }
  const std::vector<layer_weights>& layers() const { return layers_; }
  const weight_view& norm() const { return norm_; }
  // lm_head.weight, or the embedding when the config ties them.
  const weight_view& lm_head() const { return lm_head_; }
  // The block format of the first quantised matrix (the embedding, a
  // projection or the LM head), or nullopt when every one is dense.
  std::optional<quant_format> quantized_format() const;
  // Lets the kernel drop the mapped files' pages read so far: for a pass
  // that has copied the matrices out (they come back from the file if read
  // again), so that they are not resident twice.
  void drop_mapped_pages() const;
  // Bytes converted into memory owned here (0 when everything is mapped).
  std::size_t num_owned_bytes() const;
  // For a pass that has packed every matrix into memory of its own (the
  // CPU pass): frees what is owned here for the projections and the LM
  // head alone (Llama's q and k rows reordered from a GGUF file, matrices
  // converted at load) and empties those views (data null), so that they
  // are not resident twice. The embedding (its rows are looked up, and it
  // is the head where the two are tied), norms and biases stay.
  void release_packed_matrices();

private:
  struct aligned_free {
    void operator()(std::byte* p) const;
  };
  using buffer = std::unique_ptr<std::byte[], aligned_free>;
  struct owned_buffer {
    buffer bytes;
    std::size_t size = 0;
  };

  model_weights() = default;
  result<weight_view> take(std::string_view name, std::vector<int64_t> expected,
                           std::string_view meaning, dtype want);
  // `src` (elements of `stored`) as a view in `want`: in place when the
  // types match and `src` is aligned, else converted into owned memory.
  weight_view adopt(const std::byte* src, dtype stored, std::span<const int64_t> shape,
                    dtype want);
  // 64-byte-aligned memory that lives as long as the weights.
  std::byte* own(std::size_t bytes);

  safetensors_set files_;
  std::shared_ptr<const gguf_file> gguf_;
  std::vector<owned_buffer> owned_;
  dtype matrix_dtype_ = dtype::f32;
  weight_view embed_tokens_;
  std::vector<layer_weights> layers_;
  weight_view norm_;
  weight_view lm_head_;
};

} // namespace kvactor::model
