// Format-independent transforms of a CSR block, applied before a format sees it (PETSc-free C++17,
// templated on value and index types like csr.hpp):
//   - the renumbering of a square block into a given order (the RCM order of -mat_gpumats_reorder,
//     which the PETSc glue obtains from PETSc's MatGetOrdering);
//   - the long-row split of -mat_gpumats_long_rows: every row keeps its first K entries in the
//     format (the head) and the rest of the longer rows goes to a tail, a CSR of those rows only
//     that the GPU multiplies one warp per row, so a few very long rows do not serialise a thread or
//     a warp of the format;
//   - the row compression of off-diagonal blocks: the CSR of the rows that have entries and where
//     they sit, so that a product touches those rows only.
#pragma once

#include "csr.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace gpumats {

// inverse[order[i]] = i. Refuses anything but a permutation of 0..n-1.
inline std::vector<std::int32_t> inverse_permutation(const std::vector<std::int32_t> &order)
{
  const std::int64_t        n = std::int64_t(order.size());
  std::vector<std::int32_t> inverse(order.size(), -1);
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int32_t r = order[std::size_t(i)];
    if (r < 0 || r >= n || inverse[std::size_t(r)] >= 0)
      throw FormatError("reordering: the order is not a permutation of the " + std::to_string(n) + " rows (entry " + std::to_string(i) + " is " +
                        std::to_string(r) + ")");
    inverse[std::size_t(r)] = std::int32_t(i);
  }
  return inverse;
}

// B = A renumbered by `order` (new position -> original index, the same for rows and columns, so A
// is square): row i of B is row order[i] of A, column c of A becomes column inverse[c] of B, and
// every row of B is sorted by column again (stable, so repeated columns keep their order).
// I is the index type of B (the caller's, e.g. PetscInt); B.row_ptr starts at 0.
template <class I = std::int32_t, class V, class RI, class CI>
Csr<V, I> permute(const CsrView<V, RI, CI> &A, const std::vector<std::int32_t> &order)
{
  const std::int64_t m = A.nrows;
  if (A.ncols != m) throw FormatError("reordering: the block is " + std::to_string(m) + " x " + std::to_string(A.ncols) + ", not square");
  if (std::int64_t(order.size()) != m)
    throw FormatError("reordering: an order of " + std::to_string(order.size()) + " entries for " + std::to_string(m) + " rows");
  if (A.nnz() > std::int64_t(std::numeric_limits<I>::max())) throw FormatError("reordering: too many entries for the index type");
  const std::vector<std::int32_t> inverse = inverse_permutation(order);

  Csr<V, I> B;
  B.nrows = B.ncols = m;
  B.row_ptr.assign(std::size_t(m + 1), I(0));
  for (std::int64_t i = 0; i < m; ++i) B.row_ptr[i + 1] = I(B.row_ptr[i] + (A.row_end(order[i]) - A.row_begin(order[i])));
  B.col_ind.resize(std::size_t(B.row_ptr[m]));
  B.val.resize(std::size_t(B.row_ptr[m]));
  std::vector<std::pair<I, V>> row;
  for (std::int64_t i = 0; i < m; ++i) {
    row.clear();
    for (std::int64_t k = A.row_begin(order[i]); k < A.row_end(order[i]); ++k) row.emplace_back(I(inverse[std::size_t(A.col_ind[k])]), A.val[k]);
    std::stable_sort(row.begin(), row.end(), [](const std::pair<I, V> &a, const std::pair<I, V> &b) { return a.first < b.first; });
    for (std::size_t k = 0; k < row.size(); ++k) B.col_ind[std::size_t(B.row_ptr[i]) + k] = row[k].first, B.val[std::size_t(B.row_ptr[i]) + k] = row[k].second;
  }
  return B;
}

