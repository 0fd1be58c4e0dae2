#pragma once
// kvactor's public API for host CAF applications.
//
//   struct host_config : caf::actor_system_config {
//     host_config() { kvactor::add_message_types(*this); }
//   };
//   auto rt = kvactor::spawn_runtime(sys, engine);   // caf::expected<runtime_actor>
//   self->request(*rt, caf::infinite, kvactor::generate_atom::value, req, my_sink)
//     .then([](const kvactor::admission& a) { ... });
//   // my_sink receives token_event ... then one done_event per choice (req.n).
//   self->request(*rt, caf::infinite, kvactor::shutdown_atom::value).then(...);
//
// Register the message types on the config before the actor system starts.
// shutdown ends live requests as aborted and every kvactor actor, so the
// host's actor system can terminate.

#include "kvactor/constraint.hpp"
#include "kvactor/defaults.hpp"
#include "kvactor/engine_config.hpp"
#include "kvactor/errors.hpp"
#include "kvactor/finish_reason.hpp"

#include <caf/all.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvactor {

using request_id = uint64_t;

// The ranges a generate_request's fields must lie in (the runtime refuses
// others as invalid_field; the model's context bounds the prompt and
// max_tokens together).
constexpr int32_t max_max_tokens = int32_t{1} << 20;
constexpr double max_temperature = 1e6; // far above it sampling is uniform anyway
constexpr int32_t max_priority = 1000000; // priorities lie in [-max_priority, max_priority]
constexpr int32_t max_logprobs = 20;      // the most likely alternatives per token
constexpr int32_t max_logit_bias = 300;   // entries of a request's logit_bias (OpenAI's limit)
constexpr float max_abs_logit_bias = 100; // a bias lies in [-100, 100]
constexpr float max_abs_penalty = 2;      // presence and frequency penalties in [-2, 2]

// A bias added to one token's logit before sampling (OpenAI's logit_bias).
struct logit_bias_entry {
  int32_t token = 0;
  float bias = 0.0f;
};

struct generate_request {
  std::string prompt;                 // tokenized by the model's tokenizer ...
  std::vector<int32_t> prompt_tokens; // ... unless these are given (used as is)
  bool add_special_tokens = true;     // the tokenizer's post-processor tokens around the
                                      // prompt text (Llama's BOS); a rendered chat has its own
  bool return_prompt_tokens = false;  // the admission carries the prompt's token ids
  int32_t max_tokens = 64;            // [1, max_max_tokens]
  float temperature = 0.0f;           // [0, max_temperature]; 0: greedy
  int32_t top_k = 0;                  // >= -1; -1 and 0: all tokens
  float top_p = 1.0f;                 // (0, 1]
  float min_p = 0.0f;                 // [0, 1]: keep tokens at least min_p times as likely as
                                      // the most likely one; 0: all
  float presence_penalty = 0.0f;      // [-max_abs_penalty, max_abs_penalty], subtracted from
                                      // the logit of each token generated so far
  float frequency_penalty = 0.0f;     // likewise, times how often it was generated
  float repetition_penalty = 1.0f;    // > 0; a token of the prompt or output so far has its
                                      // logit divided by it (multiplied when negative); 1: off
  std::vector<logit_bias_entry> logit_bias; // up to max_logit_bias distinct ids of the
                                            // vocabulary, each bias in [-100, 100]
  std::vector<int32_t> stop_token_ids; // ids of the vocabulary: a sampled one ends the choice
                                       // ("stop"; the token is its last)
  int32_t min_tokens = 0;             // [0, max_tokens]: neither EOS nor stop_token_ids end
                                      // a choice before it has this many tokens
  uint64_t seed = 1;
  int32_t priority = 0;               // higher runs first
  std::vector<std::string> stop;      // end when the text contains one of these (non-empty)
  bool ignore_eos = false;
  int32_t logprobs = -1;              // -1: none; 0..max_logprobs: each token event carries
                                      // its token's log probability and this many of the
                                      // most likely tokens'
  int32_t n = 1;                      // [1, max_choices] choices of the same prompt, choice
                                      // c sampling with seed + c; the prompt is computed
                                      // once and its KV blocks shared
  output_constraint constraint{};     // what the text must be (kvactor/constraint.hpp)
};

