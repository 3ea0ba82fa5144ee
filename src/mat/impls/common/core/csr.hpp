// Format core shared by all formats: the CSR input view, the error type, the footprint record
// and the epilogue of y = alpha*A*x + beta*y. PETSc-free C++17.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

// Small helpers of the core that the CUDA kernels call too (packing and unpacking of indices, the
// epilogue): __host__ __device__ under nvcc, plain functions for every other compiler.
#if defined(__CUDACC__)
  #define GPUMATS_HD __host__ __device__
#else
  #define GPUMATS_HD
#endif

namespace gpumats {

// Thrown by conversions when a matrix cannot be represented (too wide for a packed index,
// too many entries for 32-bit offsets, a column out of range). The PETSc glue turns it into
// a PETSc error carrying the message, so the message must say what to do about it.
struct FormatError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Read-only view of a CSR matrix as PETSc's SeqAIJ holds it. RI/CI are the caller's index
// types (PetscInt may be 32 or 64 bits); every format stores 32-bit indices internally.
template <class V, class RI, class CI = RI>
struct CsrView {
  std::int64_t nrows = 0, ncols = 0;
  const RI    *row_ptr = nullptr; // nrows+1 entries, row_ptr[0] need not be 0
  const CI    *col_ind = nullptr;
  const V     *val     = nullptr;

  std::int64_t nnz() const { return nrows ? std::int64_t(row_ptr[nrows] - row_ptr[0]) : 0; }
  std::int64_t row_begin(std::int64_t i) const { return std::int64_t(row_ptr[i]); }
  std::int64_t row_end(std::int64_t i) const { return std::int64_t(row_ptr[i + 1]); }
};

// Owning CSR, with 32-bit indices unless told otherwise: what to_csr() returns, what the unit tests
// build, and what the transforms of transform.hpp produce (in the caller's index type).
template <class V, class I = std::int32_t>
struct Csr {
  std::int64_t   nrows = 0, ncols = 0;
  std::vector<I> row_ptr{0};
  std::vector<I> col_ind;
  std::vector<V> val;

  CsrView<V, I> view() const { return {nrows, ncols, row_ptr.data(), col_ind.data(), val.data()}; }
  std::int64_t  nnz() const { return std::int64_t(val.size()); }
};

// Bytes a format moves through SpMV and how much of it is padding or block fill (an aggregate:
// Footprint{rows, cols, nnz, stored, index_bytes, value_bytes}).
struct Footprint {
  std::int64_t rows = 0, cols = 0;
  std::int64_t nnz         = 0; // entries of the source CSR
  std::int64_t stored      = 0; // value slots the kernel streams, padding and fill included
  std::int64_t index_bytes = 0; // column indices, pointers, permutations read by SpMV
  std::int64_t value_bytes = 0;

  std::int64_t total_bytes() const { return index_bytes + value_bytes; }
  // stored / nnz: 1 means no padding at all
  double fill_ratio() const { return nnz ? double(stored) / double(nnz) : 1.0; }
  // adds another part of the same block (the long-row tail beside the format): entries and bytes
  // add up, the block's size stays
  Footprint &add_part(const Footprint &part)
  {
    nnz += part.nnz, stored += part.stored, index_bytes += part.index_bytes, value_bytes += part.value_bytes;
    return *this;
  }
};

// The footprint of a format matrix A (its sizes, entries and stored slots) with the format's own
// index and value bytes.
template <class Matrix>
Footprint footprint_of(const Matrix &A, std::int64_t index_bytes, std::int64_t value_bytes)
{
  return {A.nrows, A.ncols, A.nnz, A.stored(), index_bytes, value_bytes};
}

// Bytes the same matrix takes in plain CSR with 32-bit indices: the baseline every footprint is
// compared with in -mat_view output and benchmarks.
inline std::int64_t csr_bytes(std::int64_t rows, std::int64_t nnz, std::int64_t value_size)
{
  return nnz * (value_size + 4) + 4 * (rows + 1);
}

// The one epilogue of every SpMV, the host references' and the CUDA kernels' alike (on the GPU, in
// and out are device arrays): out[i] = alpha*(A x)[i] + beta*in[i]. beta == 0 never reads in[] (it
// may hold garbage or NaN, as y does before y = A x); in may alias out.
template <class V>
struct Epilogue {
  V        alpha = 1, beta = 0;
  const V *in    = nullptr;
  V       *out   = nullptr;

