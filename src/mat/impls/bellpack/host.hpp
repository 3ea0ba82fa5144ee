// BELLPACK host SpMV and its transpose: the references for the CUDA kernels and the MatMult and
// MatMultTranspose of the host type `bellpack`. One "thread" per sorted block row, r accumulators
// (spmv) or r entries of x (spmv_transpose), blocks in slot order.
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
        for (std::int64_t a = 0; a < r; ++a) acc[a] += M.value(M.value_index(q, k, i, int(a * c + b))) * x[col];
      }
    }
    for (std::int64_t a = 0; a < r && I * r + a < M.nrows; ++a) ep.apply(I * r + a, acc[a]);
  }
}

// out = alpha*A^T x + beta*in (out and in of ncols entries, x of nrows) from the stored blocks, with
// no transposed copy: block row I reads its r entries of x once (rows past the matrix, in the last
// block row, are never read: their block entries are fill), and each of the c columns of a block
// receives the sum of its r products, as the device kernel adds it with one atomic. Padding slots
// and block columns sticking out of the matrix write nothing. Sums gathered per column, then the
// epilogue, as in spmv.
template <class V>
void spmv_transpose(const Matrix<V> &M, const V *x, const Epilogue<V> &ep)
{
  const std::int64_t r = M.params.r, c = M.params.c, R = M.params.partition_rows;
  std::vector<V>     acc(std::size_t(M.ncols), V(0));
  for (std::int64_t pos = 0; pos < M.block_rows; ++pos) {
    const std::int64_t q = pos / R, i = pos % R, I = M.row_perm[pos];
    V                  xr[kMaxBlock] = {};
    for (std::int64_t a = 0; a < r && I * r + a < M.nrows; ++a) xr[a] = x[I * r + a];
    for (std::int64_t k = 0; k < M.width(q); ++k) {
      const std::int32_t J = M.block_col[M.part_ptr[q] + k * R + i];
      if (J == kPadBlock) break; // padding slots follow the real blocks of a row
      for (std::int64_t b = 0; b < c; ++b) {
        const std::int64_t col = std::int64_t(J) * c + b;
        if (col >= M.ncols) break; // the last block column may stick out of the matrix
        V sum = 0;
        for (std::int64_t a = 0; a < r; ++a) sum += M.value(M.value_index(q, k, i, int(a * c + b))) * xr[a];
        acc[std::size_t(col)] += sum;
      }
    }
  }
  for (std::int64_t col = 0; col < M.ncols; ++col) ep.apply(col, acc[std::size_t(col)]);
}

} // namespace bellpack
} // namespace gpumats
