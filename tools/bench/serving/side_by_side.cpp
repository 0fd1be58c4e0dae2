#include "tools/bench/serving/side_by_side.hpp"

#include "net/json_writer.hpp"

#include <algorithm>
#include <functional>
#include <iomanip>
#include <sstream>

namespace kvactor::bench {

namespace {

std::vector<bench_request> workload(const side_by_side_options& o, int32_t concurrency,
                                    int32_t rep, decoding mode) {
  workload_spec spec;
  spec.name = "side-by-side";
  spec.num_requests = o.quick ? concurrency : std::max(8, 2 * concurrency);
  spec.seed = o.seed + static_cast<uint64_t>(1000 * rep + concurrency);
  spec.shapes = {{1, {o.prompt_len, o.prompt_len}, {o.output_len, o.output_len}}};
  spec.vocab_size = o.vocab_size;
  if (mode == decoding::sampled) {
    spec.temperature = sampled_temperature;
    spec.top_p = sampled_top_p;
  }
  return make_requests(spec); // ignoring EOS, all at once
}

run_metrics run(const openai_target& target, const std::vector<bench_request>& requests,
                int32_t concurrency) {
  request_tracker t(requests.size(), request_tracker::clock::now());
  send_over_openai(target, requests, concurrency, t);
  load_result r;
  r.requests = t.take();
  for (const auto& q : r.requests)
    r.wall_s = std::max(r.wall_s, q.end_s);
  return summarize(r);
}

double median(std::vector<double> v) {
  std::ranges::sort(v);
  return v.empty() ? 0 : v[v.size() / 2];
}

// Each figure the median of the repetitions' figures.
run_metrics median_of(const std::vector<run_metrics>& reps) {
  run_metrics m = reps.front();
  auto med = [&](auto field) {
    std::vector<double> v;
    for (const auto& r : reps)
      v.push_back(std::invoke(field, r));
    return median(std::move(v));
  };
  m.tokens_per_s = med(&run_metrics::tokens_per_s);
  m.wall_s = med(&run_metrics::wall_s);
  m.ttft_ms = {med([](const run_metrics& r) { return r.ttft_ms.p50; }),
               med([](const run_metrics& r) { return r.ttft_ms.p90; }),
               med([](const run_metrics& r) { return r.ttft_ms.p99; })};
  m.itl_ms = {med([](const run_metrics& r) { return r.itl_ms.p50; }),
              med([](const run_metrics& r) { return r.itl_ms.p90; }),
              med([](const run_metrics& r) { return r.itl_ms.p99; })};
  for (const auto& r : reps) {
    m.num_ok = std::min(m.num_ok, r.num_ok);
    m.errors.insert(m.errors.end(), r.errors.begin(), r.errors.end());
  }
  return m;
}

std::string fixed(double v, int digits) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(digits) << v;
  return s.str();
}

} // namespace

const char* to_string(decoding d) {
  return d == decoding::greedy ? "greedy" : "sampled";
}

std::vector<side_by_side_row> run_side_by_side(const side_by_side_options& o, std::ostream& log) {
  const int32_t reps = o.quick ? 1 : std::max(1, o.reps);
  std::vector<side_by_side_row> rows;
  for (int32_t c : o.concurrency)
    for (decoding mode : o.modes) {
      std::vector<std::vector<run_metrics>> per_target(o.targets.size());
      for (int32_t rep = 0; rep < reps; ++rep) {
        const auto requests = workload(o, c, rep, mode);
        // NOTE: the order of the targets turns every repetition (A B, B A, ...)
        // so that neither always runs first.
        for (size_t k = 0; k < o.targets.size(); ++k) {
          const size_t target = rep % 2 == 0 ? k : o.targets.size() - 1 - k;
          per_target[target].push_back(run(o.targets[target], requests, c));
          const run_metrics& m = per_target[target].back();
          log << "  concurrency " << c << ", " << to_string(mode) << ", "
              << o.targets[target].label() << ": " << m.num_ok << "/" << m.num_requests << " ok, "
              << fixed(m.tokens_per_s, 1) << " tok/s, TTFT p50 " << fixed(m.ttft_ms.p50, 0)
              << " ms, ITL p50 " << fixed(m.itl_ms.p50, 1) << " ms\n";
          for (const auto& e : m.errors)
            log << "    error: " << e << "\n";
        }
      }
      side_by_side_row row{c, mode, {}};
      for (const auto& runs : per_target)
        row.targets.push_back(median_of(runs));
      rows.push_back(std::move(row));
    }
  return rows;
}

