// BELLPACK on the GPU: device storage and the SpMV kernel (the paper's Algorithm 2).
//
// One thread per sorted block row, one CUDA block of R threads per partition. For every slot k
// the R threads read R consecutive block-column indices and then, for each of the r*c block
// entries, R consecutive values: every load of the matrix is a contiguous warp-wide run. A thread
// loads the c entries of x its block touches once (through the read-only path) and reuses them for
// the r rows of the block, which is where blocking saves loads. Block sizes are compile-time
// template arguments (r, c = 1..8), so the accumulators and x entries stay in registers.
//
// Transpose (the implicit MatMultTranspose): the same thread per block row and the same coalesced
// loads; a thread keeps its r entries of x (times alpha) in registers, and for each of the c
// columns of a block adds the sum of the r products into out[column] with one atomicAdd, after the
// prologue has set out = beta*in: blocking cuts the atomics by r as it cuts the x loads forward.
//
// Few long block rows (GAMG's coarse operators: ksp ex56's third level has 341 block rows of about
// 85 6x6 blocks) leave one thread per block row with a handful of warps on the whole GPU, each
// thread walking its row alone, one dependent load chain after another. The wide kernels give a
// block row T threads (T = 2..32, lanes of one warp): lane t takes the row's slots t, t+T, ..., so
// a warp reads T runs of 32/T consecutive words (the rows of a partition at one slot) instead of
// one run of 32, and the row's chain is T times shorter. Forward, the T lanes' r sums are added by
// shuffles; the transpose needs no sum (its atomics add). T is chosen per launch (row_threads).
#include "../common/cuda/blocks.cuh"
#include "../common/cuda/check.cuh"
#include "device.hpp"

#include <cub/device/device_radix_sort.cuh>

#include <numeric>
#include <utility>
#include <vector>

