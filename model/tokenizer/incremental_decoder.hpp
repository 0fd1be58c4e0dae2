#pragma once
// incremental_decoder: turns a token stream into text piece by piece without
// ever splitting a multi-byte UTF-8 character, for streaming and for
// stop-sequence checks. The pieces concatenated (with flush()) equal
// tokenizer::decode of the whole stream.

#include <string>

#include "model/token_id.hpp"
#include "model/tokenizer/tokenizer.hpp"

namespace kvactor::model {

class incremental_decoder {
public:
  // `tok` must outlive the decoder.
  explicit incremental_decoder(const tokenizer& tok, bool skip_special = false)
      : tok_(&tok), skip_special_(skip_special) {}

  // Feeds one token; returns the text completed by it (possibly empty). Bytes
  // that begin a character still incomplete are held back; bytes that can
  // never form a character are passed on as they are.
  std::string push(token_id id);

  // Returns and clears what is held back (at the end of a stream).
  std::string flush();

  std::size_t num_pending_bytes() const { return pending_.size(); }

private:
  const tokenizer* tok_;
  bool skip_special_;
  std::string pending_;
};

} // namespace kvactor::model