// B = A^T as a CSR (counting sort by column: O(nnz + ncols), rows of B sorted by column because
// A's rows are visited in order). The copy a format keeps for products with the transpose
// (MatMultTranspose): the formats read their rows, so A^T x is a row-wise product of B.
template <class I = std::int32_t, class V, class RI, class CI>
Csr<V, I> transpose(const CsrView<V, RI, CI> &A)
{
  if (A.nnz() > std::int64_t(std::numeric_limits<I>::max()) || A.nrows > std::int64_t(std::numeric_limits<I>::max()))
    throw FormatError("transpose: too many entries or rows for the index type");
  Csr<V, I> B;
  B.nrows = A.ncols, B.ncols = A.nrows;
  B.row_ptr.assign(std::size_t(B.nrows + 1), I(0));
  for (std::int64_t i = 0; i < A.nrows; ++i)
    for (std::int64_t k = A.row_begin(i); k < A.row_end(i); ++k) {
      const std::int64_t c = std::int64_t(A.col_ind[k]);
      if (c < 0 || c >= A.ncols) throw FormatError("transpose: column " + std::to_string(c) + " outside 0.." + std::to_string(A.ncols - 1));
      ++B.row_ptr[std::size_t(c + 1)];
    }
  for (std::int64_t r = 0; r < B.nrows; ++r) B.row_ptr[r + 1] += B.row_ptr[r];
  B.col_ind.resize(std::size_t(A.nnz()));
  B.val.resize(std::size_t(A.nnz()));
  std::vector<I> next(B.row_ptr.begin(), B.row_ptr.end() - 1);
  for (std::int64_t i = 0; i < A.nrows; ++i)
    for (std::int64_t k = A.row_begin(i); k < A.row_end(i); ++k) {
      const I slot              = next[std::size_t(A.col_ind[k])]++;
      B.col_ind[std::size_t(slot)] = I(i);
      B.val[std::size_t(slot)]     = A.val[k];
    }
  return B;
}

// The tail of a long-row split: the entries of the rows longer than split_at that follow their
// first split_at, as a CSR of those rows only. 32-bit indices, as the tail kernel reads them.
template <class V>
struct RowTail {
  std::int64_t              split_at = 0; // K; 0: no split, and the arrays hold nothing
  std::vector<std::int32_t> rows;         // the block's row of each tail row, ascending
  std::vector<std::int32_t> ptr{0};       // rows.size()+1 offsets into col/val
  std::vector<std::int32_t> col;
  std::vector<V>            val;

  std::int64_t nrows() const { return std::int64_t(rows.size()); }
  std::int64_t nnz() const { return std::int64_t(col.size()); }
};

// Bytes a product reads from the tail: its four arrays (none without a split).
template <class V>
Footprint footprint(const RowTail<V> &T)
{
  Footprint f;
  if (!T.split_at) return f;
  f.nnz         = T.nnz();
  f.stored      = T.nnz();
  f.index_bytes = std::int64_t(sizeof(std::int32_t)) * (T.nrows() + std::int64_t(T.ptr.size()) + T.nnz());
  f.value_bytes = std::int64_t(sizeof(V)) * T.nnz();
  return f;
}

// Where -mat_gpumats_long_rows cuts the rows of A (the K of split_rows, 0: no cut). long_rows > 0:
// there, if any row is longer. long_rows == -1: chosen per matrix, only when the longest row is
// far beyond the mean mu (longer than 16 mu + 64: never a stencil or a block matrix), at the
// longer of a warp's 32 entries and 4 mu rounded up to a power of two; but never when
// only_when_told (autocuda weighs the long rows itself and may keep cuSPARSE CSR, which balances
// them better than a split on power-law rows: docs/results/h200-2026-11-24b.md). long_rows == 0: never. A block
// wider than 32-bit columns is never cut: the tail stores 32-bit columns.
// The decision from the block's sizes and its longest row, asked of longest() only when needed
// (the GPU builds answer it from their upload).
template <class Longest>
std::int64_t choose_split(std::int64_t long_rows, std::int64_t nrows, std::int64_t ncols, std::int64_t nnz, bool only_when_told, Longest &&longest_row_of)
{
  if (long_rows == 0 || (long_rows < 0 && only_when_told) || !nrows || ncols > std::numeric_limits<std::int32_t>::max()) return 0;
  const std::int64_t longest = longest_row_of();
  if (long_rows > 0) return longest > long_rows ? long_rows : 0;
  const double mu = double(nnz) / double(nrows);
  if (double(longest) <= 16 * mu + 64) return 0;
  std::int64_t K = 32;
  while (double(K) < 4 * mu) K *= 2;
  return longest > K ? K : 0;
}
template <class V, class RI, class CI>
std::int64_t choose_split(std::int64_t long_rows, const CsrView<V, RI, CI> &A, bool only_when_told)
{
  return choose_split(long_rows, A.nrows, A.ncols, A.nnz(), only_when_told, [&A] { return longest_row(A); });
}

