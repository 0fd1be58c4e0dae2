#pragma once
// router: the front's routing table, pure (no CAF). Which workers are live,
// what each last reported, and where each prefix went.
//
// A request goes, in this order:
//   1. by prefix affinity: to the worker that got a request with the same
//      first full KV block before (its blocks are likely in that worker's
//      prefix cache), while that worker has capacity: fewer than
//      affinity_max_waiting requests waiting and enough free blocks;
//   2. by load: to the live worker with the shortest waiting queue, then the
//      most free KV blocks, then the fewest live requests, then the first.
// Reports come every few hundred milliseconds; between two, the growth of
// the worker's live requests since the report counts as waiting and each
// routed request pledges its blocks, so that a burst spreads.
// NOTE: the growth, not every request routed since the report: in a closed
// loop each new request takes the place of one that ended, and counting the
// running ones as waiting judged a worker full early and moved its prefix
// groups to the other worker (losing their cached blocks). The estimate
// assumes the worker was full at the report (an arrival waits, an end lets a
// waiting one run), the conservative case.

#include <cstddef>
#include <algorithm>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

namespace kvactor::cluster {

// A worker's figures as it reports them.
struct worker_load {
  int32_t device_blocks_free = 0; // a request can get: free or only cached (evictable)
  int32_t waiting = 0;
};

struct router_options {
  int32_t affinity_max_waiting = 8;
  size_t max_affinity_entries = size_t{1} << 16; // then the table starts afresh
};

class router {
public:
  enum class why { affinity, load };
  struct choice {
    size_t worker = 0;
    why reason = why::load;
  };

  explicit router(size_t num_workers, router_options options = {});

  size_t num_workers() const { return workers_.size(); }
  size_t num_live() const;

  // The worker joined (or rejoined) with these figures.
  void set_live(size_t w, worker_load load);
  // The worker is gone: it gets no requests and loses its prefixes.
  void set_lost(size_t w);
  // A fresh report: it replaces the estimates made since the last one.
  void report(size_t w, worker_load load);

  // Picks a live worker for a request that needs `num_blocks` blocks and
  // whose first full block hashes to `first_block` (none when the prompt
  // is shorter than a block), and records it; nullopt when none is live.
  std::optional<choice> route(std::optional<uint64_t> first_block, int32_t num_blocks);
  // A request routed to `w` has ended.
  void ended(size_t w);

  int64_t num_routed(size_t w) const { return workers_[w].num_routed; }
  int32_t num_live_requests(size_t w) const { return workers_[w].num_live_requests; }

private:
  struct worker {
    bool live = false;
    worker_load reported;
    int32_t pledged_since_report = 0; // blocks
    int64_t num_routed = 0;
    int32_t num_live_requests = 0;
    int32_t live_at_report = 0; // num_live_requests when the report came

    int32_t waiting() const {
      return std::max(reported.waiting + num_live_requests - live_at_report, 0);
    }
    int32_t free_blocks() const { return reported.device_blocks_free - pledged_since_report; }
  };

  bool has_capacity(const worker& w, int32_t num_blocks) const;
  size_t least_loaded() const;

  router_options options_;
  std::vector<worker> workers_;
  std::unordered_map<uint64_t, size_t> affinity_; // first block hash -> worker
};

} // namespace kvactor::cluster
