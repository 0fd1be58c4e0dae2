#pragma once
// The typed interfaces of kvactor's actors, one per actor, with a comment per
// message. The host-facing ones (sink_actor, runtime_actor) are in
// kvactor/kvactor.hpp.
//
//  host ──generate──► runtime ──spawn, admit──► request (one per request)
//          cancel,      │                        │ submit, stop  ▲ updates
//          figures      ▼                        ▼               │
//                     scheduler ◄────────────────────────────────┘
//          reserve,    │  ▲   ▲ swapped_out / swapped_in / swap_out_denied
//          release,    │  │   └───────────────────────────┐
//        swap_out/in   ▼  │ swap_in_denied                │
//                 block_manager ── swap_out/in + blocks ─► swap ── swap_order ─► executor
//                      ▲       ◄── free_swapped ───────┘            ▲
//                      │           step_plan                        │
//                   scheduler ──────────────────────────────────────┘

#include "actors/runtime/messages.hpp"

namespace kvactor {

// One request: validation, streaming, stop sequences, its done event.
using request_actor = caf::typed_actor<
  // Validates, tokenizes and submits the request; answers the host.
  caf::replies_to<admit_atom>::with<admission>,
  // A token and/or the end of the sequence, from the scheduler.
  caf::reacts_to<sequence_update>>;

// The scheduler: continuous batching, the step loop.
using scheduler_actor = caf::typed_actor<
  // A validated request joins the queue (or is refused: error_code set).
  caf::replies_to<submit_atom, submission, request_actor>::with<admission>,
  // The request actor ends its sequence: stop sequence seen, or sink gone.
  caf::reacts_to<stop_atom, seq_id, finish_reason>,
  // From the runtime actor: the host's cancels and forced preemptions.
  caf::reacts_to<cancel_atom, request_id>,
  caf::reacts_to<preempt_atom, request_id, bool>,
  // Its part of the runtime's figures.
  caf::replies_to<figures_atom>::with<scheduler_figures>,
  // Ends every request, then the block manager, swap actor and executor;
  // answers when they are asked to quit, and quits.
  caf::replies_to<shutdown_atom>::with<bool>,
  // The swap actor's reports: swap-out refused for lack of host room (the
  // sequence is recomputed), swap-out copied (device blocks freed), swap-in
  // copied (the ledger holds the new table); the block manager's: swap-in
  // refused for lack of blocks.
  caf::reacts_to<swap_out_denied_atom, seq_id>,
  caf::reacts_to<swapped_out_atom, seq_id>,
  caf::reacts_to<swapped_in_atom, seq_id>,
  caf::reacts_to<swap_in_denied_atom, seq_id>,
  // Its own timer: a static batch's window for arrivals has passed.
  caf::reacts_to<window_atom>>;

// The pinned host pool (swap_protocol over swap_space).
using swap_actor = caf::typed_actor<
  // The scheduler, once, before any command: where the reports go.
  caf::reacts_to<attach_atom, scheduler_actor>,
  // From the block manager: copy the sequence's device blocks to host, then
  // have them freed; or, when the host pool has no room, refuse.
  caf::reacts_to<swap_out_atom, seq_id, std::vector<block_id>>,
  // From the block manager: copy the sequence back into these fresh blocks.
  caf::reacts_to<swap_in_atom, seq_id, std::vector<block_id>>,
  // Free the host blocks of an ended sequence.
  caf::reacts_to<drop_host_atom, seq_id>,
  caf::replies_to<figures_atom>::with<host_figures>>;

// The device block pool and prefix cache (kv_ledger).
using block_manager_actor = caf::typed_actor<
  // From the scheduler, once, before any command: where swaps go and where
  // a refused swap-in is reported.
  caf::reacts_to<attach_atom, swap_actor, scheduler_actor>,
  // Slots for a whole step, in scheduling order, until one does not fit.
  caf::replies_to<reserve_atom, std::vector<reservation_entry>>::with<reservation_result>,
  // Preempted by recompute: free its blocks and drop its progress, once its
  // computed full blocks (this many tokens) joined the prefix cache.
  caf::reacts_to<release_atom, seq_id, int32_t>,
  // Ended: cache its computed full blocks, free its blocks and its record.
  caf::reacts_to<forget_atom, seq_id, int32_t>,
  // A request's choice (second) starts as a copy of its first (first).
  caf::reacts_to<fork_atom, seq_id, seq_id>,
  // Swap the sequence out: to the swap actor with its blocks.
  caf::reacts_to<swap_out_atom, seq_id>,
  // From the swap actor: its swap-out copy is done; free its device blocks.
  caf::reacts_to<free_swapped_atom, seq_id>,
  // Swap the sequence back into this many fresh blocks: to the swap actor
  // with them, or, short of blocks, swap_in_denied to the scheduler.
  caf::reacts_to<swap_in_atom, seq_id, int32_t>,
  // Figures and broken invariants.
  caf::replies_to<figures_atom>::with<pool_figures, std::vector<std::string>>>;

// Owns the device and the model: steps on the compute stream, swaps on
// their own streams; never blocks a CAF thread.
using executor_actor = caf::typed_actor<
  // Runs a step; answers with the sampled tokens when the device is done.
  caf::replies_to<step_plan>::with<step_output>,
  // Runs a swap's copies; answers when they completed.
  caf::replies_to<swap_order>::with<bool>,
  // Completions, sent from device threads.
  caf::reacts_to<done_atom, uint64_t, step_output>,
  caf::reacts_to<done_atom, uint64_t>,
  // The device failed (step_runner::set_fault_handler), from a device thread.
  caf::reacts_to<fault_atom, std::string>>;

} // namespace kvactor
