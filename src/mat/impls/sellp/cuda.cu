// SELL-P on the GPU: device storage, conversion from CSR on the device, and the SpMV kernel.
//
// Kernel (the paper's Fig. 2): a slice is worked on by b x t threads; thread (i, j) of the slice
// (local index j*b + i, so consecutive threads read consecutive words) sums entries j, j+t, ...
// of row i, unrolled by two, and the t partial sums of a row are added by a fan-in. When a slice
// fits in a warp (b*t <= 32) the fan-in is a warp shuffle over the j bits of the lane; otherwise it
// goes through shared memory, as in the paper. Small slices are packed several to a 256-thread
// block so that the SM is not limited by its maximum number of resident blocks.
//
// Transpose (the implicit MatMultTranspose): the same threads read the same coalesced runs of the
// slice; thread (i, j) loads x of its row once and adds alpha*v*x[row] into out[column] with
// atomicAdd for each of its entries, after the prologue has set out = beta*in. Nothing is reduced,
// so there is no fan-in and no shared memory; when a slice is one warp, runs of lanes that add into
// one column first sum among themselves (spmv_transpose_warp_kernel).
#include "../common/cuda/blocks.cuh"
#include "../common/cuda/check.cuh"
#include "device.hpp"
#include "../common/cuda/values.cuh"

#include <cub/device/device_segmented_sort.cuh>

#include <algorithm>
#include <cstring>

namespace gpumats {
namespace sellp {

using cuda::Buffer;
using cuda::blocks_for;
using cuda::DictionaryValues;
using cuda::LoadPolicy;
using cuda::PlainValues;
using cuda::SharedDictionaryValues;

namespace {

constexpr int kMinBlock = 256;

int log2i(int v)
{
  int l = 0;
  while ((1 << l) < v) ++l;
  return l;
}

// Column of the entry at offset e of the slice (slice column sc), in either index form.
template <bool IDX16, LoadPolicy P>
__device__ __forceinline__ std::int32_t load_column(const void *col, const std::int32_t *base, std::int64_t e, std::int64_t sc)
{
  if constexpr (IDX16) {
    const std::uint16_t d = cuda::load_matrix<P>(static_cast<const std::uint16_t *>(col) + e);
    return d == kPadDelta ? kPadColumn : __ldg(base + sc) + std::int32_t(d);
  } else {
    return cuda::load_matrix<P>(static_cast<const std::int32_t *>(col) + e);
  }
}

// VS: where values come from (common/cuda/values.cuh): the plain array or the value dictionary's codes
template <class V, LoadPolicy P, bool SHUFFLE, bool IDX16, class VS>
__global__ void spmv_kernel(std::int64_t nslices, std::int64_t nrows, int b_log2, int t_log2, const std::int32_t *__restrict__ slice_ptr,
                            const void *__restrict__ col, const std::int32_t *__restrict__ base, VS val,
                            const std::int32_t *__restrict__ perm, const V *__restrict__ x, Epilogue<V> ep)
{
  extern __shared__ unsigned char smem_raw[];
  const int          bt_log2 = b_log2 + t_log2, bt = 1 << bt_log2;
  const int          local   = threadIdx.x & (bt - 1); // j*b + i
  const int          i       = local & ((1 << b_log2) - 1), j = local >> b_log2;
  const std::int64_t s       = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) >> bt_log2;

