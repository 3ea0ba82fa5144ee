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
// The values may instead be stored as 1- or 2-byte codes into a table of the distinct values
// (common/core/dictionary.hpp): every stored value is encoded, the zeros of block fill and of
// padding slots included, so the table always holds +0.0 and the kernels read codes where they
// read values.
#pragma once

#include "../common/core/csr.hpp"
#include "../common/core/dictionary.hpp"

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
  // GPU kernels only (the storage does not depend on it): threads per block row, a power of two
  // 1..32, each taking every T-th block of the row; 0: chosen at each launch from the number of
  // block rows and the longest one (cuda.cu). The host kernels ignore it.
  int row_threads = 0;
  Values values = Values::kPlain; // common/core/dictionary.hpp
};

inline void check_params(const Params &p)
{
  if (p.r < 1 || p.r > kMaxBlock || p.c < 1 || p.c > kMaxBlock)
    throw FormatError("BELLPACK: block size " + std::to_string(p.r) + "x" + std::to_string(p.c) + " is out of range; r and c must be 1..8");
  if (p.partition_rows < 1 || p.partition_rows > 1024 || (p.partition_rows & (p.partition_rows - 1)))
    throw FormatError("BELLPACK: partition of " + std::to_string(p.partition_rows) + " block rows must be a power of two in 1..1024");
  if (p.row_threads < 0 || p.row_threads > 32 || (p.row_threads & (p.row_threads - 1)))
    throw FormatError("BELLPACK: " + std::to_string(p.row_threads) + " threads per block row must be a power of two in 1..32, or 0 (chosen per launch)");
  if (int(p.values) < 0 || int(p.values) > 2) throw FormatError("BELLPACK: unknown value form " + std::to_string(int(p.values)));
}

template <class V>
struct Matrix {
  Params                     params;
  std::int64_t               nrows = 0, ncols = 0, nnz = 0;
  std::int64_t               block_rows = 0, block_cols = 0, blocks = 0; // blocks: real (non-padding) blocks
  std::vector<std::int32_t>  row_perm;     // sorted position -> original block row
  std::vector<std::int32_t>  part_ptr{0};  // partitions()+1 slot offsets
  std::vector<std::int32_t>  block_col;    // block column index of each slot, or kPadBlock
  std::vector<V>             val;          // r*c values per slot, in the coalesced partition layout (empty when code_bytes != 0)
  int                        code_bytes = 0; // dictionary form: 1 or 2 bytes per stored value, 0 = plain values
  std::vector<V>             dict;           // dictionary form: the distinct values, +0.0 among them
  std::vector<std::uint8_t>  code8;          // dictionary form, 1-byte codes into dict, in val's layout
  std::vector<std::uint16_t> code16;         // dictionary form, 2-byte codes
  std::vector<std::uint64_t> present;      // bit per stored value: it came from the CSR (not fill); host only, for to_csr

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
  bool is_present(std::int64_t v) const { return present[std::size_t(v >> 6)] >> (v & 63) & 1; }
  // whether val holds the values; a values-only update writing into val must rebuild instead
  bool values_compressed() const { return code_bytes != 0; }
  // stored value v (a value_index), in either value form
  V value(std::int64_t v) const { return code_bytes == 0 ? val[v] : dict[code_bytes == 1 ? code8[v] : code16[v]]; }
};

template <class V>
Footprint footprint(const Matrix<V> &A)
{
  return footprint_of(A, 4 * (A.slots() + std::int64_t(A.row_perm.size()) + A.partitions() + 1), stored_value_bytes(A));
}

// Replaces the plain values by codes into one table of the distinct stored values, +0.0 always
// among them (with_zero: the device builds its table from the CSR's values, which need not hold
// the fill's zeros), when the mode asks for it and there are at most kMaxDictionary; otherwise
// leaves them plain. Returns whether it did.
template <class V>
bool compress_values(Matrix<V> &M, Values mode)
{
  if (mode == Values::kPlain || !M.stored()) return false;
  DictionaryBuilder<V>      d;
  std::vector<std::int32_t> code(std::size_t(M.stored()), 0);
  d.code(V(0), kMaxDictionary);
  for (std::int64_t v = 0; v < M.stored(); ++v)
    if ((code[std::size_t(v)] = d.code(M.val[std::size_t(v)], kMaxDictionary)) < 0) return false;
  const double index = double(footprint(M).index_bytes) / double(M.stored());
  if (!use_dictionary<V>(mode, std::int64_t(d.table.size()), M.stored(), index)) return false;
  M.code_bytes = store_codes(d, code, [](std::int64_t) { return false; }, M.dict, M.code8, M.code16);
  M.val.clear();
  M.val.shrink_to_fit();
  return true;
}

