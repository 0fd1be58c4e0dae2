#pragma once
// scheduler: continuous batching over the block manager and the swap space.
// The state class of scheduler_actor; no CAF in here.
//
// One step = one forward pass:
//   plan = schedule()                 decode tokens and prefill chunks by
//                                     priority, then arrival, under a token
//                                     budget; preempts when blocks run out
//   ... the executor runs plan; swap orders run on their own streams ...
//   updates = update_from_output(out) appends tokens, ends sequences (eos,
//                                     max_tokens), releases their blocks
//
// Preemption takes the running sequence last in scheduling order (lowest
// priority, latest arrival). By swap, its device blocks are released only
// when complete_swap_out() reports the copy done; by recompute (or when the
// host pool is full), at once. Preempted sequences resume ahead of new
// arrivals of the same priority. An abort while a step or a swap includes the
// sequence takes effect when that work completes, and its late token is
// dropped.

#include "actors/block_manager.hpp"
#include "actors/scheduler_config.hpp"
#include "actors/step.hpp"
#include "actors/swap_space.hpp"

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace kvactor {

struct generation_limits {
  int32_t max_tokens = 16;
  bool ignore_eos = false;
};

class scheduler {
public:
  scheduler(scheduler_config config, block_manager& blocks, swap_space& host);

  // Queues a new sequence. An error when it could never fit in the device
  // pool, even alone (prompt plus max_tokens).
  std::optional<std::string> add(sequence seq, generation_limits limits);

  // Ends a sequence as aborted. Returns its final update now, or nothing if
  // in-flight work holds it (the update comes when that work completes) or
  // the id is unknown.
  std::vector<sequence_update> abort(seq_id id);

  // Preempts `id` (or, without one, the running sequence last in scheduling
  // order) at the next schedule(), in the given mode.
  void force_preemption(std::optional<seq_id> id, preemption_mode mode);

  // The next step. At most one step is in flight: call after its output.
  step_plan schedule();
  std::vector<sequence_update> update_from_output(const step_output& out);
  bool step_in_flight() const { return in_flight_.has_value(); }

  // Swap orders issued since the last call, for the swap actor.
  std::vector<swap_order> take_swap_orders();
  std::vector<sequence_update> complete_swap_out(seq_id id);
  std::vector<sequence_update> complete_swap_in(seq_id id);

  int32_t num_waiting() const;
  int32_t num_running() const;
  int32_t num_swapped() const;
  int32_t num_sequences() const { return static_cast<int32_t>(entries_.size()); }
  int64_t num_preemptions() const { return num_preemptions_; }
  const sequence* find(seq_id id) const;
  // Has anything left to do: sequences waiting, running or swapped.
  bool has_work() const { return !entries_.empty(); }

private:
  enum class swap_state : uint8_t { none, out, resting, in };

  struct entry {
    sequence seq;
    generation_limits limits;
    swap_state swap = swap_state::none;
    bool in_step = false;
    bool abort_pending = false;
    bool preempted_this_step = false;
    int32_t num_scheduled = 0;     // tokens of the step in flight
    int32_t num_cached_tokens = 0; // prompt tokens from the prefix cache
  };

  std::vector<entry*> scheduling_order();
  bool try_schedule(entry& e, int32_t& budget, step_plan& plan);
  void try_swap_in(entry& e);
  entry* pick_victim(const std::vector<entry*>& order, size_t current) const;
  void preempt(entry& e, preemption_mode mode, int32_t& pending_free);
  int32_t num_with_status(sequence_status s) const;
  std::optional<sequence_update> finish(entry& e, finish_reason why);
  bool is_eos(const entry& e, token_id t) const;

  scheduler_config config_;
  block_manager& blocks_;
  swap_space& host_;
  std::unordered_map<seq_id, entry> entries_;
  uint64_t next_step_id_ = 1;
  std::optional<uint64_t> in_flight_;
  std::vector<seq_id> in_flight_seqs_;
  std::vector<seq_id> released_;
  std::vector<swap_order> swap_orders_;
  std::optional<std::pair<std::optional<seq_id>, preemption_mode>> forced_;
  int64_t num_preemptions_ = 0;
};

} // namespace kvactor
