#pragma once
// A step_runner for actor tests: a stand-in model whose next token depends
// only on the whole token history, run on its own threads like a device's
// streams. Its "KV cache" holds tokens: each step writes its tokens into the
// slots of its sequence's blocks, block copies and swaps move them, and a
// sequence's history is read back from its table's slots. So a scheduler
// that sent wrong tokens, positions or tables, or lost a sequence's
// progress, a copy-on-write or a swap, would change the outputs.
//
// Like the model runner it keeps each sequence's block table from the plans'
// changes, and checks every step's tables: each change applies to the table
// it keeps, each table covers the step's positions with distinct blocks of
// the device pool, and a block a sequence writes is in no other table of the
// step. Every table a sequence had is logged (tables_of).

#include "actors/runner/step_runner.hpp"
#include "model/logprobs.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <stdexcept>
#include <deque>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace kvactor::testing {

class test_runner : public step_runner {
public:
  test_runner(int32_t num_device_blocks, int32_t num_host_blocks, int32_t block_size,
              int32_t vocab_size)
    : num_device_blocks_(num_device_blocks), num_host_blocks_(num_host_blocks),
      block_size_(block_size), vocab_size_(vocab_size),
      device_(size_t(num_device_blocks) * size_t(block_size), no_token),
      host_(size_t(num_host_blocks) * size_t(block_size), no_token) {
    compute_ = std::thread([this] { work(compute_queue_); });
    swaps_ = std::thread([this] { work(swap_queue_); });
  }
  ~test_runner() override {
    compute_queue_.close();
    swap_queue_.close();
    compute_.join();
    swaps_.join();
  }

  // Seed 1, a request's default, gives the plain hash of the history; a
  // greedy request's seed is 1 whatever it asked for, as a model's draw
  // matters only when it samples.
  static token_id next_token(const std::vector<token_id>& history, int32_t vocab_size,
                             uint64_t seed = 1) {
    uint64_t h = 17 + (seed - 1) * 7919;
    for (size_t i = 0; i < history.size(); ++i)
      h = h * 31 + uint64_t(history[i]) * (i + 1);
    return token_id(h % uint64_t(vocab_size - 8)) + 4; // clear of the special tokens
  }

  // The stand-in's distribution for a step whose token is `t`: logit 2 for
  // t, 1 for the next id, 0 for the rest; logprobs of it when asked.
  static model::token_logprobs logprobs_of(token_id t, int32_t vocab_size, int32_t k) {
    std::vector<float> logits(size_t(vocab_size), 0.0f);
    logits[size_t(t)] = 2.0f;
    logits[size_t((t + 1) % vocab_size)] = 1.0f;
    return model::logprobs(logits, t, k);
  }

  // Each step takes at least this long: a slow model, so that a test's
  // cancel reliably lands mid-generation.
  void set_step_time(std::chrono::milliseconds t) { step_time_ = t; }

  // While paused, steps wait (to let a test queue up requests first);
  // allow(n) lets n more through.
  void pause() {
    std::lock_guard lock(gate_mutex_);
    paused_ = true;
    permits_ = 0;
  }
  void resume() {
    std::lock_guard lock(gate_mutex_);
    paused_ = false;
    gate_.notify_all();
  }
  void allow(int n) {
    std::lock_guard lock(gate_mutex_);
    permits_ += n;
    gate_.notify_all();
  }
  // Waits (up to 10 s) until the n-th step has reached the gate.
  bool wait_arrived(int64_t n) {
    std::unique_lock lock(gate_mutex_);
    return gate_.wait_for(lock, std::chrono::seconds(10), [&] { return num_arrived_ >= n; });
  }

  // The block tables a sequence has had, in order: one entry per step that
  // changed its table or started it over.
  std::vector<std::vector<block_id>> tables_of(seq_id id) const {
    std::lock_guard lock(log_mutex_);
    auto i = table_log_.find(id);
    return i == table_log_.end() ? std::vector<std::vector<block_id>>{} : i->second;
  }

  // The n-th step faults the device, as a CUDA kernel's illegal address
  // does: neither it nor any step or swap after it completes, and the fault
  // handler hears `what`.
  void fail_at_step(int64_t n, std::string what) {
    std::lock_guard lock(gate_mutex_);
    fail_step_ = n;
    fail_what_ = std::move(what);
  }
  void set_fault_handler(std::function<void(const std::string&)> handler) override {
    on_fault_ = std::move(handler);
  }

  void run(step_plan plan, std::function<void(step_output)> done) override {
    compute_queue_.push([this, plan = std::move(plan), done = std::move(done)] {
      {
        std::unique_lock lock(gate_mutex_);
        ++num_arrived_;
        gate_.notify_all();
        gate_.wait(lock, [&] { return !paused_ || permits_ > 0; });
        if (paused_)
          --permits_;
        if (num_arrived_ == fail_step_ && !failed_.exchange(true) && on_fault_)
          on_fault_(fail_what_);
      }
      if (failed_)
        return;
      std::this_thread::sleep_for(step_time_.load());
      step_output out{plan.step_id, {}};
      for (seq_id id : plan.released)
        tables_.erase(id);
      apply_tables(plan);
      std::lock_guard lock(cache_mutex_);
      copy(device_, device_, plan.copies);
      for (const auto& s : plan.seqs) {
        const auto& table = tables_[s.id];
        for (size_t i = 0; i < s.tokens.size(); ++i)
          device_[slot(table, s.start + int32_t(i))] = s.tokens[i];
        std::vector<token_id> h;
        for (int32_t p = 0; p < s.start + int32_t(s.tokens.size()); ++p)
          h.push_back(device_[slot(table, p)]);
        if (std::ranges::find(h, no_token) != h.end())
          throw std::logic_error("a step starts past the sequence's cached tokens");
        if (s.sample) {
          const token_id t =
            next_token(h, vocab_size_, s.sampling.temperature > 0 ? s.sampling.seed : 1);
          out.sampled.push_back({s.id, t,
                                 s.num_logprobs >= 0 ? logprobs_of(t, vocab_size_, s.num_logprobs)
                                                     : model::token_logprobs{}});
        }
      }
      done(std::move(out));
    });
  }