  val.prepare();
  V sum = V(0);
  if (s < nslices) {
    const std::int32_t off   = slice_ptr[s];
    const std::int32_t steps = (slice_ptr[s + 1] - off) >> bt_log2; // entries per thread
    // entry kk of this thread: offset off + local + kk*b*t, in slice column off/b + j + kk*t
    const std::int64_t e0 = off + local, sc0 = (off >> b_log2) + j;
    std::int32_t       kk = 0;
    for (; kk + 1 < steps; kk += 2) { // the paper's unroll by two: two independent load chains
      const std::int32_t c1 = load_column<IDX16, P>(col, base, e0 + (std::int64_t(kk) << bt_log2), sc0 + (std::int64_t(kk) << t_log2));
      const std::int32_t c2 = load_column<IDX16, P>(col, base, e0 + (std::int64_t(kk + 1) << bt_log2), sc0 + (std::int64_t(kk + 1) << t_log2));
      const V            v1 = val.template load<P>(e0 + (std::int64_t(kk) << bt_log2)), v2 = val.template load<P>(e0 + (std::int64_t(kk + 1) << bt_log2));
      if (c1 != kPadColumn) sum += v1 * cuda::load_x(x, std::uint32_t(c1));
      if (c2 != kPadColumn) sum += v2 * cuda::load_x(x, std::uint32_t(c2));
    }
    if (kk < steps) {
      const std::int32_t c1 = load_column<IDX16, P>(col, base, e0 + (std::int64_t(kk) << bt_log2), sc0 + (std::int64_t(kk) << t_log2));
      const V            v1 = val.template load<P>(e0 + (std::int64_t(kk) << bt_log2));
      if (c1 != kPadColumn) sum += v1 * cuda::load_x(x, std::uint32_t(c1));
    }
  }
  if constexpr (SHUFFLE) {
    // the t threads of row i are lanes i + j*b of one aligned group of b*t lanes
    for (int m = b_log2; m < bt_log2; ++m) sum += __shfl_xor_sync(0xffffffffu, sum, 1 << m);
  } else {
    V *red             = reinterpret_cast<V *>(smem_raw);
    red[threadIdx.x]   = sum;
    for (int half = (1 << t_log2) / 2; half > 0; half /= 2) {
      __syncthreads();
      if (j < half) red[threadIdx.x] += red[threadIdx.x + (half << b_log2)];
    }
    sum = red[threadIdx.x];
  }
  const std::int64_t pos = (s << b_log2) + i;
  if (j == 0 && s < nslices && pos < nrows) ep.apply(perm ? perm[pos] : pos, sum);
}

template <class V, LoadPolicy P, bool IDX16, class VS>
__global__ void spmv_transpose_kernel(std::int64_t nslices, std::int64_t nrows, int b_log2, int t_log2, const std::int32_t *__restrict__ slice_ptr,
                                      const void *__restrict__ col, const std::int32_t *__restrict__ base, VS val,
                                      const std::int32_t *__restrict__ perm, const V *__restrict__ x, V alpha, V *__restrict__ out)
{
  const int          bt_log2 = b_log2 + t_log2, bt = 1 << bt_log2;
  const int          local   = threadIdx.x & (bt - 1); // j*b + i
  const int          i       = local & ((1 << b_log2) - 1), j = local >> b_log2;
  const std::int64_t s       = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) >> bt_log2;
  const std::int64_t pos     = (s << b_log2) + i;
  val.prepare();
  // rows past the matrix (the last slice) hold only padding, and x has no entry for them
  if (s >= nslices || pos >= nrows) return;
  const V            xr    = alpha * cuda::load_x(x, std::uint32_t(perm ? perm[pos] : pos));
  const std::int32_t off   = slice_ptr[s];
  const std::int32_t steps = (slice_ptr[s + 1] - off) >> bt_log2;
  const std::int64_t e0 = off + local, sc0 = (off >> b_log2) + j;
  for (std::int32_t kk = 0; kk < steps; ++kk) {
    const std::int32_t c = load_column<IDX16, P>(col, base, e0 + (std::int64_t(kk) << bt_log2), sc0 + (std::int64_t(kk) << t_log2));
    const V            v = val.template load<P>(e0 + (std::int64_t(kk) << bt_log2));
    if (c != kPadColumn) atomicAdd(out + c, v * xr);
  }
}

// The transpose when a slice's b*t threads are one warp (b*t == 32, the default slice of 32 rows
// with one thread a row), so that every lane of the warp runs the same number of steps: lanes next
// to each other often add into the same column in the same step (the fine rows of an interpolation
// that share a coarse point, the rows of one aggregate in a GAMG prolongator), so each run of lanes
// with one column sums its contributions (a segmented suffix sum over the warp, as many rounds as
// the longest run needs) and its first lane makes the one atomicAdd, where the kernel above makes
// one per lane: fewer atomics where they are the limit, a ballot and a vote a step where runs are
// single lanes. A column that comes back after a gap is added once by each of its runs.
template <class V, LoadPolicy P, bool IDX16, class VS>
__global__ void spmv_transpose_warp_kernel(std::int64_t nslices, std::int64_t nrows, int b_log2, const std::int32_t *__restrict__ slice_ptr,
                                           const void *__restrict__ col, const std::int32_t *__restrict__ base, VS val,
                                           const std::int32_t *__restrict__ perm, const V *__restrict__ x, V alpha, V *__restrict__ out)
{
  constexpr unsigned kAll  = 0xffffffffu;
  const int          lane  = threadIdx.x & (cuda::kWarp - 1); // j*b + i
  const int          i     = lane & ((1 << b_log2) - 1), j = lane >> b_log2, t_log2 = 5 - b_log2;
  const std::int64_t s     = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const std::int64_t pos   = (s << b_log2) + i;
  val.prepare();
  if (s >= nslices) return; // (the whole warp)
  // rows past the matrix (the last slice) hold only padding: such lanes take part with nothing to add
  const V            xr    = pos < nrows ? alpha * cuda::load_x(x, std::uint32_t(perm ? perm[pos] : pos)) : V(0);
  const std::int32_t off   = slice_ptr[s];
  const std::int32_t steps = (slice_ptr[s + 1] - off) >> 5;
  const std::int64_t e0 = off + lane, sc0 = (off >> b_log2) + j;
  for (std::int32_t kk = 0; kk < steps; ++kk) {
    const std::int32_t c    = load_column<IDX16, P>(col, base, e0 + (std::int64_t(kk) << 5), sc0 + (std::int64_t(kk) << t_log2));
    V                  sum  = val.template load<P>(e0 + (std::int64_t(kk) << 5)) * xr;
    const std::int32_t prev = __shfl_up_sync(kAll, c, 1);
    const bool         head = lane == 0 || prev != c;
    // the last lane of this lane's run: the one before the next head above it, else lane 31
    const unsigned above = __ballot_sync(kAll, head) & ~((2u << lane) - 1u);
    const int      last  = above ? __ffs(int(above)) - 2 : cuda::kWarp - 1;
    for (int d = 1; __any_sync(kAll, lane + d <= last); d <<= 1) {
      const V o = __shfl_down_sync(kAll, sum, d);
      if (lane + d <= last) sum += o;
    }
    if (head && c != kPadColumn) atomicAdd(out + c, sum);
  }
}

// How many stored entries hold the column of the lane before them in the same step, when a slice's
// b*t threads are one warp (slice offsets are then multiples of 32, so the lane of offset e is
// e mod 32): the entries spmv_transpose_warp_kernel saves an atomicAdd for.
template <bool IDX16>
__global__ void run_entries_kernel(std::int64_t stored, int b_log2, const void *__restrict__ col, const std::int32_t *__restrict__ base,
                                   unsigned long long *__restrict__ count)
{
  const std::int64_t e    = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  unsigned           mine = 0;
  if (e < stored && (e & (cuda::kWarp - 1))) {
    const std::int32_t c = load_column<IDX16, LoadPolicy::kDefault>(col, base, e, e >> b_log2);
    mine                 = c != kPadColumn && c == load_column<IDX16, LoadPolicy::kDefault>(col, base, e - 1, (e - 1) >> b_log2);
  }
  const unsigned warp = __popc(__ballot_sync(0xffffffffu, mine));
  if ((threadIdx.x & (cuda::kWarp - 1)) == 0 && warp) atomicAdd(count, (unsigned long long)warp);
}

// The diagonal: one thread per row position of the slices, walking its row's slots (slot m of
// row i of slice s at offset slice_ptr[s] + m*b + i) until the entry in its own column; padding
// has no column and matches no row.
template <class V, bool IDX16, class VS>
__global__ void diagonal_kernel(std::int64_t nrows, int b_log2, const std::int32_t *__restrict__ slice_ptr, const void *__restrict__ col,
                                const std::int32_t *__restrict__ base, VS val, const std::int32_t *__restrict__ perm, V *__restrict__ d)
{
  const std::int64_t pos = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  val.prepare(); // (every thread, before any returns: the shared table synchronises the block)
  if (pos >= nrows) return;
  const std::int64_t s = pos >> b_log2, i = pos & ((1 << b_log2) - 1);
  const std::int32_t off = slice_ptr[s], width = (slice_ptr[s + 1] - off) >> b_log2;
  const std::int64_t row = perm ? perm[pos] : pos;
  for (std::int32_t m = 0; m < width; ++m) {
    const std::int64_t e = off + (std::int64_t(m) << b_log2) + i;
    if (load_column<IDX16, LoadPolicy::kDefault>(col, base, e, (off >> b_log2) + m) == row) {
      d[row] = val.template load<LoadPolicy::kDefault>(e);
      return;
    }
  }
}

template <class V>
class DeviceMatrix final : public cuda::Operator<V> {
public:
  Params                    params;
  std::int64_t              nrows = 0, ncols = 0, nnz = 0, nslices = 0;
  bool                      index16 = false;
  Buffer                    slice_ptr, col, base, val, perm;
  // whether the transpose sums runs of lanes first (spmv_transpose_warp_kernel): decided at the
  // first transposed product from this structure (-1: not yet), which a new structure rebuilds
  mutable int run_transpose = -1;
  int                       code_bytes = 0; // value dictionary: codes of 1 or 2 bytes into table; val unused
  Buffer                    codes, table;

