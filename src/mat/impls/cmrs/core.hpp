// CMRS (compressed multi-row storage, Koza et al.): data structure and conversion to and from CSR.
// PETSc-free C++17.
//
// Rows are grouped into strips of `height` consecutive rows; strip_ptr[s] is where strip s starts
// in col_ind/val (strip_ptr[s] = row_ptr[s*height] when nothing is padded). Each entry's column
// and its row inside the strip (row_in_strip) share one 32-bit word: column << 4 | row_in_strip.
// Entries may be reordered freely inside a strip; sorting them by column makes the x loads of a
// warp touch fewer cache lines. The paper's modified kernel also pads every strip to a multiple
// of 32 entries so that each warp-wide load is aligned and complete.
#pragma once

#include "../common/core/csr.hpp"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

namespace gpumats {
namespace cmrs {

constexpr int           kRowBits   = 4;                       // bits of row_in_strip in a packed word
constexpr int           kMaxHeight = 1 << kRowBits;           // 16
constexpr std::uint32_t kRowMask   = kMaxHeight - 1;
constexpr std::uint32_t kPadWord   = 0xFFFFFFFFu;             // padding entry: no column, contributes nothing
constexpr std::int64_t  kMaxCols   = (std::int64_t(1) << 28) - 1; // column 2^28-1 is reserved for kPadWord

GPUMATS_HD inline std::uint32_t pack(std::uint32_t col, std::uint32_t row_in_strip) { return (col << kRowBits) | row_in_strip; }
GPUMATS_HD inline std::uint32_t column_of(std::uint32_t w) { return w >> kRowBits; }
GPUMATS_HD inline std::uint32_t row_in_strip_of(std::uint32_t w) { return w & kRowMask; }

// The GPU SpMV kernel (cuda.cu); the host product and the transpose kernel ignore it. All read the
// same arrays, so a values-only update or a download works alike for each.
//   kWarp      a warp per strip; each lane adds into one of height register accumulators chosen
//              by an unrolled compare (height predicated adds per entry), then a transposing
//              warp-shuffle reduction
//   kShared    the paper's kernel: a warp per strip; each lane adds into its own slot of a
//              [row_in_strip][lane] shared-memory buffer (one shared load and store per entry, no
//              compare chain, no bank conflicts), then the rows are summed over the 32 lanes
//   kSubwarp   kShared with `lanes` (8 or 16) lanes per strip, 32/lanes strips per warp: for short
//              strips, where a whole warp would leave most lanes idle
//   kSegmented entries in row order (sort_columns false): every warp step of 32 entries is
//              summed by a segmented scan over the runs of equal row_in_strip, and each run's sum
//              added once into the row's total
//   kAuto      chosen per matrix: by resolve_kernel from the average strip length, by the glue
//              also from the longest row (segmented for irregular rows)
enum class Kernel : int { kWarp = 0, kShared, kSubwarp, kSegmented, kAuto };
constexpr int kKernels = 5;
inline const char *kernel_name(Kernel k)
{
  static const char *const names[kKernels] = {"warp", "shared", "subwarp", "segmented", "auto"};
  const int                i               = int(k);
  return i >= 0 && i < kKernels ? names[i] : "invalid";
}

struct Params {
  int    height       = 8;            // rows per strip, 1..16
  bool   sort_columns = true;         // order each strip's entries by column (row as tie-break)
  int    pad_multiple = 1;            // pad each strip to a multiple of this many entries (32: the modified layout)
  Kernel kernel       = Kernel::kWarp; // the GPU SpMV kernel
  int    lanes        = 0;            // kSubwarp: lanes per strip, 8 or 16; 0: from the average strip length
};

inline void check_params(const Params &p)
{
  if (p.height < 1 || p.height > kMaxHeight)
    throw FormatError("CMRS: strip height " + std::to_string(p.height) + " is out of range; it must be 1..16 (4 bits of row_in_strip)");
  if (p.pad_multiple < 1 || p.pad_multiple > 1024 || (p.pad_multiple & (p.pad_multiple - 1)))
    throw FormatError("CMRS: pad multiple " + std::to_string(p.pad_multiple) + " must be a power of two in 1..1024");
  if (int(p.kernel) < 0 || int(p.kernel) >= kKernels)
    throw FormatError("CMRS: SpMV kernel " + std::to_string(int(p.kernel)) + " is out of range; it must be warp, shared, subwarp, segmented or auto");
  if (p.lanes != 0 && p.lanes != 8 && p.lanes != 16)
    throw FormatError("CMRS: " + std::to_string(p.lanes) + " lanes per strip is out of range; the subwarp kernel takes 8 or 16 (0: from the average strip length)");
  if (p.kernel == Kernel::kSegmented && p.sort_columns)
    throw FormatError("CMRS: the segmented kernel sums each row's run of entries, so it needs the entries of each strip in row order (sort_columns false)");
}

// kAuto and lanes 0, from the average strip length: in the kernel comparison with strips of 8
// rows (examples/cmrs_variants.sh; figures in docs/results/cmrs-variants-h200-2026-11-23.txt)
// subwarp with 8 lanes is fastest up to about 12 entries per row, 16 lanes up to about 40 and
// shared above; warp is never the fastest of them.
constexpr double kSubwarp8Strip  = 96;  // mean entries per strip up to which subwarp takes 8 lanes
constexpr double kSubwarp16Strip = 320; // ... and up to which kAuto takes subwarp (16 lanes), shared above

// The parameters with kAuto and lanes 0 replaced by what they choose for a block of nrows rows and
// nnz entries, from the average strip length nnz / strips. The host conversion and the device
// build both call it, so a copy's params say which kernel runs. (The glue may resolve kAuto
// itself first, from more than the mean: segmented for irregular rows.)
inline Params resolve_kernel(Params p, std::int64_t nnz, std::int64_t nrows)
{
  const std::int64_t strips = p.height > 0 ? (nrows + p.height - 1) / p.height : 0;
  const double       mean   = strips > 0 ? double(nnz) / double(strips) : 0;
  if (p.kernel == Kernel::kAuto) p.kernel = mean <= kSubwarp16Strip ? Kernel::kSubwarp : Kernel::kShared;
  if (p.kernel == Kernel::kSubwarp && p.lanes == 0) p.lanes = mean <= kSubwarp8Strip ? 8 : 16;
  return p;
}

template <class V>
struct Matrix {
  Params                     params;
  std::int64_t               nrows = 0, ncols = 0, nnz = 0;
  std::vector<std::int32_t>  strip_ptr{0}; // strips()+1 offsets into col_ind/val
  std::vector<std::int32_t>  strip_nnz;    // entries of each strip before padding (host only; to_csr)
  std::vector<std::uint32_t> col_ind;      // packed column << 4 | row_in_strip, or kPadWord
  std::vector<V>             val;

