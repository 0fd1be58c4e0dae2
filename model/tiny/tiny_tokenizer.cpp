#include "model/tiny/tiny_tokenizer.hpp"

#include "model/tiny/bpe_trainer.hpp"
#include "model/tiny/corpus.hpp"

namespace kvactor::model::tiny {

tokenizer_spec make_tokenizer_spec(const tiny_options& o) {
  const auto pattern = o.arch == architecture::llama ? split_pattern::llama3 : split_pattern::qwen2;
  const auto budget = static_cast<std::size_t>(o.vocab_size - 256 - num_special_tokens);
  tokenizer_spec spec = train_bpe(training_corpus(), pattern, budget);
  auto next = static_cast<token_id>(spec.vocab.size());
  for (int n = 0; next < bos_id(o); ++n, ++next)
    spec.added_tokens.push_back(
      {next, "<|reserved_special_token_" + std::to_string(n) + "|>", true, false, false});
  for (int64_t i = 0; i < num_special_tokens; ++i)
    spec.added_tokens.push_back(
      {static_cast<token_id>(bos_id(o) + i), special_tokens[i], true, false, false});
  return spec;
}

} // namespace kvactor::model::tiny