  bool values_compressed() const override { return code_bytes != 0; }
  // calls f with the value source of this copy's form (common/cuda/values.cuh)
  template <class F>
  void with_values(F &&f) const
  {
    if (code_bytes == 1 && params.shared_table)
      f(SharedDictionaryValues<V>{codes.as<std::uint8_t>(), table.as<V>(), int(table.bytes() / sizeof(V)), nullptr});
    else if (code_bytes == 1) f(DictionaryValues<V, std::uint8_t>{codes.as<std::uint8_t>(), table.as<V>()});
    else if (code_bytes == 2) f(DictionaryValues<V, std::uint16_t>{codes.as<std::uint16_t>(), table.as<V>()});
    else f(PlainValues<V>{val.as<V>()});
  }

  template <bool SHUFFLE, bool IDX16>
  void launch(const V *x, const Epilogue<V> &ep, cudaStream_t st, int b_log2, int t_log2, int block, std::int64_t grid) const
  {
    with_values([&](auto vs) { launch_values<SHUFFLE, IDX16>(vs, x, ep, st, b_log2, t_log2, block, grid); });
  }
  template <bool SHUFFLE, bool IDX16, class VS>
  void launch_values(VS vs, const V *x, const Epilogue<V> &ep, cudaStream_t st, int b_log2, int t_log2, int block, std::int64_t grid) const
  {
    const std::size_t smem = SHUFFLE ? 0 : block * sizeof(V);
    const auto       *pm   = perm.get() ? perm.as<std::int32_t>() : nullptr;
    auto go = [&](auto kernel) {
      kernel<<<unsigned(grid), block, smem, st>>>(nslices, nrows, b_log2, t_log2, slice_ptr.as<std::int32_t>(), col.get(), base.as<std::int32_t>(),
                                                  vs, pm, x, ep);
    };
    if (this->load_policy == LoadPolicy::kStream) go(spmv_kernel<V, LoadPolicy::kStream, SHUFFLE, IDX16, VS>);
    else go(spmv_kernel<V, LoadPolicy::kDefault, SHUFFLE, IDX16, VS>);
  }