// The answer to a generate request: accepted (error_code none) or refused.
struct admission {
  // NOTE: a constructor rather than an aggregate, so that the many
  // admission{id, n, code, message} leave prompt_tokens out without warning.
  admission(request_id id_ = 0, int32_t num_prompt_tokens_ = 0, errc error_code_ = errc::none,
            std::string error_message_ = {}, std::vector<int32_t> prompt_tokens_ = {})
    : id(id_), num_prompt_tokens(num_prompt_tokens_), error_code(error_code_),
      error_message(std::move(error_message_)), prompt_tokens(std::move(prompt_tokens_)) {}

  request_id id = 0;
  int32_t num_prompt_tokens = 0;
  // invalid_field, prompt_too_long, overloaded, device_unusable (the device has
  // faulted; and from a front, worker_lost)
  errc error_code = errc::none;
  std::string error_message; // names the field or limit at fault
  std::vector<int32_t> prompt_tokens; // accepted, when the request asked for them
  bool ok() const { return error_code == errc::none; }
};

// A token and its log probability under the model: the log-softmax of the
// step's logits, before temperature, top-k and top-p.
struct token_logprob {
  int32_t token = 0;
  float logprob = 0.0f;
  std::string bytes; // the token's bytes (a piece of a UTF-8 character, maybe)
};

// One generated token; text is what it completes (may be empty while a
// multi-byte character or a possible stop sequence is incomplete).
struct token_event {
  request_id id = 0;
  int32_t index = 0; // the token's place in its choice's output
  int32_t token = 0;
  std::string text;
  // When the request asked for logprobs (has_logprobs): this token's, and
  // its `logprobs` most likely tokens', most likely first.
  bool has_logprobs = false;
  token_logprob logprob{};
  std::vector<token_logprob> top_logprobs{};
  int32_t choice{}; // which of the request's n choices, [0, n)
};

// Exactly once per choice of an accepted request.
struct done_event {
  request_id id = 0;
  kvactor::finish_reason finish_reason = kvactor::finish_reason::none; // kvactor/finish_reason.hpp
  std::vector<int32_t> tokens;
  std::string text;
  int32_t prompt_tokens = 0;
  int32_t completion_tokens = 0;
  int32_t cached_tokens = 0;
  double ttft_ms = 0;
  double total_ms = 0;
  int32_t preemptions = 0;
  int32_t choice{}; // which of the request's n choices, [0, n)
  // finish_reason error: why the request ended without its result
  // (worker_lost: a front lost the worker that served it; device_unusable:
  // the device faulted, error_message naming the fault).
  errc error_code = errc::none;
  std::string error_message{};
};

// A distribution as Prometheus exposes one: how many observations fell at
// or below each bound (not cumulative: counts[i] holds those in
// (bounds[i-1], bounds[i]], the last count those above every bound), their
// sum and their number. Seconds, for the runtime's latencies.
struct histogram {
  std::vector<double> bounds; // ascending
  std::vector<int64_t> counts; // bounds.size() + 1
  double sum = 0;
  int64_t count = 0;
};

// One worker as a front node sees it (runtime_figures::workers).
struct worker_figures {
  std::string address; // host:port
  std::string state;   // connecting, live, down, refused
  std::string message; // why it is down or refused
  int32_t device_blocks_total = 0; // its last report
  int32_t device_blocks_free = 0;
  int32_t running = 0;
  int32_t waiting = 0;
  int64_t requests_routed = 0; // by this front, since it started
  int32_t requests_live = 0;   // routed and not ended
  int64_t requests_resubmitted = 0; // lost with it, started again on another (front --resubmit)
};

