#include "tools/stress/checker.hpp"

#include <algorithm>

namespace kvactor::stress {

namespace {

std::string name(const request_record& r) {
  std::string n = "request r" + std::to_string(r.request);
  if (r.num_choices > 1)
    n += " choice " + std::to_string(r.choice);
  return n;
}

// "first difference at token 3: got 17, reference 42" or "got 5 tokens, reference 7".
std::string first_difference(const std::vector<int32_t>& got, const std::vector<int32_t>& want,
                             const std::string& what) {
  const size_t n = std::min(got.size(), want.size());
  for (size_t i = 0; i < n; ++i)
    if (got[i] != want[i])
      return "first difference at token " + std::to_string(i) + ": got " +
             std::to_string(got[i]) + ", " + what + " " + std::to_string(want[i]);
  return "got " + std::to_string(got.size()) + " tokens, " + what + " " +
         std::to_string(want.size());
}

} // namespace

std::string check_result::summary() const {
  return "requests " + std::to_string(num_requests) + " choices " + std::to_string(num_choices) +
         " ok " + std::to_string(num_ok) +
         " aborted " + std::to_string(num_aborted) + " errors " + std::to_string(num_errors) +
         " mismatches " + std::to_string(num_mismatches) + " leaked_blocks " +
         std::to_string(num_leaked_blocks) + " duplicates " + std::to_string(num_duplicates) +
         " missing " + std::to_string(num_missing);
}

check_result check_run(const std::vector<request_record>& records,
                       const std::vector<std::optional<std::vector<int32_t>>>& reference,
                       const std::optional<end_state>& end) {
  check_result c;
  c.num_choices = static_cast<int64_t>(records.size());
  c.num_requests = std::ranges::count(records, 0, &request_record::choice);
  auto fail = [&](std::string line) { c.failures.push_back(std::move(line)); };
  for (size_t i = 0; i < records.size(); ++i) {
    const request_record& r = records[i];
    if (r.cancel_sent)
      ++c.num_cancelled;
    // Ends exactly once.
    const int32_t num_ends = r.num_dones + r.num_errors;
    if (num_ends > 1) {
      ++c.num_duplicates;
      fail(name(r) + " ended " + std::to_string(num_ends) + " times (" +
           std::to_string(r.num_dones) + " done, " + std::to_string(r.num_errors) + " error)");
    }
    if (r.num_events_after_end > 0)
      fail(name(r) + " got " + std::to_string(r.num_events_after_end) + " events after its end");
    if (r.num_index_gaps > 0)
      fail(name(r) + " token indexes are not contiguous (" + std::to_string(r.num_index_gaps) +
           " out of order)");
    if (num_ends == 0) {
      if (r.disconnected) {
        ++c.num_disconnected;
        ++c.num_aborted; // NOTE: the server aborts it; no done line can reach us
        continue;
      }
      ++c.num_missing;
      fail(name(r) + (r.sent ? " never ended" : " was never sent") +
           (r.accepted ? " (accepted, " : " (not accepted, ") + std::to_string(r.tokens.size()) +
           " tokens streamed)");
      continue;
    }
    if (r.num_dones == 0) {
      ++c.num_errors;
      continue;
    }
    if (r.done_tokens != r.tokens)
      fail(name(r) + " done tokens differ from its streamed tokens: " +
           first_difference(r.tokens, r.done_tokens, "done event"));
    if (r.finish_reason == finish_reason::aborted) {
      ++c.num_aborted;
      if (!r.cancel_sent && !r.disconnected) {
        ++c.num_mismatches;
        fail(name(r) + " ended aborted but was never cancelled");
      }
      continue;
    }
    ++c.num_ok;
    const auto& want = i < reference.size() ? reference[i] : std::nullopt;
    if (want && r.done_tokens != *want) {
      ++c.num_mismatches;
      std::string why = name(r) + " output differs from the undisturbed run (" +
                        std::to_string(r.preemptions) + " preemptions, finish ";
      why.append(to_string(r.finish_reason)).append("): ");
      fail(why + first_difference(r.done_tokens, *want, "reference"));
    }
  }
  if (!end) {
    fail("runtime: no figures after the run");
    return c;
  }
  const int32_t host_used = end->host_blocks_total - end->host_blocks_free;
  c.num_leaked_blocks = end->device_blocks_used + host_used;
  if (end->device_blocks_used > 0)
    fail("runtime: " + std::to_string(end->device_blocks_used) + " of " +
         std::to_string(end->device_blocks_total) + " device blocks still in use after idle");
  if (host_used > 0)
    fail("runtime: " + std::to_string(host_used) + " of " + std::to_string(end->host_blocks_total) +
         " host blocks still in use after idle");
  if (end->running + end->waiting + end->swapped > 0)
    fail("runtime: not idle: running " + std::to_string(end->running) + " waiting " +
         std::to_string(end->waiting) + " swapped " + std::to_string(end->swapped));
  for (const auto& b : end->broken_invariants)
    fail("runtime: broken invariant: " + b);
  return c;
}

} // namespace kvactor::stress