  void spmv(const V *x, const Epilogue<V> &ep, void *stream) const override
  {
    if (!nrows) return;
    const int          b_log2 = log2i(params.slice_height), t_log2 = log2i(params.threads_per_row), bt = 1 << (b_log2 + t_log2);
    const int          block  = std::max(bt, kMinBlock);
    const std::int64_t grid   = (nslices * bt + block - 1) / block;
    auto               st     = static_cast<cudaStream_t>(stream);
    if (bt <= cuda::kWarp) index16 ? launch<true, true>(x, ep, st, b_log2, t_log2, block, grid) : launch<true, false>(x, ep, st, b_log2, t_log2, block, grid);
    else index16 ? launch<false, true>(x, ep, st, b_log2, t_log2, block, grid) : launch<false, false>(x, ep, st, b_log2, t_log2, block, grid);
    cuda::check_launch("SELL-P SpMV kernel");
  }
  // Sums of runs pay where at least a third of the entries share the column of the lane before
  // them (a block size of 3 or more in the rows, as block3 in examples/bench.cu and GAMG's
  // prolongators of elasticity have): fewer atomics than one per entry. An interpolation of a 3D
  // grid has about 14% (PCMG's finest in ksp ex45), where summing the runs costs more than the
  // atomics it saves, so below a third the plain atomics stay (build/bin/bench -transpose true
  // measures both).
  bool sums_runs(void *stream) const
  {
    if (run_transpose < 0) {
      const std::int64_t stored = this->footprint.stored;
      unsigned long long runs   = 0;
      if (stored && nrows) {
        Buffer     count(sizeof(unsigned long long));
        const auto st = static_cast<cudaStream_t>(stream);
        cuda::check(cudaMemsetAsync(count.get(), 0, sizeof(unsigned long long), st), "cudaMemsetAsync");
        const int b_log2 = log2i(params.slice_height);
        if (index16) run_entries_kernel<true><<<blocks_for(stored), 256, 0, st>>>(stored, b_log2, col.get(), base.as<std::int32_t>(), count.as<unsigned long long>());
        else run_entries_kernel<false><<<blocks_for(stored), 256, 0, st>>>(stored, b_log2, col.get(), base.as<std::int32_t>(), count.as<unsigned long long>());
        cuda::check_launch("SELL-P run count kernel");
        cuda::copy_to_host_sync(&runs, count.get(), sizeof(runs), stream);
      }
      run_transpose = 3 * double(runs) >= double(nnz) && nnz > 0;
    }
    return run_transpose == 1;
  }
  void spmv_transpose(const V *x, const Epilogue<V> &ep, void *stream) const override
  {
    cuda::transpose_prologue(ep, ncols, stream); // also when there are no rows: out = beta*in
    if (!nrows || !ncols) return;
    const int          b_log2 = log2i(params.slice_height), t_log2 = log2i(params.threads_per_row), bt = 1 << (b_log2 + t_log2);
    const bool         runs   = bt == cuda::kWarp && sums_runs(stream);
    const int          block  = std::max(bt, kMinBlock);
    const std::int64_t grid   = (nslices * bt + block - 1) / block;
    const auto        *pm     = perm.get() ? perm.as<std::int32_t>() : nullptr;
    with_values([&](auto vs) {
      using VS = decltype(vs);
      auto go  = [&](auto kernel) {
        kernel<<<unsigned(grid), block, 0, static_cast<cudaStream_t>(stream)>>>(nslices, nrows, b_log2, t_log2, slice_ptr.as<std::int32_t>(), col.get(),
                                                                                base.as<std::int32_t>(), vs, pm, x, ep.alpha, ep.out);
      };
      auto go_warp = [&](auto kernel) {
        kernel<<<unsigned(grid), block, 0, static_cast<cudaStream_t>(stream)>>>(nslices, nrows, b_log2, slice_ptr.as<std::int32_t>(), col.get(),
                                                                                base.as<std::int32_t>(), vs, pm, x, ep.alpha, ep.out);
      };
      if (runs) {
        if (this->load_policy == LoadPolicy::kStream)
          index16 ? go_warp(spmv_transpose_warp_kernel<V, LoadPolicy::kStream, true, VS>) : go_warp(spmv_transpose_warp_kernel<V, LoadPolicy::kStream, false, VS>);
        else index16 ? go_warp(spmv_transpose_warp_kernel<V, LoadPolicy::kDefault, true, VS>) : go_warp(spmv_transpose_warp_kernel<V, LoadPolicy::kDefault, false, VS>);
      } else if (this->load_policy == LoadPolicy::kStream)
        index16 ? go(spmv_transpose_kernel<V, LoadPolicy::kStream, true, VS>) : go(spmv_transpose_kernel<V, LoadPolicy::kStream, false, VS>);
      else index16 ? go(spmv_transpose_kernel<V, LoadPolicy::kDefault, true, VS>) : go(spmv_transpose_kernel<V, LoadPolicy::kDefault, false, VS>);
    });
    cuda::check_launch("SELL-P transpose SpMV kernel");
  }
  void diagonal(V *d, void *stream) const override
  {
    if (!nrows) return;
    const int          block = 256;
    const std::int64_t grid  = (nrows + block - 1) / block;
    const auto        *pm    = perm.get() ? perm.as<std::int32_t>() : nullptr;
    with_values([&](auto vs) {
      using VS = decltype(vs);
      auto go  = [&](auto kernel) {
        kernel<<<unsigned(grid), block, 0, static_cast<cudaStream_t>(stream)>>>(nrows, log2i(params.slice_height), slice_ptr.as<std::int32_t>(), col.get(),
                                                                                base.as<std::int32_t>(), vs, pm, d);
      };
      index16 ? go(diagonal_kernel<V, true, VS>) : go(diagonal_kernel<V, false, VS>);
    });
    cuda::check_launch("SELL-P diagonal kernel");
  }
  std::size_t bytes() const override { return slice_ptr.bytes() + col.bytes() + base.bytes() + val.bytes() + perm.bytes() + codes.bytes() + table.bytes(); }
  V *values(std::int64_t *count) override
  {
    // values are separate from the indices, so a gather refills them; not so for dictionary codes
    *count = code_bytes ? 0 : this->footprint.stored;
    return code_bytes ? nullptr : val.template as<V>();
  }
  V *open_plain_values(std::int64_t *count) override { return cuda::open_plain_values<V>(code_bytes, val, this->footprint.stored, count); }
  void keep_plain_values() override { cuda::keep_plain_values<V>("SELL-P", code_bytes, codes, table, val, this->footprint); }
};

// One thread per slice column: its smallest column as base, and whether its span fits 16 bits
// (the device twin of slice_column_bases).
__global__ void bases_kernel(std::int64_t ncolumns, int b, const std::int32_t *__restrict__ col, std::int32_t *__restrict__ base, int *__restrict__ too_wide)
{
  const std::int64_t c = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= ncolumns) return;
  std::int64_t lo = INT64_MAX, hi = -1;
  for (std::int64_t e = c * b; e < (c + 1) * b; ++e)
    if (col[e] != kPadColumn) lo = min(lo, std::int64_t(col[e])), hi = max(hi, std::int64_t(col[e]));
  base[c] = hi >= 0 ? std::int32_t(lo) : 0;
  if (hi >= 0 && hi - lo > kMaxSpan) atomicOr(too_wide, 1);
}

