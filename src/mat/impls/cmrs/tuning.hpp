// Which kernel and strip height CMRS's rule takes for a block of even rows on the GPU at hand: the
// calibration make tune measured on that GPU model (tuned.hpp), else none. PETSc-free
// (tests/core/test_calibration.cpp).
#pragma once

#include "../common/core/gpu_table.hpp"
#include "tuned.hpp"

#include <cmath>
#include <string>

namespace gpumats {
namespace cmrs {

// The sweep of this GPU model, or null: another model's fastest kernels are no guide, so there is
// no fallback (the built-in rule stands).
inline const TunedGpu *tuned_gpu(const std::string &gpu) { return measured_on(kTuned, kTunedCount, gpu); }

// The choice of the measured family whose mean row length is nearest mu in ratio (row lengths
// set how many strips a warp's entries span, which is what the kernels differ in), or null.
inline const TunedKernel *tuned_kernel(const TunedGpu &g, double mu)
{
  const TunedKernel *best = nullptr;
  double             gap  = 0;
  for (int i = 0; i < g.count; ++i) {
    if (!(mu > 0) || !(g.even[i].mu > 0)) continue;
    const double d = std::fabs(std::log(mu / g.even[i].mu));
    if (!best || d < gap) best = &g.even[i], gap = d;
  }
  return best;
}

} // namespace cmrs
} // namespace gpumats
