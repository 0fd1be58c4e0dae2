#include "tools/stress/record_book.hpp"

#include "tools/stress/workload.hpp"

#include <algorithm>
#include <iostream>
#include <stdexcept>

namespace kvactor::stress {

record_book::record_book(const std::vector<int32_t>& num_choices) {
  first_.reserve(num_choices.size() + 1);
  first_.push_back(0);
  for (int32_t n : num_choices)
    first_.push_back(first_.back() + static_cast<size_t>(n));
  records_.resize(first_.back());
  for (size_t i = 0; i < num_choices.size(); ++i)
    for (int32_t c = 0; c < num_choices[i]; ++c) {
      request_record& r = records_[first_[i] + static_cast<size_t>(c)];
      r.request = static_cast<int32_t>(i);
      r.choice = c;
      r.num_choices = num_choices[i];
    }
}

request_record& record_book::record(int32_t index, int32_t choice) {
  const size_t i = first_record(index) + static_cast<size_t>(choice);
  if (choice < 0 || i >= first_.at(static_cast<size_t>(index) + 1))
    throw std::out_of_range("request " + std::to_string(index) + " has no choice " +
                            std::to_string(choice));
  return records_[i];
}

void record_book::note_resolved(request_record& r, bool was_resolved) {
  if (!was_resolved && r.resolved()) {
    ++num_resolved_;
    cv_.notify_all();
  }
}

void record_book::sent(int32_t index) {
  std::lock_guard lock(mutex_);
  each_choice(index, [](request_record& r) { r.sent = true; });
}

void record_book::accepted(int32_t index) {
  std::lock_guard lock(mutex_);
  // NOTE: not an event after the end when it comes late: in-process the
  // admission reply and the sink's events travel on different channels.
  each_choice(index, [](request_record& r) { r.accepted = true; });
  note_event();
}

void record_book::token(int32_t index, int32_t choice, int32_t token_index, int32_t token) {
  std::lock_guard lock(mutex_);
  auto& r = record(index, choice);
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
  auto& r = record(index, done.choice);
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
  each_choice(index, [&](request_record& r) { end_by_error(r, code); });
  note_event();
}

void record_book::error(int32_t index, int32_t choice, const std::string& code) {
  std::lock_guard lock(mutex_);
  end_by_error(record(index, choice), code);
  note_event();
}

void record_book::end_by_error(request_record& r, const std::string& code) {
  const bool was = r.resolved();
  if (r.ended())
    ++r.num_events_after_end;
  ++r.num_errors;
  r.error_code = code;
  note_resolved(r, was);
}

void record_book::cancel_sent(int32_t index) {
  std::lock_guard lock(mutex_);
  if (!records_.at(first_record(index)).cancel_sent)
    ++num_cancels_;
  each_choice(index, [](request_record& r) { r.cancel_sent = true; });
}

bool record_book::disconnect(int32_t index) {
  std::lock_guard lock(mutex_);
  bool was_live = false;
  each_choice(index, [&](request_record& r) {
    if (r.resolved() || !r.sent)
      return;
    r.disconnected = true;
    was_live = true;
    note_resolved(r, false);
  });
  return was_live;
}

bool record_book::live(int32_t index) {
  std::lock_guard lock(mutex_);
  bool any = false;
  each_choice(index, [&](const request_record& r) { any = any || (r.sent && !r.resolved()); });
  return any;
}

bool record_book::resolved(int32_t index) {
  std::lock_guard lock(mutex_);
  bool all = true;
  each_choice(index, [&](const request_record& r) { all = all && r.resolved(); });
  return all;
}

record_book::wait_result
record_book::wait_all_resolved(std::chrono::steady_clock::time_point deadline,
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
  std::cerr << " with " << book.num_records() - size_t(book.num_resolved()) << " of "
            << book.num_records() << " requests unresolved (each choice counts)\n";
  return false;
}

} // namespace kvactor::stress
