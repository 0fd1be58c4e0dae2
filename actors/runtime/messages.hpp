#pragma once
// Messages between kvactor's own actors: the plain structs they send, with
// their inspect overloads, and the atoms. The public ones are in
// kvactor/kvactor.hpp. No state class is sent, so none is included.

#include "actors/core/pool_figures.hpp"
#include "actors/core/reservation.hpp"
#include "actors/core/step.hpp"
#include "kvactor/kvactor.hpp"

#include <caf/all.hpp>

namespace kvactor {

// NOTE: a CAF 0.17 atom's text has at most 10 characters; the names say who
// sends what to whom (interfaces.hpp), the texts only need to differ.
// The request actor's start, from the runtime actor.
using admit_atom = caf::atom_constant<caf::atom("admit")>;
// Request actor -> scheduler.
using submit_atom = caf::atom_constant<caf::atom("submit")>;
using stop_atom = caf::atom_constant<caf::atom("stop")>;
// Scheduler -> block manager.
using reserve_atom = caf::atom_constant<caf::atom("reserve")>;
using release_atom = caf::atom_constant<caf::atom("release")>;
using forget_atom = caf::atom_constant<caf::atom("forget")>;
using fork_atom = caf::atom_constant<caf::atom("fork")>;
// Scheduler -> block manager and swap actor, once: where messages go.
using attach_atom = caf::atom_constant<caf::atom("attach")>;
// Swaps: scheduler -> block manager, which adds their blocks -> swap actor.
using swap_out_atom = caf::atom_constant<caf::atom("swap_out")>;
using swap_in_atom = caf::atom_constant<caf::atom("swap_in")>;
// Scheduler -> swap actor.
using drop_host_atom = caf::atom_constant<caf::atom("drop_host")>;
// Swap actor -> block manager.
using free_swapped_atom = caf::atom_constant<caf::atom("free_swap")>;
// Swap actor -> scheduler: its reports; block manager -> scheduler: a
// swap-in refused.
using swapped_out_atom = caf::atom_constant<caf::atom("out_done")>;
using swapped_in_atom = caf::atom_constant<caf::atom("in_done")>;
using swap_out_denied_atom = caf::atom_constant<caf::atom("out_denied")>;
using swap_in_denied_atom = caf::atom_constant<caf::atom("in_denied")>;
// The scheduler's own timer.
using window_atom = caf::atom_constant<caf::atom("window")>;
// Device threads -> executor.
using done_atom = caf::atom_constant<caf::atom("done")>;
using fault_atom = caf::atom_constant<caf::atom("fault")>;

// A validated request, as the request actor hands it to the scheduler.
struct submission {
  seq_id id = 0;
  std::vector<token_id> prompt;
  int32_t priority = 0;
  generation_params params;
  int32_t num_choices = 1;
};

// The host pool's state for figures and checks.
struct host_figures {
  int32_t num_blocks = 0;
  int32_t num_free_blocks = 0;
  int32_t num_sequences = 0; // holding host blocks
  std::vector<std::string> broken_invariants;
};

// The scheduler's part of the runtime's figures (the runtime actor adds the
// pools'), and what the runtime needs to check an idle runtime's pools.
struct scheduler_figures {
  runtime_figures figures;         // queues, preemptions, timing, latencies
  int32_t num_reserved_blocks = 0; // contiguous reservation: blocks held per sequence
  bool idle = false;               // no sequence in any state, no step in flight
  int64_t num_admitted = 0;        // requests admitted so far
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, block_copy& x) {
  return f(caf::meta::type_name("kvactor.block_copy"), x.src, x.dst);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, generation_params& x) {
  return f(caf::meta::type_name("kvactor.generation_params"), x.max_tokens, x.ignore_eos,
           x.sampling, x.num_logprobs, x.stop_token_ids, x.constraint);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, table_delta& x) {
  return f(caf::meta::type_name("kvactor.table_delta"), x.num_kept, x.added);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, scheduled_sequence& x) {
  return f(caf::meta::type_name("kvactor.scheduled_sequence"), x.id, x.start, x.tokens,
           x.blocks, x.sample, x.sampling, x.num_output_tokens, x.num_logprobs, x.history_prompt,
           x.constraint);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, step_plan& x) {
  return f(caf::meta::type_name("kvactor.step_plan"), x.step_id, x.copies, x.seqs, x.released);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, sampled_token& x) {
  return f(caf::meta::type_name("kvactor.sampled_token"), x.id, x.token, x.logprobs,
           x.must_end, x.no_finite_logit);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, step_output& x) {
  return f(caf::meta::type_name("kvactor.step_output"), x.step_id, x.sampled, x.forward_seconds,
           x.sampling_seconds);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, sequence_update& x) {
  return f(caf::meta::type_name("kvactor.sequence_update"), x.id, x.token, x.finished,
           x.num_cached_tokens, x.num_preemptions, x.logprobs, x.error_code, x.error);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, reservation_entry& x) {
  return f(caf::meta::type_name("kvactor.reservation_entry"), x.id, x.new_tokens,
           x.num_computed, x.num_new_tokens);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, granted_entry& x) {
  return f(caf::meta::type_name("kvactor.granted_entry"), x.id, x.start, x.num_new_tokens,
           x.num_cached_tokens, x.blocks);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, reservation_result& x) {
  return f(caf::meta::type_name("kvactor.reservation_result"), x.granted, x.copies, x.denied,
           x.num_blocks_short);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, swap_order& x) {
  return f(caf::meta::type_name("kvactor.swap_order"), x.id, x.direction, x.copies);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, submission& x) {
  return f(caf::meta::type_name("kvactor.submission"), x.id, x.prompt, x.priority, x.params,
           x.num_choices);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, pool_figures& x) {
  return f(caf::meta::type_name("kvactor.pool_figures"), x.num_blocks, x.num_free_blocks,
           x.num_cached_blocks, x.num_used_blocks, x.num_used_slots, x.num_allocated_slots,
           x.num_block_refs, x.num_prefix_queries, x.num_prefix_hits, x.num_evictions,
           x.num_sequences);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, host_figures& x) {
  return f(caf::meta::type_name("kvactor.host_figures"), x.num_blocks, x.num_free_blocks,
           x.num_sequences, x.broken_invariants);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, scheduler_figures& x) {
  return f(caf::meta::type_name("kvactor.scheduler_figures"), x.figures, x.num_reserved_blocks,
           x.idle, x.num_admitted);
}

namespace model {

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, sampling_params& x) {
  return f(caf::meta::type_name("kvactor.sampling_params"), x.temperature, x.top_k, x.top_p,
           x.seed, x.min_p, x.presence_penalty, x.frequency_penalty, x.repetition_penalty,
           x.logit_bias, x.min_tokens, x.min_tokens_banned);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, token_bias& x) {
  return f(caf::meta::type_name("kvactor.token_bias"), x.token, x.bias);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, logprob_entry& x) {
  return f(caf::meta::type_name("kvactor.logprob_entry"), x.token, x.logprob);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, token_logprobs& x) {
  return f(caf::meta::type_name("kvactor.token_logprobs"), x.logprob, x.top);
}

} // namespace model

} // namespace kvactor