namespace gpumats {
namespace bellpack {

using cuda::Buffer;
using cuda::LoadPolicy;

namespace {

// The walk over the slots k = k0, k0 + step, ... of one block row, whose first slot's block column
// is at bc and its values from v on (a partition of R block rows). Forward: acc[a] += row a of the
// block row times x. Transposed: each block times the block row's entries of alpha*x (xr), its c
// sums added into out with one atomicAdd each. One thread per block row walks every slot (k0 0,
// step 1); the lanes of a wide kernel every T-th.
template <class V, int BR, int BC, LoadPolicy P>
__device__ __forceinline__ void walk_row(const std::int32_t *bc, const V *v, std::int32_t width, std::int32_t k0, std::int32_t step, std::int64_t R,
                                         std::int64_t ncols, const V *__restrict__ x, V (&acc)[BR])
{
  constexpr int RC = BR * BC;
  for (std::int32_t k = k0; k < width; k += step) {
    const std::int32_t J = cuda::load_matrix<P>(bc + std::int64_t(k) * R);
    if (J == kPadBlock) break; // padding slots follow the real blocks of a row
    V xv[BC];
#pragma unroll
    for (int b = 0; b < BC; ++b) {
      const std::int64_t col = std::int64_t(J) * BC + b;
      xv[b]                  = col < ncols ? cuda::load_x(x, std::uint32_t(col)) : V(0); // the last block column may stick out
    }
    const V *vk = v + std::int64_t(k) * RC * R;
#pragma unroll
    for (int a = 0; a < BR; ++a)
#pragma unroll
      for (int b = 0; b < BC; ++b) acc[a] += cuda::load_matrix<P>(vk + (a * BC + b) * R) * xv[b];
  }
}
template <class V, int BR, int BC, LoadPolicy P>
__device__ __forceinline__ void walk_row_transpose(const std::int32_t *bc, const V *v, std::int32_t width, std::int32_t k0, std::int32_t step,
                                                   std::int64_t R, std::int64_t ncols, const V (&xr)[BR], V *__restrict__ out)
{
  constexpr int RC = BR * BC;
  for (std::int32_t k = k0; k < width; k += step) {
    const std::int32_t J = cuda::load_matrix<P>(bc + std::int64_t(k) * R);
    if (J == kPadBlock) break; // padding slots follow the real blocks of a row
    const V *vk = v + std::int64_t(k) * RC * R;
#pragma unroll
    for (int b = 0; b < BC; ++b) {
      const std::int64_t col = std::int64_t(J) * BC + b;
      V                  sum = V(0);
#pragma unroll
      for (int a = 0; a < BR; ++a) sum += cuda::load_matrix<P>(vk + (a * BC + b) * R) * xr[a];
      if (col < ncols) atomicAdd(out + col, sum); // the last block column may stick out
    }
  }
}
// xr[a] = alpha * x[row a of block row I], 0 for rows past the matrix (fill)
template <class V, int BR>
__device__ __forceinline__ void block_row_x(std::int64_t I, std::int64_t nrows, const V *__restrict__ x, V alpha, V (&xr)[BR])
{
#pragma unroll
  for (int a = 0; a < BR; ++a) xr[a] = I * BR + a < nrows ? alpha * cuda::load_x(x, std::uint32_t(I * BR + a)) : V(0);
}

template <class V, int BR, int BC, LoadPolicy P>
__global__ void spmv_kernel(std::int64_t block_rows, std::int64_t nrows, std::int64_t ncols, const std::int32_t *__restrict__ part_ptr,
                            const std::int32_t *__restrict__ bcol, const V *__restrict__ val, const std::int32_t *__restrict__ perm,
                            const V *__restrict__ x, Epilogue<V> ep)
{
  const int          R = blockDim.x, i = threadIdx.x;
  const std::int64_t q = blockIdx.x, pos = q * R + i;
  if (pos >= block_rows) return;
  const std::int32_t first = part_ptr[q], width = (part_ptr[q + 1] - first) / R;

  V acc[BR];
#pragma unroll
  for (int a = 0; a < BR; ++a) acc[a] = V(0);
  walk_row<V, BR, BC, P>(bcol + first + i, val + std::int64_t(first) * BR * BC + i, width, 0, 1, R, ncols, x, acc);
  const std::int64_t I = perm[pos];
#pragma unroll
  for (int a = 0; a < BR; ++a)
    if (I * BR + a < nrows) ep.apply(I * BR + a, acc[a]);
}

template <class V, int BR, int BC, LoadPolicy P>
__global__ void spmv_transpose_kernel(std::int64_t block_rows, std::int64_t nrows, std::int64_t ncols, const std::int32_t *__restrict__ part_ptr,
                                      const std::int32_t *__restrict__ bcol, const V *__restrict__ val, const std::int32_t *__restrict__ perm,
                                      const V *__restrict__ x, V alpha, V *__restrict__ out)
{
  const int          R = blockDim.x, i = threadIdx.x;
  const std::int64_t q = blockIdx.x, pos = q * R + i;
  if (pos >= block_rows) return;
  const std::int32_t first = part_ptr[q], width = (part_ptr[q + 1] - first) / R;

  V xr[BR];
  block_row_x<V, BR>(perm[pos], nrows, x, alpha, xr);
  walk_row_transpose<V, BR, BC, P>(bcol + first + i, val + std::int64_t(first) * BR * BC + i, width, 0, 1, R, ncols, xr, out);
}

// The wide kernels (see the top of the file): T = 2^log_t threads per block row, the grid covering
// block_rows * T threads in CUDA blocks of kWideBlock; a row's T lanes are consecutive lanes of
// one warp (T divides 32), so the shuffles never leave it.
template <class V, int BR, int BC, LoadPolicy P>
__global__ void spmv_wide_kernel(std::int64_t block_rows, std::int64_t nrows, std::int64_t ncols, int R, int log_t, const std::int32_t *__restrict__ part_ptr,
                                 const std::int32_t *__restrict__ bcol, const V *__restrict__ val, const std::int32_t *__restrict__ perm,
                                 const V *__restrict__ x, Epilogue<V> ep)
{
  const std::int64_t g   = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int          T   = 1 << log_t, t = int(g & (T - 1));
  const std::int64_t pos = g >> log_t;

  V acc[BR];
#pragma unroll
  for (int a = 0; a < BR; ++a) acc[a] = V(0);
  if (pos < block_rows) { // (no return before the shuffles: every lane of the warp takes part)
    const std::int64_t q = pos / R, i = pos - q * R;
    const std::int32_t first = part_ptr[q], width = (part_ptr[q + 1] - first) / R;
    walk_row<V, BR, BC, P>(bcol + first + i, val + std::int64_t(first) * BR * BC + i, width, t, T, R, ncols, x, acc);
  }
  for (int s = T >> 1; s > 0; s >>= 1)
#pragma unroll
    for (int a = 0; a < BR; ++a) acc[a] += __shfl_xor_sync(0xffffffffu, acc[a], s);
  if (pos >= block_rows || t) return;
  const std::int64_t I = perm[pos];
#pragma unroll
  for (int a = 0; a < BR; ++a)
    if (I * BR + a < nrows) ep.apply(I * BR + a, acc[a]);
}

template <class V, int BR, int BC, LoadPolicy P>
__global__ void spmv_transpose_wide_kernel(std::int64_t block_rows, std::int64_t nrows, std::int64_t ncols, int R, int log_t,
                                           const std::int32_t *__restrict__ part_ptr, const std::int32_t *__restrict__ bcol, const V *__restrict__ val,
                                           const std::int32_t *__restrict__ perm, const V *__restrict__ x, V alpha, V *__restrict__ out)
{
  const std::int64_t g   = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int          T   = 1 << log_t, t = int(g & (T - 1));
  const std::int64_t pos = g >> log_t;
  if (pos >= block_rows) return;
  const std::int64_t q = pos / R, i = pos - q * R;
  const std::int32_t first = part_ptr[q], width = (part_ptr[q + 1] - first) / R;

  V xr[BR];
  block_row_x<V, BR>(perm[pos], nrows, x, alpha, xr);
  walk_row_transpose<V, BR, BC, P>(bcol + first + i, val + std::int64_t(first) * BR * BC + i, width, t, T, R, ncols, xr, out);
}

constexpr int kWideBlock = 256; // threads per CUDA block of the wide kernels
// The automatic T: the fewest threads per block row that put kWideThreads threads on the GPU (a
// quarter of an H200's resident threads), no more than the widest row has blocks, at most 32
// (ksp ex56 -ne 59 under GAMG: T = 1 on the fine level of 216,000 block rows, 16 and 32 on the
// coarse levels of 4,805 and 341)
constexpr std::int64_t kWideThreads = std::int64_t(1) << 16;
int auto_row_threads(std::int64_t block_rows, std::int64_t max_width)
{
  int T = 1;
  while (T < 32 && block_rows * T < kWideThreads && T < max_width) T *= 2;
  return T;
}

// The diagonal: one thread per block row, as the SpMV walks it, block sizes at run time (a pass
// that is not timed); of each block that the diagonal crosses, the entries on it go into d. Block
// fill inside such a block is an explicit zero at its position, as the CSR's absent entry reads.
template <class V>
__global__ void diagonal_kernel(std::int64_t block_rows, std::int64_t nrows, int br, int bc_, const std::int32_t *__restrict__ part_ptr,
                                const std::int32_t *__restrict__ bcol, const V *__restrict__ val, const std::int32_t *__restrict__ perm, V *__restrict__ d)
{
  const int          R = blockDim.x, i = threadIdx.x, rc = br * bc_;
  const std::int64_t q = blockIdx.x, pos = q * R + i;
  if (pos >= block_rows) return;
  const std::int32_t  first = part_ptr[q], width = (part_ptr[q + 1] - first) / R;
  const std::int32_t *bc    = bcol + first + i;
  const V            *v     = val + std::int64_t(first) * rc + i;
  const std::int64_t  I     = perm[pos];
  for (std::int32_t k = 0; k < width; ++k) {
    const std::int32_t J = bc[std::int64_t(k) * R];
    if (J == kPadBlock) break; // padding slots follow the real blocks of a row
    for (int a = 0; a < br; ++a) {
      const std::int64_t row = I * br + a, b = row - std::int64_t(J) * bc_;
      if (row < nrows && b >= 0 && b < bc_) d[row] = v[std::int64_t(k) * rc * R + (a * bc_ + b) * R];
    }
  }
}

// Calls f(kernel) with the SpMV kernel (TRANS: its transpose) instantiated for block size r x c and
// load policy P; K enumerates (r-1)*8 + (c-1), one instantiation per supported block size.
// WIDE: the wide kernel of the same block size and policy.
template <class V, bool TRANS, bool WIDE, int BR, int BC, LoadPolicy P>
constexpr auto kernel_of()
{
  if constexpr (TRANS && WIDE) return spmv_transpose_wide_kernel<V, BR, BC, P>;
  else if constexpr (TRANS) return spmv_transpose_kernel<V, BR, BC, P>;
  else if constexpr (WIDE) return spmv_wide_kernel<V, BR, BC, P>;
  else return spmv_kernel<V, BR, BC, P>;
}
template <class V, bool TRANS, bool WIDE, class F, int... K>
void with_kernel(int r, int c, LoadPolicy P, F &&f, std::integer_sequence<int, K...>)
{
  const int key = (r - 1) * kMaxBlock + (c - 1);
  ((key == K ? (P == LoadPolicy::kStream ? f(kernel_of<V, TRANS, WIDE, K / kMaxBlock + 1, K % kMaxBlock + 1, LoadPolicy::kStream>())
                                         : f(kernel_of<V, TRANS, WIDE, K / kMaxBlock + 1, K % kMaxBlock + 1, LoadPolicy::kDefault>()))
              : void()),
   ...);
}
template <class V, bool TRANS = false, bool WIDE = false, class F>
void with_kernel(int r, int c, LoadPolicy P, F &&f)
{
  with_kernel<V, TRANS, WIDE>(r, c, P, f, std::make_integer_sequence<int, kMaxBlock * kMaxBlock>{});
}

template <class V>
class DeviceMatrix final : public cuda::Operator<V> {
public:
  Params       params;
  std::int64_t nrows = 0, ncols = 0, block_rows = 0, partitions = 0;
  std::int64_t max_width = 0; // blocks of the longest block row (the first partition's width)
  Buffer       part_ptr, bcol, val, perm;

