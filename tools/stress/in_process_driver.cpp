#include "tools/stress/in_process_driver.hpp"

#include "actors/runtime/spawn.hpp"

#include <atomic>
#include <chrono>
#include <random>
#include <thread>

namespace kvactor::stress {

namespace {

using namespace std::chrono_literals;
using clock = std::chrono::steady_clock;

// NOTE: the book is not the first parameter: CAF takes a leading pointer for
// `self`. Sinks share the book: after a stalled run the runtime's shutdown
// still sends them the ends of the requests left.
sink_actor::behavior_type sink_fn(int32_t index, std::shared_ptr<record_book> book,
                                  request_faults faults, runtime_actor runtime) {
  const int32_t cancel_at = faults.cancel_at;
  const std::chrono::milliseconds cancel_delay(faults.cancel_delay_ms);
  return {
    [=](const token_event& e) {
      book->token(index, e.choice, e.index, e.token);
      if (cancel_at >= 0 && e.index == cancel_at) {
        book->cancel_sent(index);
        send_after(cancel_delay, runtime, cancel_atom::value, e.id);
      }
    },
    [=](const done_event& e) {
      book->done(index, e);
      // NOTE: a cancel planned past the last token goes out after the end:
      // the runtime must ignore it.
      if (cancel_at >= 0 && cancel_at >= e.completion_tokens) {
        book->cancel_sent(index);
        send_after(cancel_delay, runtime, cancel_atom::value, e.id);
      }
    },
  };
}

end_state end_state_of(const runtime_figures& f) {
  end_state s;
  s.device_blocks_total = f.device_blocks_total;
  s.device_blocks_used = f.device_blocks_used;
  s.host_blocks_total = f.host_blocks_total;
  s.host_blocks_free = f.host_blocks_free;
  s.running = f.running;
  s.waiting = f.waiting;
  s.swapped = f.swapped;
  s.broken_invariants = f.broken_invariants;
  s.preemptions = f.preemptions;
  s.swap_outs_refused = f.swap_outs_refused;
  return s;
}

// Every `every` steps, preempts a random live request (swap, then
// recompute, ...) until stopped.
class preempter {
public:
  preempter(caf::actor_system& sys, runtime_actor runtime, int32_t every, record_book& book,
            const std::vector<std::atomic<request_id>>& ids, progress& bar)
    : thread_([&sys, runtime, every, &book, &ids, &bar, this] {
        std::mt19937_64 rng(every);
        int64_t next = every;
        bool by_swap = true;
        while (!stop_.load()) {
          std::this_thread::sleep_for(2ms);
          auto f = figures_of(sys, runtime);
          if (!f)
            continue;
          bar.runtime_preemptions = f->preemptions;
          if (every <= 0 || f->steps < next)
            continue;
          next = f->steps + every;
          request_id victim = 0; // 0: the last in scheduling order
          for (int tries = 0; tries < 8 && !ids.empty(); ++tries) {
            const size_t i = std::uniform_int_distribution<size_t>(0, ids.size() - 1)(rng);
            if (ids[i].load() != 0 && book.live(static_cast<int32_t>(i))) {
              victim = ids[i].load();
              break;
            }
          }
          caf::anon_send(runtime, preempt_atom::value, victim, by_swap);
          by_swap = !by_swap;
        }
      }) {}
  ~preempter() {
    stop_ = true;
    thread_.join();
  }

private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

} // namespace

std::optional<end_state> wait_idle(caf::actor_system& sys, runtime_actor runtime) {
  std::optional<runtime_figures> f;
  const auto deadline = clock::now() + 5s;
  do {
    f = figures_of(sys, runtime);
    if (f && f->device_blocks_used == 0 && f->host_blocks_free == f->host_blocks_total &&
        f->running + f->waiting + f->swapped == 0)
      break;
    std::this_thread::sleep_for(10ms);
  } while (clock::now() < deadline);
  if (!f)
    return std::nullopt;
  return end_state_of(*f);
}

std::optional<end_state> drive_in_process(caf::actor_system& sys, runtime_actor runtime,
                                          const std::vector<stress_request>& workload,
                                          const std::vector<request_faults>& plan,
                                          const drive_options& options,
                                          const std::shared_ptr<record_book>& shared_book,
                                          progress& bar) {
  record_book& book = *shared_book;
  std::vector<std::atomic<request_id>> ids(workload.size());
  {
    preempter forcing(sys, runtime, options.preempt_every, book, ids, bar);
    caf::scoped_actor self{sys};
    const auto start = clock::now();
    for (const auto& r : workload) {
      std::this_thread::sleep_until(start + seconds(r.arrival_s));
      const request_faults& f = plan[static_cast<size_t>(r.index)];
      auto sink = sys.spawn(sink_fn, r.index, shared_book, f, runtime);
      book.sent(r.index);
      self->request(runtime, caf::infinite, generate_atom::value, r.request, sink_actor{sink})
        .receive(
          [&](const admission& a) {
            if (!a.ok()) {
              book.error(r.index, to_string(a.error_code));
              return;
            }
            ids[static_cast<size_t>(r.index)] = a.id;
            book.accepted(r.index);
            if (f.cancel_at == cancel_at_once) {
              book.cancel_sent(r.index);
              send_after(std::chrono::milliseconds(f.cancel_delay_ms), runtime,
                         cancel_atom::value, a.id);
            }
          },
          [&](const caf::error& e) { book.error(r.index, sys.render(e)); });
    }
    wait_resolved(book, clock::now(), options.timeout_s, options.stall_s);
  }
  return wait_idle(sys, runtime);
}

} // namespace kvactor::stress
