// BELLPACK (blocked ELLPACK, Choi, Singh and Vuduc): data structure and conversion to and from
// CSR. PETSc-free C++17.
//
// The matrix is cut into dense r x c blocks (zeros filled in) with one column index per block.
// Block rows are sorted by their number of blocks, longest first (row_perm[p] is the original block
// row at sorted position p), and groups of R consecutive sorted block rows form a partition stored
// ELLPACK-style: block k of row i of partition q has slot part_ptr[q] + k*R + i, and element e
// (= a*c + b, row-major inside the block) of that slot lives at
//   val[part_ptr[q]*r*c + (k*r*c + e)*R + i],
// so that the R threads of a partition (one per block row) read consecutive words at every step.
#pragma once

#include "../common/core/csr.hpp"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

namespace gpumats {
namespace bellpack {

constexpr std::int32_t kPadBlock = -1; // ELLPACK padding slot: no block, contributes nothing
constexpr int          kMaxBlock = 8;

struct Params {
  int r = 1, c = 1;       // block size, 1..8 each
  int partition_rows = 128; // R: block rows per partition (one CUDA block of R threads)
};

inline void check_params(const Params &p)
{
  if (p.r < 1 || p.r > kMaxBlock || p.c < 1 || p.c > kMaxBlock)
    throw FormatError("BELLPACK: block size " + std::to_string(p.r) + "x" + std::to_string(p.c) + " is out of range; r and c must be 1..8");
  if (p.partition_rows < 1 || p.partition_rows > 1024 || (p.partition_rows & (p.partition_rows - 1)))
    throw FormatError("BELLPACK: partition of " + std::to_string(p.partition_rows) + " block rows must be a power of two in 1..1024");
}

template <class V>
struct Matrix {
  Params                     params;
  std::int64_t               nrows = 0, ncols = 0, nnz = 0;
  std::int64_t               block_rows = 0, block_cols = 0, blocks = 0; // blocks: real (non-padding) blocks
  std::vector<std::int32_t>  row_perm;     // sorted position -> original block row
  std::vector<std::int32_t>  part_ptr{0};  // partitions()+1 slot offsets
  std::vector<std::int32_t>  block_col;    // block column index of each slot, or kPadBlock
  std::vector<V>             val;          // r*c values per slot, in the coalesced partition layout
  std::vector<std::uint64_t> present;      // per slot: bit e set if element e came from the CSR (host only; to_csr)

