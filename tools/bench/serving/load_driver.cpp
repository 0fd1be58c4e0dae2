#include "tools/bench/serving/load_driver.hpp"

#include "net/session.hpp"
#include "tools/bench/serving/request_tracker.hpp"
#include "tools/bench/serving/tcp_driver.hpp"
#include "tools/load/arrivals.hpp"
#include "tools/runtime_calls.hpp"

#include <atomic>
#include <thread>

namespace kvactor::bench {

namespace {

using namespace std::chrono_literals;
using clock = std::chrono::steady_clock;
using tools::figures_of;

// NOTE: the tracker is not the first parameter: CAF takes a leading pointer for `self`.
sink_actor::behavior_type sink_fn(size_t index, std::shared_ptr<request_tracker> t) {
  return {
    [=](const token_event&) { t->token(index); },
    [=](const done_event& d) { t->done(index, d.finish_reason, d.cached_tokens); },
  };
}

void send_in_process(caf::actor_system& sys, runtime_actor runtime,
                     const std::vector<bench_request>& requests, int32_t concurrency,
                     std::shared_ptr<request_tracker> t) {
  caf::scoped_actor self{sys};
  for (size_t i = 0; i < requests.size(); ++i) {
    std::this_thread::sleep_until(t->start() + tools::seconds(requests[i].arrival_s));
    t->wait_for_room(concurrency);
    auto sink = sys.spawn(sink_fn, i, t);
    t->sent(i);
    self->request(runtime, caf::infinite, generate_atom::value, requests[i].request,
                  sink_actor{sink})
      .receive(
        [&](const admission& a) {
          if (a.ok())
            t->accepted(i);
          else
            t->refused(i, std::string(to_string(a.error_code)) + ": " + a.error_message);
        },
        [&](const caf::error& e) { t->refused(i, sys.render(e)); });
  }
}

// Over TCP through a server of this process; an error message if it could
// not start or be reached.
std::optional<std::string> send_over_loopback(caf::actor_system& sys, runtime_actor runtime,
                                              const std::vector<bench_request>& requests,
                                              const load_options& options, request_tracker& t) {
  net::server server(net::line_protocol(sys, runtime));
  auto bound = server.listen("127.0.0.1", 0);
  if (auto* err = std::get_if<std::string>(&bound))
    return "server: " + *err;
  tcp_target target{"127.0.0.1", std::get<uint16_t>(bound), options.num_connections};
  auto err = send_over_tcp(target, requests, options.concurrency, t);
  server.stop_accepting();
  server.stop();
  return err;
}

// Polls the figures until stopped.
class sampler {
public:
  sampler(caf::actor_system& sys, runtime_actor runtime, const request_tracker& t,
          std::chrono::milliseconds every)
    : thread_([&sys, runtime, &t, every, this] {
        while (!stop_.load()) {
          if (auto f = figures_of(sys, runtime))
            samples_.push_back({t.now_s(), f->running, f->kv_utilisation, f->device_blocks_used});
          std::this_thread::sleep_for(every);
        }
      }) {}
  std::vector<figure_sample> stop() {
    stop_ = true;
    thread_.join();
    return std::move(samples_);
  }

private:
  std::atomic<bool> stop_{false};
  std::vector<figure_sample> samples_;
  std::thread thread_;
};

} // namespace

std::optional<load_result> run_load(caf::actor_system& sys, runtime_actor runtime,
                                    const std::vector<bench_request>& requests,
                                    const load_options& options, std::string& error) {
  auto t = std::make_shared<request_tracker>(requests.size(), clock::now());
  sampler figures(sys, runtime, *t, options.sample_every);
  if (options.over_tcp) {
    if (auto err = send_over_loopback(sys, runtime, requests, options, *t)) {
      error = *err;
      figures.stop();
      return std::nullopt;
    }
  } else {
    send_in_process(sys, runtime, requests, options.concurrency, t);
  }
  const bool all_ended = t->wait_all(t->start() + tools::seconds(options.timeout_s));
  load_result r;
  r.samples = figures.stop();
  if (!all_ended) {
    error = "not every request ended within " + std::to_string(options.timeout_s) + " s";
    return std::nullopt;
  }
  r.requests = t->take();
  for (const auto& q : r.requests)
    r.wall_s = std::max(r.wall_s, q.end_s);
  auto f = figures_of(sys, runtime);
  if (!f) {
    error = "the runtime did not report its figures";
    return std::nullopt;
  }
  r.end = *f;
  return r;
}

} // namespace kvactor::bench
