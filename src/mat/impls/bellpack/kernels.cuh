// BELLPACK's product kernels (the paper's Algorithm 2) and their launches, for every value source
// (common/cuda/values.cuh): cuda.cu instantiates them for plain values, dictionary_kernels.cu for
// the value dictionary's 1- and 2-byte codes (two files, so that the 64 block sizes of each compile
// side by side).
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
#pragma once

#include "../common/cuda/blocks.cuh"
#include "../common/cuda/check.cuh"
#include "../common/cuda/values.cuh"
#include "core.hpp"

#include <type_traits>
#include <utility>

namespace gpumats {
namespace bellpack {
namespace kernels {

using cuda::LoadPolicy;

// The walk over the slots k = k0, k0 + step, ... of one block row, whose first slot's block column
// is at bc and its first value at v0 of the value source val (common/cuda/values.cuh; a partition
// of R block rows). Forward: acc[a] += row a of the block row times x. Transposed: each block times the block row's entries of alpha*x (xr), its c
// sums added into out with one atomicAdd each. One thread per block row walks every slot (k0 0,
// step 1); the lanes of a wide kernel every T-th.
template <class V, int BR, int BC, LoadPolicy P, class VS>
__device__ __forceinline__ void walk_row(const std::int32_t *bc, const VS &val, std::int64_t v0, std::int32_t width, std::int32_t k0, std::int32_t step, std::int64_t R,
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
    const std::int64_t vk = v0 + std::int64_t(k) * RC * R;
#pragma unroll
    for (int a = 0; a < BR; ++a)
#pragma unroll
      for (int b = 0; b < BC; ++b) acc[a] += val.template load<P>(vk + (a * BC + b) * R) * xv[b];
  }
}
template <class V, int BR, int BC, LoadPolicy P, class VS>
__device__ __forceinline__ void walk_row_transpose(const std::int32_t *bc, const VS &val, std::int64_t v0, std::int32_t width, std::int32_t k0, std::int32_t step,
                                                   std::int64_t R, std::int64_t ncols, const V (&xr)[BR], V *__restrict__ out)
{
  constexpr int RC = BR * BC;
  for (std::int32_t k = k0; k < width; k += step) {
    const std::int32_t J = cuda::load_matrix<P>(bc + std::int64_t(k) * R);
    if (J == kPadBlock) break; // padding slots follow the real blocks of a row
    const std::int64_t vk = v0 + std::int64_t(k) * RC * R;
#pragma unroll
    for (int b = 0; b < BC; ++b) {
      const std::int64_t col = std::int64_t(J) * BC + b;
      V                  sum = V(0);
#pragma unroll
      for (int a = 0; a < BR; ++a) sum += val.template load<P>(vk + (a * BC + b) * R) * xr[a];
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

template <class V, int BR, int BC, LoadPolicy P, class VS>
__global__ void spmv_kernel(std::int64_t block_rows, std::int64_t nrows, std::int64_t ncols, const std::int32_t *__restrict__ part_ptr,
                            const std::int32_t *__restrict__ bcol, VS val, const std::int32_t *__restrict__ perm,
                            const V *__restrict__ x, Epilogue<V> ep)
{
  const int          R = blockDim.x, i = threadIdx.x;
  const std::int64_t q = blockIdx.x, pos = q * R + i;
  if (pos >= block_rows) return;
  const std::int32_t first = part_ptr[q], width = (part_ptr[q + 1] - first) / R;

  V acc[BR];
#pragma unroll
  for (int a = 0; a < BR; ++a) acc[a] = V(0);
  walk_row<V, BR, BC, P>(bcol + first + i, val, std::int64_t(first) * BR * BC + i, width, 0, 1, R, ncols, x, acc);
  const std::int64_t I = perm[pos];
#pragma unroll
  for (int a = 0; a < BR; ++a)
    if (I * BR + a < nrows) ep.apply(I * BR + a, acc[a]);
}

template <class V, int BR, int BC, LoadPolicy P, class VS>
__global__ void spmv_transpose_kernel(std::int64_t block_rows, std::int64_t nrows, std::int64_t ncols, const std::int32_t *__restrict__ part_ptr,
                                      const std::int32_t *__restrict__ bcol, VS val, const std::int32_t *__restrict__ perm,
                                      const V *__restrict__ x, V alpha, V *__restrict__ out)
{
  const int          R = blockDim.x, i = threadIdx.x;
  const std::int64_t q = blockIdx.x, pos = q * R + i;
  if (pos >= block_rows) return;
  const std::int32_t first = part_ptr[q], width = (part_ptr[q + 1] - first) / R;

  V xr[BR];
  block_row_x<V, BR>(perm[pos], nrows, x, alpha, xr);
  walk_row_transpose<V, BR, BC, P>(bcol + first + i, val, std::int64_t(first) * BR * BC + i, width, 0, 1, R, ncols, xr, out);
}

// The wide kernels (see the top of the file): T = 2^log_t threads per block row, the grid covering
// block_rows * T threads in CUDA blocks of kWideBlock; a row's T lanes are consecutive lanes of
// one warp (T divides 32), so the shuffles never leave it.
template <class V, int BR, int BC, LoadPolicy P, class VS>
__global__ void spmv_wide_kernel(std::int64_t block_rows, std::int64_t nrows, std::int64_t ncols, int R, int log_t, const std::int32_t *__restrict__ part_ptr,
                                 const std::int32_t *__restrict__ bcol, VS val, const std::int32_t *__restrict__ perm,
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
    walk_row<V, BR, BC, P>(bcol + first + i, val, std::int64_t(first) * BR * BC + i, width, t, T, R, ncols, x, acc);
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

template <class V, int BR, int BC, LoadPolicy P, class VS>
__global__ void spmv_transpose_wide_kernel(std::int64_t block_rows, std::int64_t nrows, std::int64_t ncols, int R, int log_t,
                                           const std::int32_t *__restrict__ part_ptr, const std::int32_t *__restrict__ bcol, VS val,
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
  walk_row_transpose<V, BR, BC, P>(bcol + first + i, val, std::int64_t(first) * BR * BC + i, width, t, T, R, ncols, xr, out);
}

constexpr int kWideBlock = 256; // threads per CUDA block of the wide kernels
// The automatic T: the fewest threads per block row that put kWideThreads threads on the GPU (a
// quarter of an H200's resident threads), no more than the widest row has blocks, at most 32
// (large matrices get T = 1; GAMG's coarse levels of a few thousand block rows get 16 or 32)
constexpr std::int64_t kWideThreads = std::int64_t(1) << 16;
inline int auto_row_threads(std::int64_t block_rows, std::int64_t max_width)
{
  int T = 1;
  while (T < 32 && block_rows * T < kWideThreads && T < max_width) T *= 2;
  return T;
}

// The diagonal: one thread per block row, as the SpMV walks it, block sizes at run time (a pass
// that is not timed); of each block that the diagonal crosses, the entries on it go into d. Block
// fill inside such a block is an explicit zero at its position, as the CSR's absent entry reads.
template <class V, class VS>
__global__ void diagonal_kernel(std::int64_t block_rows, std::int64_t nrows, int br, int bc_, const std::int32_t *__restrict__ part_ptr,
                                const std::int32_t *__restrict__ bcol, VS val, const std::int32_t *__restrict__ perm, V *__restrict__ d)
{
  const int          R = blockDim.x, i = threadIdx.x, rc = br * bc_;
  const std::int64_t q = blockIdx.x, pos = q * R + i;
  if (pos >= block_rows) return;
  const std::int32_t  first = part_ptr[q], width = (part_ptr[q + 1] - first) / R;
  const std::int32_t *bc    = bcol + first + i;
  const std::int64_t  v0    = std::int64_t(first) * rc + i;
  const std::int64_t  I     = perm[pos];
  for (std::int32_t k = 0; k < width; ++k) {
    const std::int32_t J = bc[std::int64_t(k) * R];
    if (J == kPadBlock) break; // padding slots follow the real blocks of a row
    for (int a = 0; a < br; ++a) {
      const std::int64_t row = I * br + a, b = row - std::int64_t(J) * bc_;
      if (row < nrows && b >= 0 && b < bc_) d[row] = val.template load<LoadPolicy::kDefault>(v0 + std::int64_t(k) * rc * R + (a * bc_ + b) * R);
    }
  }
}

// Calls f(kernel) with the SpMV kernel (TRANS: its transpose) instantiated for block size r x c,
// load policy P and value source VS; K enumerates (r-1)*8 + (c-1), one instantiation per supported
// block size. WIDE: the wide kernel of the same block size and policy. The dictionary's codes are
// loaded with the streaming policy only (-mat_gpumats_loads cached applies to plain values): both
// policies would double the kernels compiled for every code width.
template <class V, bool TRANS, bool WIDE, int BR, int BC, LoadPolicy P, class VS>
constexpr auto kernel_of()
{
  if constexpr (TRANS && WIDE) return spmv_transpose_wide_kernel<V, BR, BC, P, VS>;
  else if constexpr (TRANS) return spmv_transpose_kernel<V, BR, BC, P, VS>;
  else if constexpr (WIDE) return spmv_wide_kernel<V, BR, BC, P, VS>;
  else return spmv_kernel<V, BR, BC, P, VS>;
}
template <class V, class VS, bool TRANS, bool WIDE, class F, int... K>
void with_kernel(int r, int c, LoadPolicy P, F &&f, std::integer_sequence<int, K...>)
{
  constexpr bool both = std::is_same_v<VS, cuda::PlainValues<V>>;
  const int      key  = (r - 1) * kMaxBlock + (c - 1);
  auto           one  = [&](auto kernel_stream, auto kernel_default) {
    if constexpr (both) P == LoadPolicy::kStream ? f(kernel_stream) : f(kernel_default);
    else f(kernel_stream);
  };
  ((key == K ? one(kernel_of<V, TRANS, WIDE, K / kMaxBlock + 1, K % kMaxBlock + 1, LoadPolicy::kStream, VS>(),
                   kernel_of<V, TRANS, WIDE, K / kMaxBlock + 1, K % kMaxBlock + 1, both ? LoadPolicy::kDefault : LoadPolicy::kStream, VS>())
             : void()),
   ...);
}
template <class V, class VS, bool TRANS = false, bool WIDE = false, class F>
void with_kernel(int r, int c, LoadPolicy P, F &&f)
{
  with_kernel<V, VS, TRANS, WIDE>(r, c, P, f, std::make_integer_sequence<int, kMaxBlock * kMaxBlock>{});
}

} // namespace kernels

// What a product launch needs of a device copy (cuda.cu's DeviceMatrix), values apart.
struct Launch {
  Params              params;
  std::int64_t        nrows = 0, ncols = 0, block_rows = 0, partitions = 0;
  int                 row_threads = 1; // T of this launch (1: the kernels of one thread per block row)
  cuda::LoadPolicy    policy      = cuda::LoadPolicy::kStream;
  const std::int32_t *part_ptr = nullptr, *bcol = nullptr, *perm = nullptr;

  int log2_row_threads() const
  {
    int l = 0;
    while ((1 << l) < row_threads) ++l;
    return l;
  }
  unsigned wide_grid() const { return unsigned((block_rows * row_threads + kernels::kWideBlock - 1) / kernels::kWideBlock); }
};

// ep.apply(row, (A x)[row]) for every row, values from vs (the caller has checked nrows > 0)
template <class V, class VS>
void launch_spmv(const Launch &L, VS vs, const V *x, const Epilogue<V> &ep, cudaStream_t st)
{
  if (L.row_threads > 1) {
    kernels::with_kernel<V, VS, false, true>(L.params.r, L.params.c, L.policy, [&](auto kernel) {
      kernel<<<L.wide_grid(), kernels::kWideBlock, 0, st>>>(L.block_rows, L.nrows, L.ncols, L.params.partition_rows, L.log2_row_threads(), L.part_ptr, L.bcol, vs,
                                                            L.perm, x, ep);
    });
  } else {
    kernels::with_kernel<V, VS>(L.params.r, L.params.c, L.policy, [&](auto kernel) {
      kernel<<<unsigned(L.partitions), L.params.partition_rows, 0, st>>>(L.block_rows, L.nrows, L.ncols, L.part_ptr, L.bcol, vs, L.perm, x, ep);
    });
  }
  cuda::check_launch("BELLPACK SpMV kernel");
}

// ep.out += ep.alpha * A^T x, after the caller's transpose prologue (nrows, ncols > 0)
template <class V, class VS>
void launch_spmv_transpose(const Launch &L, VS vs, const V *x, const Epilogue<V> &ep, cudaStream_t st)
{
  if (L.row_threads > 1) {
    kernels::with_kernel<V, VS, true, true>(L.params.r, L.params.c, L.policy, [&](auto kernel) {
      kernel<<<L.wide_grid(), kernels::kWideBlock, 0, st>>>(L.block_rows, L.nrows, L.ncols, L.params.partition_rows, L.log2_row_threads(), L.part_ptr, L.bcol, vs,
                                                            L.perm, x, ep.alpha, ep.out);
    });
  } else {
    kernels::with_kernel<V, VS, true>(L.params.r, L.params.c, L.policy, [&](auto kernel) {
      kernel<<<unsigned(L.partitions), L.params.partition_rows, 0, st>>>(L.block_rows, L.nrows, L.ncols, L.part_ptr, L.bcol, vs, L.perm, x, ep.alpha, ep.out);
    });
  }
  cuda::check_launch("BELLPACK transpose SpMV kernel");
}

// d[row] = A[row][row] for every row (nrows, ncols > 0)
template <class V, class VS>
void launch_diagonal(const Launch &L, VS vs, V *d, cudaStream_t st)
{
  kernels::diagonal_kernel<V, VS><<<unsigned(L.partitions), L.params.partition_rows, 0, st>>>(L.block_rows, L.nrows, L.params.r, L.params.c, L.part_ptr, L.bcol, vs,
                                                                                             L.perm, d);
  cuda::check_launch("BELLPACK diagonal kernel");
}

// The launches of the dictionary's value sources, compiled in dictionary_kernels.cu.
#define GPUMATS_BELLPACK_LAUNCHES(EXTERN, V, C)                                                                                        \
  EXTERN template void launch_spmv<V, cuda::DictionaryValues<V, C>>(const Launch &, cuda::DictionaryValues<V, C>, const V *, const Epilogue<V> &, cudaStream_t); \
  EXTERN template void launch_spmv_transpose<V, cuda::DictionaryValues<V, C>>(const Launch &, cuda::DictionaryValues<V, C>, const V *, const Epilogue<V> &,     \
                                                                              cudaStream_t);                                                                  \
  EXTERN template void launch_diagonal<V, cuda::DictionaryValues<V, C>>(const Launch &, cuda::DictionaryValues<V, C>, V *, cudaStream_t);
#define GPUMATS_BELLPACK_DICTIONARY_LAUNCHES(EXTERN)                                                                                   \
  GPUMATS_BELLPACK_LAUNCHES(EXTERN, float, std::uint8_t)                                                                               \
  GPUMATS_BELLPACK_LAUNCHES(EXTERN, float, std::uint16_t)                                                                              \
  GPUMATS_BELLPACK_LAUNCHES(EXTERN, double, std::uint8_t)                                                                              \
  GPUMATS_BELLPACK_LAUNCHES(EXTERN, double, std::uint16_t)
GPUMATS_BELLPACK_DICTIONARY_LAUNCHES(extern)

} // namespace bellpack
} // namespace gpumats