  int          rc() const { return params.r * params.c; }
  std::int64_t partitions() const { return std::int64_t(part_ptr.size()) - 1; }
  std::int64_t width(std::int64_t q) const { return (part_ptr[q + 1] - part_ptr[q]) / params.partition_rows; }
  std::int64_t slots() const { return std::int64_t(block_col.size()); }
  std::int64_t stored() const { return slots() * rc(); }
  std::int64_t value_index(std::int64_t q, std::int64_t k, std::int64_t i, int e) const
  {
    const std::int64_t R = params.partition_rows;
    return std::int64_t(part_ptr[q]) * rc() + (k * rc() + e) * R + i;
  }
};

template <class V>
Footprint footprint(const Matrix<V> &A)
{
  Footprint f;
  f.rows        = A.nrows;
  f.cols        = A.ncols;
  f.nnz         = A.nnz;
  f.stored      = A.stored();
  f.index_bytes = 4 * (A.slots() + std::int64_t(A.row_perm.size()) + A.partitions() + 1);
  f.value_bytes = std::int64_t(sizeof(V)) * A.stored();
  return f;
}

// Fill ratio of r x c blocking (dense block entries / nonzeros), before any ELLPACK padding.
// Exact when sample_stride is 1; with a stride it looks at every sample_stride-th block row only,
// the sampling estimate of the paper's fill estimation. Columns are probed with a marker array.
template <class V, class RI, class CI>
double block_fill(const CsrView<V, RI, CI> &A, int r, int c, std::int64_t sample_stride = 1)
{
  const std::int64_t        nbr = (A.nrows + r - 1) / r, nbc = (A.ncols + c - 1) / c;
  std::vector<std::int64_t> mark(std::size_t(nbc), -1);
  std::int64_t              blocks = 0, entries = 0;
  for (std::int64_t I = 0; I < nbr; I += sample_stride) {
    for (std::int64_t i = I * r; i < std::min(A.nrows, (I + 1) * r); ++i) {
      entries += A.row_end(i) - A.row_begin(i);
      for (std::int64_t j = A.row_begin(i); j < A.row_end(i); ++j) {
        const std::int64_t J = std::int64_t(A.col_ind[j]) / c;
        if (mark[J] != I) mark[J] = I, ++blocks;
      }
    }
  }
  return entries ? double(blocks) * r * c / double(entries) : 1.0;
}

template <class V, class RI, class CI>
Matrix<V> from_csr(const CsrView<V, RI, CI> &A, const Params &p)
{
  check_params(p);
  validate_csr(A, "BELLPACK");
  Matrix<V> M;
  M.params               = p;
  M.nrows                = A.nrows;
  M.ncols                = A.ncols;
  M.nnz                  = A.nnz();
  const std::int64_t r = p.r, c = p.c, R = p.partition_rows, rc = r * c;
  M.block_rows           = (A.nrows + r - 1) / r;
  M.block_cols           = (A.ncols + c - 1) / c;

  // block columns of every block row, ascending
  std::vector<std::int64_t>              mark(std::size_t(M.block_cols), -1);
  std::vector<std::vector<std::int32_t>> cols(std::size_t(M.block_rows));
  for (std::int64_t I = 0; I < M.block_rows; ++I) {
    for (std::int64_t i = I * r; i < std::min(A.nrows, (I + 1) * r); ++i)
      for (std::int64_t j = A.row_begin(i); j < A.row_end(i); ++j) {
        const std::int64_t J = std::int64_t(A.col_ind[j]) / c;
        if (mark[J] != I) mark[J] = I, cols[I].push_back(std::int32_t(J));
      }
    std::sort(cols[I].begin(), cols[I].end());
    M.blocks += std::int64_t(cols[I].size());
  }

  M.row_perm.resize(std::size_t(M.block_rows));
  std::iota(M.row_perm.begin(), M.row_perm.end(), 0);
  // stable: block rows of equal length (all of them, for a regular stencil) keep their natural order
  std::stable_sort(M.row_perm.begin(), M.row_perm.end(), [&](std::int32_t a, std::int32_t b) { return cols[a].size() > cols[b].size(); });

  const std::int64_t np = (M.block_rows + R - 1) / R;
  M.part_ptr.assign(np + 1, 0);
  for (std::int64_t q = 0; q < np; ++q) {
    const std::int64_t w = cols[M.row_perm[q * R]].size(); // the first row of a partition is its longest
    M.part_ptr[q + 1]    = checked_offset(M.part_ptr[q] + w * R, "BELLPACK");
  }
  checked_offset(std::int64_t(M.part_ptr[np]) * rc, "BELLPACK");
  M.block_col.assign(M.part_ptr[np], kPadBlock);
  M.present.assign(M.part_ptr[np], 0);
  M.val.assign(std::size_t(M.part_ptr[np]) * rc, V(0));

  std::vector<std::int32_t> slot_of(std::size_t(M.block_cols)); // block column -> k within the current block row
  for (std::int64_t pos = 0; pos < M.block_rows; ++pos) {
    const std::int64_t q = pos / R, i = pos % R, I = M.row_perm[pos];
    for (std::size_t k = 0; k < cols[I].size(); ++k) {
      slot_of[cols[I][k]]                    = std::int32_t(k);
      M.block_col[M.part_ptr[q] + k * R + i] = cols[I][k];
    }
    for (std::int64_t a = 0; a < r && I * r + a < A.nrows; ++a) {
      const std::int64_t row = I * r + a;
      for (std::int64_t j = A.row_begin(row); j < A.row_end(row); ++j) {
        const std::int64_t col = A.col_ind[j], k = slot_of[col / c];
        const int          e   = int(a * c + col % c);
        M.val[M.value_index(q, k, i, e)] = A.val[j];
        M.present[M.part_ptr[q] + k * R + i] |= std::uint64_t(1) << e;
      }
    }
  }
  return M;
}

template <class V>
Csr<V> to_csr(const Matrix<V> &M)
{
  Csr<V> C;
  C.nrows = M.nrows;
  C.ncols = M.ncols;
  C.row_ptr.assign(M.nrows + 1, 0);
  const std::int64_t r = M.params.r, c = M.params.c, R = M.params.partition_rows;
  // row lengths first, then a second identical walk fills; blocks of a row are in ascending
  // block-column order and elements inside a block row in ascending column order, so each CSR
  // row comes out sorted
  for (int pass = 0; pass < 2; ++pass) {
    std::vector<std::int32_t> next;
    if (pass == 1) {
      for (std::int64_t i = 0; i < M.nrows; ++i) C.row_ptr[i + 1] += C.row_ptr[i];
      next.assign(C.row_ptr.begin(), C.row_ptr.end() - 1);
      C.col_ind.resize(std::size_t(M.nnz));
      C.val.resize(std::size_t(M.nnz));
    }
    for (std::int64_t pos = 0; pos < M.block_rows; ++pos) {
      const std::int64_t q = pos / R, i = pos % R, I = M.row_perm[pos];
      for (std::int64_t a = 0; a < r && I * r + a < M.nrows; ++a)
        for (std::int64_t k = 0; k < M.width(q); ++k) {
          const std::int64_t slot = M.part_ptr[q] + k * R + i;
          if (M.block_col[slot] == kPadBlock) break;
          for (std::int64_t b = 0; b < c; ++b) {
            const int e = int(a * c + b);
            if (!(M.present[slot] >> e & 1)) continue;
            if (pass == 0) {
              C.row_ptr[I * r + a + 1]++;
            } else {
              const std::int32_t dst = next[I * r + a]++;
              C.col_ind[dst]         = std::int32_t(M.block_col[slot] * c + b);
              C.val[dst]             = M.val[M.value_index(q, k, i, e)];
            }
          }
        }
    }
  }
  return C;
}

} // namespace bellpack
} // namespace gpumats
