#pragma once
// scheduler: continuous batching — the scheduler actor's state. It keeps
// every sequence's lifecycle and decides each step; the block manager's
// kv_ledger holds the blocks, the swap actor moves K/V to and from the host
// pool. No CAF in here: other actors' work arrives as method calls and
// leaves as reservation entries and commands.
//
// One step = one forward pass:
//   entries = begin_step()                decode tokens and prefill chunks by
//                                         priority, then arrival, under the
//                                         token budget
//   loop: r = ledger.reserve(entries)     (one message to the block manager)
//         p = on_reservation(r)           grants join the plan (each grant's
//                                         table change passes on as it is);
//                                         on a denial preempt (commands) and
//                                         retry
//   ... the executor runs *p.plan ...
//   updates = update_from_output(out)     tokens, ends (eos, max_tokens)
//
// Preemption takes the running sequence last in scheduling order (lowest
// priority, latest arrival): by swap, else by recompute. The swap actor owns
// the host pool's room: a swap-out it cannot hold now comes back denied and
// the sequence is recomputed then (its blocks free a round trip later); one
// larger than the whole pool is recomputed at once. A swapped-out sequence's
// device blocks come free only when the swap actor reports the copy done;
// meanwhile a sequence they would serve waits a step. Preempted sequences
// resume ahead of new arrivals of the same priority. An abort while a step
// or a swap holds the sequence takes effect when that work completes (or is
// refused), and its late token is dropped.
//
// The comparison modes (static and padded batching, contiguous reservation)
// are batching_policy's rules, consulted at admission, at each step's start
// and at each end.
//
// Parallel sampling (n choices of one prompt) forks: the first choice's
// sequence computes the prompt short of its last token, then the other
// choices fork from it, sharing its blocks. Each choice computes the last
// prompt token itself, so its first write copies the shared partial block
// (copy-on-write), and samples its first token with a seed of its own.

#include "actors/core/batching_policy.hpp"
#include "actors/core/kv_ledger.hpp"
#include "actors/core/scheduler_commands.hpp"
#include "actors/core/scheduler_config.hpp"
#include "actors/core/step.hpp"

#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace kvactor {

class scheduler {
public:
  scheduler(scheduler_config config, int32_t num_device_blocks, int32_t num_host_blocks,
            int32_t block_size);

  // Queues a new sequence. An error when it could never fit in the device
  // pool, even alone (prompt plus max_tokens, for every choice: the prompt's
  // full blocks shared, request_blocks.hpp); nothing changes then.
  // num_choices > 1 (only where forks()): choice c runs as sequence
  // seq.id() + c with seed params.sampling.seed + c, forked from the first;
  // each choice ends with an update of its own.
  std::optional<std::string> add(sequence seq, generation_params params, int32_t num_choices = 1);
  // Whether requests of several choices fork: with continuous batching and
  // paged blocks (the comparison modes do not).
  bool forks() const { return policy_.continuous(); }

  // Ends a sequence (aborted, or stop when a stop sequence was seen): its
  // final update now, or nothing when in-flight work holds it (the update
  // comes when that work completes) or the id is unknown.
  std::vector<sequence_update> abort(seq_id id, finish_reason why = finish_reason::aborted);

  // The device has failed: every sequence ends now with finish_reason::error
  // and `why` (the work holding some of them will never report), and the
  // scheduler holds nothing more: no step, no commands.
  std::vector<sequence_update> fail_all(const std::string& why);

  // Preempts `id` (or, without one, the running sequence last in scheduling
  // order) at the next step, in the given mode.
  void force_preemption(std::optional<seq_id> id, preemption_mode mode);

  // Planning: begin_step(), then while the answer has no plan, reserve its
  // entries at the block manager and pass the result to on_reservation().
  // Planning is atomic: no other call comes in between. An empty plan means
  // there is nothing to run. At most one step is planned or in flight.
  struct planning {
    std::vector<reservation_entry> reserve; // ask the block manager for these
    std::optional<step_plan> plan;          // or the step is planned
  };
  planning begin_step();
  planning on_reservation(const reservation_result& r);
  bool step_in_flight() const { return step_.has_value(); }
  // Fixed or padded batching: the next step would open a batch that is not
  // full. The scheduler actor then waits a short window for more arrivals
  // first, as a static batcher does (else the first batch of a burst holds
  // only the requests that came before its first step).
  bool would_open_a_partial_batch() const;

  // What comes back, and what goes out (scheduler_reports.cpp).
  // The step's output: tokens, ends (eos, max_tokens, stop tokens).
  std::vector<sequence_update> update_from_output(const step_output& out);
  // Commands issued since the last call, to run in order (deliver()).
  scheduler_commands take_commands();
  // The swap actor's reports (and the block manager's refusal of a swap-in).
  // Each ends the sequence (its final update) when an abort came while the
  // swap held it. A swap-out the host pool had no room for is recomputed.
  std::vector<sequence_update> complete_swap_out(seq_id id);
  std::vector<sequence_update> swap_out_denied(seq_id id);
  std::vector<sequence_update> complete_swap_in(seq_id id);
  std::vector<sequence_update> swap_in_denied(seq_id id);

