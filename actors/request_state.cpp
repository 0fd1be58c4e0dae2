#include "actors/request_state.hpp"

#include "actors/request_fields.hpp"

#include "model/tokenizer/unicode.hpp"

#include <algorithm>

namespace kvactor {

namespace {

admission refuse(request_id id, std::string code, std::string message) {
  return {id, 0, std::move(code), std::move(message)};
}

} // namespace

std::variant<request_state, admission> request_state::make(request_id id, generate_request req,
                                                           const model::tokenizer& tok,
                                                           const request_limits& limits,
                                                           clock::time_point now) {
  if (auto wrong = check_fields(req))
    return refuse(id, "invalid_field", std::move(*wrong));
  std::vector<token_id> prompt;
  if (!req.prompt_tokens.empty()) {
    for (int32_t t : req.prompt_tokens)
      if (t < 0 || t >= limits.vocab_size)
        return refuse(id, "invalid_field",
                      "prompt_tokens: id " + std::to_string(t) + " is outside the vocabulary [0, " +
                        std::to_string(limits.vocab_size) + ")");
    prompt.assign(req.prompt_tokens.begin(), req.prompt_tokens.end());
  } else {
    if (!model::is_valid_utf8(req.prompt))
      return refuse(id, "invalid_field", "prompt is not valid UTF-8");
    prompt = tok.encode(req.prompt);
    if (prompt.empty())
      return refuse(id, "invalid_field", "prompt is empty");
  }
  const auto context = static_cast<int64_t>(prompt.size()) + req.max_tokens;
  if (context > limits.max_context)
    return refuse(id, "prompt_too_long",
                  std::to_string(prompt.size()) + " prompt tokens + max_tokens " +
                    std::to_string(req.max_tokens) + " exceed the model's context of " +
                    std::to_string(limits.max_context));
  return request_state(id, std::move(req), std::move(prompt), tok, now);
}

request_state::request_state(request_id id, generate_request req, std::vector<token_id> prompt,
                             const model::tokenizer& tok, clock::time_point now)
  : id_(id), req_(std::move(req)), prompt_(std::move(prompt)), tok_(&tok), decoder_(tok), start_(now) {
}

generation_params request_state::params() const {
  return {req_.max_tokens, req_.ignore_eos,
          model::sampling_params{req_.temperature, req_.top_k, req_.top_p, req_.seed}, req_.logprobs};
}

token_logprob request_state::logprob_of(token_id t, float logprob) const {
  return {t, logprob, std::string(tok_->token_bytes(t))};
}

std::optional<token_event> request_state::on_token(token_id t, clock::time_point now,
                                                   const model::token_logprobs& logprobs) {
  if (stop_seen_)
    return std::nullopt;
  if (!first_token_)
    first_token_ = now;
  tokens_.push_back(t);
  const size_t searched_from = text_.size();
  text_ += decoder_.push(t);
  // A stop sequence may straddle the previous text's end.
  size_t longest = 0;
  for (const auto& s : req_.stop)
    longest = std::max(longest, s.size());
  const size_t from = searched_from > longest ? searched_from - longest : 0;
  size_t cut = std::string::npos;
  for (const auto& s : req_.stop)
    cut = std::min(cut, text_.find(s, from));
  if (cut != std::string::npos) {
    text_.resize(cut);
    stop_seen_ = true;
  }
  const size_t end = stop_seen_ ? text_.size() : text_.size() - held_back();
  token_event ev{id_, static_cast<int32_t>(tokens_.size() - 1), t, {}, false, {}, {}};
  if (req_.logprobs >= 0) {
    ev.has_logprobs = true;
    ev.logprob = logprob_of(t, logprobs.logprob);
    for (const model::logprob_entry& e : logprobs.top)
      ev.top_logprobs.push_back(logprob_of(e.token, e.logprob));
  }
  if (end > num_streamed_) {
    ev.text = text_.substr(num_streamed_, end - num_streamed_);
    num_streamed_ = end;
  }
  return ev;
}

size_t request_state::held_back() const {
  size_t held = 0;
  for (const auto& s : req_.stop)
    for (size_t n = std::min(s.size() - 1, text_.size()); n > held; --n)
      if (text_.compare(text_.size() - n, n, s, 0, n) == 0) {
        held = n;
        break;
      }
  return held;
}

done_event request_state::finish(const sequence_update& last, clock::time_point now) {
  if (!stop_seen_)
    text_ += decoder_.flush();
  auto ms = [&](clock::time_point t) {
    return std::chrono::duration<double, std::milli>(t - start_).count();
  };
  const finish_reason why = stop_seen_ ? finish_reason::stop : last.finished;
  return {id_,
          std::string(to_string(why)),
          tokens_,
          text_,
          static_cast<int32_t>(prompt_.size()),
          static_cast<int32_t>(tokens_.size()),
          last.num_cached_tokens,
          first_token_ ? ms(*first_token_) : 0.0,
          ms(now),
          last.num_preemptions};
}

} // namespace kvactor