// Cuts every row of A after its first K >= 1 entries: head holds the first K entries of every row
// (all of a shorter row; rows keep their place, so head has A's size), tail the remaining entries
// of the longer rows. Every entry of A lands in exactly one of the two, in its order. I is the
// index type of head (the caller's); head.row_ptr starts at 0.
template <class I = std::int32_t, class V, class RI, class CI>
void split_rows(const CsrView<V, RI, CI> &A, std::int64_t K, Csr<V, I> &head, RowTail<V> &tail)
{
  if (K < 1) throw FormatError("long-row split: rows must keep at least one entry (K = " + std::to_string(K) + ")");
  if (A.nrows > std::numeric_limits<std::int32_t>::max() || A.ncols > std::numeric_limits<std::int32_t>::max())
    throw FormatError("long-row split: a block of " + std::to_string(A.nrows) + " x " + std::to_string(A.ncols) +
                      " does not fit the tail's 32-bit indices; use more MPI ranks or -mat_gpumats_long_rows 0");
  const std::int64_t m = A.nrows;
  head                 = Csr<V, I>{};
  head.nrows           = m;
  head.ncols           = A.ncols;
  head.row_ptr.assign(std::size_t(m + 1), I(0));
  tail          = RowTail<V>{};
  tail.split_at = K;
  for (std::int64_t i = 0; i < m; ++i) {
    const std::int64_t b = A.row_begin(i), e = A.row_end(i), cut = std::min(e, b + K);
    head.row_ptr[i + 1] = I(head.row_ptr[i] + (cut - b));
    if (e > cut) {
      tail.rows.push_back(std::int32_t(i));
      for (std::int64_t k = cut; k < e; ++k) tail.col.push_back(std::int32_t(A.col_ind[k])), tail.val.push_back(A.val[k]);
      tail.ptr.push_back(checked_offset(tail.nnz(), "long-row tail"));
    }
  }
  head.col_ind.resize(std::size_t(head.row_ptr[m]));
  head.val.resize(std::size_t(head.row_ptr[m]));
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t k = 0; k < std::int64_t(head.row_ptr[i + 1] - head.row_ptr[i]); ++k) {
      head.col_ind[std::size_t(head.row_ptr[i] + k)] = I(A.col_ind[A.row_begin(i) + k]);
      head.val[std::size_t(head.row_ptr[i] + k)]     = A.val[A.row_begin(i) + k];
    }
}

// Whether a block is worth storing and multiplying over its rows with entries only (compress_rows):
// when at most half of its rows have any. The off-diagonal block of an MPI matrix from a stencil
// has entries in the rows next to another rank's part only (65,536 of 8.4M rows per rank for a 3D
// 7-point stencil at 256^3 on 2 ranks), and a product over all of its rows reads and writes y for
// every row. Compressed, a product writes its rows into a scratch vector and adds that into y
// through the row map: about 20 more bytes for each row with entries, 16 bytes (y read and written)
// fewer for each row without, so it pays once half the rows or more are empty.
template <class V, class RI, class CI>
bool worth_compressing_rows(const CsrView<V, RI, CI> &A)
{
  std::int64_t with_entries = 0;
  for (std::int64_t i = 0; i < A.nrows; ++i) with_entries += A.row_end(i) > A.row_begin(i);
  return A.nrows > 0 && 2 * with_entries <= A.nrows;
}

// The rows of A that have entries, as a CSR of those rows only (same columns, entries in A's
// order), and rows[r] = the row of A that row r is, ascending. I is the index type of the result
// (the caller's); its row_ptr starts at 0.
template <class I = std::int32_t, class V, class RI, class CI>
Csr<V, I> compress_rows(const CsrView<V, RI, CI> &A, std::vector<std::int32_t> &rows)
{
  if (A.nrows > std::numeric_limits<std::int32_t>::max())
    throw FormatError("row compression: a block of " + std::to_string(A.nrows) + " rows does not fit the 32-bit row map; use more MPI ranks");
  if (A.nnz() > std::int64_t(std::numeric_limits<I>::max())) throw FormatError("row compression: too many entries for the index type");
  Csr<V, I> B;
  B.ncols = A.ncols;
  rows.clear();
  for (std::int64_t i = 0; i < A.nrows; ++i) {
    if (A.row_end(i) == A.row_begin(i)) continue;
    rows.push_back(std::int32_t(i));
    for (std::int64_t k = A.row_begin(i); k < A.row_end(i); ++k) B.col_ind.push_back(I(A.col_ind[k])), B.val.push_back(A.val[k]);
    B.row_ptr.push_back(I(B.col_ind.size()));
  }
  B.nrows = std::int64_t(rows.size());
  return B;
}

} // namespace gpumats
