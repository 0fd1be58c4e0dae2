#include "net/openai_logprobs.hpp"

#include "net/logprob_report.hpp"

#include <string>
#include <vector>

namespace kvactor::net {

namespace {

std::vector<int32_t> byte_values(const std::string& bytes) {
  std::vector<int32_t> out;
  for (unsigned char b : bytes)
    out.push_back(b);
  return out;
}

json_writer chat_entry(const token_logprob& t) {
  json_writer w;
  w.field("token", t.bytes)
    .field("logprob", reported_logprob(t.logprob))
    .field("bytes", byte_values(t.bytes));
  return w;
}

} // namespace

int64_t num_token_bytes(std::span<const token_event> tokens) {
  int64_t n = 0;
  for (const token_event& ev : tokens)
    n += static_cast<int64_t>(ev.logprob.bytes.size());
  return n;
}

json_writer completion_logprobs(std::span<const token_event> tokens, int64_t first_offset) {
  std::vector<std::string> texts;
  std::vector<double> logprobs;
  std::vector<json_writer> top;
  std::vector<int64_t> offsets;
  int64_t offset = first_offset;
  for (const token_event& ev : tokens) {
    texts.push_back(ev.logprob.bytes);
    logprobs.push_back(reported_logprob(ev.logprob.logprob));
    json_writer& alternatives = top.emplace_back();
    for (const token_logprob& t : ev.top_logprobs)
      alternatives.field(t.bytes, reported_logprob(t.logprob));
    offsets.push_back(offset);
    offset += static_cast<int64_t>(ev.logprob.bytes.size());
  }
  json_writer w;
  w.field("tokens", texts)
    .field("token_logprobs", logprobs)
    .field("top_logprobs", top)
    .field("text_offset", offsets);
  return w;
}

json_writer chat_logprobs(std::span<const token_event> tokens) {
  std::vector<json_writer> content;
  for (const token_event& ev : tokens) {
    std::vector<json_writer> top;
    for (const token_logprob& t : ev.top_logprobs)
      top.push_back(chat_entry(t));
    content.push_back(chat_entry(ev.logprob).field("top_logprobs", top));
  }
  json_writer w;
  w.field("content", content);
  return w;
}

} // namespace kvactor::net
