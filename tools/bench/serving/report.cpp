#include "tools/bench/serving/report.hpp"

#include "net/json_writer.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>

namespace kvactor::bench {

namespace {

using net::json_writer;

json_writer percentiles_json(const percentiles& p) {
  json_writer w;
  w.field("p50", p.p50).field("p90", p.p90).field("p99", p.p99);
  return w;
}

json_writer run_json(const run_report& r) {
  const auto& e = r.spec.engine;
  const auto& m = r.metrics;
  json_writer workload, engine, metrics;
  workload.field("name", r.spec.workload.name)
    .field("requests", r.spec.workload.num_requests)
    .field("rate", r.spec.workload.rate)
    .field("concurrency", r.spec.load.concurrency)
    .field("shared_prefix_len", r.spec.workload.shared_prefix_len);
  engine.field("batching", to_string(e.batching))
    .field("kv_reservation", to_string(e.reservation))
    .field("prefix_caching", e.prefix_caching)
    .field("preemption", to_string(e.preemption))
    .field("block_size", e.block_size)
    .field("kv_cache_bytes", e.kv_cache_bytes)
    .field("kv_dtype", to_string(kv_dtype_of(e)))
    .field("max_num_seqs", e.max_num_seqs)
    .field("max_num_batched_tokens", e.max_num_batched_tokens)
    .field("max_model_len", e.max_model_len)
    .field("activations", e.activations ? to_string(*e.activations) : "auto");
  metrics.field("requests", m.num_requests)
    .field("ok", m.num_ok)
    .field("output_tokens", m.output_tokens)
    .field("wall_s", m.wall_s)
    .field("output_tokens_per_s", m.tokens_per_s)
    .field("requests_per_s", m.requests_per_s)
    .object("ttft_ms", percentiles_json(m.ttft_ms))
    .object("itl_ms", percentiles_json(m.itl_ms))
    .field("kv_utilisation", m.kv_utilisation)
    .field("peak_running", m.peak_running)
    .field("preemptions", m.preemptions)
    .field("prefix_hit_rate", m.prefix_hit_rate)
    .field("steps", m.steps)
    .field("overhead_share", m.overhead_share)
    .field("planning_share", m.planning_share)
    .field("sampling_share", m.sampling_share);
  json_writer w;
  w.field("label", r.spec.label).object("workload", workload).object("engine", engine)
    .object("metrics", metrics);
  return w;
}

template <class T, class F>
std::string array(const std::vector<T>& items, F to_writer) {
  std::string out = "[";
  for (const auto& item : items) {
    if (out.size() > 1)
      out += ',';
    out += to_writer(item).str();
  }
  return out + "]";
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

} // namespace

std::string to_json(const bench_results& r) {
  json_writer w;
  w.raw_field("comparisons", array(r.comparisons, [](const comparison& c) {
    json_writer x;
    x.field("name", c.name).field("metric", c.metric).field("ratio", c.ratio)
      .field("target", c.target).object("a", run_json(c.a)).object("b", run_json(c.b));
    return x;
  }));
  w.raw_field("sweep", array(r.sweep, run_json));
  if (r.overhead)
    w.object("overhead", run_json(*r.overhead));
  return w.line();
}

void print_run(std::ostream& out, const run_report& r) {
  const auto& m = r.metrics;
  out << "  " << r.spec.label << ": " << m.num_ok << "/" << m.num_requests << " ok, "
      << fixed(m.tokens_per_s, 1) << " tok/s, " << fixed(m.requests_per_s, 2)
      << " req/s, TTFT p50/p90/p99 " << fixed(m.ttft_ms.p50, 0) << "/" << fixed(m.ttft_ms.p90, 0)
      << "/" << fixed(m.ttft_ms.p99, 0) << " ms, ITL p50/p90/p99 " << fixed(m.itl_ms.p50, 1) << "/"
      << fixed(m.itl_ms.p90, 1) << "/" << fixed(m.itl_ms.p99, 1) << " ms, KV util "
      << fixed(100 * m.kv_utilisation, 1) << "%, peak running " << m.peak_running
      << ", preemptions " << m.preemptions << ", prefix hits " << fixed(100 * m.prefix_hit_rate, 1)
      << "%, overhead " << fixed(100 * m.overhead_share, 2) << "% (planning "
      << fixed(100 * m.planning_share, 2) << "%), sampling " << fixed(100 * m.sampling_share, 2)
      << "%, " << fixed(m.wall_s, 1) << " s\n";
  for (const auto& e : m.errors)
    out << "    error: " << e << "\n";
}

void print_comparison(std::ostream& out, const comparison& c) {
  out << c.name << ": " << c.metric << " ratio " << fixed(c.ratio, 2);
  if (c.target > 0)
    out << " (target >= " << fixed(c.target, c.target < 1 ? 1 : 0) << ")";
  out << "\n";
  print_run(out, c.a);
  print_run(out, c.b);
}

std::optional<std::string> write_plot(const std::vector<run_report>& sweep,
                                      const std::filesystem::path& png) {
  const auto data = std::filesystem::path(png).replace_extension(".dat");
  const auto script = std::filesystem::path(png).replace_extension(".gp");
  {
    std::ofstream d(data);
    d << "# concurrency tokens_per_s ttft_p50_ms ttft_p99_ms itl_p50_ms itl_p99_ms\n";
    for (const auto& r : sweep) {
      const auto& m = r.metrics;
      d << r.spec.load.concurrency << " " << m.tokens_per_s << " " << m.ttft_ms.p50 << " "
        << m.ttft_ms.p99 << " " << m.itl_ms.p50 << " " << m.itl_ms.p99 << "\n";
    }
    std::ofstream g(script);
    g << "set terminal pngcairo size 1200,450\n"
      << "set output '" << png.string() << "'\n"
      << "set multiplot layout 1,2 title 'kvactor-bench: mixed workload against concurrency'\n"
      << "set logscale x 2\nset xlabel 'requests in flight'\nset grid\nset key top left\n"
      << "set ylabel 'output tokens/s'\n"
      << "plot '" << data.string() << "' using 1:2 with linespoints lw 2 title 'throughput'\n"
      << "set logscale y\nset ylabel 'ms'\n"
      << "plot '" << data.string() << "' using 1:3 with linespoints title 'TTFT p50', "
      << "'' using 1:4 with linespoints title 'TTFT p99', "
      << "'' using 1:5 with linespoints title 'ITL p50', "
      << "'' using 1:6 with linespoints title 'ITL p99'\n"
      << "unset multiplot\n";
    if (!d || !g)
      return "cannot write " + data.string() + " or " + script.string();
  }
  if (std::system("command -v gnuplot > /dev/null 2>&1") != 0)
    return std::string("gnuplot is not installed (tools/bootstrap installs gnuplot-nox): no ") +
           png.string();
  const std::string cmd = "gnuplot '" + script.string() + "'";
  if (std::system(cmd.c_str()) != 0)
    return "gnuplot failed on " + script.string();
  return std::nullopt;
}

} // namespace kvactor::bench