struct runtime_figures {
  int32_t device_blocks_total = 0;
  int32_t device_blocks_free = 0;
  int32_t device_blocks_cached = 0;
  int32_t device_blocks_used = 0;
  int32_t host_blocks_total = 0;
  int32_t host_blocks_free = 0;
  int32_t running = 0;
  int32_t waiting = 0;
  int32_t swapped = 0;
  // Ended requests; a request of n choices counts n (each is a sequence of
  // its own, with its own latencies below).
  int64_t requests_finished = 0;
  int64_t requests_aborted = 0;
  double prefix_hit_rate = 0;
  double kv_utilisation = 0;
  int64_t preemptions = 0;
  int64_t preemptions_by_swap = 0; // of them, their blocks kept in the host pool (else recomputed)
  int64_t swap_outs_refused = 0;   // swap-outs the host pool had no room for (then recomputed)
  int64_t tokens_generated = 0;
  int64_t steps = 0;
  int32_t peak_running = 0;   // most sequences running after a step
  // Steps' wall time in the scheduler's loop (planning, forward, output
  // handling; idle time excluded), and the parts of it spent planning
  // (policy and block reservations) and in the forward pass on the device
  // (block copies, forward, sampling). Overhead = 1 - forward / busy.
  double busy_seconds = 0;
  double planning_seconds = 0;
  double forward_seconds = 0;
  double sampling_seconds = 0; // of forward_seconds, sampling the steps' rows
  std::vector<std::string> broken_invariants; // empty when the pools are sound
  // Counters since the start, and latency distributions in seconds, for
  // monitoring (the HTTP front's /metrics).
  int64_t prompt_tokens = 0;  // of admitted requests
  int64_t prefix_queries = 0; // full prompt blocks looked up in the prefix cache ...
  int64_t prefix_hits = 0;    // ... and found there
  histogram time_to_first_token; // admission to first token
  histogram inter_token_latency; // between a request's consecutive tokens
  histogram e2e_latency;         // admission to the end, of requests not aborted
  histogram queue_time;          // admission to first scheduled
  histogram step_time;           // one step's wall time in the scheduler's loop
  // A front node's workers (empty on a single node); the figures above are
  // then the sums over its live workers.
  std::vector<worker_figures> workers;
};

// Reads a tools' option into an engine_config field: the value `name`
// names (to_string's names; for weights and activations also auto, which
// is nullopt), or an invalid_config error naming `option` and the names it
// takes. Leaves `out` as it was on an error.
caf::error parse_option(std::string_view option, std::string_view name, preemption_mode& out);
caf::error parse_option(std::string_view option, std::string_view name, batching_mode& out);
caf::error parse_option(std::string_view option, std::string_view name, kv_reservation& out);
caf::error parse_option(std::string_view option, std::string_view name, number_format& out);
caf::error parse_option(std::string_view option, std::string_view name,
                        std::optional<number_format>& out);

using generate_atom = caf::atom_constant<caf::atom("generate")>;
using cancel_atom = caf::atom_constant<caf::atom("cancel")>;
using figures_atom = caf::atom_constant<caf::atom("figures")>;
using shutdown_atom = caf::atom_constant<caf::atom("shutdown")>;
using preempt_atom = caf::atom_constant<caf::atom("preempt")>;

// What the host implements to receive a request's events.
using sink_actor = caf::typed_actor<caf::reacts_to<token_event>, caf::reacts_to<done_event>>;

