#pragma once
// outbox: a connection's bytes waiting to be written, in order, one write
// in flight at a time, bounded: a client that does not read is cut off once
// the bounded bytes it has not taken pass the limit, rather than growing the
// server's memory. Bytes pushed unbounded (a whole answer, written whatever
// its size) do not count.
//
//   if (!outbox_.push(bytes)) close();    // over the limit
//   else if (outbox_.ready()) write();    // async_write(outbox_.front()), then
//   ... on completion: outbox_.pop(); if (outbox_.ready()) write();

#include <cstddef>
#include <deque>
#include <string>

namespace kvactor::net {

class outbox {
public:
  explicit outbox(size_t max_bytes) : max_bytes_(max_bytes) {}

  // Queues data; false when bounded data takes the outbox past its limit.
  bool push(std::string data, bool bounded = true) {
    if (bounded)
      num_bounded_bytes_ += data.size();
    out_.push_back({std::move(data), bounded});
    return !bounded || num_bounded_bytes_ <= max_bytes_;
  }
  // Something to write and no write in flight: start one with front().
  bool ready() const { return !writing_ && !out_.empty(); }
  const std::string& front() {
    writing_ = true;
    return out_.front().data;
  }
  // The write of front() completed.
  void pop() {
    writing_ = false;
    uncount(out_.front());
    out_.pop_front();
  }
  bool empty() const { return !writing_ && out_.empty(); }
  // Drops what is queued; a write in flight keeps its buffer.
  void clear() {
    while (out_.size() > (writing_ ? 1u : 0u)) {
      uncount(out_.back());
      out_.pop_back();
    }
  }

private:
  struct entry {
    std::string data;
    bool bounded;
  };
  void uncount(const entry& e) {
    if (e.bounded)
      num_bounded_bytes_ -= e.data.size();
  }

  size_t max_bytes_;
  std::deque<entry> out_;
  size_t num_bounded_bytes_ = 0;
  bool writing_ = false;
};

} // namespace kvactor::net
