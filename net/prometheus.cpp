#include "net/prometheus.hpp"

#include <charconv>

namespace kvactor::net {

namespace {

std::string number(double v) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : "NaN";
}

// A label value, escaped as the format asks (backslash, quote, newline).
std::string label_value(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '\\' || c == '"')
      out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

class exposition {
public:
  explicit exposition(std::string_view model)
    : labels_("model_name=\"" + label_value(model) + "\"") {}

  void gauge(std::string_view name, std::string_view help, double v) {
    scalar(name, help, "gauge", v);
  }
  void counter(std::string_view name, std::string_view help, double v) {
    scalar(std::string(name) + "_total", help, "counter", v);
  }
  void distribution(std::string_view name, std::string_view help, const histogram& h) {
    head(name, help, "histogram");
    int64_t cumulative = 0;
    for (size_t i = 0; i < h.counts.size(); ++i) {
      cumulative += h.counts[i];
      const std::string le = i < h.bounds.size() ? number(h.bounds[i]) : "+Inf";
      out_ += std::string(name) + "_bucket{" + labels_ + ",le=\"" + le + "\"} " +
              std::to_string(cumulative) + "\n";
    }
    out_ += std::string(name) + "_sum{" + labels_ + "} " + number(h.sum) + "\n";
    out_ += std::string(name) + "_count{" + labels_ + "} " + std::to_string(h.count) + "\n";
  }
  std::string take() { return std::move(out_); }

private:
  void head(std::string_view name, std::string_view help, std::string_view type) {
    out_ += "# HELP " + std::string(name) + " " + std::string(help) + "\n# TYPE " +
            std::string(name) + " " + std::string(type) + "\n";
  }
  void scalar(std::string_view name, std::string_view help, std::string_view type, double v) {
    head(name, help, type);
    out_ += std::string(name) + "{" + labels_ + "} " + number(v) + "\n";
  }

  std::string labels_;
  std::string out_;
};

} // namespace

std::string format_metrics(const runtime_figures& f, std::string_view model_name) {
  exposition e(model_name);
  e.gauge("kvactor:num_requests_running", "Requests in the running batch.", f.running);
  e.gauge("kvactor:num_requests_waiting", "Requests waiting to be scheduled.", f.waiting);
  e.gauge("kvactor:num_requests_swapped", "Requests swapped out to host memory.", f.swapped);
  const double usage = f.device_blocks_total > 0
                         ? static_cast<double>(f.device_blocks_used) / f.device_blocks_total
                         : 0.0;
  e.gauge("kvactor:kv_cache_usage_perc",
          "KV-cache usage: the fraction of device blocks held (1 = full).", usage);
  e.gauge("kvactor:kv_cache_blocks_free", "Device KV blocks neither held nor cached.",
          f.device_blocks_free);
  e.gauge("kvactor:kv_cache_blocks_cached", "Device KV blocks kept for prefix hits.",
          f.device_blocks_cached);
  e.gauge("kvactor:swap_blocks_free", "Host swap blocks free.", f.host_blocks_free);
  e.counter("kvactor:prefix_cache_queries", "Full prompt blocks looked up in the prefix cache.",
            static_cast<double>(f.prefix_queries));
  e.counter("kvactor:prefix_cache_hits", "Full prompt blocks found in the prefix cache.",
            static_cast<double>(f.prefix_hits));
  e.counter("kvactor:num_preemptions", "Preemptions (by swap or recompute).",
            static_cast<double>(f.preemptions));
  e.counter("kvactor:num_preemptions_by_swap",
            "Preemptions whose KV blocks were kept in the host pool (the rest recomputed).",
            static_cast<double>(f.preemptions_by_swap));
  e.counter("kvactor:swap_outs_refused",
            "Swap-outs the host pool had no room for; those sequences were recomputed.",
            static_cast<double>(f.swap_outs_refused));
  e.counter("kvactor:prompt_tokens", "Prompt tokens of admitted requests.",
            static_cast<double>(f.prompt_tokens));
  e.counter("kvactor:generation_tokens", "Generated tokens.",
            static_cast<double>(f.tokens_generated));
  e.counter("kvactor:request_success", "Requests that ended normally (eos, length, stop).",
            static_cast<double>(f.requests_finished));
  e.counter("kvactor:request_aborted", "Requests cancelled or ended by a shutdown.",
            static_cast<double>(f.requests_aborted));
  e.counter("kvactor:steps", "Steps run.", static_cast<double>(f.steps));
  e.distribution("kvactor:time_to_first_token_seconds", "Admission to first token.",
                 f.time_to_first_token);
  e.distribution("kvactor:inter_token_latency_seconds", "Time between a request's tokens.",
                 f.inter_token_latency);
  e.distribution("kvactor:e2e_request_latency_seconds",
                 "Admission to the end, of requests not aborted.", f.e2e_latency);
  e.distribution("kvactor:request_queue_time_seconds", "Admission to first scheduled.",
                 f.queue_time);
  e.distribution("kvactor:step_duration_seconds", "One step's wall time in the scheduler.",
                 f.step_time);
  return e.take();
}

} // namespace kvactor::net
