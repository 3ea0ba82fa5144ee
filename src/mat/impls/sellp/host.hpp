// SELL-P host SpMV: the reference for the CUDA kernel and the MatMult of the host type `sellp`.
// It visits entries in the kernel's order: thread (i, j) of a slice sums entries j, j+t, ...
// of row i, then the t partial sums are added, so rounding matches the device closely.
#pragma once

#include "core.hpp"

namespace gpumats {
namespace sellp {

template <class V>
void spmv(const Matrix<V> &M, const V *x, const Epilogue<V> &ep)
{
  const std::int64_t b = M.params.slice_height, t = M.params.threads_per_row;
  V                  part[32];
  for (std::int64_t s = 0; s < M.slices(); ++s) {
    const std::int64_t w = M.width(s);
    for (std::int64_t i = 0; i < b && s * b + i < M.nrows; ++i) {
      for (std::int64_t j = 0; j < t; ++j) {
        V sum = 0;
        for (std::int64_t k = j; k < w; k += t) {
          const std::int64_t  e = M.slice_ptr[s] + k * b + i;
          const std::int32_t  c = M.column(e);
          if (c != kPadColumn) sum += M.val[e] * x[c];
        }
        part[j] = sum;
      }
      for (std::int64_t half = t / 2; half > 0; half /= 2) // fan-in as on the device
        for (std::int64_t j = 0; j < half; ++j) part[j] += part[j + half];
      ep.apply(M.original_row(s * b + i), part[0]);
    }
  }
}

} // namespace sellp
} // namespace gpumats
