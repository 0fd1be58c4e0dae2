#include "net/line_protocol.hpp"

#include "actors/requests/request_fields.hpp"
#include "net/constraint_fields.hpp"
#include "net/json_writer.hpp"
#include "net/logprob_report.hpp"
#include "net/numeric_fields.hpp"
#include "net/request_defaults.hpp"
#include "net/token_fields.hpp"

#include <limits>

namespace kvactor::net {

namespace od = simdjson::ondemand;

namespace {

protocol_error fail(std::string code, std::optional<std::string> id, std::string message) {
  return {std::move(code), std::move(id), std::move(message)};
}

// The fields of a client line, as read; validation comes after.
struct fields {
  std::optional<std::string> op, id, prompt;
  std::optional<std::vector<int32_t>> prompt_tokens;
  generate_request req; // the optional parameters, defaults where absent
};

// The numeric generation parameters, each by the runtime's rule alone.
constexpr integer_field integer_fields[] = {max_tokens_field, top_k_field, priority_field,
                                            logprobs_field, choices_field, min_tokens_field};
constexpr number_field number_fields[] = {temperature_field, top_p_field, min_p_field,
                                          presence_penalty_field, frequency_penalty_field,
                                          repetition_penalty_field};

// Reads one known field into f: its JSON type here, its range by the
// runtime's rules (request_fields); an error names the field.
std::optional<protocol_error> read_field(std::string_view key, od::value v, fields& f,
                                         const std::optional<std::string>& id) {
  auto invalid = [&](std::string message) {
    return protocol_error{"invalid_field", id, std::move(message)};
  };
  auto bad = [&](std::string_view what) {
    return invalid(std::string(key) + " must be " + std::string(what));
  };
  auto fault = [&](std::optional<field_fault> problem) -> std::optional<protocol_error> {
    if (!problem)
      return std::nullopt;
    return problem->wrong_type ? bad(problem->message) : invalid(std::move(problem->message));
  };
  for (const integer_field& field : integer_fields)
    if (key == field.key)
      return fault(read_numeric(field, v, f.req));
  for (const number_field& field : number_fields)
    if (key == field.key)
      return fault(read_numeric(field, v, f.req));
  if (key == "logit_bias")
    return fault(read_logit_bias(v, f.req));
  if (key == "stop_token_ids")
    return fault(read_stop_token_ids(v, f.req));
  if (is_constraint_field(key))
    return fault(read_constraint_field(key, v, f.req));
  if (key == "op" || key == "id" || key == "prompt") {
    std::string_view s;
    if (auto err = v.get_string().get(s))
      return err == simdjson::STRING_ERROR
               ? protocol_error{"bad_json", std::nullopt,
                                "invalid string escape in " + std::string(key)}
               : bad("a string");
    (key == "op" ? f.op : key == "id" ? f.id : f.prompt) = std::string(s);
  } else if (key == "prompt_tokens") {
    od::array a;
    if (v.get_array().get(a))
      return bad("an array of token ids");
    std::vector<int32_t> ids;
    for (auto item : a) {
      int64_t t;
      if (item.get_int64().get(t) || t < std::numeric_limits<int32_t>::min() ||
          t > std::numeric_limits<int32_t>::max())
        return bad("an array of token ids");
      ids.push_back(static_cast<int32_t>(t));
    }
    if (ids.empty())
      return bad("a non-empty array of token ids");
    f.prompt_tokens = std::move(ids);
  } else if (key == "seed") {
    uint64_t s;
    if (v.get_uint64().get(s))
      return bad("an integer in [0, 2^64)");
    f.req.seed = s;
  } else if (key == "stop") {
    od::array a;
    if (v.get_array().get(a))
      return bad("an array of strings");
    for (auto item : a) {
      std::string_view s;
      if (item.get_string().get(s))
        return bad("an array of strings");
      if (auto wrong = check_stop(s))
        return invalid(*wrong);
      f.req.stop.emplace_back(s);
    }
  } else if (key == "ignore_eos" || key == "add_special_tokens" || key == "return_token_ids") {
    bool b;
    if (v.get_bool().get(b))
      return bad("true or false");
    (key == "ignore_eos"           ? f.req.ignore_eos
     : key == "add_special_tokens" ? f.req.add_special_tokens
                                   : f.req.return_prompt_tokens) = b;
  }
  return std::nullopt; // unknown keys are ignored
}

} // namespace

client_message line_parser::parse(std::string_view line) {
  if (!line.empty() && line.back() == '\r')
    line.remove_suffix(1);
  buffer_ = simdjson::padded_string(line);

  // First pass: is it one JSON object, and what is its id (so that errors
  // about its fields can name the request)?
  std::optional<std::string> id;
  {
    od::document doc;
    od::object obj;
    auto err = parser_.iterate(buffer_).get(doc);
    if (err == simdjson::UTF8_ERROR)
      return fail("invalid_field", std::nullopt, "the line is not valid UTF-8");
    if (err || (err = doc.get_object().get(obj)))
      return fail("bad_json", std::nullopt,
                  err == simdjson::INCORRECT_TYPE ? "a line must be one JSON object"
                                                  : std::string("invalid JSON: ") +
                                                      simdjson::error_message(err));
    for (auto field : obj) {
      std::string_view key;
      if ((err = field.unescaped_key().get(key)))
        return fail("bad_json", std::nullopt, simdjson::error_message(err));
      std::string_view s;
      if (key == "id" && !field.value().get_string().get(s))
        id = std::string(s);
      // Other values are skipped by the next iteration, which reports their
      // syntax errors.
    }
    if (doc.current_location().error() != simdjson::OUT_OF_BOUNDS)
      return fail("bad_json", std::nullopt, "trailing content after the JSON object");
  }

  // Second pass: every known field, typed, over the model's defaults.
  fields f;
  apply_sampling_defaults(defaults_, f.req);
  od::document doc;
  od::object obj;
  if (parser_.iterate(buffer_).get(doc) || doc.get_object().get(obj))
    return fail("bad_json", std::nullopt, "invalid JSON");
  for (auto field : obj) {
    std::string_view key;
    if (field.unescaped_key().get(key))
      return fail("bad_json", std::nullopt, "invalid JSON");
    if (auto problem = read_field(key, field.value(), f, id))
      return *problem;
  }

  if (!f.op)
    return fail("missing_field", id, "op is required");
  if (*f.op == "ping")
    return ping_op{};
  if (*f.op == "stats")
    return stats_op{};
  if (*f.op != "generate" && *f.op != "cancel")
    return fail("unknown_op", id, "unknown op '" + *f.op + "'");
  if (!f.id)
    return fail("missing_field", std::nullopt, "id is required");
  if (f.id->empty())
    return fail("invalid_field", std::nullopt, "id must be a non-empty string");
  if (*f.op == "cancel")
    return cancel_op{*f.id};
  if (f.prompt.has_value() == f.prompt_tokens.has_value())
    return fail(f.prompt ? "invalid_field" : "missing_field", f.id,
                "exactly one of prompt or prompt_tokens is required");
  if (auto wrong = check_min_tokens_fit(f.req.min_tokens, f.req.max_tokens))
    return fail("invalid_field", f.id, std::move(*wrong));
  generate_op g{*f.id, std::move(f.req)};
  if (f.prompt)
    g.request.prompt = std::move(*f.prompt);
  else
    g.request.prompt_tokens = std::move(*f.prompt_tokens);
  return g;
}

std::string format_accepted(std::string_view id, int32_t num_prompt_tokens,
                            const std::vector<int32_t>& prompt_token_ids) {
  json_writer w;
  w.field("event", "accepted").field("id", id).field("prompt_tokens", num_prompt_tokens);
  if (!prompt_token_ids.empty())
    w.field("prompt_token_ids", prompt_token_ids);
  return w.line();
}

std::string format_token(std::string_view id, const token_event& ev, int32_t num_choices) {
  json_writer w;
  w.field("event", "token").field("id", id);
  if (num_choices > 1)
    w.field("choice", ev.choice);
  w.field("index", ev.index).field("token", ev.token).field("text", ev.text);
  if (ev.has_logprobs) {
    std::vector<json_writer> top;
    for (const token_logprob& t : ev.top_logprobs)
      top.push_back(std::move(json_writer()
                                .field("token", t.token)
                                .field("text", t.bytes)
                                .field("logprob", reported_logprob(t.logprob))));
    w.field("logprob", reported_logprob(ev.logprob.logprob)).field("top_logprobs", top);
  }
  return w.line();
}

std::string format_done(std::string_view id, const done_event& d, int32_t num_choices) {
  // NOTE: ended without its result (a front lost its worker, the device failed)
  if (d.finish_reason == finish_reason::error)
    return format_error({to_string(d.error_code), std::string(id), d.error_message,
                         num_choices > 1 ? std::optional<int32_t>(d.choice) : std::nullopt});
  json_writer usage;
  usage.field("prompt_tokens", d.prompt_tokens)
    .field("completion_tokens", d.completion_tokens)
    .field("cached_tokens", d.cached_tokens);
  json_writer timing;
  timing.field("ttft_ms", d.ttft_ms).field("total_ms", d.total_ms);
  json_writer w;
  w.field("event", "done").field("id", id);
  if (num_choices > 1)
    w.field("choice", d.choice);
  return w.field("finish_reason", to_string(d.finish_reason))
    .field("tokens", d.tokens)
    .field("text", d.text)
    .object("usage", usage)
    .object("timing", timing)
    .field("preemptions", d.preemptions)
    .line();
}

std::string format_stats(const runtime_figures& f) {
  json_writer w;
  w.field("event", "stats")
    .field("device_blocks_total", f.device_blocks_total)
    .field("device_blocks_free", f.device_blocks_free)
    .field("device_blocks_cached", f.device_blocks_cached)
    .field("device_blocks_in_use", f.device_blocks_used)
    .field("host_blocks_total", f.host_blocks_total)
    .field("host_blocks_free", f.host_blocks_free)
    .field("running", f.running)
    .field("waiting", f.waiting)
    .field("swapped", f.swapped)
    .field("requests_finished", f.requests_finished)
    .field("requests_aborted", f.requests_aborted)
    .field("prefix_cache_hit_rate", f.prefix_hit_rate)
    .field("kv_utilisation", f.kv_utilisation)
    .field("preemptions", f.preemptions)
    .field("preemptions_by_swap", f.preemptions_by_swap)
    .field("swap_outs_refused", f.swap_outs_refused)
    .field("tokens_generated", f.tokens_generated)
    .field("steps", f.steps)
    .field("peak_running", f.peak_running)
    .field("busy_seconds", f.busy_seconds)
    .field("planning_seconds", f.planning_seconds)
    .field("forward_seconds", f.forward_seconds)
    .field("sampling_seconds", f.sampling_seconds)
    .field("invariants_ok", f.broken_invariants.empty());
  if (!f.workers.empty()) {
    std::vector<json_writer> workers;
    for (const worker_figures& x : f.workers)
      workers.push_back(std::move(json_writer()
                                    .field("address", x.address)
                                    .field("state", x.state)
                                    .field("message", x.message)
                                    .field("device_blocks_total", x.device_blocks_total)
                                    .field("device_blocks_free", x.device_blocks_free)
                                    .field("running", x.running)
                                    .field("waiting", x.waiting)
                                    .field("requests_routed", x.requests_routed)
                                    .field("requests_live", x.requests_live)
                                    .field("requests_resubmitted", x.requests_resubmitted)));
    w.field("workers", workers);
  }
  return w.line();
}

std::string format_pong() {
  return json_writer().field("event", "pong").line();
}

std::string format_error(const protocol_error& e) {
  json_writer w;
  w.field("event", "error");
  if (e.id)
    w.field("id", *e.id);
  else
    w.null_field("id");
  if (e.choice)
    w.field("choice", *e.choice);
  return w.field("code", e.code).field("message", e.message).line();
}

} // namespace kvactor::net
