#include "net/openai_request.hpp"

#include "net/openai_fields.hpp"

#include "actors/requests/request_fields.hpp"
#include "net/constraint_fields.hpp"
#include "net/json_writer.hpp"
#include "net/numeric_fields.hpp"
#include "net/request_defaults.hpp"
#include "net/token_fields.hpp"

#include <simdjson.h>

#include <limits>

namespace kvactor::net {

namespace od = simdjson::ondemand;

namespace openai {

api_error invalid(std::string_view field, std::string message) {
  return {400, std::move(message), "invalid_request_error", std::string(field), std::nullopt};
}

api_error must_be(std::string_view field, std::string_view what) {
  return invalid(field, std::string(field) + " must be " + std::string(what));
}

api_error unsupported(std::string_view field, std::string_view what) {
  return invalid(field, std::string(what) + " is not supported");
}

std::optional<std::vector<int32_t>> token_ids(od::array a) {
  std::vector<int32_t> ids;
  for (auto item : a) {
    int64_t t;
    if (item.get_int64().get(t) || t < 0 || t > std::numeric_limits<int32_t>::max())
      return std::nullopt;
    ids.push_back(static_cast<int32_t>(t));
  }
  return ids;
}

std::optional<api_error> read_object(std::string_view body, const field_reader& on_field) {
  simdjson::padded_string buffer(body);
  od::parser parser;
  od::document doc;
  od::object obj;
  auto err = parser.iterate(buffer).get(doc);
  if (!err)
    err = doc.get_object().get(obj);
  if (err)
    return api_error{400,
                     err == simdjson::INCORRECT_TYPE ? "the body must be one JSON object"
                                                     : std::string("invalid JSON: ") +
                                                         simdjson::error_message(err)};
  for (auto field : obj) {
    std::string_view key;
    od::value v;
    if ((err = field.unescaped_key().get(key)) || (err = field.value().get(v)))
      return api_error{400, std::string("invalid JSON: ") + simdjson::error_message(err)};
    if (auto problem = on_field(key, v))
      return problem;
  }
  if (doc.current_location().error() != simdjson::OUT_OF_BOUNDS)
    return api_error{400, "invalid JSON: trailing content after the object"};
  return std::nullopt;
}

namespace {

// prompt: a string, an array of token ids, or an array of either (a batch).
std::variant<prompt_list, api_error> read_prompt(od::value v) {
  const auto bad = must_be("prompt", "a string, an array of token ids, or an array of either");
  std::string_view s;
  if (!v.get_string().get(s)) {
    if (s.empty())
      return must_be("prompt", "non-empty");
    return prompt_list{std::string(s)};
  }
  od::array a;
  if (v.get_array().get(a))
    return bad;
  // An array: of token ids (one prompt) or of prompts (a batch).
  prompt_list out;
  std::vector<int32_t> ids;
  bool batch = false, tokens = false;
  for (auto item : a) {
    od::json_type type;
    if (item.type().get(type))
      return bad;
    if (type == od::json_type::number) {
      int64_t t;
      if (batch || item.get_int64().get(t) || t < 0 || t > std::numeric_limits<int32_t>::max())
        return must_be("prompt", "token ids: integers in [0, 2^31)");
      tokens = true;
      ids.push_back(static_cast<int32_t>(t));
    } else if (type == od::json_type::string && !tokens) {
      batch = true;
      if (item.get_string().get(s))
        return bad;
      if (s.empty())
        return must_be("prompt", "non-empty");
      out.emplace_back(std::string(s));
    } else if (type == od::json_type::array && !tokens) {
      batch = true;
      od::array inner;
      if (item.get_array().get(inner))
        return bad;
      auto prompt = token_ids(inner);
      if (!prompt)
        return must_be("prompt", "token ids: integers in [0, 2^31)");
      if (prompt->empty())
        return must_be("prompt", "non-empty");
      out.emplace_back(std::move(*prompt));
    } else {
      return bad;
    }
  }
  if (tokens)
    out.emplace_back(std::move(ids));
  if (out.empty())
    return must_be("prompt", "non-empty");
  return out;
}

// stop: a string or an array of strings, each by the runtime's rule.
std::optional<api_error> read_stop(od::value v, std::vector<std::string>& stop) {
  auto add = [&](std::string_view s) -> std::optional<api_error> {
    if (auto wrong = check_stop(s))
      return invalid("stop", *wrong);
    stop.emplace_back(s);
    return std::nullopt;
  };
  std::string_view s;
  if (!v.get_string().get(s))
    return add(s);
  od::array a;
  if (v.get_array().get(a))
    return must_be("stop", "a string or an array of strings");
  for (auto item : a) {
    if (item.get_string().get(s))
      return must_be("stop", "a string or an array of strings");
    if (auto problem = add(s))
      return problem;
  }
  return std::nullopt;
}
// The numeric fields OpenAI's API (with vLLM's extensions min_p,
// repetition_penalty and min_tokens, and top_k) takes by the runtime's rules
// as they are (its temperature and logprobs have rules of their own, below).
constexpr integer_field integer_fields[] = {max_tokens_field, choices_field, priority_field,
                                            top_k_field, min_tokens_field};
constexpr number_field number_fields[] = {top_p_field, min_p_field, presence_penalty_field,
                                          frequency_penalty_field, repetition_penalty_field};

// One field of the body into f; an error names the field. Unknown keys and
// nulls are ignored, as OpenAI's API does.
std::optional<api_error> read_field(std::string_view key, od::value v, fields& f, bool chat) {
  bool null = false;
  if (!v.is_null().get(null) && null)
    return std::nullopt;
  if (chat && is_chat_field(key))
    return read_chat_field(key, v, f);
  if (chat && key == "max_completion_tokens")
    key = "max_tokens";
  auto fault = [&](std::optional<field_fault> problem) -> std::optional<api_error> {
    if (!problem)
      return std::nullopt;
    return problem->wrong_type ? must_be(key, problem->message)
                               : invalid(key, std::move(problem->message));
  };
  for (const integer_field& field : integer_fields)
    if (key == field.key)
      return fault(read_numeric(field, v, f.params));
  for (const number_field& field : number_fields)
    if (key == field.key)
      return fault(read_numeric(field, v, f.params));
  if (is_constraint_field(key))
    return fault(read_constraint_field(key, v, f.params));
  if (key == "model") {
    std::string_view s;
    if (v.get_string().get(s))
      return must_be(key, "a string");
    f.model = std::string(s);
  } else if (key == "prompt" && !chat) {
    auto p = read_prompt(v);
    if (auto* e = std::get_if<api_error>(&p))
      return *e;
    f.prompts = std::move(std::get<prompt_list>(p));
  } else if (key == "temperature") {
    // NOTE: OpenAI's API takes [0, 2], within the runtime's range.
    double t;
    if (v.get_double().get(t) || !(t >= 0 && t <= 2))
      return must_be(key, "a number in [0, 2]");
    f.params.temperature = static_cast<float>(t);
  } else if (key == "seed") {
    int64_t s;
    uint64_t u;
    if (!v.get_int64().get(s))
      f.params.seed = static_cast<uint64_t>(s); // negative seeds wrap, as a 64-bit pattern
    else if (!v.get_uint64().get(u))
      f.params.seed = u;
    else
      return must_be(key, "an integer");
  } else if (key == "stop") {
    f.params.stop.clear();
    return read_stop(v, f.params.stop);
  } else if (key == "stream") {
    if (v.get_bool().get(f.stream))
      return must_be(key, "true or false");
  } else if (key == "stream_options") {
    od::object o;
    if (v.get_object().get(o))
      return must_be(key, "an object");
    bool include = false;
    if (auto u = o.find_field_unordered("include_usage"); u.error() != simdjson::NO_SUCH_FIELD) {
      if (u.get_bool().get(include))
        return must_be("stream_options.include_usage", "true or false");
    }
    f.include_usage = include;
  } else if (key == "best_of") {
    // NOTE: best_of > n ranks extra choices by their likelihood, which
    // kvactor does not do.
    int64_t n;
    if (v.get_int64().get(n) || n < 1)
      return must_be(key, "an integer >= 1");
    if (n > 1)
      return unsupported(key, "best_of > 1");
  } else if (key == "logprobs") {
    // NOTE: OpenAI takes up to 5 alternatives, vLLM up to its max_logprobs
    // (20 by default); null is none.
    int64_t n;
    if (v.is_null())
      return std::nullopt;
    if (v.get_int64().get(n))
      return must_be(key, "an integer");
    if (auto wrong = check_logprobs(n))
      return invalid(key, *wrong);
    f.params.logprobs = static_cast<int32_t>(n);
  } else if (key == "echo") {
    bool echo = false;
    if (v.get_bool().get(echo))
      return must_be(key, "true or false");
    if (echo)
      return unsupported(key, "echo");
  } else if (key == "suffix") {
    return unsupported(key, "suffix");
  } else if (key == "logit_bias") {
    return fault(read_logit_bias(v, f.params));
  } else if (key == "stop_token_ids") { // as vLLM accepts it
    return fault(read_stop_token_ids(v, f.params));
  } else if (key == "return_token_ids") { // as vLLM accepts it
    if (v.get_bool().get(f.return_token_ids))
      return must_be(key, "true or false");
    f.params.return_prompt_tokens = f.return_token_ids; // the runtime sends them back
  } else if (key == "ignore_eos") { // as vLLM accepts it
    if (v.get_bool().get(f.params.ignore_eos))
      return must_be(key, "true or false");
  } else if (key == "add_special_tokens") { // as vLLM accepts it
    if (v.get_bool().get(f.params.add_special_tokens))
      return must_be(key, "true or false");
  }
  return std::nullopt;
}

} // namespace

std::variant<fields, api_error> read_body(std::string_view body, uint64_t draw_seed, bool chat,
                                         const model::sampling_defaults& defaults) {
  fields f;
  // OpenAI's defaults, but for a chat's length: OpenAI's runs to the end of
  // the context, which the HTTP front does not know before tokenizing.
  f.params.max_tokens = chat ? default_chat_max_tokens : 16;
  f.params.temperature = 1.0f;
  f.params.seed = draw_seed;
  // A text prompt gets the tokenizer's special tokens (BOS), a chat not: its
  // template writes them (as vLLM).
  f.params.add_special_tokens = !chat;
  apply_sampling_defaults(defaults, f.params); // the model's, for the fields left out
  if (auto problem = read_object(
        body, [&](std::string_view key, od::value v) { return read_field(key, v, f, chat); }))
    return *problem;
  if (chat ? !f.messages : !f.prompts)
    return invalid(chat ? "messages" : "prompt",
                   chat ? "messages is required" : "prompt is required");
  if (auto wrong = check_min_tokens_fit(f.params.min_tokens, f.params.max_tokens))
    return invalid("min_tokens", std::move(*wrong));
  if (f.include_usage && !f.stream)
    return invalid("stream_options", "stream_options is only allowed when stream is true");
  if (chat && f.chat_top_logprobs > 0 && !f.chat_logprobs)
    return invalid("top_logprobs", "top_logprobs requires logprobs to be true");
  if (chat && f.chat_logprobs)
    f.params.logprobs = f.chat_top_logprobs;
  return f;
}

completion_request request_of(fields& f) {
  completion_request out;
  out.model = std::move(f.model);
  out.stream = f.stream;
  out.include_usage = f.include_usage.value_or(false);
  out.return_token_ids = f.return_token_ids;
  for (auto& p : *f.prompts) {
    generate_request r = f.params;
    if (auto* text = std::get_if<std::string>(&p))
      r.prompt = std::move(*text);
    else
      r.prompt_tokens = std::move(std::get<std::vector<int32_t>>(p));
    out.prompts.push_back(std::move(r));
  }
  return out;
}

} // namespace openai

std::variant<completion_request, api_error>
parse_completion_request(std::string_view body, uint64_t draw_seed,
                         const model::sampling_defaults& defaults) {
  auto read = openai::read_body(body, draw_seed, false, defaults);
  if (auto* e = std::get_if<api_error>(&read))
    return *e;
  return openai::request_of(std::get<openai::fields>(read));
}

std::string format_api_error(const api_error& e) {
  json_writer inner;
  inner.field("message", e.message).field("type", e.type);
  if (e.param)
    inner.field("param", *e.param);
  else
    inner.null_field("param");
  if (e.code)
    inner.field("code", *e.code);
  else
    inner.null_field("code");
  return json_writer().object("error", inner).str();
}

std::string_view openai_finish_reason(finish_reason why) {
  switch (why) {
    case finish_reason::max_tokens: return "length";
    case finish_reason::aborted: return "abort";
    // ended without its result (a front lost its worker, the device failed)
    case finish_reason::error: return "error";
    case finish_reason::none:
    case finish_reason::eos:
    case finish_reason::stop: break;
  }
  return "stop"; // eos or a stop sequence
}

finish_reason finish_reason_of_openai(std::string_view openai) {
  if (openai == "stop" || openai == "tool_calls")
    return finish_reason::stop;
  if (openai == "length")
    return finish_reason::max_tokens;
  if (openai == "abort")
    return finish_reason::aborted;
  return finish_reason::error;
}

api_error admission_error(const admission& a, std::optional<size_t> prompt_index) {
  std::string message = prompt_index ? "prompt " + std::to_string(*prompt_index) + ": " : "";
  message += a.error_message;
  const std::string code = to_string(a.error_code);
  if (a.error_code == errc::overloaded)
    return {429, std::move(message), "rate_limit_error", std::nullopt, code};
  if (a.error_code == errc::worker_lost || a.error_code == errc::device_unusable)
    return {503, std::move(message), "server_error", std::nullopt, code};
  api_error e{400, std::move(message), "invalid_request_error", std::nullopt, code};
  if (a.error_code == errc::prompt_too_long) {
    e.param = "prompt";
    e.code = "context_length_exceeded";
  }
  return e;
}

} // namespace kvactor::net
