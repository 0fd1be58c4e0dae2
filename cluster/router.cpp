#include "cluster/router.hpp"

#include <cassert>
#include <tuple>

namespace kvactor::cluster {

router::router(size_t num_workers, router_options options)
  : options_(options), workers_(num_workers) {
}

size_t router::num_live() const {
  size_t n = 0;
  for (const auto& w : workers_)
    n += w.live ? 1 : 0;
  return n;
}

void router::set_live(size_t w, worker_load load) {
  auto& x = workers_[w];
  x.live = true;
  x.num_live_requests = 0;
  report(w, load);
}

void router::set_lost(size_t w) {
  workers_[w].live = false;
  workers_[w].num_live_requests = 0;
  std::erase_if(affinity_, [w](const auto& entry) { return entry.second == w; });
}

void router::report(size_t w, worker_load load) {
  auto& x = workers_[w];
  x.reported = load;
  x.live_at_report = x.num_live_requests;
  x.pledged_since_report = 0;
}

bool router::has_capacity(const worker& w, int32_t num_blocks) const {
  return w.live && w.waiting() < options_.affinity_max_waiting && w.free_blocks() >= num_blocks;
}

size_t router::least_loaded() const {
  size_t best = workers_.size();
  auto key = [](const worker& w) {
    return std::make_tuple(w.waiting(), -w.free_blocks(), w.num_live_requests);
  };
  for (size_t i = 0; i < workers_.size(); ++i)
    if (workers_[i].live && (best == workers_.size() || key(workers_[i]) < key(workers_[best])))
      best = i;
  return best;
}

std::optional<router::choice> router::route(std::optional<uint64_t> first_block,
                                            int32_t num_blocks) {
  choice c;
  std::optional<size_t> affine;
  if (first_block)
    if (auto i = affinity_.find(*first_block); i != affinity_.end())
      affine = i->second;
  if (affine && has_capacity(workers_[*affine], num_blocks)) {
    c = {*affine, why::affinity};
  } else {
    c.worker = least_loaded();
    if (c.worker == workers_.size())
      return std::nullopt;
  }
  auto& w = workers_[c.worker];
  w.pledged_since_report += num_blocks;
  ++w.num_routed;
  ++w.num_live_requests;
  if (first_block) {
    if (affinity_.size() >= options_.max_affinity_entries && !affinity_.contains(*first_block))
      affinity_.clear();
    affinity_[*first_block] = c.worker;
  }
  return c;
}

void router::ended(size_t w) {
  assert(w < workers_.size());
  if (workers_[w].num_live_requests > 0)
    --workers_[w].num_live_requests;
}

} // namespace kvactor::cluster
