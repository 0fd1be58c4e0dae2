#include "model/grammar/grammar_matcher.hpp"

#include <algorithm>

namespace kvactor::model {

namespace {

uint64_t node_key(uint32_t slot, int32_t parent) {
  return uint64_t{slot} << 32 | static_cast<uint32_t>(parent + 1);
}

} // namespace

grammar_matcher::grammar_matcher(std::shared_ptr<const grammar> g) : g_(std::move(g)) {
  for (uint32_t a : g_->alternatives[g_->root]) expand(a, -1, state_);
  std::ranges::sort(state_.tops);
  state_.tops.erase(std::unique(state_.tops.begin(), state_.tops.end()), state_.tops.end());
}

int32_t grammar_matcher::intern(uint32_t slot, int32_t parent) {
  auto [at, fresh] =
    index_.try_emplace(node_key(slot, parent), static_cast<int32_t>(nodes_.size()));
  if (fresh) nodes_.push_back({slot, parent});
  return at->second;
}

void grammar_matcher::expand(uint32_t slot, int32_t parent, state& to) {
  const grammar_slot& s = g_->slots[slot];
  switch (s.kind) {
  case slot_kind::bytes: to.tops.push_back(intern(slot, parent)); return;
  case slot_kind::end:
    if (parent < 0)
      to.complete = true;
    else
      expand(nodes_[size_t(parent)].slot, nodes_[size_t(parent)].parent, to);
    return;
  case slot_kind::rule: {
    // NOTE: a reference that ends its alternative goes on where the
    // alternative would: no node for the end.
    const int32_t go_on =
      g_->slots[slot + 1].kind == slot_kind::end ? parent : intern(slot + 1, parent);
    for (uint32_t a : g_->alternatives[s.arg]) expand(a, go_on, to);
    return;
  }
  }
}

void grammar_matcher::step(const state& from, uint8_t b, state& to) {
  to.tops.clear();
  to.complete = false;
  for (int32_t t : from.tops) {
    const node n = nodes_[size_t(t)];
    if (g_->classes[g_->slots[n.slot].arg].has(b)) expand(n.slot + 1, n.parent, to);
  }
  if (to.tops.size() > 1) {
    std::ranges::sort(to.tops);
    to.tops.erase(std::unique(to.tops.begin(), to.tops.end()), to.tops.end());
  }
}

bool grammar_matcher::advance(std::string_view bytes) {
  const size_t before = mark();
  state at = state_;
  for (char c : bytes) {
    step(at, static_cast<uint8_t>(c), scratch_);
    std::swap(at, scratch_);
    if (at.dead()) {
      rollback(before);
      return false;
    }
  }
  state_ = std::move(at);
  return true;
}

grammar_matcher::state grammar_matcher::alone(uint32_t slot) {
  state s;
  s.tops.push_back(intern(slot, -1));
  return s;
}

void grammar_matcher::rollback(size_t mark) {
  for (size_t i = mark; i < nodes_.size(); ++i)
    index_.erase(node_key(nodes_[i].slot, nodes_[i].parent));
  nodes_.resize(mark);
}

std::string grammar_matcher::key(const state& s) const {
  std::vector<std::string> stacks;
  stacks.reserve(s.tops.size());
  for (int32_t top : s.tops) {
    std::string stack;
    for (int32_t n = top; n >= 0; n = nodes_[size_t(n)].parent)
      stack.append(reinterpret_cast<const char*>(&nodes_[size_t(n)].slot), sizeof(uint32_t));
    stacks.push_back(std::move(stack));
  }
  std::ranges::sort(stacks);
  std::string out(1, s.complete ? 'c' : 'o');
  for (const std::string& stack : stacks) {
    const auto depth = static_cast<uint32_t>(stack.size() / sizeof(uint32_t));
    out.append(reinterpret_cast<const char*>(&depth), sizeof depth);
    out += stack;
  }
  return out;
}

} // namespace kvactor::model
