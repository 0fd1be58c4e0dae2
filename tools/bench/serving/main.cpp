// kvactor-bench: serving throughput, latency, KV memory efficiency and the
// runtime's overhead, measured on in-process runtimes, with side-by-side
// comparisons that each end in a ratio.
//
//   kvactor-bench [--compare=all|none|continuous,padded,paged,prefix,preemption]
//                 [--sweep=1,4,16,64|none] [--no-overhead] [--quick]
//                 [--transport=in-process|tcp] [--model=DIR] [--out=DIR] [--seed=1] ...
//   kvactor-bench --openai=HOST:PORT[|FILE][,HOST:PORT[|FILE]] [--sweep=1,4,16,64]
//                 [--openai-reps=3] [--openai-prompt=128] [--openai-output=64] [--model=DIR]
// (--help lists every option.) Writes DIR/bench.json and DIR/bench.png; with
// --openai, the side by side of running servers (side_by_side.hpp) and
// DIR/side_by_side.json.

#include "model/config.hpp"
#include "model/model_folder.hpp"
#include "model/tiny/tiny_model.hpp"
#include "tools/command_line.hpp"
#include "tools/bench/serving/report.hpp"
#include "tools/bench/serving/side_by_side.hpp"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

namespace {

using namespace kvactor::bench;

struct bench_config : caf::actor_system_config {
  std::string compare = "all";
  std::string sweep = "1,4,16,64";
  bool no_overhead = false;
  bool quick = false;
  bool no_cuda_graphs = false;
  std::string model;
  std::string out = "bench-results";
  int64_t seed = 1;
  std::string device = "cpu";
  int32_t threads = 0;
  int32_t block_size = 0;
  int64_t kv_cache_mib = kvactor::default_kv_cache_bytes >> 20;
  std::string kv_dtype = "auto";
  int32_t max_seqs = kvactor::default_max_num_seqs;
  int32_t max_batched_tokens = kvactor::default_max_num_batched_tokens;
  std::string activations = "auto";
  std::string transport = "in-process";
  int32_t connections = 8;
  std::string openai;
  int32_t openai_reps = 3;
  int32_t openai_prompt = 128;
  int32_t openai_output = 64;

  bench_config() {
    kvactor::add_message_types(*this);
    kvactor::use_serving_scheduler(*this);
    opt_group{custom_options_, "global"}
      .add(compare, "compare",
           "all, none, or a list of continuous,padded,paged,prefix,preemption,sampling,sampling1,"
           "graphs,graphs1 (all leaves out graphs* on the CPU)")
      .add(sweep, "sweep", "concurrency levels of the mixed workload (none: no sweep)")
      .add(no_overhead, "no-overhead", "skip the overhead run (64 decoding sequences)")
      .add(quick, "quick", "small workloads: checks that everything runs, measures little")
      .add(no_cuda_graphs, "no-cuda-graphs", "CUDA: every step kernel by kernel (no graphs)")
      .add(model, "model", "a Hugging Face model folder or a GGUF file (default: the tiny model)")
      .add(out, "out", "folder for bench.json and bench.png")
      .add(seed, "seed", "workload seed")
      .add(device, "device", "cpu, cuda or cuda:N")
      .add(threads, "threads", "CPU device threads (0: all cores)")
      .add(block_size, "block-size", "tokens per KV block (0: the device's default, 8 on the CPU)")
      .add(kv_cache_mib, "kv-cache-mib",
           "device KV cache budget in MiB (where not set by a comparison)")
      .add(kv_dtype, "kv-dtype", "KV cache elements: f32, bf16, or auto (bf16 on CUDA, else f32)")
      .add(max_seqs, "max-seqs", "sequences per step")
      .add(max_batched_tokens, "max-batched-tokens", "tokens per step")
      .add(activations, "activations",
           "the products' input rows: f32, bf16 (lossy; AMX or AVX512_BF16), or auto "
           "(bf16 on CUDA with bf16 matrices, else f32)")
      .add(transport, "transport",
           "in-process, or tcp (the line protocol through a loopback server)")
      .add(connections, "connections", "tcp: client connections per run")
      .add(openai, "openai",
           "servers of the OpenAI completions API to measure side by side: HOST:PORT[|FILE],... "
           "(FILE: a JSON object of fields added to that server's requests); no runtime is started")
      .add(openai_reps, "openai-reps", "--openai: alternating repetitions per concurrency")
      .add(openai_prompt, "openai-prompt", "--openai: prompt tokens per request")
      .add(openai_output, "openai-output", "--openai: output tokens per request");
  }
};

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> items;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty())
      items.push_back(item);
  return items;
}