__global__ void delta_kernel(std::int64_t stored, int b, const std::int32_t *__restrict__ col, const std::int32_t *__restrict__ base,
                             std::uint16_t *__restrict__ delta)
{
  const std::int64_t e = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e >= stored) return;
  delta[e] = col[e] == kPadColumn ? kPadDelta : std::uint16_t(col[e] - base[e / b]);
}

// One thread per row position of every slice (the last slice's positions past the matrix
// included): its source row's entries at k < length, padding at length <= k < width, so that every
// stored word is written once, by column-major runs that consecutive threads make contiguous.
template <class V, class I>
__global__ void scatter_kernel(std::int64_t nrows, std::int64_t positions, int b, std::int64_t base, const I *__restrict__ row_ptr, const I *__restrict__ col_in,
                               const V *__restrict__ val_in, const std::int32_t *__restrict__ perm, const std::int32_t *__restrict__ slice_ptr,
                               std::int32_t *__restrict__ col_out, V *__restrict__ val_out)
{
  const std::int64_t pos = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (pos >= positions) return;
  const std::int64_t s = pos / b, i = pos % b, off = slice_ptr[s], width = (slice_ptr[s + 1] - off) / b;
  std::int64_t       src = 0, len = 0;
  if (pos < nrows) {
    const std::int64_t row = perm ? perm[pos] : pos;
    src                    = std::int64_t(row_ptr[row]) - base;
    len                    = std::int64_t(row_ptr[row + 1] - row_ptr[row]);
  }
  for (std::int64_t k = 0; k < width; ++k) {
    const std::int64_t dst = off + k * b + i;
    col_out[dst]           = k < len ? std::int32_t(col_in[src + k]) : kPadColumn;
    val_out[dst]           = k < len ? val_in[src + k] : V(0);
  }
}

