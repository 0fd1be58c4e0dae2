#pragma once
// The tiny test tokenizer (512 ids), as it is and with a BOS post-processor
// as Llama's has, for tests that tokenize text without a model folder.

#include "model/tiny/tiny_tokenizer.hpp"
#include "model/tokenizer/tokenizer.hpp"

namespace kvactor::test_support {

inline model::tokenizer build_tiny_tokenizer(bool with_bos) {
  model::tiny::tiny_options o;
  o.vocab_size = 512;
  auto spec = model::tiny::make_tokenizer_spec(o);
  if (with_bos)
    for (const auto& a : spec.added_tokens)
      if (a.content == model::tiny::bos_token)
        spec.prefix_ids = {a.id};
  return std::move(*model::tokenizer::build(std::move(spec), "tiny"));
}

inline const model::tokenizer& tiny_tokenizer() {
  static const model::tokenizer t = build_tiny_tokenizer(false);
  return t;
}

inline const model::tokenizer& tiny_tokenizer_with_bos() {
  static const model::tokenizer t = build_tiny_tokenizer(true);
  return t;
}

} // namespace kvactor::test_support
