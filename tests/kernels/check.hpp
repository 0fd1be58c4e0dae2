#pragma once
// Tolerance check shared by the kernel tests: |actual - ref| <= atol + rtol |ref|
// elementwise; on failure the message lists the first mismatches.

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <sstream>
#include <string>
#include <vector>

namespace kvactor::kernels::testing {

struct tolerance {
  double atol;
  double rtol;
};

inline ::testing::AssertionResult all_close(const std::vector<float>& actual,
                                            const std::vector<double>& ref, tolerance tol,
                                            size_t max_report = 8) {
  if (actual.size() != ref.size())
    return ::testing::AssertionFailure()
           << "size " << actual.size() << " != reference size " << ref.size();
  size_t num_bad = 0;
  double worst = 0.0;
  std::ostringstream first;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double diff = std::abs(static_cast<double>(actual[i]) - ref[i]);
    const bool ok = diff <= tol.atol + tol.rtol * std::abs(ref[i]);  // false for NaN
    worst = std::isnan(diff) ? diff : std::max(worst, diff);
    if (ok) continue;
    if (num_bad++ < max_report)
      first << "\n  [" << i << "] got " << actual[i] << ", expected " << ref[i] << " (|diff| "
            << diff << ")";
  }
  if (num_bad == 0) return ::testing::AssertionSuccess() << "max |diff| " << worst;
  return ::testing::AssertionFailure()
         << num_bad << " of " << ref.size() << " elements outside atol " << tol.atol << " + rtol "
         << tol.rtol << " |ref|; max |diff| " << worst << "; first:" << first.str();
}

} // namespace kvactor::kernels::testing