// The comparisons asked for, or an error message.
// "all" on the CPU leaves out the CUDA graph comparisons (both sides alike there).
std::variant<std::vector<std::string>, std::string> comparisons_of(const std::string& arg,
                                                                   const std::string& device) {
  if (arg == "all") {
    std::vector<std::string> names = comparison_names();
    if (device == "cpu")
      std::erase_if(names, [](const std::string& n) { return n.starts_with("graphs"); });
    return names;
  }
  if (arg == "none")
    return std::vector<std::string>{};
  auto names = split(arg);
  for (const auto& n : names)
    if (std::ranges::find(comparison_names(), n) == comparison_names().end())
      return "--compare: unknown comparison '" + n + "'";
  return names;
}

std::variant<std::vector<int32_t>, std::string> levels_of(const std::string& arg) {
  std::vector<int32_t> levels;
  if (arg == "none")
    return levels;
  for (const auto& item : split(arg)) {
    char* end = nullptr;
    const long v = std::strtol(item.c_str(), &end, 10);
    if (*end != '\0' || v < 1 || v > 4096)
      return "--sweep: '" + item + "' is not a concurrency in [1, 4096]";
    levels.push_back(static_cast<int32_t>(v));
  }
  return levels;
}

// The model folder: given, or the default tiny model written once.
kvactor::result<std::string> model_dir(const bench_config& cfg) {
  if (!cfg.model.empty())
    return cfg.model;
  const auto dir = std::filesystem::path(cfg.out) / "tiny-model";
  if (!std::filesystem::exists(dir / "model.safetensors"))
    if (auto ok = kvactor::model::tiny::write_model(dir, {}); !ok)
      return ok.error();
  return dir.string();
}

// --openai: the side by side of running servers; no runtime of our own.
int side_by_side(const bench_config& cfg, int32_t vocab_size, std::vector<int32_t> levels) {
  side_by_side_options o;
  for (const auto& arg : split(cfg.openai)) {
    auto target = parse_openai_target(arg);
    if (auto* err = std::get_if<std::string>(&target)) {
      std::cerr << "kvactor-bench: --openai: " << *err << "\n";
      return 2;
    }
    o.targets.push_back(std::get<openai_target>(target));
  }
  if (o.targets.empty() || o.targets.size() > 2 || cfg.openai_reps < 1 || cfg.openai_prompt < 1 ||
      cfg.openai_output < 1) {
    std::cerr << "kvactor-bench: --openai takes one or two servers, and positive --openai-reps, "
                 "--openai-prompt and --openai-output\n";
    return 2;
  }
  o.concurrency = levels.empty() ? std::vector<int32_t>{1} : std::move(levels);
  o.prompt_len = cfg.openai_prompt;
  o.output_len = cfg.openai_output;
  o.reps = cfg.openai_reps;
  o.vocab_size = vocab_size;
  o.seed = static_cast<uint64_t>(cfg.seed);
  o.quick = cfg.quick;
  const auto rows = run_side_by_side(o, std::cout);
  print_side_by_side(std::cout, o, rows);
  const auto json = std::filesystem::path(cfg.out) / "side_by_side.json";
  std::ofstream(json) << side_by_side_json(o, rows);
  std::cout << "kvactor-bench: wrote " << json.string() << "\n";
  for (const auto& row : rows)
    for (const auto& m : row.targets)
      if (m.num_ok != m.num_requests) {
        std::cerr << "kvactor-bench: not every request ended normally\n";
        return 1;
      }
  return 0;
}

