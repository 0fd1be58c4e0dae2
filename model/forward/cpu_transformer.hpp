#pragma once
// cpu_transformer: the forward pass on the CPU device. The element-wise ops
// and matrix products run as host tasks on the compute stream, the cache
// write and attention through kernels::cache_write / paged_attention.
// Scratch activations are allocated once for `forward_limits` and reused by
// every step (stream order keeps steps apart).
//
// Numerics: fp32 activations, an fp32 or bf16 KV cache. With bf16, each
// layer rounds the step's q | k | v rows to bf16 (nearest even, element by
// element) into scratch of its own, writes the cache and runs the attention
// in bf16 (the kernels' bf16 paths), and widens the attention output back to
// fp32 for o_proj; nothing depends on the other rows of the step, so the
// pass stays batch-invariant. The matrices are packed once
// here (packed_matrix, in the weights' dtype: fp32, or bf16 kept as bf16 and
// widened exactly as the products load it), q | k | v and gate | up stacked
// so that each is one product; every product sums in one fixed order
// (layers::linear). With bf16 activations the matrices are packed in bf16
// pairs instead (an fp32 matrix rounded to bf16) and every product rounds
// its input rows to bf16; everything else stays fp32. Block-quantised
// matrices (a GGUF file's, or the checkpoint's quantised at load by
// `quantize`) are repacked (quantized_matrix) and multiplied by fp32 rows
// quantised to 8 bits per block (layers::linear); a stack whose parts a file
// stores in different formats (a Q4_K_M file's Q4_K q | k beside a Q6_K v)
// is one quantized_matrix per run of one format, multiplied in turn.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <variant>
#include <vector>

#include "model/forward/packed_matrix.hpp"
#include "model/quant/quantized_matrix.hpp"
#include "model/forward/transformer.hpp"

namespace kvactor::model {

class cpu_transformer final : public transformer {
public:
  // `dev` must be a CPU device; create() has checked the cache and limits.
  cpu_transformer(const model_config& config, const model_weights& weights, kernels::device& dev,
                  const kernels::kv_cache_view& cache, forward_limits limits, dtype activations,
                  std::optional<quant_format> quantize);

  status enqueue(std::shared_ptr<const forward_batch> batch, logits_callback done) override;

private:
  void host_task(std::function<void()> task);
  void embed(const forward_batch& b);
  void attention_input(const forward_batch& b, int32_t layer);
  void enqueue_attention(const forward_batch& b, int32_t layer);
  void attention_output_and_mlp(const forward_batch& b, int32_t layer);
  void lm_head(const forward_batch& b);
  // A matrix as the products read it: dense, or block-quantised (the rows
  // of each part after those of the one before).
  using cpu_matrix = std::variant<packed_matrix, std::vector<quantized_matrix>>;
  void timed_linear(const float* x, int64_t ldx, int64_t m, const cpu_matrix& w, float* y,
                    int64_t ldy, bool accumulate);

  // A layer's matrices as the products read them.
  struct packed_layer {
    cpu_matrix qkv;     // [q_size + 2 kv_size, hidden]
    cpu_matrix o;       // [hidden, q_size]
    cpu_matrix gate_up; // [2 intermediate, hidden]
    cpu_matrix down;    // [hidden, intermediate]
    std::vector<float> qkv_bias; // [q_size + 2 kv_size]: Qwen2's q | k | v biases (else empty)
  };

  const model_weights& weights_;
  std::vector<packed_layer> layers_;
  cpu_matrix lm_head_;
  std::vector<double> inv_freq_; // [head_dim / 2]
  int64_t qkv_stride_;      // q_size + 2 * kv_size

  // Scratch, reused by every step (stream order).
  std::vector<float> hidden_;    // [max_num_tokens, hidden]: the residual stream
  std::vector<float> normed_;    // [max_num_tokens, hidden]
  std::vector<float> qkv_;       // [max_num_tokens, q_size + 2 kv_size]: q | k | v
  std::vector<float> attn_;      // [max_num_tokens, num_heads, head_dim]
  // bf16 cache only (empty otherwise): the attention's input and output.
  std::vector<uint16_t> qkv16_;  // [max_num_tokens, q_size + 2 kv_size]: q | k | v in bf16
  std::vector<uint16_t> attn16_; // [max_num_tokens, num_heads, head_dim] in bf16
  // [max_num_tokens, 2 intermediate]: gate | up, then silu(gate) * up | up
  std::vector<float> gate_up_;
  std::vector<float> cos_, sin_; // [max_num_tokens, head_dim / 2]
  std::vector<float> last_;      // [max_num_seqs, hidden]: rows that sample
  std::vector<float> logits_;    // [max_num_seqs, vocab]

  double attention_started_ = 0;
  double step_started_ = 0;
};

} // namespace kvactor::model
