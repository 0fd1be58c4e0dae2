#include "model/tokenizer/incremental_decoder.hpp"

#include "model/tokenizer/unicode.hpp"

namespace kvactor::model {

std::string incremental_decoder::push(token_id id) {
  if (skip_special_ && tok_->is_special(id)) return {};
  pending_ += tok_->token_bytes(id);
  const std::size_t keep = incomplete_utf8_tail(pending_);
  std::string out = pending_.substr(0, pending_.size() - keep);
  pending_.erase(0, pending_.size() - keep);
  return out;
}

std::string incremental_decoder::flush() {
  std::string out;
  out.swap(pending_);
  return out;
}

} // namespace kvactor::model
