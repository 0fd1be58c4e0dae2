// libFuzzer target for loading a GGUF file (a model a user downloads from
// anywhere): any bytes must give a loaded model or an error that starts
// with the file's path (never a crash, a leak, undefined behaviour or an
// unbounded allocation). A model that loads must hold together: every
// matrix, norm and bias the size its config says, read whole, and ids its
// tokenizer encodes inside the embedding.

#include "model/model_folder.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

using namespace kvactor::model;

namespace {

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "gguf_load_fuzz: %s\n", what.c_str());
  std::abort();
}

// Where each input is written ($TMPDIR, which the test sets to its build
// folder), removed at exit.
const std::string& scratch_path() {
  static const std::string path = [] {
    const char* dir = std::getenv("TMPDIR");
    return std::string(dir && *dir ? dir : "/tmp") + "/kvactor_gguf_fuzz_" +
           std::to_string(::getpid()) + ".gguf";
  }();
  static const bool removed_at_exit = std::atexit([] { std::remove(scratch_path().c_str()); }) == 0;
  (void)removed_at_exit;
  return path;
}

// A matrix of `rows` x `cols`, every byte read: a view past the mapping
// faults, and ASan sees one past memory the loader converted it into.
void touch(const weight_view& w, int64_t rows, int64_t cols, const char* name) {
  if (w.rank != 2 || w.rows() != rows || w.cols() != cols)
    fail(std::string(name) + ": not the config's shape");
  const auto* bytes = static_cast<const unsigned char*>(w.data);
  const std::size_t n = static_cast<std::size_t>(rows) *
                        (w.quant ? quant_row_bytes(*w.quant, cols)
                                 : static_cast<std::size_t>(cols) * dtype_size(w.type));
  static volatile unsigned sink = 0;
  for (std::size_t i = 0; i < n; ++i) sink = sink + bytes[i];
}

// A norm weight or a bias: fp32, `n` values, every one read.
void touch_vector(const weight_view& w, int64_t n, const char* name) {
  if (w.rank != 1 || w.rows() != n) fail(std::string(name) + ": not the config's size");
  static volatile float sink = 0;
  for (int64_t i = 0; i < n; ++i) sink = sink + w.f32()[i];
}

void touch_vector(const std::optional<weight_view>& w, int64_t n, const char* name) {
  if (w) touch_vector(*w, n, name);
}

void check(const loaded_model& m) {
  const model_config& c = m.config;
  const int64_t hidden = c.hidden_size, q = c.q_size(), kv = c.kv_size();
  touch(m.weights.embed_tokens(), c.vocab_size, hidden, "embedding");
  touch(m.weights.lm_head(), c.vocab_size, hidden, "head");
  touch_vector(m.weights.norm(), hidden, "final norm");
  if (static_cast<int64_t>(m.weights.layers().size()) != c.num_hidden_layers)
    fail("layer count differs from the config");
  for (const layer_weights& l : m.weights.layers()) {
    touch_vector(l.input_layernorm, hidden, "input norm");
    touch_vector(l.post_attention_layernorm, hidden, "post-attention norm");
    touch(l.q_proj, q, hidden, "q");
    touch(l.k_proj, kv, hidden, "k");
    touch(l.v_proj, kv, hidden, "v");
    touch(l.o_proj, hidden, q, "o");
    touch(l.gate_proj, c.intermediate_size, hidden, "gate");
    touch(l.up_proj, c.intermediate_size, hidden, "up");
    touch(l.down_proj, hidden, c.intermediate_size, "down");
    touch_vector(l.q_bias, q, "q bias");
    touch_vector(l.k_bias, kv, "k bias");
    touch_vector(l.v_bias, kv, "v bias");
    touch_vector(l.q_norm, c.head_dim, "q norm");
    touch_vector(l.k_norm, c.head_dim, "k norm");
  }
  const auto ids = m.tok.encode("Hello world, this is 1 test.", true);
  for (token_id id : ids)
    if (id < 0 || id >= c.vocab_size) fail("encode gave an id outside the embedding");
  (void)m.tok.decode(ids);
}

void check_error(const kvactor::error& e, const std::string& path) {
  if (e.message.rfind(path, 0) != 0) fail("the error does not name the file: " + e.message);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = scratch_path();
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f || std::fwrite(data, 1, size, f) != size || std::fclose(f) != 0)
    fail("cannot write " + path);
  if (auto m = load_model_folder(path)) check(*m);
  else check_error(m.error(), path);
  if (auto d = checkpoint_matrix_dtype(path); !d) check_error(d.error(), path);
  return 0;
}