  void swap(swap_direction d, std::vector<block_copy> copies, std::function<void()> done) override {
    swap_queue_.push([this, d, copies = std::move(copies), done = std::move(done)] {
      if (failed_)
        return;
      {
        std::lock_guard lock(cache_mutex_);
        if (d == swap_direction::out)
          copy(device_, host_, copies);
        else
          copy(host_, device_, copies);
      }
      done();
    });
  }

  int32_t num_device_blocks() const override { return num_device_blocks_; }
  int32_t num_host_blocks() const override { return num_host_blocks_; }
  int32_t block_size() const override { return block_size_; }

private:
  size_t slot(const std::vector<block_id>& table, int32_t position) const {
    return size_t(table[size_t(position / block_size_)]) * size_t(block_size_) +
           size_t(position % block_size_);
  }
  void copy(const std::vector<token_id>& from, std::vector<token_id>& to,
            const std::vector<block_copy>& copies) const {
    for (const block_copy& c : copies)
      std::copy_n(from.begin() + ptrdiff_t(c.src) * block_size_, block_size_,
                  to.begin() + ptrdiff_t(c.dst) * block_size_);
  }

  // Applies the plan's table changes and checks the step's tables.
  void apply_tables(const step_plan& plan) {
    for (const auto& s : plan.seqs) {
      auto& table = tables_[s.id];
      if (s.blocks.num_kept < 0 || size_t(s.blocks.num_kept) > table.size())
        throw std::logic_error("a table change keeps blocks the executor's table does not have");
      const bool changed = s.blocks.resets() || !s.blocks.added.empty() ||
                           size_t(s.blocks.num_kept) < table.size();
      s.blocks.apply_to(table);
      const int64_t end = s.start + int64_t(s.tokens.size());
      if (int64_t(table.size()) * block_size_ < end)
        throw std::logic_error("a block table too short for the step");
      if (changed) {
        std::lock_guard lock(log_mutex_);
        table_log_[s.id].push_back(table);
      }
    }
    // Holders per block over the step's tables; a table holds a block once.
    holders_.assign(size_t(num_device_blocks_), 0);
    seen_in_.assign(size_t(num_device_blocks_), 0);
    for (const auto& s : plan.seqs)
      for (block_id b : tables_[s.id]) {
        if (b < 0 || b >= num_device_blocks_)
          throw std::logic_error("a block outside the device pool");
        if (seen_in_[size_t(b)] == s.id)
          throw std::logic_error("a block twice in one table");
        seen_in_[size_t(b)] = s.id;
        ++holders_[size_t(b)];
      }
    for (const auto& s : plan.seqs) {
      const auto& table = tables_[s.id];
      const int32_t first = s.start / block_size_;
      const int32_t last = (s.start + int32_t(s.tokens.size()) - 1) / block_size_;
      for (int32_t i = first; i <= last; ++i)
        if (holders_[size_t(table[size_t(i)])] != 1)
          throw std::logic_error("a block written by one sequence is in another's table");
    }
  }

  class queue {
  public:
    void push(std::function<void()> job) {
      std::lock_guard lock(mutex_);
      jobs_.push_back(std::move(job));
      cv_.notify_one();
    }
    void close() {
      std::lock_guard lock(mutex_);
      closed_ = true;
      cv_.notify_one();
    }
    bool pop(std::function<void()>& job) {
      std::unique_lock lock(mutex_);
      cv_.wait(lock, [&] { return closed_ || !jobs_.empty(); });
      if (jobs_.empty())
        return false;
      job = std::move(jobs_.front());
      jobs_.pop_front();
      return true;
    }

  private:
    std::mutex mutex_;
    std::condition_variable cv_;
    std::deque<std::function<void()>> jobs_;
    bool closed_ = false;
  };

  void work(queue& q) {
    std::function<void()> job;
    while (q.pop(job))
      job();
  }

  int32_t num_device_blocks_, num_host_blocks_, block_size_, vocab_size_;
  std::atomic<std::chrono::milliseconds> step_time_{std::chrono::milliseconds(0)};
  std::mutex gate_mutex_;
  std::condition_variable gate_;
  bool paused_ = false;
  int permits_ = 0;         // steps allowed through while paused
  int64_t num_arrived_ = 0; // steps that reached the gate
  int64_t fail_step_ = 0;   // fail_at_step
  std::string fail_what_;
  std::atomic<bool> failed_{false};
  std::function<void(const std::string&)> on_fault_;
  std::mutex cache_mutex_;
  std::vector<token_id> device_, host_; // each block's slots: the token it holds
  std::map<seq_id, std::vector<block_id>> tables_;  // compute thread only
  std::vector<int32_t> holders_;                    // compute thread only
  std::vector<seq_id> seen_in_;                     // compute thread only
  mutable std::mutex log_mutex_;
  std::map<seq_id, std::vector<std::vector<block_id>>> table_log_;
  queue compute_queue_, swap_queue_;
  std::thread compute_, swaps_;
};

} // namespace kvactor::testing
