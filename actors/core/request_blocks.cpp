#include "actors/core/request_blocks.hpp"

#include "base/assert.hpp"

namespace kvactor {

int64_t num_request_blocks(int64_t num_prompt_tokens, int64_t max_tokens, int64_t num_choices,
                           int32_t block_size) {
  KVACTOR_ASSERT(block_size > 0 && num_prompt_tokens > 0 && max_tokens > 0 && num_choices > 0,
                 "a request's blocks need a prompt, a token to make, a choice and a block size");
  const int64_t shared = (num_prompt_tokens - 1) / block_size;
  const int64_t own = num_prompt_tokens - shared * block_size + max_tokens - 1;
  return shared + num_choices * ((own + block_size - 1) / block_size);
}

} // namespace kvactor