// One thread per slice: b x (its longest row rounded up to t), the entries the slice stores.
__global__ void slice_sizes_kernel(std::int64_t nslices, std::int64_t nrows, int b, int t, const std::int32_t *__restrict__ len, std::int64_t *__restrict__ sizes)
{
  const std::int64_t s = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (s >= nslices) return;
  std::int32_t longest = 0;
  for (std::int64_t pos = s * b; pos < min(nrows, (s + 1) * b); ++pos) longest = max(longest, len[pos]);
  sizes[s] = (std::int64_t(longest) + t - 1) / t * t * b;
}

// Where each window of sigma rows starts (and the last ends): min(n, w sigma) for w = 0..windows.
__global__ void window_offsets_kernel(std::int64_t windows, std::int64_t n, std::int64_t sigma, std::int32_t *__restrict__ off)
{
  const std::int64_t w = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (w <= windows) off[w] = std::int32_t(min(n, w * sigma));
}

// The lengths of the rows in stored order: the CSR's with sigma 1; otherwise sorted by length,
// longest first, inside windows of sigma rows by a stable segmented sort (sigma_order's order
// exactly: equal lengths keep their order), with the order into perm.
template <class V, class I>
const std::int32_t *stored_lengths(const cuda::DeviceCsr<V, I> &A, int sigma, Buffer &sorted, Buffer &perm)
{
  const std::int32_t *len = A.row_lengths();
  const std::int64_t  n   = A.nrows();
  if (sigma <= 1 || !n) return len;
  const auto         st      = static_cast<cudaStream_t>(A.stream());
  const std::int64_t windows = (n + sigma - 1) / sigma;
  Buffer             off(std::size_t(windows + 1) * sizeof(std::int32_t)), ids(std::size_t(n) * sizeof(std::int32_t)), tmp;
  window_offsets_kernel<<<blocks_for(windows + 1), 256, 0, st>>>(windows, n, sigma, off.as<std::int32_t>());
  cuda::check_launch("SELL-P window offsets kernel");
  cuda::iota(ids.as<std::int32_t>(), n, A.stream());
  sorted = Buffer(std::size_t(n) * sizeof(std::int32_t));
  perm   = Buffer(std::size_t(n) * sizeof(std::int32_t));
  std::size_t tmp_bytes = 0;
  const auto *o         = off.as<std::int32_t>();
  cuda::check(cub::DeviceSegmentedSort::StableSortPairsDescending(nullptr, tmp_bytes, len, sorted.as<std::int32_t>(), ids.as<std::int32_t>(), perm.as<std::int32_t>(), n,
                                                                  windows, o, o + 1, st),
              "cub::DeviceSegmentedSort");
  tmp.resize(std::max<std::size_t>(tmp_bytes, 1));
  cuda::check(cub::DeviceSegmentedSort::StableSortPairsDescending(tmp.get(), tmp_bytes, len, sorted.as<std::int32_t>(), ids.as<std::int32_t>(),
                                                                  perm.as<std::int32_t>(), n, windows, o, o + 1, st),
              "cub::DeviceSegmentedSort");
  cuda::synchronize(A.stream()); // ids, off and tmp are freed on return
  return sorted.as<std::int32_t>();
}

// The entries each slice stores, from the lengths in stored order: ns int64 sizes.
Buffer slice_sizes(const std::int32_t *len, std::int64_t nrows, const Params &p, void *stream)
{
  const std::int64_t ns = (nrows + p.slice_height - 1) / p.slice_height;
  Buffer             sizes(std::size_t(ns) * sizeof(std::int64_t));
  if (ns) {
    slice_sizes_kernel<<<blocks_for(ns), 256, 0, static_cast<cudaStream_t>(stream)>>>(ns, nrows, p.slice_height, p.threads_per_row, len, sizes.as<std::int64_t>());
    cuda::check_launch("SELL-P slice sizes kernel");
  }
  return sizes;
}

} // namespace

template <class V>
std::unique_ptr<cuda::Operator<V>> to_device(const Matrix<V> &M)
{
  auto D       = std::make_unique<DeviceMatrix<V>>();
  D->params    = M.params;
  D->nrows     = M.nrows;
  D->ncols     = M.ncols;
  D->nnz       = M.nnz;
  D->nslices   = M.slices();
  D->slice_ptr = cuda::upload(M.slice_ptr.data(), M.slice_ptr.size());
  D->index16   = M.index16;
  if (M.index16) {
    D->col  = cuda::upload(M.col_delta.data(), M.col_delta.size());
    D->base = cuda::upload(M.col_base.data(), M.col_base.size());
  } else {
    D->col = cuda::upload(M.col_ind.data(), M.col_ind.size());
  }
  D->val        = cuda::upload(M.val.data(), M.val.size()); // empty in the dictionary form
  D->code_bytes = M.code_bytes;
  if (M.code_bytes == 1) D->codes = cuda::upload(M.code8.data(), M.code8.size());
  if (M.code_bytes == 2) D->codes = cuda::upload(M.code16.data(), M.code16.size());
  if (M.code_bytes) D->table = cuda::upload(M.dict.data(), M.dict.size());
  if (!M.row_perm.empty()) D->perm = cuda::upload(M.row_perm.data(), M.row_perm.size());
  D->footprint = footprint(M);
  return D;
}

