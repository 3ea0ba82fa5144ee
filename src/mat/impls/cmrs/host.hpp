// CMRS host SpMV: the reference the CUDA kernels are checked against, and the MatMult of the
// host type `cmrs`. It walks the format exactly as a warp does (strip by strip, decoding each
// packed word) so that a wrong conversion shows up here, not only on the GPU.
#pragma once

#include "core.hpp"

namespace gpumats {
namespace cmrs {

template <class V>
void spmv(const Matrix<V> &M, const V *x, const Epilogue<V> &ep)
{
  const std::int64_t h = M.params.height;
  for (std::int64_t s = 0; s < M.strips(); ++s) {
    V acc[kMaxHeight] = {};
    for (std::int32_t j = M.strip_ptr[s]; j < M.strip_ptr[s + 1]; ++j) {
      const std::uint32_t w = M.col_ind[j];
      if (w == kPadWord) continue;
      acc[row_in_strip_of(w)] += M.val[j] * x[column_of(w)];
    }
    for (std::int64_t r = 0; r < h && s * h + r < M.nrows; ++r) ep.apply(s * h + r, acc[r]);
  }
}

} // namespace cmrs
} // namespace gpumats