  std::int64_t strips() const { return std::int64_t(strip_ptr.size()) - 1; }
  std::int64_t stored() const { return std::int64_t(val.size()); }
};

template <class V>
Footprint footprint(const Matrix<V> &A)
{
  return footprint_of(A, std::int64_t(sizeof(std::uint32_t)) * A.stored() + std::int64_t(sizeof(std::int32_t)) * (A.strips() + 1),
                      std::int64_t(sizeof(V)) * A.stored());
}

// Builds the CMRS form of a CSR matrix. O(nnz) without sorting, O(nnz log(strip nnz)) with it.
template <class V, class RI, class CI>
Matrix<V> from_csr(const CsrView<V, RI, CI> &A, const Params &p)
{
  check_params(p);
  validate_csr(A, "CMRS");
  if (A.ncols > kMaxCols)
    throw FormatError("CMRS: " + std::to_string(A.ncols) + " columns in a local block exceed the 28-bit packed column index (at most " +
                      std::to_string(kMaxCols) + "); use more MPI ranks, or the sellp or bellpack type");
  Matrix<V> M = shaped_like<Matrix<V>>(A, resolve_kernel(p, A.nnz(), A.nrows));
  const std::int64_t h = p.height, ns = (A.nrows + h - 1) / h, pad = p.pad_multiple;

  M.strip_ptr.assign(ns + 1, 0);
  M.strip_nnz.assign(ns, 0);
  for (std::int64_t s = 0; s < ns; ++s) {
    const std::int64_t r0 = s * h, r1 = std::min(A.nrows, r0 + h);
    const std::int64_t n  = A.row_begin(r1) - A.row_begin(r0);
    M.strip_nnz[s]        = checked_offset(n, "CMRS");
    M.strip_ptr[s + 1]    = checked_offset(M.strip_ptr[s] + (n + pad - 1) / pad * pad, "CMRS");
  }
  M.col_ind.assign(M.strip_ptr[ns], kPadWord);
  M.val.assign(M.strip_ptr[ns], V(0));

  std::vector<std::int64_t> order; // entry permutation inside one strip
  for (std::int64_t s = 0; s < ns; ++s) {
    const std::int64_t r0 = s * h, r1 = std::min(A.nrows, r0 + h), base = A.row_begin(r0);
    std::uint32_t     *cw = M.col_ind.data() + M.strip_ptr[s];
    V                 *cv = M.val.data() + M.strip_ptr[s];
    std::int64_t       k  = 0;
    for (std::int64_t i = r0; i < r1; ++i)
      for (std::int64_t j = A.row_begin(i); j < A.row_end(i); ++j, ++k) cw[k] = pack(std::uint32_t(A.col_ind[j]), std::uint32_t(i - r0));
    if (p.sort_columns) {
      order.resize(std::size_t(k));
      std::iota(order.begin(), order.end(), std::int64_t(0));
      // the packed word orders by column first and row second: exactly the paper's reordering
      std::stable_sort(order.begin(), order.end(), [cw](std::int64_t a, std::int64_t b) { return cw[a] < cw[b]; });
      std::vector<std::uint32_t> w(cw, cw + k);
      for (std::int64_t t = 0; t < k; ++t) {
        cw[t] = w[std::size_t(order[t])];
        cv[t] = A.val[base + order[t]];
      }
    } else {
      for (std::int64_t t = 0; t < k; ++t) cv[t] = A.val[base + t];
    }
  }
  return M;
}

// Exact inverse of from_csr for a CSR with sorted columns (PETSc's AIJ keeps them sorted):
// padding is dropped, explicit zeros of the source are kept.
template <class V>
Csr<V> to_csr(const Matrix<V> &M)
{
  Csr<V> C = csr_to_fill<V>(M.nrows, M.ncols);
  const std::int64_t h = M.params.height;
  for (std::int64_t s = 0; s < M.strips(); ++s)
    for (std::int64_t t = 0; t < M.strip_nnz[s]; ++t) C.row_ptr[s * h + row_in_strip_of(M.col_ind[M.strip_ptr[s] + t]) + 1]++;
  for (std::int64_t i = 0; i < M.nrows; ++i) C.row_ptr[i + 1] += C.row_ptr[i];
  C.col_ind.resize(std::size_t(M.nnz));
  C.val.resize(std::size_t(M.nnz));
  std::vector<std::int32_t> next(C.row_ptr.begin(), C.row_ptr.end() - 1);
  // a stable scatter by row restores the source order within each row: the column sort was stable
  // and the source rows were sorted, so entries of one row kept their relative order
  for (std::int64_t s = 0; s < M.strips(); ++s)
    for (std::int64_t t = 0; t < M.strip_nnz[s]; ++t) {
      const std::uint32_t w   = M.col_ind[M.strip_ptr[s] + t];
      const std::int32_t  dst = next[s * h + row_in_strip_of(w)]++;
      C.col_ind[dst]          = std::int32_t(column_of(w));
      C.val[dst]              = M.val[M.strip_ptr[s] + t];
    }
  return C;
}

} // namespace cmrs
} // namespace gpumats
