// kvactor-bench-quant: the integer block products alone, on one core, every
// kernel this CPU runs side by side (quant_kernels.hpp): for each format and
// number of rows m, the median time of y = x W^T over a W of n x k random
// weights, the rate it streams W's bytes and its multiply-adds, its speed
// against the first kernel listed, and whether it gave the first one's
// bits. Which kernel linear() runs for m rows is quant_product_isa(m); this
// is how to measure where AMX-INT8 starts to pay.
//
//   kvactor-bench-quant [--rows=1,16,64,512] [--k=2048] [--n=32768] [--reps=5]
//                       [--formats=q8_0,q4_0,q4_1,q5_0,q5_1,q2_k,q3_k,q4_k,q5_k,q6_k,iq4_nl,
//                                  iq4_xs] [--generic]
// (--generic: the portable kernel too; it is the reference, not a contender,
// and slow at many rows.)

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "model/quant/quant_format.hpp"
#include "model/quant/quant_kernels.hpp"
#include "model/quant/quantized_matrix.hpp"

using namespace kvactor;
using model::quant_format;
using model::layers::quant_isa;

namespace {

struct options {
  std::vector<int64_t> rows = {1, 16, 64, 512};
  int64_t k = 2048, n = 32768;
  int reps = 5;
  std::vector<quant_format> formats{model::all_quant_formats().begin(),
                                    model::all_quant_formats().end()};
  bool generic = false;
};

std::vector<std::string_view> split_commas(std::string_view s) {
  std::vector<std::string_view> out;
  while (!s.empty()) {
    const std::size_t comma = s.find(',');
    out.push_back(s.substr(0, comma));
    s = comma == std::string_view::npos ? std::string_view{} : s.substr(comma + 1);
  }
  return out;
}

bool parse(int argc, char** argv, options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    const auto value = [&](std::string_view key) -> const char* {
      return a.substr(0, key.size()) == key ? argv[i] + key.size() : nullptr;
    };
    bool ok = true;
    if (const char* v = value("--rows=")) {
      o.rows.clear();
      for (std::string_view r : split_commas(v)) {
        o.rows.push_back(std::atoll(std::string(r).c_str()));
        ok = ok && o.rows.back() > 0;
      }
    } else if (const char* v2 = value("--k=")) {
      o.k = std::atoll(v2);
    } else if (const char* v3 = value("--n=")) {
      o.n = std::atoll(v3);
    } else if (const char* v4 = value("--reps=")) {
      o.reps = std::atoi(v4);
    } else if (const char* v5 = value("--formats=")) {
      o.formats.clear();
      for (std::string_view f : split_commas(v5)) {
        const std::optional<quant_format> format = model::parse_quant_format(f);
        ok = ok && format;
        if (format) o.formats.push_back(*format);
      }
    } else if (a == "--generic") {
      o.generic = true;
    } else {
      ok = false;
    }
    if (!ok) {
      std::fprintf(stderr,
                   "kvactor-bench-quant: bad option %s\nusage: kvactor-bench-quant "
                   "[--rows=1,16,64,512] [--k=2048] [--n=32768] [--reps=5] "
                   "[--formats=q8_0,q4_0,q4_1,q5_0,q5_1,q2_k,q3_k,q4_k,q5_k,q6_k,iq4_nl,iq4_xs] "
                   "[--generic]\n",
                   argv[i]);
      return false;
    }
  }
  if (o.k % 256 != 0 || o.n <= 0 || o.reps <= 0) {
    std::fprintf(stderr, "kvactor-bench-quant: --k must be a multiple of 256, --n and --reps "
                         "positive\n");
    return false;
  }
  return true;
}

model::quantized_matrix random_matrix(quant_format f, int64_t n, int64_t k, std::mt19937& rng) {
  const std::size_t row_bytes = model::quant_row_bytes(f, k);
  std::vector<std::byte> blocks(static_cast<std::size_t>(n) * row_bytes);
  std::normal_distribution<float> dist(0.0f, 0.05f);
  std::vector<float> row(static_cast<std::size_t>(k));
  for (int64_t r = 0; r < n; ++r) {
    for (float& v : row) v = dist(rng);
    model::quantize_row(f, row.data(), k, blocks.data() + static_cast<std::size_t>(r) * row_bytes);
  }
  const model::weight_view view{blocks.data(), model::dtype::f32, 2, {n, k}, f};
  return model::quantized_matrix::pack(std::vector{view}, f);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

} // namespace

int main(int argc, char** argv) {
  options o;
  if (!parse(argc, argv, o)) return 2;
  std::vector<quant_isa> isas;
  for (quant_isa isa : model::layers::quant_product_isas())
    if (isa != quant_isa::generic || o.generic) isas.push_back(isa);
  std::printf("W %lld x %lld, one core, medians of %d; kernels:", (long long)o.n, (long long)o.k,
              o.reps);
  for (quant_isa isa : isas) std::printf(" %s", model::layers::isa_name(isa));
  std::printf("\n%-6s %5s %-12s %10s %9s %9s %8s %6s\n", "format", "m", "kernel", "ms", "W GB/s",
              "GMAC/s", "speed", "bits");
  std::mt19937 rng(2026);
  for (quant_format f : o.formats) {
    const model::quantized_matrix w = random_matrix(f, o.n, o.k, rng);
    for (int64_t m : o.rows) {
      std::normal_distribution<float> dist(0.0f, 1.0f);
      std::vector<float> x(static_cast<std::size_t>(m * o.k));
      for (float& v : x) v = dist(rng);
      model::layers::quantized_rows xq;
      model::layers::quantize_rows(x.data(), o.k, m, o.k, xq, model::quant_block_values(f));
      std::vector<float> first, y(static_cast<std::size_t>(m * o.n));
      double first_ms = 0;
      for (quant_isa isa : isas) {
        const auto run = [&] {
          model::layers::quant_product(isa, xq, m, w, 0, w.num_groups(), y.data(), o.n, false);
        };
        run(); // warm-up
        std::vector<double> ms;
        for (int r = 0; r < o.reps; ++r) {
          const auto t0 = std::chrono::steady_clock::now();
          run();
          ms.push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
              .count());
        }
        const double t = median(ms);
        if (first.empty()) {
          first = y;
          first_ms = t;
        }
        std::printf("%-6s %5lld %-12s %10.3f %9.1f %9.1f %7.2fx %6s\n",
                    std::string(model::quant_name(f)).c_str(), (long long)m,
                    model::layers::isa_name(isa), t, double(w.num_bytes()) / (t * 1e6),
                    double(m) * double(o.n) * double(o.k) / (t * 1e6), first_ms / t,
                    y == first ? "same" : "DIFFER");
      }
    }
  }
  return 0;
}