  // threads per block row of the next launch: the user's, else auto_row_threads
  int row_threads() const { return params.row_threads ? params.row_threads : auto_row_threads(block_rows, max_width); }
  int log2_row_threads() const
  {
    int l = 0;
    while ((1 << l) < row_threads()) ++l;
    return l;
  }
  unsigned wide_grid() const { return unsigned((block_rows * row_threads() + kWideBlock - 1) / kWideBlock); }

  void spmv(const V *x, const Epilogue<V> &ep, void *stream) const override
  {
    if (!nrows) return;
    const cudaStream_t st = static_cast<cudaStream_t>(stream);
    if (row_threads() > 1) {
      with_kernel<V, false, true>(params.r, params.c, this->load_policy, [&](auto kernel) {
        kernel<<<wide_grid(), kWideBlock, 0, st>>>(block_rows, nrows, ncols, params.partition_rows, log2_row_threads(), part_ptr.as<std::int32_t>(),
                                                   bcol.as<std::int32_t>(), val.as<V>(), perm.as<std::int32_t>(), x, ep);
      });
    } else {
      with_kernel<V>(params.r, params.c, this->load_policy, [&](auto kernel) {
        kernel<<<unsigned(partitions), params.partition_rows, 0, st>>>(block_rows, nrows, ncols, part_ptr.as<std::int32_t>(), bcol.as<std::int32_t>(),
                                                                       val.as<V>(), perm.as<std::int32_t>(), x, ep);
      });
    }
    cuda::check_launch("BELLPACK SpMV kernel");
  }
  void spmv_transpose(const V *x, const Epilogue<V> &ep, void *stream) const override
  {
    cuda::transpose_prologue(ep, ncols, stream); // also when there are no rows: out = beta*in
    if (!nrows || !ncols) return;
    const cudaStream_t st = static_cast<cudaStream_t>(stream);
    if (row_threads() > 1) {
      with_kernel<V, true, true>(params.r, params.c, this->load_policy, [&](auto kernel) {
        kernel<<<wide_grid(), kWideBlock, 0, st>>>(block_rows, nrows, ncols, params.partition_rows, log2_row_threads(), part_ptr.as<std::int32_t>(),
                                                   bcol.as<std::int32_t>(), val.as<V>(), perm.as<std::int32_t>(), x, ep.alpha, ep.out);
      });
    } else {
      with_kernel<V, true>(params.r, params.c, this->load_policy, [&](auto kernel) {
        kernel<<<unsigned(partitions), params.partition_rows, 0, st>>>(block_rows, nrows, ncols, part_ptr.as<std::int32_t>(), bcol.as<std::int32_t>(),
                                                                       val.as<V>(), perm.as<std::int32_t>(), x, ep.alpha, ep.out);
      });
    }
    cuda::check_launch("BELLPACK transpose SpMV kernel");
  }
  void diagonal(V *d, void *stream) const override
  {
    if (!nrows || !ncols) return;
    diagonal_kernel<V><<<unsigned(partitions), params.partition_rows, 0, static_cast<cudaStream_t>(stream)>>>(
      block_rows, nrows, params.r, params.c, part_ptr.as<std::int32_t>(), bcol.as<std::int32_t>(), val.as<V>(), perm.as<std::int32_t>(), d);
    cuda::check_launch("BELLPACK diagonal kernel");
  }
  std::size_t bytes() const override { return part_ptr.bytes() + bcol.bytes() + val.bytes() + perm.bytes(); }
  V *values(std::int64_t *count) override
  {
    *count = this->footprint.stored; // values are separate from the indices: a gather refills them
    return val.template as<V>();
  }
};

// Walks the distinct block columns of block row `I` in ascending order by merging its r sorted
// rows, calling visit(k, J, a_first..) for the k-th block column J with the heads positioned on it.
// Entry j of the host CSR sits at col[j - base].
template <class I, class F>
__device__ void merge_block_row(std::int64_t blockrow, int r, int c, std::int64_t nrows, std::int64_t base, const I *row_ptr, const I *col, F &&visit)
{
  std::int64_t head[kMaxBlock], end[kMaxBlock];
  for (int a = 0; a < r; ++a) {
    const std::int64_t row = blockrow * r + a;
    head[a] = row < nrows ? std::int64_t(row_ptr[row]) - base : 0;
    end[a]  = row < nrows ? std::int64_t(row_ptr[row + 1]) - base : 0;
  }
  for (std::int32_t k = 0;; ++k) {
    std::int64_t J = -1;
    for (int a = 0; a < r; ++a)
      if (head[a] < end[a]) {
        const std::int64_t Ja = std::int64_t(col[head[a]]) / c;
        if (J < 0 || Ja < J) J = Ja;
      }
    if (J < 0) return;
    visit(k, std::int32_t(J), head, end);
  }
}

template <class I>
__global__ void count_kernel(std::int64_t block_rows, int r, int c, std::int64_t nrows, std::int64_t base, const I *__restrict__ row_ptr, const I *__restrict__ col,
                             std::uint32_t *__restrict__ count)
{
  const std::int64_t B = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (B >= block_rows) return;
  std::uint32_t n = 0;
  merge_block_row(B, r, c, nrows, base, row_ptr, col, [&](std::int32_t, std::int32_t J, std::int64_t *head, std::int64_t *end) {
    ++n;
    for (int a = 0; a < r; ++a)
      while (head[a] < end[a] && std::int64_t(col[head[a]]) / c == J) ++head[a];
  });
  count[B] = n;
}

template <class V, class I>
__global__ void fill_kernel(std::int64_t block_rows, int r, int c, int R, std::int64_t nrows, std::int64_t base, const I *__restrict__ row_ptr,
                            const I *__restrict__ col, const V *__restrict__ val_in, const std::int32_t *__restrict__ perm,
                            const std::int32_t *__restrict__ part_ptr, std::int32_t *__restrict__ bcol, V *__restrict__ val)
{
  const std::int64_t pos = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (pos >= block_rows) return;
  const std::int64_t q = pos / R, i = pos % R, rc = std::int64_t(r) * c;
  merge_block_row(std::int64_t(perm[pos]), r, c, nrows, base, row_ptr, col, [&](std::int32_t k, std::int32_t J, std::int64_t *head, std::int64_t *end) {
    bcol[part_ptr[q] + std::int64_t(k) * R + i] = J;
    for (int a = 0; a < r; ++a)
      for (; head[a] < end[a] && std::int64_t(col[head[a]]) / c == J; ++head[a]) {
        const std::int64_t e = a * c + std::int64_t(col[head[a]]) % c;
        val[std::int64_t(part_ptr[q]) * rc + (std::int64_t(k) * rc + e) * R + i] = val_in[head[a]];
      }
  });
}

// A partition holds R block rows as wide as its first (longest): R x that many slots.
__global__ void partition_sizes_kernel(std::int64_t partitions, int R, const std::uint32_t *__restrict__ sorted_count, std::int64_t *__restrict__ sizes)
{
  const std::int64_t q = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (q < partitions) sizes[q] = std::int64_t(sorted_count[q * R]) * R;
}

unsigned blocks_for(std::int64_t n) { return unsigned((n + 255) / 256); }

} // namespace

template <class V, class I>
std::unique_ptr<cuda::Operator<V>> build_on_device(const cuda::DeviceCsr<V, I> &A, const Params &p, cuda::BuildLog *log)
{
  check_params(p);
  if (A.nrows() > std::numeric_limits<std::int32_t>::max() || A.ncols() > std::numeric_limits<std::int32_t>::max())
    throw FormatError("BELLPACK: local block too large for 32-bit indices; use more MPI ranks");
  auto               D      = std::make_unique<DeviceMatrix<V>>();
  void *const        stream = A.stream();
  const auto         st     = static_cast<cudaStream_t>(stream);
  const std::int64_t n = A.nrows(), r = p.r, c = p.c, R = p.partition_rows, rc = r * c, nnz = A.nnz();
  const std::int64_t nbr = (n + r - 1) / r, np = (nbr + R - 1) / R;
  D->params     = p;
  D->nrows      = n;
  D->ncols      = A.ncols();
  D->block_rows = nbr;
  D->partitions = np;

  // structure: blocks per block row (merging its r rows), the stable sort of block rows by count,
  // longest first (a radix sort over the bits a count can have: sort_by_count's order exactly),
  // partition widths and their offsets
  D->perm = Buffer(std::size_t(std::max<std::int64_t>(nbr, 1)) * sizeof(std::int32_t)); // the kernel is handed a real pointer
  Buffer sizes(std::size_t(np) * sizeof(std::int64_t));
  if (nbr) {
    Buffer counts(std::size_t(nbr) * sizeof(std::uint32_t)), sorted(std::size_t(nbr) * sizeof(std::uint32_t)), ids(std::size_t(nbr) * sizeof(std::int32_t)), tmp;
    count_kernel<I><<<blocks_for(nbr), 256, 0, st>>>(nbr, int(r), int(c), n, A.base(), A.row_ptr(), A.col_ind(), counts.as<std::uint32_t>());
    cuda::check_launch("BELLPACK count kernel");
    cuda::iota(ids.as<std::int32_t>(), nbr, stream);
    int                most_bits = 1; // a block row has at most ceil(ncols / c) blocks
    const std::int64_t most      = (A.ncols() + c - 1) / c;
    while (most_bits < 32 && (std::int64_t(1) << most_bits) <= most) ++most_bits;
    std::size_t tmp_bytes = 0;
    cuda::check(cub::DeviceRadixSort::SortPairsDescending(nullptr, tmp_bytes, counts.as<std::uint32_t>(), sorted.as<std::uint32_t>(), ids.as<std::int32_t>(),
                                                          D->perm.template as<std::int32_t>(), nbr, 0, most_bits, st),
                "cub::DeviceRadixSort");
    tmp.resize(std::max<std::size_t>(tmp_bytes, 1));
    cuda::check(cub::DeviceRadixSort::SortPairsDescending(tmp.get(), tmp_bytes, counts.as<std::uint32_t>(), sorted.as<std::uint32_t>(), ids.as<std::int32_t>(),
                                                          D->perm.template as<std::int32_t>(), nbr, 0, most_bits, st),
                "cub::DeviceRadixSort");
    partition_sizes_kernel<<<blocks_for(np), 256, 0, st>>>(np, int(R), sorted.as<std::uint32_t>(), sizes.as<std::int64_t>());
    cuda::check_launch("BELLPACK partition sizes kernel");
    std::uint32_t widest = 0; // the first sorted count: the kernels' choice of threads per block row reads it
    cuda::copy_to_host_sync(&widest, sorted.get(), sizeof widest, stream); // (synchronises: before counts, ids and tmp are freed)
    D->max_width = widest;
  }
  const std::int64_t slots = cuda::offsets_from_sizes(sizes.as<std::int64_t>(), np, D->part_ptr, "BELLPACK", stream);
  checked_offset(slots * rc, "BELLPACK");

  // scatter: padding slots and block fill first, then every entry into its block
  cuda::enter_step(log, cuda::BuildStep::kScatter, stream);
  D->bcol.resize(std::size_t(std::max<std::int64_t>(slots, 1)) * sizeof(std::int32_t));
  D->val.resize(std::size_t(std::max<std::int64_t>(slots * rc, 1)) * sizeof(V));
  cuda::check(cudaMemsetAsync(D->bcol.get(), 0xFF, std::size_t(slots) * sizeof(std::int32_t), st), "cudaMemsetAsync"); // kPadBlock
  cuda::check(cudaMemsetAsync(D->val.get(), 0, std::size_t(slots * rc) * sizeof(V), st), "cudaMemsetAsync");
  if (nbr && nnz) {
    fill_kernel<V, I><<<blocks_for(nbr), 256, 0, st>>>(nbr, int(r), int(c), int(R), n, A.base(), A.row_ptr(), A.col_ind(), A.val(), D->perm.template as<std::int32_t>(),
                                                      D->part_ptr.template as<std::int32_t>(), D->bcol.template as<std::int32_t>(), D->val.template as<V>());
    cuda::check_launch("BELLPACK fill kernel");
  }
  cuda::synchronize(stream);
  D->footprint.rows        = n;
  D->footprint.cols        = A.ncols();
  D->footprint.nnz         = nnz;
  D->footprint.stored      = slots * rc;
  D->footprint.index_bytes = 4 * (slots + nbr + np + 1);
  D->footprint.value_bytes = std::int64_t(sizeof(V)) * slots * rc;
  return D;
}

template <class V, class I>
std::unique_ptr<cuda::Operator<V>> build_on_device(const CsrView<V, I, I> &A, const Params &p)
{
  check_params(p);
  const cuda::DeviceCsr<V, I> up(A, nullptr);
  return build_on_device(up, p);
}

template <class V>
std::unique_ptr<cuda::Operator<V>> dense_on_device(std::int64_t block_rows, int blocks_per_row, const Params &p)
{
  check_params(p);
  const std::int64_t R = p.partition_rows, np = (block_rows + R - 1) / R, rc = std::int64_t(p.r) * p.c;
  const std::int64_t slots = checked_offset(np * R * blocks_per_row, "BELLPACK");
  checked_offset(slots * rc, "BELLPACK");
  auto D        = std::make_unique<DeviceMatrix<V>>();
  D->params     = p;
  D->nrows      = block_rows * p.r;
  D->ncols      = std::int64_t(blocks_per_row) * p.c;
  D->block_rows = block_rows;
  D->partitions = np;
  D->max_width  = blocks_per_row;
  std::vector<std::int32_t> pp(np + 1), perm(block_rows), bcol(static_cast<std::size_t>(slots));
  for (std::int64_t q = 0; q <= np; ++q) pp[q] = std::int32_t(q * R * blocks_per_row);
  std::iota(perm.begin(), perm.end(), 0);
  for (std::int64_t q = 0; q < np; ++q)
    for (std::int64_t k = 0; k < blocks_per_row; ++k)
      for (std::int64_t i = 0; i < R; ++i) bcol[pp[q] + k * R + i] = q * R + i < block_rows ? std::int32_t(k) : kPadBlock;
  D->part_ptr = cuda::upload(pp.data(), pp.size());
  D->perm     = cuda::upload(perm.data(), perm.size());
  D->bcol     = cuda::upload(bcol.data(), bcol.size());
  D->val.resize(std::max<std::int64_t>(slots * rc, 1) * sizeof(V));
  cuda::check(cudaMemset(D->val.get(), 0, slots * rc * sizeof(V)), "cudaMemset");
  cuda::synchronize(nullptr);
  D->footprint.rows = D->nrows, D->footprint.cols = D->ncols;
  D->footprint.nnz = D->footprint.stored = slots * rc;
  D->footprint.index_bytes               = 4 * (slots + block_rows + np + 1);
  D->footprint.value_bytes               = std::int64_t(sizeof(V)) * slots * rc;
  return D;
}

template <class V>
int resident_partitions(const Params &p)
{
  check_params(p);
  int n = 0;
  with_kernel<V>(p.r, p.c, LoadPolicy::kStream,
                 [&](auto kernel) { cuda::check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, p.partition_rows, 0), "cudaOccupancyMaxActiveBlocksPerMultiprocessor"); });
  return n;
}

