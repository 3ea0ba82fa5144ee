// BELLPACK host SpMV: the reference for the CUDA kernels and the MatMult of the host type
// `bellpack`. One "thread" per sorted block row, r accumulators, blocks in slot order.
#pragma once

#include "core.hpp"

namespace gpumats {
namespace bellpack {

template <class V>
void spmv(const Matrix<V> &M, const V *x, const Epilogue<V> &ep)
{
  const std::int64_t r = M.params.r, c = M.params.c, R = M.params.partition_rows;
  for (std::int64_t pos = 0; pos < M.block_rows; ++pos) {
    const std::int64_t q = pos / R, i = pos % R, I = M.row_perm[pos];
    V                  acc[kMaxBlock] = {};
    for (std::int64_t k = 0; k < M.width(q); ++k) {
      const std::int32_t J = M.block_col[M.part_ptr[q] + k * R + i];
      if (J == kPadBlock) continue;
      for (std::int64_t b = 0; b < c; ++b) {
        const std::int64_t col = std::int64_t(J) * c + b;
        if (col >= M.ncols) break; // the last block column may stick out of the matrix
        for (std::int64_t a = 0; a < r; ++a) acc[a] += M.val[M.value_index(q, k, i, int(a * c + b))] * x[col];
      }
    }
    for (std::int64_t a = 0; a < r && I * r + a < M.nrows; ++a) ep.apply(I * r + a, acc[a]);
  }
}

} // namespace bellpack
} // namespace gpumats
