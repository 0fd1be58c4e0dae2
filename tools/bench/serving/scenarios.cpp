#include "tools/bench/serving/scenarios.hpp"

#include "tools/runtime_calls.hpp"

#include <algorithm>
#include <functional>

namespace kvactor::bench {

namespace {

using tools::shutdown;

// The KV pool that holds `tokens` tokens.
int64_t kv_bytes(const bench_settings& s, int64_t tokens) {
  return tokens * s.kv_bytes_per_token;
}

int32_t scaled(const bench_settings& s, int32_t full, int32_t quick) {
  return s.quick ? quick : full;
}

workload_spec mixed(const bench_settings& s, int32_t full, int32_t quick) {
  auto w = mixed_workload(scaled(s, full, quick), s.seed, s.vocab_size);
  if (s.quick)
    w.shapes = {{1, {8, 24}, {4, 12}}, {1, {32, 64}, {2, 4}}, {1, {4, 8}, {12, 24}}};
  return w;
}

// 64 sequences of short prompts and long answers, `in_flight` at a time
// (one step decodes them all at 64).
run_spec decode_heavy(const bench_settings& s, int32_t in_flight) {
  const int32_t num = in_flight >= 64 ? 64 : scaled(s, 16, 4);
  run_spec spec{std::to_string(in_flight) + " decoding", s.engine,
                mixed_workload(num, s.seed, s.vocab_size), s.load};
  spec.workload.name = "decode-heavy";
  spec.workload.shapes = {{1, {16, 32}, {scaled(s, 128, 8), scaled(s, 128, 8)}}};
  spec.engine.max_num_seqs = 64;
  spec.load.concurrency = in_flight;
  return spec;
}

using metric_fn = std::function<double(const run_metrics&)>;

std::variant<comparison, std::string> side_by_side(caf::actor_system& sys, std::string name,
                                                   std::string metric, const metric_fn& of,
                                                   double target, const run_spec& a,
                                                   const run_spec& b) {
  comparison c{std::move(name), std::move(metric), {}, {}, 0, target};
  for (auto [spec, out] : {std::pair{&a, &c.a}, std::pair{&b, &c.b}}) {
    auto r = run_one(sys, *spec);
    if (auto* err = std::get_if<std::string>(&r))
      return spec->label + ": " + *err;
    *out = std::move(std::get<run_report>(r));
  }
  const double denominator = of(c.b.metrics);
  c.ratio = denominator > 0 ? of(c.a.metrics) / denominator : 0;
  return c;
}

double throughput(const run_metrics& m) { return m.tokens_per_s; }

// `batching`: static (a batch's ended sequences leave it) or padded (they
// compute on until the batch ends, as in an engine of fixed batch shape).
std::variant<comparison, std::string> continuous_vs(caf::actor_system& sys, const bench_settings& s,
                                                    batching_mode batching) {
  run_spec a{"continuous", s.engine, mixed(s, 128, 16), s.load};
  run_spec b = a;
  b.label = to_string(batching);
  b.engine.batching = batching;
  return side_by_side(sys, "continuous vs " + b.label + " batching", "output tokens/s",
                      throughput, 2, a, b);
}

std::variant<comparison, std::string> paged_vs_contiguous(caf::actor_system& sys,
                                                          const bench_settings& s) {
  // NOTE: one KV budget for both, 4 contiguous reservations of max_model_len.
  run_spec a{"paged", s.engine, mixed(s, 64, 16), s.load};
  a.engine.max_model_len = scaled(s, 1024, 128);
  a.engine.kv_cache_bytes = kv_bytes(s, 4 * a.engine.max_model_len);
  run_spec b = a;
  b.label = "contiguous";
  b.engine.reservation = kv_reservation::contiguous;
  return side_by_side(sys, "paged vs contiguous reservation (same KV budget)",
                      "peak concurrent sequences",
                      [](const run_metrics& m) { return double(m.peak_running); }, 3, a, b);
}

std::variant<comparison, std::string> prefix_on_vs_off(caf::actor_system& sys,
                                                       const bench_settings& s) {
  run_spec a{"prefix cache on", s.engine,
             shared_prefix_workload(scaled(s, 64, 8), scaled(s, 1024, 64), s.seed, s.vocab_size),
             s.load};
  run_spec b = a;
  b.label = "prefix cache off";
  b.engine.prefix_caching = false;
  return side_by_side(sys, "prefix caching on vs off (shared-prefix workload)", "output tokens/s",
                      throughput, 4, a, b);
}

std::variant<comparison, std::string> swap_vs_recompute(caf::actor_system& sys,
                                                        const bench_settings& s) {
  run_spec a{"swap", s.engine, mixed(s, 64, 16), s.load};
  a.engine.kv_cache_bytes = kv_bytes(s, scaled(s, 2048, 256));
  a.engine.preemption = preemption_mode::swap;
  run_spec b = a;
  b.label = "recompute";
  b.engine.preemption = preemption_mode::recompute;
  return side_by_side(sys, "preemption by swap vs recompute (memory pressure)", "output tokens/s",
                      throughput, 0, a, b);
}

// The same decode-heavy requests sampled (temperature 0.8, top_p 0.95) and
// greedy, `in_flight` at a time: what sampling costs a step.
std::variant<comparison, std::string> sampled_vs_greedy(caf::actor_system& sys,
                                                        const bench_settings& s,
                                                        int32_t in_flight) {
  run_spec a = decode_heavy(s, in_flight);
  a.label = "sampled";
  a.workload.temperature = sampled_temperature;
  a.workload.top_p = sampled_top_p;
  run_spec b = decode_heavy(s, in_flight);
  b.label = "greedy";
  return side_by_side(sys,
                      "sampled (temperature 0.8, top_p 0.95) vs greedy, " +
                        std::to_string(in_flight) + " in flight",
                      "output tokens/s", throughput, 0.9, a, b);
}

// The same decode-heavy requests with decode steps as CUDA graphs and
// launched kernel by kernel, `in_flight` at a time: what launching costs.
std::variant<comparison, std::string> graphs_vs_launches(caf::actor_system& sys,
                                                         const bench_settings& s,
                                                         int32_t in_flight) {
  run_spec a = decode_heavy(s, in_flight);
  a.label = "CUDA graphs";
  a.engine.cuda_graphs = true;
  run_spec b = decode_heavy(s, in_flight);
  b.label = "kernel by kernel";
  b.engine.cuda_graphs = false;
  return side_by_side(sys,
                      "decode steps as CUDA graphs vs kernel by kernel, " +
                        std::to_string(in_flight) + " in flight",
                      "output tokens/s", throughput, 1, a, b);
}

} // namespace

run_result run_one(caf::actor_system& sys, const run_spec& spec) {
  auto engine = spec.engine;
  engine.max_waiting = std::max(engine.max_waiting, spec.workload.num_requests);
  auto runtime = spawn_runtime(sys, engine);
  if (!runtime)
    return sys.render(runtime.error());
  std::string error;
  auto load = run_load(sys, *runtime, make_requests(spec.workload), spec.load, error);
  const bool down = shutdown(sys, *runtime);
  if (!load)
    return error;
  if (!down)
    return std::string("the runtime did not shut down");
  return run_report{spec, summarize(*load)};
}

const std::vector<std::string>& comparison_names() {
  static const std::vector<std::string> names{"continuous", "padded",  "paged",  "prefix",
                                              "preemption", "sampling", "sampling1",
                                              "graphs",     "graphs1"};
  return names;
}

std::variant<comparison, std::string> compare(caf::actor_system& sys, const std::string& name,
                                              const bench_settings& s) {
  if (name == "continuous")
    return continuous_vs(sys, s, batching_mode::fixed);
  if (name == "padded")
    return continuous_vs(sys, s, batching_mode::padded);
  if (name == "paged")
    return paged_vs_contiguous(sys, s);
  if (name == "prefix")
    return prefix_on_vs_off(sys, s);
  if (name == "preemption")
    return swap_vs_recompute(sys, s);
  if (name == "sampling")
    return sampled_vs_greedy(sys, s, 64);
  if (name == "sampling1")
    return sampled_vs_greedy(sys, s, 1);
  if (name == "graphs")
    return graphs_vs_launches(sys, s, 64);
  if (name == "graphs1")
    return graphs_vs_launches(sys, s, 1);
  return "unknown comparison '" + name + "'";
}

std::variant<std::vector<run_report>, std::string>
sweep(caf::actor_system& sys, const std::vector<int32_t>& concurrency, const bench_settings& s) {
  std::vector<run_report> out;
  for (int32_t c : concurrency) {
    run_spec spec{"concurrency " + std::to_string(c), s.engine,
                  mixed(s, std::max(8, 2 * c), std::max(4, c)), s.load};
    spec.load.concurrency = c;
    auto r = run_one(sys, spec);
    if (auto* err = std::get_if<std::string>(&r))
      return spec.label + ": " + *err;
    out.push_back(std::move(std::get<run_report>(r)));
  }
  return out;
}

run_result overhead_run(caf::actor_system& sys, const bench_settings& s) {
  return run_one(sys, decode_heavy(s, 64));
}

} // namespace kvactor::bench
