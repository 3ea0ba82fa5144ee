// SELL-P host SpMV and its transpose: the references for the CUDA kernels and the MatMult and
// MatMultTranspose of the host type `sellp`. spmv visits entries in the kernel's order: thread
// (i, j) of a slice sums entries j, j+t, ... of row i, then the t partial sums are added, so
// rounding matches the device closely.
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
          if (c != kPadColumn) sum += M.value(e) * x[c];
        }
        part[j] = sum;
      }
      for (std::int64_t half = t / 2; half > 0; half /= 2) // fan-in as on the device
        for (std::int64_t j = 0; j < half; ++j) part[j] += part[j + half];
      ep.apply(M.original_row(s * b + i), part[0]);
    }
  }
}

// out = alpha*A^T x + beta*in (out and in of ncols entries, x of nrows) from the stored slices, with
// no transposed copy: every stored entry of the row at position pos adds v*x[original row] to its
// column. Padding entries (kPadColumn) write nothing; the padded rows of the last slice hold
// nothing else and are never read from x. Sums gathered per column, then the epilogue, as in spmv;
// the device kernel scatters the same products with atomics.
template <class V>
void spmv_transpose(const Matrix<V> &M, const V *x, const Epilogue<V> &ep)
{
  const std::int64_t b = M.params.slice_height;
  std::vector<V>     acc(std::size_t(M.ncols), V(0));
  for (std::int64_t s = 0; s < M.slices(); ++s)
    for (std::int64_t i = 0; i < b && s * b + i < M.nrows; ++i) {
      const V xr = x[M.original_row(s * b + i)];
      for (std::int64_t k = 0; k < M.width(s); ++k) {
        const std::int64_t e = M.slice_ptr[s] + k * b + i;
        const std::int32_t c = M.column(e);
        if (c != kPadColumn) acc[std::size_t(c)] += M.value(e) * xr;
      }
    }
  for (std::int64_t c = 0; c < M.ncols; ++c) ep.apply(c, acc[std::size_t(c)]);
}

} // namespace sellp
} // namespace gpumats
