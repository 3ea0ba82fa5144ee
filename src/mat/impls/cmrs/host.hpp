// CMRS host SpMV and its transpose: the references the CUDA kernels are checked against, and the
// MatMult and MatMultTranspose of the host type `cmrs`. They walk the format exactly as a warp does
// (strip by strip, decoding each packed word) so that a wrong conversion shows up here, not only on
// the GPU.
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

// out = alpha*A^T x + beta*in (out and in of ncols entries, x of nrows) from the stored strips, with
// no transposed copy: every stored entry (row s*h + row_in_strip, column c, value v) adds v*x[row]
// to column c. The sums are gathered per column and then go through the epilogue, so alpha and beta
// act as in spmv. The device kernel scatters the same products with atomics.
template <class V>
void spmv_transpose(const Matrix<V> &M, const V *x, const Epilogue<V> &ep)
{
  const std::int64_t h = M.params.height;
  std::vector<V>     acc(std::size_t(M.ncols), V(0));
  for (std::int64_t s = 0; s < M.strips(); ++s)
    for (std::int32_t j = M.strip_ptr[s]; j < M.strip_ptr[s + 1]; ++j) {
      const std::uint32_t w = M.col_ind[j];
      if (w == kPadWord) continue; // padding: no column to write, and its row may lie past the matrix
      acc[column_of(w)] += M.val[j] * x[s * h + row_in_strip_of(w)];
    }
  for (std::int64_t c = 0; c < M.ncols; ++c) ep.apply(c, acc[std::size_t(c)]);
}

} // namespace cmrs
} // namespace gpumats