// Fill ratio of r x c blocking (dense block entries / nonzeros), before any ELLPACK padding.
// Exact when sample_stride is 1; with a stride it looks at one block row of every sample_stride,
// the sampling estimate of the paper's fill estimation.
template <class V, class RI, class CI>
double block_fill(const CsrView<V, RI, CI> &A, int r, int c, std::int64_t sample_stride = 1)
{
  // the block columns of one block row, sorted and counted: no array as wide as the matrix, so a
  // 1% sample costs 1% of the entries (the conversion tries 36 block sizes this way)
  // one block row per window of sample_stride, at a pseudo-random place in the window: a fixed
  // offset can alias with a grid (a stride of 10000 on a 100^3 grid samples only boundary rows)
  const std::int64_t        nbr = (A.nrows + r - 1) / r;
  std::vector<std::int64_t> cols;
  std::int64_t              blocks = 0, entries = 0;
  for (std::int64_t w = 0; w < nbr; w += sample_stride) {
    std::uint64_t h = std::uint64_t(w) * 0x9e3779b97f4a7c15ull;
    h ^= h >> 31;
    const std::int64_t I = sample_stride > 1 ? w + std::int64_t(h % std::uint64_t(std::min(sample_stride, nbr - w))) : w;
    cols.clear();
    for (std::int64_t i = I * r; i < std::min(A.nrows, (I + 1) * r); ++i) {
      entries += A.row_end(i) - A.row_begin(i);
      for (std::int64_t j = A.row_begin(i); j < A.row_end(i); ++j) cols.push_back(std::int64_t(A.col_ind[j]) / c);
    }
    std::sort(cols.begin(), cols.end());
    blocks += std::unique(cols.begin(), cols.end()) - cols.begin();
  }
  return entries ? double(blocks) * r * c / double(entries) : 1.0;
}

// Block structure of a CSR: the distinct block columns of every block row, ascending, as a CSR of
// blocks (ptr, cols). Two passes over the entries with a marker array; no per-row allocation.
template <class V, class RI, class CI>
void block_pattern(const CsrView<V, RI, CI> &A, int r, int c, std::vector<std::int64_t> &ptr, std::vector<std::int32_t> &cols)
{
  const std::int64_t        nbr = (A.nrows + r - 1) / r, nbc = (A.ncols + c - 1) / c;
  std::vector<std::int64_t> mark(std::size_t(nbc), -1);
  ptr.assign(std::size_t(nbr + 1), 0);
  for (int pass = 0; pass < 2; ++pass) {
    std::fill(mark.begin(), mark.end(), -1);
    for (std::int64_t I = 0; I < nbr; ++I) {
      std::int64_t n = 0;
      for (std::int64_t i = I * r; i < std::min(A.nrows, (I + 1) * r); ++i)
        for (std::int64_t j = A.row_begin(i); j < A.row_end(i); ++j) {
          const std::int64_t J = std::int64_t(A.col_ind[j]) / c;
          if (mark[J] == I) continue;
          mark[J] = I;
          if (pass) cols[std::size_t(ptr[I] + n)] = std::int32_t(J);
          ++n;
        }
      if (!pass) ptr[I + 1] = ptr[I] + n;
      else std::sort(cols.begin() + ptr[I], cols.begin() + ptr[I + 1]);
    }
    if (!pass) cols.resize(std::size_t(ptr[nbr]));
  }
}

