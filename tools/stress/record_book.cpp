#include "tools/stress/record_book.hpp"

#include "tools/stress/workload.hpp"

#include <algorithm>
#include <iostream>

namespace kvactor::stress {

void record_book::note_resolved(request_record& r, bool was_resolved) {
  if (!was_resolved && r.resolved()) {
    ++num_resolved_;
    cv_.notify_all();
  }
}

void record_book::sent(int32_t index) {
  std::lock_guard lock(mutex_);
  records_.at(static_cast<size_t>(index)).sent = true;
}

void record_book::accepted(int32_t index) {
  std::lock_guard lock(mutex_);
  // NOTE: not an event after the end when it comes late: in-process the
  // admission reply and the sink's events travel on different channels.
  records_.at(static_cast<size_t>(index)).accepted = true;
  note_event();
}

void record_book::token(int32_t index, int32_t token_index, int32_t token) {
  std::lock_guard lock(mutex_);
  auto& r = records_.at(static_cast<size_t>(index));
  if (r.ended())
    ++r.num_events_after_end;
  if (token_index != static_cast<int32_t>(r.tokens.size()))
    ++r.num_index_gaps;
  r.tokens.push_back(token);
  ++num_tokens_;
  note_event();
}

void record_book::done(int32_t index, const done_event& done) {
  std::lock_guard lock(mutex_);
  auto& r = records_.at(static_cast<size_t>(index));
  const bool was = r.resolved();
  if (r.ended())
    ++r.num_events_after_end;
  ++r.num_dones;
  r.finish_reason = done.finish_reason;
  r.done_tokens = done.tokens;
  r.preemptions = done.preemptions;
  num_preemptions_ += done.preemptions;
  note_event();
  note_resolved(r, was);
}

void record_book::error(int32_t index, const std::string& code) {
  std::lock_guard lock(mutex_);
  auto& r = records_.at(static_cast<size_t>(index));
  const bool was = r.resolved();
  if (r.ended())
    ++r.num_events_after_end;
  ++r.num_errors;
  r.error_code = code;
  note_event();
  note_resolved(r, was);
}

void record_book::cancel_sent(int32_t index) {
  std::lock_guard lock(mutex_);
  auto& r = records_.at(static_cast<size_t>(index));
  if (!r.cancel_sent)
    ++num_cancels_;
  r.cancel_sent = true;
}

bool record_book::disconnect(int32_t index) {
  std::lock_guard lock(mutex_);
  auto& r = records_.at(static_cast<size_t>(index));
  if (r.resolved() || !r.sent)
    return false;
  r.disconnected = true;
  note_resolved(r, false);
  return true;
}

bool record_book::live(int32_t index) {
  std::lock_guard lock(mutex_);
  const auto& r = records_.at(static_cast<size_t>(index));
  return r.sent && !r.resolved();
}

bool record_book::resolved(int32_t index) {
  std::lock_guard lock(mutex_);
  return records_.at(static_cast<size_t>(index)).resolved();
}

record_book::wait_result record_book::wait_all_resolved(std::chrono::steady_clock::time_point deadline,
                                                        std::chrono::steady_clock::duration stall) {
  std::unique_lock lock(mutex_);
  last_event_ = std::chrono::steady_clock::now(); // the sends before were events too
  while (num_resolved_.load() != static_cast<int64_t>(records_.size())) {
    if (abandoned_)
      return wait_result::abandoned;
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline)
      return wait_result::timed_out;
    if (now - last_event_ >= stall)
      return wait_result::stalled;
    cv_.wait_until(lock, std::min(deadline, last_event_ + stall));
  }
  return wait_result::resolved;
}

void record_book::abandon() {
  std::lock_guard lock(mutex_);
  abandoned_ = true;
  cv_.notify_all();
}

std::vector<request_record> record_book::records() {
  std::lock_guard lock(mutex_);
  return records_;
}

bool wait_resolved(record_book& book, std::chrono::steady_clock::time_point start,
                   double timeout_s, double stall_s) {
  using wait_result = record_book::wait_result;
  const auto waited = book.wait_all_resolved(start + seconds(timeout_s), seconds(stall_s));
  if (waited == wait_result::resolved)
    return true;
  std::cerr << "kvactor-stress: ";
  if (waited == wait_result::stalled)
    std::cerr << "no request had an event for " << stall_s
              << " s: the runtime stopped making progress";
  else if (waited == wait_result::timed_out)
    std::cerr << "the timeout of " << timeout_s << " s passed";
  else
    std::cerr << "every connection ended";
  std::cerr << " with " << book.num_requests() - size_t(book.num_resolved()) << " of "
            << book.num_requests() << " requests unresolved\n";
  return false;
}

} // namespace kvactor::stress
