#include "net/completion.hpp"

#include "net/json_writer.hpp"
#include "net/openai_logprobs.hpp"
#include "net/openai_request.hpp"

#include <cassert>
#include <cstdio>
#include <utility>

namespace kvactor::net {

std::string sse_event(std::string_view data) {
  std::string out = "data: ";
  out += data;
  out += "\n\n";
  return out;
}

completion::completion(completion_meta meta, size_t num_prompts, size_t n)
  : meta_(std::move(meta)), n_(n), choices_(num_prompts * n), prompt_tokens_(num_prompts) {
}

void completion::accepted(size_t index, request_id id, std::vector<int32_t> prompt_tokens) {
  assert((index + 1) * n_ <= choices_.size());
  index_of_[id] = index * n_;
  prompt_tokens_[index] = std::move(prompt_tokens);
}

std::optional<size_t> completion::choice_of(request_id id, int32_t c) const {
  auto i = index_of_.find(id);
  if (i == index_of_.end() || c < 0 || size_t(c) >= n_)
    return std::nullopt;
  return i->second + size_t(c);
}

json_writer completion::envelope() const {
  json_writer w;
  w.field("id", meta_.id)
    .field("object", object())
    .field("created", meta_.created)
    .field("model", meta_.model);
  return w;
}

std::string_view completion::object() const {
  if (!meta_.chat)
    return "text_completion";
  return meta_.stream ? "chat.completion.chunk" : "chat.completion";
}

void completion::write_logprobs(json_writer& w, std::span<const token_event> tokens,
                                int64_t first_offset) const {
  if (!meta_.logprobs || tokens.empty())
    w.null_field("logprobs");
  else
    w.object("logprobs",
             meta_.chat ? chat_logprobs(tokens) : completion_logprobs(tokens, first_offset));
}

std::string completion::chunk(size_t index, std::string_view text, std::string_view finish_reason,
                              std::span<const int32_t> token_ids,
                              std::span<const token_event> tokens, int64_t first_offset,
                              bool opening, bool with_prompt) const {
  json_writer c;
  c.field("index", static_cast<int64_t>(index));
  if (with_prompt && !meta_.chat)
    c.field("prompt_token_ids", prompt_tokens_[index / n_]);
  if (!meta_.chat) {
    c.field("text", text);
  } else {
    json_writer delta;
    if (opening)
      delta.field("role", "assistant").field("content", "");
    else if (!text.empty())
      delta.field("content", text);
    c.object("delta", delta);
  }
  if (meta_.return_token_ids && !opening)
    c.field("token_ids", std::vector<int32_t>(token_ids.begin(), token_ids.end()));
  write_logprobs(c, tokens, first_offset);
  if (!finish_reason.empty())
    c.field("finish_reason", finish_reason);
  else
    c.null_field("finish_reason");
  json_writer w = envelope();
  if (with_prompt && meta_.chat)
    w.field("prompt_token_ids", prompt_tokens_[index / n_]);
  w.field("choices", std::vector<json_writer>{c});
  if (meta_.include_usage)
    w.null_field("usage");
  return sse_event(w.str());
}

std::string completion::piece(choice& c, size_t index, std::string_view text,
                              std::string_view finish_reason, std::span<const int32_t> token_ids,
                              std::span<const token_event> tokens) {
  std::string out;
  // The prompt's ids go with the choice's first event (a chat's opening).
  bool with_prompt = meta_.return_token_ids && !std::exchange(c.prompt_sent, true);
  if (meta_.chat && !c.opened) {
    c.opened = true;
    out = chunk(index, {}, {}, {}, {}, 0, true, std::exchange(with_prompt, false));
  }
  out += chunk(index, text, finish_reason, token_ids, tokens, c.num_token_bytes, false,
               with_prompt);
  c.num_token_bytes += num_token_bytes(tokens);
  return out;
}

std::optional<completion::answer_calls> completion::calls_in(std::string_view text) const {
  if (!meta_.tool_calls)
    return std::nullopt;
  if (auto calls = model::parse_tool_calls(text, *meta_.tool_calls))
    return answer_calls{std::move(*calls), true};
  if (!meta_.constrained_calls || !model::begins_tool_call(text, *meta_.tool_calls))
    return std::nullopt;
  model::tool_call_reader reader;
  reader.feed(text);
  answer_calls cut;
  for (const auto& call : reader.calls())
    if (call.named)
      cut.calls.push_back({call.name, call.arguments});
  if (cut.calls.empty())
    return std::nullopt;
  return cut;
}

std::string_view completion::calls_finish_reason(const answer_calls& a, finish_reason own) const {
  if (!a.whole)
    return openai_finish_reason(own);
  return meta_.named_tool ? "stop" : "tool_calls";
}

std::string completion::call_id(size_t index, size_t k) const {
  // NOTE: ids unique within the answer, the same each time it is read.
  char id[32];
  std::snprintf(id, sizeof id, "call_%016llx",
                static_cast<unsigned long long>(std::hash<std::string>{}(
                  meta_.id + "/" + std::to_string(index) + "/" + std::to_string(k))));
  return id;
}

std::vector<json_writer>
completion::tool_calls_json(size_t index, const std::vector<model::tool_call>& calls) const {
  std::vector<json_writer> out;
  for (size_t k = 0; k < calls.size(); ++k) {
    json_writer function;
    function.field("name", calls[k].name).field("arguments", calls[k].arguments);
    out.emplace_back()
      .field("id", call_id(index, k))
      .field("type", "function")
      .object("function", function);
  }
  return out;
}

std::string completion::tool_call_delta(size_t index, json_writer call) const {
  json_writer delta;
  delta.field("tool_calls", std::vector<json_writer>{std::move(call)});
  json_writer ch;
  ch.field("index", static_cast<int64_t>(index)).object("delta", delta).null_field("logprobs");
  ch.null_field("finish_reason");
  json_writer w = envelope();
  w.field("choices", std::vector<json_writer>{ch});
  if (meta_.include_usage)
    w.null_field("usage");
  return sse_event(w.str());
}

std::string completion::call_deltas(choice& c, size_t index) {
  std::string out;
  const auto& calls = c.calls.calls();
  for (size_t k = 0; k < calls.size(); ++k) {
    const auto at = static_cast<int64_t>(k);
    if (k == c.arguments_sent.size()) { // not announced yet
      if (!calls[k].named)
        break;
      if (!c.opened) {
        c.opened = true;
        out += chunk(index, {}, {}, {}, {}, 0, true);
      }
      json_writer function;
      function.field("name", calls[k].name).field("arguments", "");
      out += tool_call_delta(index, json_writer()
                                      .field("index", at)
                                      .field("id", call_id(index, k))
                                      .field("type", "function")
                                      .object("function", function));
      c.arguments_sent.push_back(0);
    }
    if (calls[k].arguments.size() > c.arguments_sent[k]) {
      json_writer function;
      function.field("arguments", std::string_view(calls[k].arguments).substr(c.arguments_sent[k]));
      out += tool_call_delta(index, json_writer().field("index", at).object("function", function));
      c.arguments_sent[k] = calls[k].arguments.size();
    }
  }
  return out;
}

std::string completion::on_token(const token_event& ev) {
  const auto index = choice_of(ev.id, ev.choice);
  if (!index)
    return {};
  auto& c = choices_[*index];
  const bool logprobs = meta_.logprobs && ev.has_logprobs;
  if (!meta_.stream) {
    if (logprobs)
      c.logprobs.push_back(ev);
    return {};
  }
  if (c.calling) { // each call as it is written
    c.calls.feed(ev.text);
    c.num_read += ev.text.size();
    return call_deltas(c, *index);
  }
  if (meta_.tool_calls && c.holding) {
    // NOTE: held text goes out as content once it cannot be calls (its
    // tokens' ids and logprobs with it are not sent), as calls once the
    // grammar holds it to them, else when the answer ends.
    c.held += ev.text;
    if (meta_.constrained_calls && model::begins_tool_call(c.held, *meta_.tool_calls)) {
      c.holding = false;
      c.calling = true;
      c.calls.feed(c.held);
      c.num_read = c.held.size();
      c.held.clear();
      return call_deltas(c, *index);
    }
    if (model::may_be_tool_calls(c.held, *meta_.tool_calls))
      return {};
    c.holding = false;
    c.num_streamed += c.held.size();
    return piece(c, *index, std::exchange(c.held, {}), {}, {});
  }
  // NOTE: a token whose text is held back sends nothing, unless its id or
  // its logprobs are asked for.
  if (ev.text.empty() && !meta_.return_token_ids && !logprobs)
    return {};
  c.num_streamed += ev.text.size();
  return piece(c, *index, ev.text, {}, std::span<const int32_t>(&ev.token, 1),
               logprobs ? std::span<const token_event>(&ev, 1) : std::span<const token_event>());
}

std::string completion::on_done(const done_event& d) {
  const auto index = choice_of(d.id, d.choice);
  if (!index || choices_[*index].done)
    return {};
  auto& c = choices_[*index];
  c.done = true;
  c.end = d;
  ++num_done_;
  if (!meta_.stream)
    return {};
  if (c.calling || (meta_.tool_calls && c.holding))
    if (const auto calls = calls_in(d.text)) {
      // NOTE: the done event's text may end with what was held back (it
      // could have begun a stop sequence); the reader takes it too.
      c.calls.feed(std::string_view(d.text).substr(std::min(c.num_read, d.text.size())));
      return call_deltas(c, *index) +
             chunk(*index, {}, calls_finish_reason(*calls, d.finish_reason), {});
    }
  // NOTE: text held back while it could have begun a stop sequence (or a
  // call) is only in the done event; the last chunk carries it.
  const std::string rest = c.num_streamed < d.text.size() ? d.text.substr(c.num_streamed) : "";
  return piece(c, *index, rest, openai_finish_reason(d.finish_reason), {});
}

std::string completion::usage() const {
  int64_t prompt = 0, generated = 0, cached = 0;
  for (size_t i = 0; i < choices_.size(); ++i) {
    const done_event& end = choices_[i].end;
    if (i % n_ == 0) { // a prompt's tokens count once, whatever its n
      prompt += end.prompt_tokens;
      cached += end.cached_tokens;
    }
    generated += end.completion_tokens;
  }
  json_writer details;
  details.field("cached_tokens", cached);
  return json_writer()
    .field("prompt_tokens", prompt)
    .field("completion_tokens", generated)
    .field("total_tokens", prompt + generated)
    .object("prompt_tokens_details", details)
    .str();
}

std::string completion::finish() const {
  assert(done());
  if (meta_.stream) {
    std::string out;
    if (meta_.include_usage)
      out = sse_event(envelope()
                        .field("choices", std::vector<json_writer>{})
                        .raw_field("usage", usage())
                        .str());
    return out + sse_event("[DONE]");
  }
  std::vector<json_writer> choices;
  for (size_t i = 0; i < choices_.size(); ++i) {
    const auto& end = choices_[i].end;
    json_writer& c = choices.emplace_back();
    c.field("index", static_cast<int64_t>(i));
    const auto calls = calls_in(end.text);
    if (calls)
      c.object("message", json_writer()
                            .field("role", "assistant")
                            .null_field("content")
                            .field("tool_calls", tool_calls_json(i, calls->calls)));
    else if (meta_.chat)
      c.object("message", json_writer().field("role", "assistant").field("content", end.text));
    else
      c.field("text", end.text);
    if (meta_.return_token_ids && !meta_.chat)
      c.field("prompt_token_ids", prompt_tokens_[i / n_]);
    if (meta_.return_token_ids)
      c.field("token_ids", end.tokens);
    if (meta_.logprobs)
      c.object("logprobs", meta_.chat ? chat_logprobs(choices_[i].logprobs)
                                      : completion_logprobs(choices_[i].logprobs, 0));
    else
      c.null_field("logprobs");
    c.field("finish_reason", calls ? calls_finish_reason(*calls, end.finish_reason)
                                   : openai_finish_reason(end.finish_reason));
  }
  json_writer w = envelope();
  if (meta_.return_token_ids && meta_.chat) // one prompt
    w.field("prompt_token_ids", prompt_tokens_.front());
  return w.field("choices", choices).raw_field("usage", usage()).str();
}

} // namespace kvactor::net