// Block rows by number of blocks, longest first; stable (a counting sort), so equal rows keep
// their order and a regular stencil stays in natural order.
inline std::vector<std::int32_t> sort_by_count(const std::vector<std::int64_t> &ptr)
{
  const std::int64_t        n = std::int64_t(ptr.size()) - 1;
  std::int64_t              longest = 0;
  for (std::int64_t I = 0; I < n; ++I) longest = std::max(longest, ptr[I + 1] - ptr[I]);
  std::vector<std::int64_t> start(std::size_t(longest + 2), 0);
  for (std::int64_t I = 0; I < n; ++I) start[std::size_t(longest - (ptr[I + 1] - ptr[I]) + 1)]++;
  for (std::size_t k = 1; k < start.size(); ++k) start[k] += start[k - 1];
  std::vector<std::int32_t> perm(static_cast<std::size_t>(n));
  for (std::int64_t I = 0; I < n; ++I) perm[std::size_t(start[std::size_t(longest - (ptr[I + 1] - ptr[I]))]++)] = std::int32_t(I);
  return perm;
}

template <class V, class RI, class CI>
Matrix<V> from_csr(const CsrView<V, RI, CI> &A, const Params &p)
{
  check_params(p);
  validate_csr(A, "BELLPACK");
  Matrix<V> M = shaped_like<Matrix<V>>(A, p);
  const std::int64_t r = p.r, c = p.c, R = p.partition_rows, rc = r * c;
  M.block_rows         = (A.nrows + r - 1) / r;
  M.block_cols         = (A.ncols + c - 1) / c;

  std::vector<std::int64_t> bptr;
  std::vector<std::int32_t> bcols;
  block_pattern(A, int(r), int(c), bptr, bcols);
  M.blocks   = std::int64_t(bcols.size());
  M.row_perm = sort_by_count(bptr);

  const std::int64_t np = (M.block_rows + R - 1) / R;
  M.part_ptr.assign(np + 1, 0);
  for (std::int64_t q = 0; q < np; ++q) {
    const std::int32_t first = M.row_perm[q * R]; // the first row of a partition is its longest
    M.part_ptr[q + 1]        = checked_offset(M.part_ptr[q] + (bptr[first + 1] - bptr[first]) * R, "BELLPACK");
  }
  const std::int64_t slots = M.part_ptr[np];
  checked_offset(slots * rc, "BELLPACK");
  M.block_col.assign(std::size_t(slots), kPadBlock);
  M.val.assign(std::size_t(slots * rc), V(0));
  M.present.assign(std::size_t((slots * rc + 63) / 64), 0);

  std::vector<std::int32_t> slot_of(std::size_t(M.block_cols)); // block column -> k within the current block row
  for (std::int64_t pos = 0; pos < M.block_rows; ++pos) {
    const std::int64_t q = pos / R, i = pos % R, I = M.row_perm[pos];
    for (std::int64_t k = 0; k < bptr[I + 1] - bptr[I]; ++k) {
      const std::int32_t J = bcols[bptr[I] + k];
      slot_of[J]           = std::int32_t(k);
      M.block_col[M.part_ptr[q] + k * R + i] = J;
    }
    for (std::int64_t a = 0; a < r && I * r + a < A.nrows; ++a) {
      const std::int64_t row = I * r + a;
      for (std::int64_t j = A.row_begin(row); j < A.row_end(row); ++j) {
        const std::int64_t col = A.col_ind[j];
        const std::int64_t v   = M.value_index(q, slot_of[col / c], i, int(a * c + col % c));
        M.val[v]               = A.val[j];
        M.present[std::size_t(v >> 6)] |= std::uint64_t(1) << (v & 63);
      }
    }
  }
  compress_values(M, p.values);
  return M;
}

template <class V>
Csr<V> to_csr(const Matrix<V> &M)
{
  Csr<V> C = csr_to_fill<V>(M.nrows, M.ncols);
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
            if (!M.is_present(M.value_index(q, k, i, e))) continue;
            if (pass == 0) {
              C.row_ptr[I * r + a + 1]++;
            } else {
              const std::int32_t dst = next[I * r + a]++;
              C.col_ind[dst]         = std::int32_t(M.block_col[slot] * c + b);
              C.val[dst]             = M.value(M.value_index(q, k, i, e));
            }
          }
        }
    }
  }
  return C;
}

} // namespace bellpack
} // namespace gpumats
