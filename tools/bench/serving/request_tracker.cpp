#include "tools/bench/serving/request_tracker.hpp"

namespace kvactor::bench {

void request_tracker::sent(size_t i) {
  const double t = now_s();
  std::lock_guard lock(mutex_);
  timings_[i].sent_s = t;
  ++in_flight_;
}

void request_tracker::accepted(size_t i) {
  std::lock_guard lock(mutex_);
  timings_[i].accepted = true;
}

void request_tracker::token(size_t i) {
  const double t = now_s();
  std::lock_guard lock(mutex_);
  request_timing& r = timings_[i];
  if (r.num_tokens++ == 0)
    r.first_token_s = t;
  else
    r.token_gaps_s.push_back(t - r.end_s);
  r.end_s = t; // the last token's time until the end
}

void request_tracker::done(size_t i, finish_reason why, int32_t cached_tokens) {
  const double t = now_s();
  std::lock_guard lock(mutex_);
  request_timing& r = timings_[i];
  r.end_s = t;
  r.cached_tokens = cached_tokens;
  if (why != finish_reason::max_tokens && why != finish_reason::eos && why != finish_reason::stop)
    r.error.append("ended as ").append(to_string(why));
  end_one();
}

void request_tracker::refused(size_t i, std::string why) {
  std::lock_guard lock(mutex_);
  timings_[i].error = std::move(why);
  timings_[i].end_s = now_s();
  end_one();
}

void request_tracker::wait_for_room(int32_t limit) {
  std::unique_lock lock(mutex_);
  cv_.wait(lock, [&] { return limit <= 0 || in_flight_ < limit; });
}

bool request_tracker::wait_all(clock::time_point deadline) {
  std::unique_lock lock(mutex_);
  return cv_.wait_until(lock, deadline, [&] { return num_ended_ == timings_.size(); });
}

std::vector<request_timing> request_tracker::take() {
  std::lock_guard lock(mutex_);
  return std::move(timings_);
}

void request_tracker::end_one() {
  --in_flight_;
  ++num_ended_;
  cv_.notify_all();
}

} // namespace kvactor::bench
