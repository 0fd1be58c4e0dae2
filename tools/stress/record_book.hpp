#pragma once
// record_book: what a stress run saw of each request — its admission, every
// token and done event as they came, the faults sent — filled by the drivers
// (from several threads) and read by the checker. A request of n choices has
// a record per choice: the request's admission, refusal, cancel and
// disconnection go to each, its tokens and ends to their own.

#include "kvactor/kvactor.hpp"

#include <atomic>
#include <condition_variable>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace kvactor::stress {

struct request_record {
  int32_t request = 0;           // the request's index in the workload
  int32_t choice = 0;            // which of its num_choices
  int32_t num_choices = 1;
  bool sent = false;
  bool accepted = false;
  std::string error_code;        // a refusal or an error that ended the request
  int32_t num_errors = 0;        // terminal errors
  std::vector<int32_t> tokens;   // in the order the token events came
  int32_t num_index_gaps = 0;    // token events whose index was not the next one
  int32_t num_dones = 0;
  int32_t num_events_after_end = 0;
  kvactor::finish_reason finish_reason = kvactor::finish_reason::none;
  std::vector<int32_t> done_tokens;
  int32_t preemptions = 0;
  bool cancel_sent = false;
  bool disconnected = false;     // its connection was dropped before it ended

  bool ended() const { return num_dones + num_errors > 0; }
  bool resolved() const { return ended() || disconnected; }
};

class record_book {
public:
  // num_choices[i]: request i's n.
  explicit record_book(const std::vector<int32_t>& num_choices);
  // Requests of one choice each.
  explicit record_book(size_t num_requests)
    : record_book(std::vector<int32_t>(num_requests, 1)) {}

  void sent(int32_t index);
  void accepted(int32_t index);
  void token(int32_t index, int32_t choice, int32_t token_index, int32_t token);
  void done(int32_t index, const done_event& done); // of choice done.choice
  void error(int32_t index, const std::string& code); // every choice's end
  void error(int32_t index, int32_t choice, const std::string& code);
  void cancel_sent(int32_t index);
  // Marks the request disconnected unless it has ended; true if it was live.
  bool disconnect(int32_t index);

  enum class wait_result { resolved, timed_out, stalled, abandoned };
  // Waits until every request is resolved, until the deadline, until no
  // request has had an event (admission, token, end) for `stall` (a runtime
  // that stopped making progress), or until abandon() is called.
  wait_result wait_all_resolved(std::chrono::steady_clock::time_point deadline,
                                std::chrono::steady_clock::duration stall);
  // The driver can learn nothing more (its connections are gone): wakes
  // wait_all_resolved, for good.
  void abandon();

  size_t num_records() const { return records_.size(); } // a record per choice
  int64_t num_resolved() const { return num_resolved_.load(); }
  int64_t num_tokens() const { return num_tokens_.load(); }
  int64_t num_cancels() const { return num_cancels_.load(); }
  int64_t num_preemptions() const { return num_preemptions_.load(); }
  // Some choice of the request is live; every choice of it is resolved.
  bool live(int32_t index);
  bool resolved(int32_t index);

  // A copy, for the checker (call once the run is over): request i's choice
  // c at first_record(i) + c.
  std::vector<request_record> records();
  size_t first_record(int32_t index) const { return first_.at(static_cast<size_t>(index)); }

private:
  request_record& record(int32_t index, int32_t choice); // under mutex_
  void end_by_error(request_record& r, const std::string& code); // under mutex_
  template <class F>
  void each_choice(int32_t index, F f) { // under mutex_
    for (size_t i = first_record(index); i < first_.at(static_cast<size_t>(index) + 1); ++i)
      f(records_[i]);
  }

  void note_resolved(request_record& r, bool was_resolved);
  void note_event() { last_event_ = std::chrono::steady_clock::now(); } // under mutex_

  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<size_t> first_; // request i's records: [first_[i], first_[i + 1])
  std::vector<request_record> records_;
  std::chrono::steady_clock::time_point last_event_ = std::chrono::steady_clock::now();
  bool abandoned_ = false;
  std::atomic<int64_t> num_resolved_{0}, num_tokens_{0}, num_cancels_{0}, num_preemptions_{0};
};

// Waits as wait_all_resolved does, for timeout_s from `start` and stall_s
// without an event, and says on stderr why requests are left unresolved;
// true when every request resolved.
bool wait_resolved(record_book& book, std::chrono::steady_clock::time_point start,
                   double timeout_s, double stall_s);

} // namespace kvactor::stress
