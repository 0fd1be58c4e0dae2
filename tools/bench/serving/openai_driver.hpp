#pragma once
// openai_driver: sends a benchmark's requests to any server speaking the
// OpenAI completions API (kvactor's HTTP front, llama-server, vLLM, ...):
// POST /v1/completions with a token-id prompt, streamed, one connection per
// request, each at its arrival time with at most `concurrency` in flight,
// and records every token's arrival in the tracker.

#include "tools/bench/serving/request_tracker.hpp"
#include "tools/bench/serving/workload.hpp"

#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace kvactor::bench {

struct openai_target {
  std::string host;
  uint16_t port = 0;
  std::string extra_fields; // JSON members added to every request body ("" or `"a":1,"b":[2]`)
  std::string label() const;
};

// "HOST:PORT" or "HOST:PORT|FILE", FILE holding a JSON object whose members
// go into every request body (a server's own fields, e.g. llama-server's
// cache_prompt); an error message naming what is wrong.
std::variant<openai_target, std::string> parse_openai_target(const std::string& arg);

// The request body: prompt (token ids), max_tokens, temperature, top_p, seed,
// ignore_eos, stream, return_token_ids and the target's extra fields.
std::string openai_body(const openai_target& target, const generate_request& r);

// Returns once every request ended (its last event, an error status or a
// broken connection, each recorded in the tracker).
void send_over_openai(const openai_target& target, const std::vector<bench_request>& requests,
                      int32_t concurrency, request_tracker& t);

} // namespace kvactor::bench
