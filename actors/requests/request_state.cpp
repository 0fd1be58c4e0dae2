#include "actors/requests/request_state.hpp"

#include "actors/requests/request_fields.hpp"

#include "base/utf8.hpp"

#include <algorithm>

namespace kvactor {

namespace {

admission refuse(request_id id, errc code, std::string message) {
  return {id, 0, code, std::move(message)};
}

} // namespace

std::variant<request_state, admission> request_state::make(request_id id, generate_request req,
                                                           const model::tokenizer& tok,
                                                           const request_limits& limits,
                                                           clock::time_point now,
                                                           constraint_compiler* constraints,
                                                           std::string_view no_constraints) {
  if (auto wrong = check_fields(req))
    return refuse(id, errc::invalid_field, std::move(*wrong));
  if (!req.constraint.empty()) {
    if (!constraints)
      return refuse(id, errc::invalid_field, "constraint: " + std::string(no_constraints));
    if (auto compiled = constraints->compile(req.constraint); !compiled)
      return refuse(id, errc::invalid_field,
                    "constraint: " + compiled.error().message);
  }
  const auto outside_vocabulary = [&](std::string_view field, int32_t t) {
    return refuse(id, errc::invalid_field,
                  std::string(field) + ": id " + std::to_string(t) +
                    " is outside the vocabulary [0, " + std::to_string(limits.vocab_size) + ")");
  };
  for (const logit_bias_entry& b : req.logit_bias)
    if (b.token >= limits.vocab_size)
      return outside_vocabulary("logit_bias", b.token);
  for (int32_t t : req.stop_token_ids)
    if (t >= limits.vocab_size)
      return outside_vocabulary("stop_token_ids", t);
  std::vector<token_id> prompt;
  if (!req.prompt_tokens.empty()) {
    for (int32_t t : req.prompt_tokens)
      if (t < 0 || t >= limits.vocab_size)
        return outside_vocabulary("prompt_tokens", t);
    prompt.assign(req.prompt_tokens.begin(), req.prompt_tokens.end());
  } else {
    if (!is_valid_utf8(req.prompt))
      return refuse(id, errc::invalid_field, "prompt is not valid UTF-8");
    prompt = tok.encode(req.prompt, req.add_special_tokens);
    if (prompt.empty())
      return refuse(id, errc::invalid_field, "prompt is empty");
  }
  const auto context = static_cast<int64_t>(prompt.size()) + req.max_tokens;
  if (context > limits.max_context)
    return refuse(id, errc::prompt_too_long,
                  std::to_string(prompt.size()) + " prompt tokens + max_tokens " +
                    std::to_string(req.max_tokens) + " exceed the model's context of " +
                    std::to_string(limits.max_context));
  return request_state(id, std::move(req), std::move(prompt), tok, now);
}

request_state::request_state(request_id id, generate_request req, std::vector<token_id> prompt,
                             const model::tokenizer& tok, clock::time_point now)
  : id_(id), req_(std::move(req)), prompt_(std::move(prompt)), tok_(&tok),
    choices_(size_t(req_.n), output(tok)), start_(now) {
}

generation_params request_state::params() const {
  model::sampling_params s;
  s.temperature = req_.temperature;
  s.top_k = std::max(req_.top_k, 0); // -1 and 0: all tokens
  s.top_p = req_.top_p;
  s.seed = req_.seed;
  s.min_p = req_.min_p;
  s.presence_penalty = req_.presence_penalty;
  s.frequency_penalty = req_.frequency_penalty;
  s.repetition_penalty = req_.repetition_penalty;
  s.logit_bias.reserve(req_.logit_bias.size());
  for (const logit_bias_entry& b : req_.logit_bias)
    s.logit_bias.push_back({b.token, b.bias});
  s.min_tokens = req_.min_tokens;
  return {req_.max_tokens, req_.ignore_eos, std::move(s), req_.logprobs,
          {req_.stop_token_ids.begin(), req_.stop_token_ids.end()}, req_.constraint};
}

token_logprob request_state::logprob_of(token_id t, float logprob) const {
  return {t, logprob, std::string(tok_->token_bytes(t))};
}

std::optional<token_event> request_state::on_token(int32_t choice, token_id t,
                                                   clock::time_point now,
                                                   const model::token_logprobs& logprobs,
                                                   bool is_eos) {
  output& o = choices_.at(size_t(choice));
  if (o.stop_seen)
    return std::nullopt;
  if (!o.first_token)
    o.first_token = now;
  o.tokens.push_back(t);
  const size_t searched_from = o.text.size();
  if (!is_eos)
    o.text += o.decoder.push(t);
  // A stop sequence may straddle the previous text's end.
  size_t longest = 0;
  for (const auto& s : req_.stop)
    longest = std::max(longest, s.size());
  const size_t from = searched_from > longest ? searched_from - longest : 0;
  size_t cut = std::string::npos;
  for (const auto& s : req_.stop)
    cut = std::min(cut, o.text.find(s, from));
  if (cut != std::string::npos) {
    o.text.resize(cut);
    o.stop_seen = true;
  }
  const size_t end = o.stop_seen ? o.text.size() : o.text.size() - held_back(o.text);
  token_event ev{id_, static_cast<int32_t>(o.tokens.size() - 1), t, {}, false, {}, {}, choice};
  if (req_.logprobs >= 0) {
    ev.has_logprobs = true;
    ev.logprob = logprob_of(t, logprobs.logprob);
    for (const model::logprob_entry& e : logprobs.top)
      ev.top_logprobs.push_back(logprob_of(e.token, e.logprob));
  }
  if (end > o.num_streamed) {
    ev.text = o.text.substr(o.num_streamed, end - o.num_streamed);
    o.num_streamed = end;
  }
  return ev;
}

size_t request_state::held_back(const std::string& text) const {
  size_t held = 0;
  for (const auto& s : req_.stop)
    for (size_t n = std::min(s.size() - 1, text.size()); n > held; --n)
      if (text.compare(text.size() - n, n, s, 0, n) == 0) {
        held = n;
        break;
      }
  return held;
}

done_event request_state::finish(int32_t choice, const sequence_update& last,
                                 clock::time_point now) {
  output& o = choices_.at(size_t(choice));
  if (!o.stop_seen)
    o.text += o.decoder.flush();
  auto ms = [&](clock::time_point t) {
    return std::chrono::duration<double, std::milli>(t - start_).count();
  };
  const finish_reason why = o.stop_seen ? finish_reason::stop : last.finished;
  const bool failed = why == finish_reason::error;
  return {id_,
          why,
          o.tokens,
          o.text,
          static_cast<int32_t>(prompt_.size()),
          static_cast<int32_t>(o.tokens.size()),
          last.num_cached_tokens,
          o.first_token ? ms(*o.first_token) : 0.0,
          ms(now),
          last.num_preemptions,
          choice,
          failed ? last.error_code : errc::none,
          failed ? last.error : std::string{}};
}

} // namespace kvactor