template <class V, class I>
std::int64_t stored_on_device(const cuda::DeviceCsr<V, I> &A, const Params &p)
{
  check_params(p);
  if (p.sigma <= 1) return A.group_stats(p.slice_height, p.threads_per_row).padded_width;
  Buffer              sorted, perm;
  const std::int32_t *len   = stored_lengths(A, p.sigma, sorted, perm);
  const Buffer        sizes = slice_sizes(len, A.nrows(), p, A.stream());
  return cuda::sum(sizes.as<std::int64_t>(), (A.nrows() + p.slice_height - 1) / p.slice_height, A.stream());
}

template <class V, class I>
std::unique_ptr<cuda::Operator<V>> build_on_device(const cuda::DeviceCsr<V, I> &A, const Params &p, cuda::BuildLog *log)
{
  check_params(p);
  if (A.nrows() > std::numeric_limits<std::int32_t>::max() || A.ncols() > std::numeric_limits<std::int32_t>::max())
    throw FormatError("SELL-P: local block too large for 32-bit indices; use more MPI ranks");
  auto               D = std::make_unique<DeviceMatrix<V>>();
  void *const        stream = A.stream();
  const auto         st = static_cast<cudaStream_t>(stream);
  const std::int64_t n = A.nrows(), b = p.slice_height, ns = (n + b - 1) / b, nnz = A.nnz();
  D->params  = p;
  D->nrows   = n;
  D->ncols   = A.ncols();
  D->nnz     = nnz;
  D->nslices = ns;

  // structure: lengths in stored order (and the sigma order), slice sizes, their offsets
  Buffer              sorted;
  const std::int32_t *len    = stored_lengths(A, p.sigma, sorted, D->perm);
  const std::int64_t  stored = cuda::offsets_from_sizes(slice_sizes(len, n, p, stream).as<std::int64_t>(), ns, D->slice_ptr, "SELL-P", stream);
  sorted                     = Buffer();

  // scatter: every stored word written once, entries and padding
  cuda::enter_step(log, cuda::BuildStep::kScatter, stream);
  D->col.resize(std::size_t(stored) * sizeof(std::int32_t));
  D->val.resize(std::size_t(stored) * sizeof(V));
  if (stored) {
    scatter_kernel<V, I><<<blocks_for(ns * b), 256, 0, st>>>(n, ns * b, int(b), A.base(), A.row_ptr(), A.col_ind(), A.val(), D->perm.template as<std::int32_t>(),
                                                             D->slice_ptr.template as<std::int32_t>(), D->col.template as<std::int32_t>(), D->val.template as<V>());
    cuda::check_launch("SELL-P scatter kernel");
  }
  if (p.index != Index::k32 && stored) {
    const std::int64_t ncolumns = stored / b;
    Buffer             too_wide(sizeof(int));
    int                wide     = 0;
    D->base.resize(std::size_t(ncolumns) * sizeof(std::int32_t));
    cuda::check(cudaMemsetAsync(too_wide.get(), 0, sizeof(int), st), "cudaMemsetAsync");
    bases_kernel<<<blocks_for(ncolumns), 256, 0, st>>>(ncolumns, int(b), D->col.template as<std::int32_t>(), D->base.template as<std::int32_t>(), too_wide.as<int>());
    cuda::check_launch("SELL-P bases kernel");
    cuda::copy_to_host_sync(&wide, too_wide.get(), sizeof(int), stream);
    if (wide) {
      D->base = Buffer();
      if (p.index == Index::k16)
        throw FormatError("SELL-P: the columns of a slice column span more than 2^16, too wide for 16-bit indices; use 32-bit indices (-mat_sellp_index 32) "
                          "or a smaller slice height");
    } else {
      Buffer delta(std::size_t(stored) * sizeof(std::uint16_t));
      delta_kernel<<<blocks_for(stored), 256, 0, st>>>(stored, int(b), D->col.template as<std::int32_t>(), D->base.template as<std::int32_t>(), delta.as<std::uint16_t>());
      cuda::check_launch("SELL-P delta kernel");
      cuda::synchronize(stream); // before the 32-bit columns are freed
      D->col     = std::move(delta);
      D->index16 = true;
    }
  }
  cuda::synchronize(stream);
  const std::int64_t columns = D->index16 ? 2 * stored + 4 * (stored / b) : 4 * stored;
  D->footprint = Footprint{n, A.ncols(), nnz, stored, columns + 4 * (ns + 1 + (p.sigma > 1 ? n : 0)), std::int64_t(sizeof(V)) * stored};
  return D;
}