template <class V>
Matrix<V> download(const cuda::Operator<V> &op)
{
  const auto &D = dynamic_cast<const DeviceMatrix<V> &>(op);
  Matrix<V>   M;
  M.params     = D.params;
  M.nrows      = D.nrows;
  M.ncols      = D.ncols;
  M.block_rows = D.block_rows;
  M.part_ptr.resize(D.partitions + 1);
  cuda::copy_to_host_sync(M.part_ptr.data(), D.part_ptr.get(), M.part_ptr.size() * sizeof(std::int32_t), nullptr);
  const std::int64_t slots = M.part_ptr.back();
  M.block_col.resize(slots);
  M.val.resize(slots * M.rc());
  M.row_perm.resize(D.block_rows);
  if (slots) {
    cuda::copy_to_host_sync(M.block_col.data(), D.bcol.get(), slots * sizeof(std::int32_t), nullptr);
    cuda::copy_to_host_sync(M.val.data(), D.val.get(), slots * M.rc() * sizeof(V), nullptr);
  }
  if (D.block_rows) cuda::copy_to_host_sync(M.row_perm.data(), D.perm.get(), D.block_rows * sizeof(std::int32_t), nullptr);
  return M;
}

template <class V>
std::unique_ptr<cuda::Operator<V>> to_device(const Matrix<V> &M)
{
  auto D        = std::make_unique<DeviceMatrix<V>>();
  D->params     = M.params;
  D->nrows      = M.nrows;
  D->ncols      = M.ncols;
  D->block_rows = M.block_rows;
  D->partitions = M.partitions();
  D->max_width  = M.partitions() ? M.width(0) : 0; // (sorted longest first)
  D->part_ptr   = cuda::upload(M.part_ptr.data(), M.part_ptr.size());
  D->bcol       = cuda::upload(M.block_col.data(), M.block_col.size());
  D->val        = cuda::upload(M.val.data(), M.val.size());
  D->perm       = cuda::upload(M.row_perm.data(), M.row_perm.size());
  D->footprint  = footprint(M);
  return D;
}

#define GPUMATS_BELLPACK_INSTANTIATE_I(V, I)                                                                                                 \
  template std::unique_ptr<cuda::Operator<V>> build_on_device<V, I>(const cuda::DeviceCsr<V, I> &, const Params &, cuda::BuildLog *);         \
  template std::unique_ptr<cuda::Operator<V>> build_on_device<V, I>(const CsrView<V, I, I> &, const Params &);
#define GPUMATS_BELLPACK_INSTANTIATE(V)                                                                                      \
  template std::unique_ptr<cuda::Operator<V>> to_device<V>(const Matrix<V> &);                                               \
  GPUMATS_BELLPACK_INSTANTIATE_I(V, std::int32_t)                                                                            \
  GPUMATS_BELLPACK_INSTANTIATE_I(V, std::int64_t)                                                                            \
  template Matrix<V> download<V>(const cuda::Operator<V> &);                                                                  \
  template std::unique_ptr<cuda::Operator<V>> dense_on_device<V>(std::int64_t, int, const Params &);                            \
  template int resident_partitions<V>(const Params &);
GPUMATS_BELLPACK_INSTANTIATE(float)
GPUMATS_BELLPACK_INSTANTIATE(double)

} // namespace bellpack
} // namespace gpumats