void print_side_by_side(std::ostream& out, const side_by_side_options& o,
                        const std::vector<side_by_side_row>& rows) {
  out << "side by side: " << o.prompt_len << "-token prompts, " << o.output_len
      << " tokens out, greedy and sampled (temperature " << sampled_temperature << ", top_p "
      << sampled_top_p << "); medians of " << (o.quick ? 1 : o.reps) << " alternating runs\n";
  out << "| concurrency | decoding | server | output tok/s | TTFT p50/p90/p99 ms | ITL p50/p90/p99 "
         "ms |\n"
      << "|---:|---|---|---:|---:|---:|\n";
  for (const auto& row : rows) {
    for (size_t k = 0; k < row.targets.size(); ++k) {
      const run_metrics& m = row.targets[k];
      out << "| " << row.concurrency << " | " << to_string(row.mode) << " | "
          << o.targets[k].label() << " | " << fixed(m.tokens_per_s, 1) << " | "
          << fixed(m.ttft_ms.p50, 0) << "/" << fixed(m.ttft_ms.p90, 0) << "/"
          << fixed(m.ttft_ms.p99, 0) << " | " << fixed(m.itl_ms.p50, 1) << "/"
          << fixed(m.itl_ms.p90, 1) << "/" << fixed(m.itl_ms.p99, 1) << " |\n";
    }
    if (row.targets.size() == 2) {
      const run_metrics &a = row.targets[0], &b = row.targets[1];
      auto ratio = [](double x, double y) { return y > 0 ? fixed(x / y, 2) : std::string("-"); };
      out << "| " << row.concurrency << " | " << to_string(row.mode) << " | ratio | "
          << ratio(a.tokens_per_s, b.tokens_per_s) << " | " << ratio(a.ttft_ms.p50, b.ttft_ms.p50)
          << " (p50) | " << ratio(a.itl_ms.p50, b.itl_ms.p50) << " (p50) |\n";
    }
  }
}

std::string side_by_side_json(const side_by_side_options& o,
                              const std::vector<side_by_side_row>& rows) {
  std::vector<net::json_writer> runs;
  for (const auto& row : rows)
    for (size_t k = 0; k < row.targets.size(); ++k) {
      const run_metrics& m = row.targets[k];
      net::json_writer w;
      w.field("concurrency", row.concurrency)
        .field("decoding", to_string(row.mode))
        .field("server", o.targets[k].label())
        .field("requests", m.num_requests)
        .field("ok", m.num_ok)
        .field("output_tokens_per_s", m.tokens_per_s)
        .field("ttft_p50_ms", m.ttft_ms.p50)
        .field("ttft_p90_ms", m.ttft_ms.p90)
        .field("ttft_p99_ms", m.ttft_ms.p99)
        .field("itl_p50_ms", m.itl_ms.p50)
        .field("itl_p90_ms", m.itl_ms.p90)
        .field("itl_p99_ms", m.itl_ms.p99);
      runs.push_back(std::move(w));
    }
  return net::json_writer()
    .field("prompt_len", o.prompt_len)
    .field("output_len", o.output_len)
    .field("reps", o.quick ? 1 : o.reps)
    .field("runs", runs)
    .str();
}

} // namespace kvactor::bench
