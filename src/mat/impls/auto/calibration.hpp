// Which calibration of autocuda's model (model.hpp) the GPU at hand gets, and the model's
// prediction with it. PETSc-free (tests/core/test_calibration.cpp).
#pragma once

#include "../common/core/gpu_table.hpp"
#include "model.hpp"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <string>

namespace gpumats {
namespace autosel {

using CalibrationChoice = GpuChoice<Calibration>;

// The calibration measured on this GPU model (the efficiencies and step times differ between
// models), else the default GPU model's, and the note says so, also where there is no GPU.
inline CalibrationChoice calibration_for(const std::string &gpu)
{
  return choose_for_gpu(kCalibrations, int(std::size(kCalibrations)), gpu, {"no calibration for", "make tune measures one", true});
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
