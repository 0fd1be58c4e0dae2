#pragma once
// fake_runtime: a stand-in for the runtime actor that records what it is
// sent, for the tests of what sits in front of the runtime (the bridge, the
// session). It admits requests under runtime ids 101, 102, ... in order of
// arrival, refuses one whose prompt is "refuse:<code>" with that code, and
// answers one whose prompt is "fail" with an error instead of an admission.
// While held, admissions wait for admit_held(). The test plays the runtime's
// part by sending token and done events to the sinks it recorded; a sink
// that goes down is recorded too (the real runtime cancels its requests).

#include "kvactor/kvactor.hpp"

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace kvactor::net {

using admit_atom = caf::atom_constant<caf::atom("admit")>;

class fake_runtime {
public:
  static constexpr request_id first_id = 101;

  struct call {
    request_id id = 0;
    generate_request request;
    sink_actor sink;
  };

  explicit fake_runtime(caf::actor_system& sys) : journal_(std::make_shared<journal>()) {
    actor_ = sys.spawn(act, journal_);
  }
  ~fake_runtime() { caf::anon_send_exit(actor_, caf::exit_reason::user_shutdown); }
  fake_runtime(const fake_runtime&) = delete;
  fake_runtime& operator=(const fake_runtime&) = delete;

  runtime_actor handle() const { return actor_; }

  // Admissions wait from now on until admit_held().
  void hold() {
    std::lock_guard lock(journal_->mutex);
    journal_->holding = true;
  }
  void admit_held() {
    {
      std::lock_guard lock(journal_->mutex);
      journal_->holding = false;
    }
    caf::anon_send(actor_, admit_atom::value);
  }

  // Each waits (up to 10 s) until at least n have arrived.
  bool wait_generates(size_t n) { return wait([&] { return journal_->generates.size() >= n; }); }
  bool wait_cancels(size_t n) { return wait([&] { return journal_->cancels.size() >= n; }); }
  bool wait_sinks_down(size_t n) { return wait([&] { return journal_->sinks_down.size() >= n; }); }

  std::vector<call> generates() const { return read(&journal::generates); }
  std::vector<request_id> cancels() const { return read(&journal::cancels); }
  // The runtime ids whose sink went down, in order.
  std::vector<request_id> sinks_down() const { return read(&journal::sinks_down); }

  void send_token(request_id id, int32_t index, int32_t token, std::string text) {
    send_token(token_event{id, index, token, std::move(text)});
  }
  void send_token(token_event ev) { caf::anon_send(sink_of(ev.id), std::move(ev)); }
  void send_done(done_event d) { caf::anon_send(sink_of(d.id), std::move(d)); }

  // What it answers to figures_atom.
  static runtime_figures figures() {
    runtime_figures f;
    f.device_blocks_total = 42;
    f.requests_finished = 7;
    f.kv_utilisation = 0.25;
    return f;
  }

private:
  using actor_type = runtime_actor::extend<caf::reacts_to<admit_atom>>;

  struct journal {
    mutable std::mutex mutex;
    std::condition_variable changed;
    bool holding = false;
    std::vector<call> generates;
    std::vector<request_id> cancels;
    std::vector<request_id> sinks_down;
  };

  struct state {
    state() = default;
    request_id next_id = first_id;
    std::vector<std::pair<caf::typed_response_promise<admission>, admission>> held;
    std::map<caf::actor_addr, std::vector<request_id>> ids_of_sink;
  };

  static actor_type::behavior_type act(actor_type::stateful_pointer<state> self,
                                   std::shared_ptr<journal> jr) {
    self->set_down_handler([=](const caf::down_msg& dm) {
      auto i = self->state.ids_of_sink.find(dm.source);
      if (i == self->state.ids_of_sink.end())
        return;
      record(*jr, [&] {
        jr->sinks_down.insert(jr->sinks_down.end(), i->second.begin(), i->second.end());
      });
      self->state.ids_of_sink.erase(i);
    });
    return {
      [=](generate_atom, generate_request& req,
          sink_actor& sink) -> caf::typed_response_promise<admission> {
        auto rp = self->make_response_promise<admission>();
        if (req.prompt == "fail") {
          rp.deliver(caf::make_error(caf::sec::runtime_error, "the fake runtime fails"));
          return rp;
        }
        if (req.prompt.starts_with("refuse:")) {
          for (errc code : {errc::invalid_field, errc::prompt_too_long, errc::overloaded,
                            errc::worker_lost})
            if (req.prompt.substr(7) == to_string(code))
              rp.deliver(admission{0, 0, code, "refused by the fake runtime"});
          if (rp.pending())
            rp.deliver(caf::make_error(caf::sec::runtime_error, "no such code: " + req.prompt));
          return rp;
        }
        const request_id id = self->state.next_id++;
        const auto num_prompt_tokens = static_cast<int32_t>(
          req.prompt_tokens.empty() ? req.prompt.size() : req.prompt_tokens.size());
        auto [ids, first] = self->state.ids_of_sink.try_emplace(sink.address());
        if (first)
          self->monitor(sink);
        ids->second.push_back(id);
        bool holding = false;
        record(*jr, [&] {
          holding = jr->holding;
          jr->generates.push_back({id, std::move(req), std::move(sink)});
        });
        admission a{id, num_prompt_tokens, {}, {}};
        if (holding)
          self->state.held.emplace_back(rp, a);
        else
          rp.deliver(a);
        return rp;
      },
      [=](cancel_atom, request_id id) { record(*jr, [&] { jr->cancels.push_back(id); }); },
      [=](figures_atom) { return figures(); },
      [=](preempt_atom, request_id, bool) {},
      [=](shutdown_atom) { return true; },
      [=](admit_atom) {
        for (auto& [rp, a] : self->state.held)
          rp.deliver(a);
        self->state.held.clear();
      },
    };
  }

  template <class F>
  static void record(journal& jr, F change) {
    std::lock_guard lock(jr.mutex);
    change();
    jr.changed.notify_all();
  }

  template <class Pred>
  bool wait(Pred done) {
    std::unique_lock lock(journal_->mutex);
    return journal_->changed.wait_for(lock, std::chrono::seconds(10), done);
  }

  template <class T>
  T read(T journal::*member) const {
    std::lock_guard lock(journal_->mutex);
    return (*journal_).*member;
  }

  sink_actor sink_of(request_id id) const {
    std::lock_guard lock(journal_->mutex);
    for (const auto& c : journal_->generates)
      if (c.id == id)
        return c.sink;
    return {};
  }

  std::shared_ptr<journal> journal_;
  actor_type actor_;
};

} // namespace kvactor::net