  GPUMATS_HD void apply(std::int64_t i, V acc) const
  {
    V r = alpha * acc;
    if (beta != V(0)) r += beta * in[i];
    out[i] = r;
  }
};

// Longest row of a CSR.
template <class V, class RI, class CI>
std::int64_t longest_row(const CsrView<V, RI, CI> &A)
{
  std::int64_t m = 0;
  for (std::int64_t i = 0; i < A.nrows; ++i) m = std::max<std::int64_t>(m, A.row_end(i) - A.row_begin(i));
  return m;
}

// Whether the columns of nearby rows stay near each other, judged on every `stride`-th group of b
// consecutive rows: the columns of entry k of the b rows must lie within `span` of each other, for
// every k. Sampled, so O(nnz / stride). SELL-P asks it of its slices (16-bit column deltas fit);
// with b = 32 and span 0xFFFE it is "banded columns" for the formats' and autocuda's choices:
// neighbouring rows then read neighbouring parts of x, which a scattered (randomly numbered)
// matrix does not.
template <class V, class RI, class CI>
bool columns_within_span_sampled(const CsrView<V, RI, CI> &A, std::int64_t b, std::int64_t stride, std::int64_t span)
{
  for (std::int64_t s0 = 0; s0 < A.nrows; s0 += b * stride) {
    for (std::int64_t k = 0;; ++k) {
      std::int64_t lo = std::numeric_limits<std::int64_t>::max(), hi = -1;
      for (std::int64_t i = s0; i < std::min(A.nrows, s0 + b); ++i)
        if (A.row_begin(i) + k < A.row_end(i)) {
          const std::int64_t c = A.col_ind[A.row_begin(i) + k];
          lo = std::min(lo, c), hi = std::max(hi, c);
        }
      if (hi < 0) break;
      if (hi - lo > span) return false;
    }
  }
  return true;
}
constexpr std::int64_t kBandRows = 32, kBandStride = 64, kBandSpan = 0xFFFE;
template <class V, class RI, class CI>
bool columns_banded(const CsrView<V, RI, CI> &A)
{
  return columns_within_span_sampled(A, kBandRows, kBandStride, kBandSpan);
}

// Statistics of the groups of g consecutive rows of a CSR (the last group may be shorter): SELL-P's
// slices and CMRS's strips are such groups, so their stored sizes and the parameter models come
// from these, in one pass over the row pointers. The GPU computes the same from an uploaded copy
// (cuda::DeviceCsr::group_stats), which the device builds ask instead of the host.
struct GroupStats {
  std::int64_t padded_width   = 0; // sum over groups of g x (the group's longest row rounded up to width_multiple)
  std::int64_t padded_entries = 0; // sum over groups of the group's entries rounded up to entry_multiple
  std::int64_t longest_group  = 0; // entries of the fullest group
  std::int64_t longest_row    = 0; // entries of the longest row

  bool operator==(const GroupStats &o) const
  {
    return padded_width == o.padded_width && padded_entries == o.padded_entries && longest_group == o.longest_group && longest_row == o.longest_row;
  }
};

template <class V, class RI, class CI>
GroupStats group_stats(const CsrView<V, RI, CI> &A, std::int64_t g, std::int64_t width_multiple = 1, std::int64_t entry_multiple = 1)
{
  GroupStats s;
  for (std::int64_t r0 = 0; r0 < A.nrows; r0 += g) {
    const std::int64_t r1 = std::min(A.nrows, r0 + g), entries = A.row_begin(r1) - A.row_begin(r0);
    std::int64_t       longest = 0;
    for (std::int64_t i = r0; i < r1; ++i) longest = std::max<std::int64_t>(longest, A.row_end(i) - A.row_begin(i));
    s.padded_width += (longest + width_multiple - 1) / width_multiple * width_multiple * g;
    s.padded_entries += (entries + entry_multiple - 1) / entry_multiple * entry_multiple;
    s.longest_group = std::max(s.longest_group, entries);
    s.longest_row   = std::max(s.longest_row, longest);
  }
  return s;
}

// A format matrix of A's dimensions and entry count with parameters p, as every conversion from
// a CSR starts.
template <class Matrix, class V, class RI, class CI, class P>
Matrix shaped_like(const CsrView<V, RI, CI> &A, const P &p)
{
  Matrix M;
  M.params = p;
  M.nrows  = A.nrows;
  M.ncols  = A.ncols;
  M.nnz    = A.nnz();
  return M;
}

// The CSR that a format's to_csr fills: its dimensions, row pointers zeroed to count into.
template <class V>
Csr<V> csr_to_fill(std::int64_t nrows, std::int64_t ncols)
{
  Csr<V> C;
  C.nrows = nrows;
  C.ncols = ncols;
  C.row_ptr.assign(nrows + 1, 0);
  return C;
}

// Checks shared by every conversion: sizes that fit 32-bit offsets, columns in range.
template <class V, class RI, class CI>
void validate_csr(const CsrView<V, RI, CI> &A, const char *format)
{
  constexpr std::int64_t i32max = std::numeric_limits<std::int32_t>::max();
  if (A.nrows < 0 || A.ncols < 0) throw FormatError(std::string(format) + ": negative matrix dimensions");
  if (A.nrows > i32max || A.ncols > i32max)
    throw FormatError(std::string(format) + ": a local block of " + std::to_string(A.nrows) + " x " + std::to_string(A.ncols) +
                      " does not fit 32-bit indices; use more MPI ranks so each rank's block is smaller, or an AIJ type");
  for (std::int64_t i = 0; i < A.nrows; ++i) {
    if (A.row_ptr[i + 1] < A.row_ptr[i]) throw FormatError(std::string(format) + ": CSR row pointers are not monotone");
    for (std::int64_t j = A.row_begin(i); j < A.row_end(i); ++j)
      if (A.col_ind[j] < 0 || std::int64_t(A.col_ind[j]) >= A.ncols)
        throw FormatError(std::string(format) + ": column index " + std::to_string(std::int64_t(A.col_ind[j])) + " out of range in row " +
                          std::to_string(i));
  }
}

// Offsets of padded storage must stay below 2^31 because kernels index with 32-bit integers.
inline std::int32_t checked_offset(std::int64_t v, const char *format)
{
  if (v > std::numeric_limits<std::int32_t>::max())
    throw FormatError(std::string(format) + ": " + std::to_string(v) +
                      " stored entries exceed 32-bit offsets; use more MPI ranks so each rank's block is smaller");
  return std::int32_t(v);
}

} // namespace gpumats