template <class V>
Matrix<V> download(const cuda::Operator<V> &op)
{
  const auto &D = dynamic_cast<const DeviceMatrix<V> &>(op);
  Matrix<V>   M = cuda::host_shell<Matrix<V>>(D);
  M.nnz         = D.nnz;
  cuda::download_into(M.slice_ptr, D.slice_ptr.get(), D.nslices + 1);
  const std::int64_t stored = M.slice_ptr.back();
  M.index16                 = D.index16;
  if (D.index16) {
    cuda::download_into(M.col_delta, D.col.get(), stored);
    cuda::download_into(M.col_base, D.base.get(), stored / D.params.slice_height);
  } else cuda::download_into(M.col_ind, D.col.get(), stored);
  M.code_bytes = D.code_bytes;
  if (D.code_bytes) { // the dictionary form: codes and table instead of values
    cuda::download_into(M.dict, D.table.get(), std::int64_t(D.table.bytes() / sizeof(V)));
    if (D.code_bytes == 1) cuda::download_into(M.code8, D.codes.get(), stored);
    else cuda::download_into(M.code16, D.codes.get(), stored);
  } else cuda::download_into(M.val, D.val.get(), stored);
  if (D.perm.get()) cuda::download_into(M.row_perm, D.perm.get(), D.nrows);
  // the row lengths (host only, for to_csr): a row's entries come first in its slice row, then padding
  const std::int64_t b = D.params.slice_height;
  M.row_len.assign(std::size_t(D.nrows), 0);
  for (std::int64_t pos = 0; pos < D.nrows; ++pos) {
    const std::int64_t s = pos / b, i = pos % b;
    std::int32_t       k = 0;
    while (k < M.width(s) && M.column(M.slice_ptr[s] + k * b + i) != kPadColumn) ++k;
    M.row_len[pos] = k;
  }
  return M;
}

// ---- value dictionary, encoded on the device (common/core/dictionary.hpp) ----------------------
// The table of distinct values sorted by bit pattern comes from the uploaded CSR
// (DeviceCsr::distinct_values) or from the host's; each stored entry's code is its value's
// position in that table, found by binary search. The same table and codes as the host's
// compress_values, array for array.

namespace {

// One thread per stored entry. Padding gets code 0 (the kernels skip it by its column); a value
// missing from the table (a caller's error) raises *missing.
template <class V, class C, bool IDX16>
__global__ void encode_kernel(std::int64_t stored, const void *__restrict__ col, const V *__restrict__ val, const V *__restrict__ table, int entries,
                              C *__restrict__ code, int *__restrict__ missing)
{
  const std::int64_t e = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e >= stored) return;
  const bool pad = IDX16 ? static_cast<const std::uint16_t *>(col)[e] == kPadDelta : static_cast<const std::int32_t *>(col)[e] == kPadColumn;
  if (pad) {
    code[e] = 0;
    return;
  }
  cuda::encode_entry(val[e], table, entries, code + e, missing);
}

} // namespace

template <class V>
void encode_values(cuda::Operator<V> &op, const std::vector<V> &table)
{
  auto              &D      = dynamic_cast<DeviceMatrix<V> &>(op);
  const std::int64_t stored = D.footprint.stored;
  cuda::encode_dictionary("SELL-P", table, D.code_bytes, D.codes, D.table, D.val, D.footprint, [&](int w, Buffer &codes, const Buffer &tab, int *missing) {
    auto go = [&](auto kernel, auto *out) {
      kernel<<<blocks_for(stored), 256>>>(stored, D.col.get(), D.val.template as<V>(), tab.as<V>(), int(table.size()), out, missing);
    };
    if (w == 1) D.index16 ? go(encode_kernel<V, std::uint8_t, true>, codes.as<std::uint8_t>()) : go(encode_kernel<V, std::uint8_t, false>, codes.as<std::uint8_t>());
    else D.index16 ? go(encode_kernel<V, std::uint16_t, true>, codes.as<std::uint16_t>()) : go(encode_kernel<V, std::uint16_t, false>, codes.as<std::uint16_t>());
  });
}

// Beyond the shared interface: the dictionary encoding and the stored size of an upload.
#define GPUMATS_SELLP_EXTRA_V(V) template void encode_values<V>(cuda::Operator<V> &, const std::vector<V> &);
#define GPUMATS_SELLP_EXTRA_VI(V, I) template std::int64_t stored_on_device<V, I>(const cuda::DeviceCsr<V, I> &, const Params &);
GPUMATS_FORMAT_DEVICE_INSTANTIATE(GPUMATS_SELLP_EXTRA_V, GPUMATS_SELLP_EXTRA_VI)

} // namespace sellp
} // namespace gpumats
