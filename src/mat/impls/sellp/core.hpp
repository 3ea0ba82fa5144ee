// SELL-P (padded sliced ELLPACK, Anzt, Tomov and Dongarra): data structure and conversion to and
// from CSR. PETSc-free C++17.
//
// Rows are cut into slices of `slice_height` (b) rows. Every row of a slice is padded to the
// slice's longest row rounded up to a multiple of `threads_per_row` (t), so that the t threads
// of a row share its entries evenly. A slice is stored column-major: entry k of row i of slice s
// sits at slice_ptr[s] + k*b + i, so the b*t threads of a slice read one contiguous run per step.
// With sigma > 1, rows are first sorted by length (longest first) inside windows of sigma rows
// (SELL-C-sigma); row_perm[p] is then the original row stored at position p.
#pragma once

#include "../common/core/csr.hpp"
#include "../common/core/dictionary.hpp"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

namespace gpumats {
namespace sellp {

constexpr std::int32_t  kPadColumn = -1;     // padding entry: no column, contributes nothing
constexpr std::uint16_t kPadDelta  = 0xFFFF; // the same in the 16-bit form
constexpr std::int64_t  kMaxSpan   = 0xFFFE; // widest column range a 16-bit slice column can hold

// Column indices: 32-bit, or 16-bit deltas from a 32-bit base kept per slice column (entry k of the
// b rows of a slice). The ELLPACK paper's index compression, with a base per slice column instead
// of the row index, so a 3D stencil whose band exceeds 2^15 still fits as long as the columns of
// one slice column stay within 2^16 of each other.
enum class Index { k32 = 0, k16 = 1, k16_if_possible = 2 };

struct Params {
  int   slice_height    = 8; // b
  int   threads_per_row = 4; // t
  int   sigma           = 1; // sorting window in rows; 1 = no sorting
  Index index           = Index::k32;
  Values values         = Values::kPlain; // common/core/dictionary.hpp
  bool   shared_table   = false;          // GPU, 1-byte codes: table staged in shared memory per block
};

constexpr int kMaxThreads = 1024; // b*t threads form one CUDA block

inline bool is_pow2(int v) { return v > 0 && !(v & (v - 1)); }

inline void check_params(const Params &p)
{
  if (p.slice_height < 1 || p.slice_height > kMaxThreads || !is_pow2(p.slice_height))
    throw FormatError("SELL-P: slice height " + std::to_string(p.slice_height) + " must be a power of two in 1..1024");
  if (p.threads_per_row < 1 || p.threads_per_row > 32 || !is_pow2(p.threads_per_row))
    throw FormatError("SELL-P: threads per row " + std::to_string(p.threads_per_row) + " must be a power of two in 1..32");
  if (p.slice_height * p.threads_per_row > kMaxThreads)
    throw FormatError("SELL-P: slice height x threads per row = " + std::to_string(p.slice_height * p.threads_per_row) +
                      " exceeds 1024 threads per CUDA block; lower one of them");
  if (int(p.index) < 0 || int(p.index) > 2) throw FormatError("SELL-P: unknown column index form " + std::to_string(int(p.index)));
  if (int(p.values) < 0 || int(p.values) > 2) throw FormatError("SELL-P: unknown value form " + std::to_string(int(p.values)));
  if (p.sigma < 1 || (p.sigma > 1 && p.sigma % p.slice_height))
    throw FormatError("SELL-P: sigma " + std::to_string(p.sigma) + " must be 1 (no sorting) or a positive multiple of the slice height " +
                      std::to_string(p.slice_height));
}

template <class V>
struct Matrix {
  Params                     params;
  std::int64_t               nrows = 0, ncols = 0, nnz = 0;
  bool                       index16 = false; // which of the two column forms is stored
  std::vector<std::int32_t>  slice_ptr{0};    // slices()+1 offsets; slice s is b x width(s), column-major
  std::vector<std::int32_t>  col_ind;         // 32-bit form: column, or kPadColumn
  std::vector<std::uint16_t> col_delta;       // 16-bit form: column - col_base[slice column], or kPadDelta
  std::vector<std::int32_t>  col_base;        // 16-bit form: one base per slice column (stored / b)
  std::vector<V>             val;             // plain values (empty when code_bytes != 0)
  int                        code_bytes = 0;  // dictionary form: 1 or 2 bytes per entry, 0 = plain values
  std::vector<V>             dict;            // dictionary form: the distinct values
  std::vector<std::uint8_t>  code8;           // dictionary form, 1-byte codes into dict (padding: 0)
  std::vector<std::uint16_t> code16;          // dictionary form, 2-byte codes
  std::vector<std::int32_t> row_perm;     // stored position -> original row; empty when sigma == 1
  std::vector<std::int32_t> row_len;      // entries of each stored row before padding (host only; to_csr)