  int32_t num_waiting() const;
  int32_t num_running() const;
  int32_t num_swapped() const;
  int32_t num_sequences() const { return static_cast<int32_t>(entries_.size()); }
  int64_t num_preemptions() const { return num_preemptions_; }
  // Of those, the ones whose blocks went to the host pool; swap-outs the
  // pool had no room for were recomputed (swap_out_denied).
  int64_t num_preemptions_by_swap() const { return num_swap_outs_ - num_swap_outs_refused_; }
  int64_t num_swap_outs_refused() const { return num_swap_outs_refused_; }
  // Device blocks held by contiguous reservations (0 when paged).
  int32_t num_reserved_blocks() const { return policy_.num_reserved_blocks(); }
  const sequence* find(seq_id id) const;
  bool has_work() const { return !entries_.empty(); }

private:
  enum class swap_state : uint8_t { none, out, resting, in };

  struct entry {
    sequence seq;
    generation_params params;
    swap_state swap = swap_state::none;
    int32_t num_tokens_sent = 0;   // tokens the ledger has seen
    bool in_step = false;          // reserved for, or computing in, the current step
    finish_reason abort_pending = finish_reason::none;
    bool preempted_this_step = false;
    int32_t num_scheduled = 0;     // tokens of the current step
    int32_t num_cached_tokens = 0; // prompt tokens from the prefix cache
    int32_t num_blocks = 0;        // device blocks of its table (the ledger holds the table)
    int32_t num_host_blocks = 0;   // held in the host pool while swapped
    batching_policy::row row{};    // its standing in the comparison modes
    bool padding() const { return row.padding(); }
    bool history_sent = false;     // the runner has the prompt for its penalties (step.hpp)
    bool constraint_sent = false;  // the runner has the constraint (step.hpp)
    int32_t num_unforked = 0;      // choices still to fork from this one (which computes
                                   // its prompt short of the last token until then)
    // Tokens the ledger may see: a sequence that forks later holds back its last.
    int32_t num_sendable() const { return seq.num_tokens() - (num_unforked > 0); }
  };
  // In-flight work holds the sequence: a step, or a swap either way.
  static bool held(const entry& e) {
    return e.in_step || e.swap == swap_state::out || e.swap == swap_state::in;
  }

  // A sequence of the step in flight, as applying the output needs it.
  // NOTE: entries in a step are never erased before its output (an abort
  // waits for it), so the pointer stays valid.
  struct in_flight_sequence {
    entry* e = nullptr;
    seq_id id = 0;
    bool sample = false;
  };

  // The step being planned or run.
  struct step_state {
    step_plan plan;            // while planning; then only its step_id stays
    std::vector<in_flight_sequence> in_flight; // the plan's sequences, in order
    std::vector<entry*> order; // every schedulable entry, in scheduling order
    std::vector<entry*> asked; // the entries of the reservation in flight
    int32_t pending_free = 0;  // device blocks that ordered swap-outs will free
    int64_t preemptions_at_start = 0;
    bool planned = false;
    bool under_pressure(int64_t num_preemptions) const {
      return num_preemptions > preemptions_at_start;
    }
  };

  static std::tuple<int32_t, uint64_t, seq_id> arrival_key(const entry* e);
  std::vector<entry*> scheduling_order();
  planning ask(std::vector<entry*> candidates);
  entry* pick_victim(const entry& current) const;
  sequence_update end_in_batch(entry& e, finish_reason why);
  void drop_padding(entry& e);
  void release_to_waiting(entry& e); // frees its blocks and progress (recompute)
  void end_padding_rows();
  void preempt(entry& e, preemption_mode mode);
  planning finish_planning();
  // Forks the choices once the prompt short of its last token is computed.
  void maybe_fork(entry& e);
  void insert(entry& e);
  // NOTE: every report that ends work holding a sequence (step output,
  // swap-out done, swap-in done or refused) goes through settle: once nothing
  // holds it, an abort that came meanwhile ends it, exactly once.
  std::vector<sequence_update> settle(entry& e);
  // Ends e, and the choices still to fork from it.
  std::vector<sequence_update> end(entry& e, finish_reason why);
  sequence_update finish(entry& e, finish_reason why);
  static sequence_update end_update(const entry& e, finish_reason why);
  bool is_eos(const entry& e, token_id t) const;
  bool is_stop_token(const entry& e, token_id t) const; // one of the request's stop_token_ids
  int32_t num_with_status(sequence_status s) const;

  scheduler_config config_;
  int32_t num_device_blocks_;
  int32_t num_host_blocks_; // the host pool's size (its room is the swap actor's)
  int32_t block_size_;
  std::unordered_map<seq_id, entry> entries_;
  std::vector<entry*> by_arrival_; // every entry by priority, arrival, id (keys that never change)
  uint64_t next_step_id_ = 1;
  std::optional<step_state> step_;
  std::vector<seq_id> released_;
  scheduler_commands commands_;
  std::optional<std::pair<std::optional<seq_id>, preemption_mode>> forced_;
  int64_t num_preemptions_ = 0;
  int64_t num_swap_outs_ = 0;
  int64_t num_swap_outs_refused_ = 0;
  batching_policy policy_;
};

} // namespace kvactor
