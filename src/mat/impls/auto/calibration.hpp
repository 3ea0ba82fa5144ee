// Which calibration of autocuda's model (model.hpp) the GPU at hand gets, and the model's
// prediction with it. PETSc-free (tests/core/test_calibration.cpp).
#pragma once

#include "model.hpp"

#include <algorithm>
#include <cstring>
#include <string>

namespace gpumats {
namespace autosel {

struct CalibrationChoice {
  const Calibration *cal;
  std::string        note; // empty where the GPU model has its own calibration; else which one is used instead, and why
};

// The calibration measured on this GPU model (the name CUDA gives it, exactly as the measurement
// recorded it). The efficiencies and step times differ between models (memory system, clocks,
// cache sizes), so another model's are used only where none exists, and the note says so.
inline CalibrationChoice calibration_for(const std::string &gpu)
{
  for (const Calibration &c : kCalibrations)
    if (gpu == c.gpu) return {&c, ""};
  const Calibration &fallback = kCalibrations[0];
  return {&fallback, "no calibration for " + (gpu.empty() ? std::string("this GPU") : gpu) + ", so " + fallback.gpu + "'s (make tune measures one)"};
}

inline const KernelModel &kernel_of(const Calibration &c, const char *format)
{
  for (const KernelModel &k : c.kernels)
    if (!std::strcmp(k.format, format)) return k;
  return c.kernels[0];
}

// the model: streaming time of the format's bytes, or the longest work item, whichever is longer
inline double predict_us(const Calibration &c, const char *format, double bytes, double steps, bool banded)
{
  const KernelModel &m   = kernel_of(c, format);
  const double       eff = banded ? m.banded : m.scattered;
  const double       bw  = eff * c.copy_gbs * 1e3; // bytes per microsecond
  return std::max(bytes / bw, m.us_per_step * steps);
}

// What a product costs the user where the matrix is rebuilt (a new pattern, or a full conversion)
// after `per_build` products: its predicted time plus the format's build, beyond CSR's, spread over
// them. per_build 0: not known to be rebuilt (the first build), the product's time alone.
inline double amortized_us(const Calibration &c, const char *format, double predicted_us, double nnz, double per_build)
{
  if (per_build <= 0) return predicted_us;
  return predicted_us + kernel_of(c, format).build_ns_per_nnz * nnz * 1e-3 / per_build;
}

} // namespace autosel
} // namespace gpumats