int bench(caf::actor_system& sys, const bench_config& cfg) {
  auto names = comparisons_of(cfg.compare, cfg.device);
  auto levels = levels_of(cfg.sweep);
  for (const std::string* err :
       {std::get_if<std::string>(&names), std::get_if<std::string>(&levels)})
    if (err) {
      std::cerr << "kvactor-bench: " << *err << "\n";
      return 2;
    }
  if (cfg.transport != "in-process" && cfg.transport != "tcp") {
    std::cerr << "kvactor-bench: --transport must be in-process or tcp\n";
    return 2;
  }
  std::error_code ec;
  std::filesystem::create_directories(cfg.out, ec);
  auto dir = model_dir(cfg);
  if (!dir) {
    std::cerr << "kvactor-bench: " << dir.error().message << "\n";
    return 1;
  }
  auto mc = kvactor::model::load_model_config(*dir);
  if (!mc) {
    std::cerr << "kvactor-bench: " << mc.error().message << "\n";
    return 1;
  }

  if (!cfg.openai.empty())
    return side_by_side(cfg, static_cast<int32_t>(mc->vocab_size), std::get<0>(levels));

  bench_settings s;
  s.engine.model_dir = *dir;
  s.engine.device = cfg.device;
  s.engine.num_threads = cfg.threads;
  s.engine.block_size =
    cfg.block_size != 0 ? cfg.block_size : kvactor::default_block_size(cfg.device);
  s.engine.kv_cache_bytes = cfg.kv_cache_mib << 20;
  s.engine.max_num_seqs = cfg.max_seqs;
  s.engine.max_num_batched_tokens = cfg.max_batched_tokens;
  s.engine.cuda_graphs = !cfg.no_cuda_graphs;
  for (caf::error err :
       {kvactor::parse_option("--kv-dtype", cfg.kv_dtype, s.engine.kv_dtype),
        kvactor::parse_option("--activations", cfg.activations, s.engine.activations)})
    if (err) {
      std::cerr << "kvactor-bench: " << sys.render(err) << "\n";
      return 2;
    }
  const int64_t element_bytes = kv_dtype_of(s.engine) == kvactor::number_format::bf16 ? 2 : 4;
  s.kv_bytes_per_token = 2 * mc->num_hidden_layers * mc->kv_size() * element_bytes;
  s.vocab_size = static_cast<int32_t>(mc->vocab_size);
  s.seed = static_cast<uint64_t>(cfg.seed);
  s.quick = cfg.quick;
  s.load.over_tcp = cfg.transport == "tcp";
  s.load.num_connections = cfg.connections;

  bench_results results;
  for (const auto& name : std::get<0>(names)) {
    auto c = compare(sys, name, s);
    if (auto* err = std::get_if<std::string>(&c)) {
      std::cerr << "kvactor-bench: " << name << ": " << *err << "\n";
      return 1;
    }
    print_comparison(std::cout, std::get<comparison>(c));
    results.comparisons.push_back(std::move(std::get<comparison>(c)));
  }
  if (!cfg.no_overhead) {
    auto r = overhead_run(sys, s);
    if (auto* err = std::get_if<std::string>(&r)) {
      std::cerr << "kvactor-bench: overhead: " << *err << "\n";
      return 1;
    }
    std::cout << "runtime overhead (target <= 3% of step time):\n";
    print_run(std::cout, std::get<run_report>(r));
    results.overhead = std::move(std::get<run_report>(r));
  }
  if (!std::get<0>(levels).empty()) {
    auto runs = sweep(sys, std::get<0>(levels), s);
    if (auto* err = std::get_if<std::string>(&runs)) {
      std::cerr << "kvactor-bench: sweep: " << *err << "\n";
      return 1;
    }
    results.sweep = std::move(std::get<0>(runs));
    std::cout << "mixed workload against concurrency:\n";
    for (const auto& r : results.sweep)
      print_run(std::cout, r);
  }

  const auto json = std::filesystem::path(cfg.out) / "bench.json";
  std::ofstream(json) << to_json(results);
  std::cout << "kvactor-bench: wrote " << json.string() << "\n";
  if (!results.sweep.empty()) {
    const auto png = std::filesystem::path(cfg.out) / "bench.png";
    if (auto err = write_plot(results.sweep, png))
      std::cout << "kvactor-bench: " << *err << "\n";
    else
      std::cout << "kvactor-bench: wrote " << png.string() << "\n";
  }
  for (const auto& c : results.comparisons)
    if (c.a.metrics.num_ok != c.a.metrics.num_requests ||
        c.b.metrics.num_ok != c.b.metrics.num_requests) {
      std::cerr << "kvactor-bench: " << c.name << ": not every request ended normally\n";
      return 1;
    }
  for (const auto& r : results.sweep)
    if (r.metrics.num_ok != r.metrics.num_requests) {
      std::cerr << "kvactor-bench: sweep: " << r.spec.label
                << ": not every request ended normally\n";
      return 1;
    }
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  bench_config cfg;
  if (!kvactor::tools::parse_command_line(cfg, argc, argv, "kvactor-bench"))
    return 2;
  if (cfg.cli_helptext_printed)
    return 0;
  int rc = 0;
  {
    caf::actor_system sys{cfg};
    rc = bench(sys, cfg);
  }
  return rc;
}
