#include "actors/core/sequence.hpp"

#include "base/assert.hpp"

namespace kvactor {

std::string_view to_string(sequence_status s) {
  switch (s) {
    case sequence_status::waiting: return "waiting";
    case sequence_status::running: return "running";
    case sequence_status::swapped: return "swapped";
    case sequence_status::finished: return "finished";
  }
  return "?";
}

bool is_valid_transition(sequence_status from, sequence_status to) {
  using enum sequence_status;
  switch (from) {
    case waiting: return to == running || to == finished;
    case running: return to == waiting || to == swapped || to == finished;
    case swapped: return to == running || to == waiting || to == finished;
    case finished: return false;
  }
  return false;
}

sequence::sequence(seq_id id, std::vector<token_id> prompt, int32_t priority, uint64_t arrival)
  : id_(id),
    priority_(priority),
    arrival_(arrival),
    tokens_(std::move(prompt)),
    num_prompt_tokens_(static_cast<int32_t>(tokens_.size())) {
  KVACTOR_ASSERT(!tokens_.empty(), "a sequence needs at least one prompt token");
}

sequence sequence::fork(seq_id child_id, uint64_t arrival) const {
  KVACTOR_ASSERT(!is_finished(), "fork of a finished sequence");
  sequence child = *this;
  child.id_ = child_id;
  child.arrival_ = arrival;
  child.num_preemptions_ = 0;
  return child;
}

void sequence::set_status(sequence_status to) {
  KVACTOR_ASSERT(is_valid_transition(status_, to), "invalid sequence status transition");
  status_ = to;
}

void sequence::finish(finish_reason why) {
  KVACTOR_ASSERT(why != finish_reason::none, "finish needs a reason");
  set_status(sequence_status::finished);
  reason_ = why;
}

void sequence::append_token(token_id t) {
  KVACTOR_ASSERT(!is_finished(), "append to a finished sequence");
  tokens_.push_back(t);
}

void sequence::add_computed_tokens(int32_t n) {
  KVACTOR_ASSERT(n >= 0 && num_computed_tokens_ + n <= num_tokens(),
                 "computed tokens beyond the sequence");
  num_computed_tokens_ += n;
}

} // namespace kvactor