// The runtime as the host sees it.
using runtime_actor = caf::typed_actor<
  // Starts a generation streaming to the sink.
  caf::replies_to<generate_atom, generate_request, sink_actor>::with<admission>,
  // Ends a request as aborted (unknown ids are ignored).
  caf::reacts_to<cancel_atom, request_id>,
  caf::replies_to<figures_atom>::with<runtime_figures>,
  // Forces a preemption of a running sequence at the next step: by swap
  // (true) or recompute (false), of `id` or (id 0) the last in scheduling order.
  caf::reacts_to<preempt_atom, request_id, bool>,
  // Ends every request as aborted and every kvactor actor; replies when done.
  caf::replies_to<shutdown_atom>::with<bool>>;

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, generate_request& x) {
  return f(caf::meta::type_name("kvactor.generate_request"), x.prompt, x.prompt_tokens,
           x.max_tokens, x.temperature, x.top_k, x.top_p, x.seed, x.priority, x.stop,
           x.ignore_eos, x.logprobs, x.n, x.min_p, x.presence_penalty, x.frequency_penalty,
           x.repetition_penalty, x.logit_bias, x.stop_token_ids, x.min_tokens,
           x.add_special_tokens, x.return_prompt_tokens, x.constraint);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, output_constraint& x) {
  return f(caf::meta::type_name("kvactor.output_constraint"), x.kind, x.text, x.choices);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, logit_bias_entry& x) {
  return f(caf::meta::type_name("kvactor.logit_bias_entry"), x.token, x.bias);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, token_logprob& x) {
  return f(caf::meta::type_name("kvactor.token_logprob"), x.token, x.logprob, x.bytes);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, admission& x) {
  return f(caf::meta::type_name("kvactor.admission"), x.id, x.num_prompt_tokens, x.error_code,
           x.error_message, x.prompt_tokens);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, token_event& x) {
  return f(caf::meta::type_name("kvactor.token_event"), x.id, x.index, x.token, x.text,
           x.has_logprobs, x.logprob, x.top_logprobs, x.choice);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, done_event& x) {
  return f(caf::meta::type_name("kvactor.done_event"), x.id, x.finish_reason, x.tokens, x.text,
           x.prompt_tokens, x.completion_tokens, x.cached_tokens, x.ttft_ms, x.total_ms,
           x.preemptions, x.choice, x.error_code, x.error_message);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, worker_figures& x) {
  return f(caf::meta::type_name("kvactor.worker_figures"), x.address, x.state, x.message,
           x.device_blocks_total, x.device_blocks_free, x.running, x.waiting, x.requests_routed,
           x.requests_live, x.requests_resubmitted);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, histogram& x) {
  return f(caf::meta::type_name("kvactor.histogram"), x.bounds, x.counts, x.sum, x.count);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, runtime_figures& x) {
  return f(caf::meta::type_name("kvactor.runtime_figures"), x.device_blocks_total,
           x.device_blocks_free, x.device_blocks_cached, x.device_blocks_used,
           x.host_blocks_total, x.host_blocks_free, x.running, x.waiting, x.swapped,
           x.requests_finished, x.requests_aborted, x.prefix_hit_rate, x.kv_utilisation,
           x.preemptions, x.preemptions_by_swap, x.swap_outs_refused, x.tokens_generated,
           x.steps, x.peak_running, x.busy_seconds, x.planning_seconds, x.forward_seconds,
           x.sampling_seconds, x.broken_invariants, x.prompt_tokens, x.prefix_queries,
           x.prefix_hits, x.time_to_first_token, x.inter_token_latency, x.e2e_latency,
           x.queue_time, x.step_time, x.workers);
}

// Announces kvactor's message types to the host's configuration.
void add_message_types(caf::actor_system_config& cfg);

// Tunes CAF's work-stealing scheduler for a process whose cores also run the
// CPU device: an idle worker sleeps on its condition variable right after
// its short spin, where CAF by default wakes it every 50 us for 500 more
// polls. Served steps message the scheduler every few milliseconds, so with
// the default the idle workers never stop waking, and they took about a
// fifth of the cores from a served single stream's forward pass. Call
// before the actor system starts; the command line (--work-stealing.*)
// overrides it.
void use_serving_scheduler(caf::actor_system_config& cfg);

// Loads the model, makes the device and spawns the runtime's actors into
// `sys`. A bad model folder or an unusable device is an error naming what is
// wrong.
caf::expected<runtime_actor> spawn_runtime(caf::actor_system& sys, const engine_config& config);

} // namespace kvactor