  std::int64_t slices() const { return std::int64_t(slice_ptr.size()) - 1; }
  std::int64_t width(std::int64_t s) const { return (slice_ptr[s + 1] - slice_ptr[s]) / params.slice_height; }
  std::int64_t stored() const { return slice_ptr.back(); }
  // whether val holds the values; a values-only update writing into val must rebuild instead
  bool values_compressed() const { return code_bytes != 0; }
  // value of stored entry e, in either value form
  V value(std::int64_t e) const { return code_bytes == 0 ? val[e] : dict[code_bytes == 1 ? code8[e] : code16[e]]; }
  std::int64_t original_row(std::int64_t pos) const { return row_perm.empty() ? pos : row_perm[pos]; }
  // column of stored entry e, or kPadColumn
  std::int32_t column(std::int64_t e) const
  {
    if (!index16) return col_ind[e];
    return col_delta[e] == kPadDelta ? kPadColumn : col_base[e / params.slice_height] + col_delta[e];
  }
};

template <class V>
Footprint footprint(const Matrix<V> &A)
{
  const std::int64_t columns = A.index16 ? 2 * A.stored() + 4 * std::int64_t(A.col_base.size()) : 4 * A.stored();
  return footprint_of(A, columns + 4 * (A.slices() + 1 + std::int64_t(A.row_perm.size())), stored_value_bytes(A));
}

// Row order of SELL-C-sigma: inside each window of sigma rows, longest rows first (stable, so
// equal rows keep their order and a regular stencil stays in natural order).
template <class V, class RI, class CI>
std::vector<std::int32_t> sigma_order(const CsrView<V, RI, CI> &A, int sigma)
{
  std::vector<std::int32_t> perm(std::size_t(A.nrows));
  std::iota(perm.begin(), perm.end(), 0);
  if (sigma <= 1) return perm;
  auto len = [&A](std::int32_t i) { return A.row_end(i) - A.row_begin(i); };
  for (std::int64_t w0 = 0; w0 < A.nrows; w0 += sigma) {
    auto first = perm.begin() + w0, last = perm.begin() + std::min<std::int64_t>(A.nrows, w0 + sigma);
    std::stable_sort(first, last, [&](std::int32_t a, std::int32_t b) { return len(a) > len(b); });
  }
  return perm;
}

// Base of each slice column: its smallest column (0 when it holds only padding), and whether every
// slice column spans at most kMaxSpan. Shared by the host conversion and the device one (which
// computes the same on the GPU and is tested against this).
inline bool slice_column_bases(const std::int32_t *col, std::int64_t stored, std::int64_t b, std::vector<std::int32_t> &base)
{
  bool fits = true;
  base.assign(std::size_t(stored / b), 0);
  for (std::int64_t c = 0; c < stored / b; ++c) {
    std::int64_t lo = std::numeric_limits<std::int64_t>::max(), hi = -1;
    for (std::int64_t e = c * b; e < (c + 1) * b; ++e)
      if (col[e] != kPadColumn) lo = std::min<std::int64_t>(lo, col[e]), hi = std::max<std::int64_t>(hi, col[e]);
    if (hi >= 0) {
      base[c] = std::int32_t(lo);
      fits    = fits && hi - lo <= kMaxSpan;
    }
  }
  return fits;
}

// Replaces the 32-bit columns by 16-bit deltas where every slice column allows it.
template <class V>
void compress_columns(Matrix<V> &M)
{
  const std::int64_t b    = M.params.slice_height;
  const bool         fits = slice_column_bases(M.col_ind.data(), M.stored(), b, M.col_base);
  if (!fits) {
    M.col_base.clear();
    if (M.params.index == Index::k16)
      throw FormatError("SELL-P: the columns of a slice column span more than 2^16, too wide for 16-bit indices; use 32-bit indices (-mat_sellp_index 32) "
                        "or a smaller slice height");
    return;
  }
  M.col_delta.resize(M.col_ind.size());
  for (std::int64_t e = 0; e < M.stored(); ++e)
    M.col_delta[e] = M.col_ind[e] == kPadColumn ? kPadDelta : std::uint16_t(M.col_ind[e] - M.col_base[e / b]);
  M.col_ind.clear();
  M.col_ind.shrink_to_fit();
  M.index16 = true;
}

// Replaces the plain values by codes into one table of the distinct values (common/core/dictionary.hpp) when
// the mode asks for it and the matrix has few enough; otherwise leaves them plain. Returns whether
// it did. Padding (kPadColumn) is skipped: it keeps code 0 and the kernels never read its value.
template <class V>
bool compress_values(Matrix<V> &M, Values mode)
{
  if (mode == Values::kPlain || !M.stored()) return false;
  DictionaryBuilder<V>    d;
  std::vector<std::int32_t> code(std::size_t(M.stored()), 0);
  for (std::int64_t e = 0; e < M.stored(); ++e)
    if (M.column(e) != kPadColumn && (code[e] = d.code(M.val[e], kMaxDictionary)) < 0) return false;
  const double index = double(footprint(M).index_bytes) / double(M.stored());
  if (!use_dictionary<V>(mode, std::int64_t(d.table.size()), M.stored(), index)) return false;
  M.code_bytes = store_codes(d, code, [&M](std::int64_t e) { return M.column(e) == kPadColumn; }, M.dict, M.code8, M.code16); // padding keeps code 0
  M.val.clear();
  M.val.shrink_to_fit();
  return true;
}

// Entries the layout stores (padding included) for these parameters, from the row lengths alone.
// Unsorted (sigma 1), the slices are groups of b consecutive rows: one pass over the row pointers.
template <class V, class RI, class CI>
std::int64_t stored_entries(const CsrView<V, RI, CI> &A, const Params &p)
{
  if (p.sigma <= 1) return group_stats(A, p.slice_height, p.threads_per_row).padded_width;
  const std::vector<std::int32_t> order = sigma_order(A, p.sigma);
  const std::int64_t              b = p.slice_height, t = p.threads_per_row;
  std::int64_t                    stored = 0;
  for (std::int64_t s0 = 0; s0 < A.nrows; s0 += b) {
    std::int64_t longest = 0;
    for (std::int64_t pos = s0; pos < std::min(A.nrows, s0 + b); ++pos) longest = std::max<std::int64_t>(longest, A.row_end(order[pos]) - A.row_begin(order[pos]));
    stored += (longest + t - 1) / t * t * b;
  }
  return stored;
}

// Whether 16-bit column deltas fit, judged on every `stride`-th slice of the unsorted layout: the
// columns of entry k of the b rows must stay within kMaxSpan of each other.
template <class V, class RI, class CI>
bool index16_fits_sampled(const CsrView<V, RI, CI> &A, std::int64_t b, std::int64_t stride)
{
  return columns_within_span_sampled(A, b, stride, kMaxSpan);
}

template <class V, class RI, class CI>
Matrix<V> from_csr(const CsrView<V, RI, CI> &A, const Params &p)
{
  check_params(p);
  validate_csr(A, "SELL-P");
  Matrix<V> M = shaped_like<Matrix<V>>(A, p);
  const std::int64_t b       = p.slice_height, t = p.threads_per_row;
  const std::int64_t ns      = (A.nrows + b - 1) / b;
  std::vector<std::int32_t> order = sigma_order(A, p.sigma);
  if (p.sigma > 1) M.row_perm = order;

  M.row_len.assign(std::size_t(A.nrows), 0);
  for (std::int64_t pos = 0; pos < A.nrows; ++pos) M.row_len[pos] = std::int32_t(A.row_end(order[pos]) - A.row_begin(order[pos]));
  M.slice_ptr.assign(ns + 1, 0);
  for (std::int64_t s = 0; s < ns; ++s) {
    std::int64_t longest = 0;
    for (std::int64_t pos = s * b; pos < std::min(A.nrows, (s + 1) * b); ++pos) longest = std::max<std::int64_t>(longest, M.row_len[pos]);
    const std::int64_t w = (longest + t - 1) / t * t;
    M.slice_ptr[s + 1]   = checked_offset(M.slice_ptr[s] + w * b, "SELL-P");
  }
  M.col_ind.assign(M.slice_ptr[ns], kPadColumn);
  M.val.assign(M.slice_ptr[ns], V(0));
  for (std::int64_t pos = 0; pos < A.nrows; ++pos) {
    const std::int64_t s = pos / b, i = pos % b, src = A.row_begin(order[pos]);
    for (std::int64_t k = 0; k < M.row_len[pos]; ++k) {
      M.col_ind[M.slice_ptr[s] + k * b + i] = std::int32_t(A.col_ind[src + k]);
      M.val[M.slice_ptr[s] + k * b + i]     = A.val[src + k];
    }
  }
  if (p.index != Index::k32 && M.stored()) compress_columns(M); // as on the device: an empty layout stays 32-bit
  compress_values(M, p.values);                                  // after the columns: auto weighs their final bytes
  return M;
}

template <class V>
Csr<V> to_csr(const Matrix<V> &M)
{
  Csr<V> C = csr_to_fill<V>(M.nrows, M.ncols);
  for (std::int64_t pos = 0; pos < M.nrows; ++pos) C.row_ptr[M.original_row(pos) + 1] = M.row_len[pos];
  for (std::int64_t i = 0; i < M.nrows; ++i) C.row_ptr[i + 1] += C.row_ptr[i];
  C.col_ind.resize(std::size_t(M.nnz));
  C.val.resize(std::size_t(M.nnz));
  const std::int64_t b = M.params.slice_height;
  for (std::int64_t pos = 0; pos < M.nrows; ++pos) {
    const std::int64_t s = pos / b, i = pos % b, dst = C.row_ptr[M.original_row(pos)];
    for (std::int64_t k = 0; k < M.row_len[pos]; ++k) {
      C.col_ind[dst + k] = M.column(M.slice_ptr[s] + k * b + i);
      C.val[dst + k]     = M.value(M.slice_ptr[s] + k * b + i);
    }
  }
  return C;
}

} // namespace sellp
} // namespace gpumats
