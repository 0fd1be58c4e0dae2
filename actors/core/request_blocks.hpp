#pragma once
// request_blocks: the device KV blocks that all choices of one request hold
// together at their longest (paged blocks, the prompt's shared), the least
// that running them at once takes: a request that needs more than the pool
// could never run, one that needs less can.
//
// A sequence writes the K/V of its prompt and its output short of the last
// token (nothing reads that one). The n choices of a prompt are forked once
// the prompt short of its last token is computed: the blocks filled by then
// stay shared (copy-on-write), and from the block of the last prompt token on
// each choice writes its own copy and its output:
//
//   shared     = (prompt - 1) / block_size                       (full blocks)
//   per choice = ceil((prompt - shared * block_size + max_tokens - 1) / block_size)
//   need       = shared + n * per choice
//
// With n = 1 that is ceil((prompt + max_tokens - 1) / block_size). No CAF.

#include <cstdint>

namespace kvactor {

int64_t num_request_blocks(int64_t num_prompt_tokens, int64_t max_tokens, int64_t num_choices,
                           int32_t block_size);

} // namespace kvactor
