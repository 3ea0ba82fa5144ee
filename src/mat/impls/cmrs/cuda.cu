// CMRS on the GPU: device storage, conversion from CSR on the device, and the SpMV kernel.
//
// Kernel: a warp per strip (the paper's Algorithm 1). Each lane walks the strip with stride 32 and
// adds v*x[col] into the accumulator of the entry's row_in_strip. The paper keeps those
// accumulators in a height x 32 shared-memory buffer (or MODULO x height with the modified
// layout); on sm_90 they live in registers, selected by an unrolled compare, and the height sums
// are formed by a transposing warp-shuffle reduction (height-1+5-log2(height) shuffles) instead
// of the shared-memory fan-in. Registers have no bank conflicts and need no MODULO arrangement of
// the entries, so the modified layout here is: height 16 with each strip padded to a multiple of
// 32 entries, which makes every warp load aligned and complete.
//
// Params::kernel picks the product kernel; the arrays are the same for all of them:
//   warp       the kernel above (spmv_kernel)
//   shared     the paper's accumulation (shared_kernel with G = 32): each lane owns one column of a
//              per-warp [row_in_strip][lane] shared-memory buffer and adds every product into the
//              slot of its row, one shared load and store per entry whatever the height; lane l only
//              ever touches column l (bank l for 4-byte values; for 8-byte values each half-warp
//              spans the 32 banks once), so there are neither bank conflicts nor a need for
//              __syncwarp. At the end each lane reads its column back into registers and the same
//              transposing shuffle reduction as warp's sums the rows over the lanes.
//   subwarp    shared_kernel with G = 8 or 16 lanes per strip and 32/G strips per warp: the
//              reduction runs over the G lanes of a strip (xor shuffles below G stay in the group)
//   segmented  entries in row order (sort_columns false): each warp step of 32 consecutive entries
//              is summed by a segmented inclusive scan over the runs of equal row_in_strip (5
//              shuffles, segment starts from one ballot), and the last lane of each run adds the
//              run's sum into the row's total in shared memory. In row order every row ends at
//              most once per step, so these adds never collide; the totals are written by lanes
//              0..height-1 at the end, rows without entries included (as alpha*0 + beta*in).
//
// Transpose (the implicit MatMultTranspose): the same warp per strip and the same coalesced walk
// of the strip's words; each entry adds alpha*v*x[row] into out[column] with atomicAdd, after the
// prologue has set out = beta*in. No accumulators and no reduction: rows become scattered outputs.
#include "../common/cuda/blocks.cuh"
#include "../common/cuda/check.cuh"
#include "device.hpp"

#include <cub/device/device_segmented_sort.cuh>

namespace gpumats {
namespace cmrs {

using cuda::Buffer;
using cuda::blocks_for;
using cuda::LoadPolicy;

namespace {

constexpr int kBlock = 256; // 8 warps, 8 strips per block

template <class V, int H, LoadPolicy P>
__global__ __launch_bounds__(kBlock) void spmv_kernel(std::int64_t nstrips, std::int64_t nrows, const std::int32_t *__restrict__ strip_ptr,
                                                      const std::uint32_t *__restrict__ col, const V *__restrict__ val, const V *__restrict__ x,
                                                      Epilogue<V> ep)
{
  constexpr int      L    = cuda::NextPow2<H>::value;
  const int          lane = threadIdx.x % cuda::kWarp;
  const std::int64_t s    = (std::int64_t(blockIdx.x) * kBlock + threadIdx.x) / cuda::kWarp;
  if (s >= nstrips) return; // warp-uniform: the whole warp leaves together

  V acc[L];
#pragma unroll
  for (int k = 0; k < L; ++k) acc[k] = V(0);
  const std::int32_t j1 = strip_ptr[s + 1];
  for (std::int32_t j = strip_ptr[s] + lane; j < j1; j += cuda::kWarp) {
    const std::uint32_t w = cuda::load_matrix<P>(col + j);
    const V             a = cuda::load_matrix<P>(val + j);
    if (w != kPadWord) {
      const V   prod = a * cuda::load_x(x, column_of(w));
      const int r    = int(row_in_strip_of(w));
#pragma unroll
      for (int k = 0; k < H; ++k)
        if (r == k) acc[k] += prod;
    }
  }
  const V       sum   = cuda::TransposeReduce<L>::run(acc, lane);
  constexpr int shift = 5 - cuda::Log2<L>::value; // lane l holds row (l >> shift)
  const int     r     = lane >> shift;
  if ((lane & ((1 << shift) - 1)) == 0 && r < H) {
    const std::int64_t row = s * H + r;
    if (row < nrows) ep.apply(row, sum);
  }
}


// shared and subwarp: G lanes per strip (8, 16 or 32), L = the height rounded up to a power of two
// (the buffer's rows), height itself at run time. Strip s = warp * (32/G) + lane / G.
template <class V, int L, int G, LoadPolicy P>
__global__ __launch_bounds__(kBlock) void shared_kernel(std::int64_t nstrips, std::int64_t nrows, int height, const std::int32_t *__restrict__ strip_ptr,
                                                        const std::uint32_t *__restrict__ col, const V *__restrict__ val, const V *__restrict__ x,
                                                        Epilogue<V> ep)
{
  static_assert(G == 8 || G == 16 || G == cuda::kWarp, "8, 16 or 32 lanes per strip");
  static_assert(L >= 1 && L <= kMaxHeight && (L & (L - 1)) == 0, "L: the height rounded up to a power of two");
  constexpr int      kStrips = cuda::kWarp / G;                       // strips per warp
  constexpr int      R       = L >= G ? L / G : 1, S = G >= L ? G / L : 1; // GroupReduce's layout
  __shared__ V       buf[kBlock / cuda::kWarp][L][cuda::kWarp];
  const int          lane  = threadIdx.x % cuda::kWarp, g = lane % G;
  const std::int64_t first = (std::int64_t(blockIdx.x) * kBlock + threadIdx.x) / cuda::kWarp * kStrips;
  if (first >= nstrips) return; // warp-uniform: the whole warp leaves together
  const std::int64_t s = first + lane / G;

  V *mine = &buf[threadIdx.x / cuda::kWarp][0][lane]; // this lane's column: mine[r * 32] for row r
#pragma unroll
  for (int k = 0; k < L; ++k) mine[k * cuda::kWarp] = V(0);
  if (s < nstrips) { // a warp's last groups may have no strip: they still take part in the shuffles
    const std::int32_t j1 = strip_ptr[s + 1];
    for (std::int32_t j = strip_ptr[s] + g; j < j1; j += G) {
      const std::uint32_t w = cuda::load_matrix<P>(col + j);
      const V             a = cuda::load_matrix<P>(val + j);
      if (w != kPadWord) mine[row_in_strip_of(w) * cuda::kWarp] += a * cuda::load_x(x, column_of(w));
    }
  }
  V acc[L];
#pragma unroll
  for (int k = 0; k < L; ++k) acc[k] = mine[k * cuda::kWarp];
  cuda::GroupReduce<L, G / 2>::run(acc, lane);
  if (s < nstrips && g % S == 0) {
#pragma unroll
    for (int i = 0; i < R; ++i) {
      const int          r   = (g / S) * R + i;
      const std::int64_t row = s * height + r;
      if (r < height && row < nrows) ep.apply(row, acc[i]);
    }
  }
}

// segmented: a warp per strip whose entries are in row order.
template <class V, LoadPolicy P>
__global__ __launch_bounds__(kBlock) void segmented_kernel(std::int64_t nstrips, std::int64_t nrows, int height, const std::int32_t *__restrict__ strip_ptr,
                                                           const std::uint32_t *__restrict__ col, const V *__restrict__ val, const V *__restrict__ x,
                                                           Epilogue<V> ep)
{
  constexpr unsigned kAll = 0xffffffffu;
  constexpr int      kNone = kMaxHeight; // the row key of padding and of lanes past the strip's end: no row
  __shared__ V       total[kBlock / cuda::kWarp][kMaxHeight];
  const int          lane = threadIdx.x % cuda::kWarp;
  const std::int64_t s    = (std::int64_t(blockIdx.x) * kBlock + threadIdx.x) / cuda::kWarp;
  if (s >= nstrips) return; // warp-uniform

  V *sum = total[threadIdx.x / cuda::kWarp];
  if (lane < kMaxHeight) sum[lane] = V(0);
  __syncwarp();
  const std::int32_t j1 = strip_ptr[s + 1];
  for (std::int32_t base = strip_ptr[s]; base < j1; base += cuda::kWarp) { // warp-uniform trip count
    const std::int32_t j   = base + lane;
    int                key = kNone;
    V                  v   = V(0);
    if (j < j1) {
      const std::uint32_t w = cuda::load_matrix<P>(col + j);
      const V             a = cuda::load_matrix<P>(val + j);
      if (w != kPadWord) {
        key = int(row_in_strip_of(w));
        v   = a * cuda::load_x(x, column_of(w));
      }
    }
    // runs of equal keys: a run starts where the key differs from the previous lane's
    const int      prev   = __shfl_up_sync(kAll, key, 1);
    const unsigned starts = __ballot_sync(kAll, lane == 0 || prev != key);
    const int      start  = 31 - __clz(int(starts & (kAll >> (31 - lane)))); // where this lane's run starts
#pragma unroll
    for (int d = 1; d < cuda::kWarp; d *= 2) {
      const V t = __shfl_up_sync(kAll, v, d);
      if (lane - d >= start) v += t;
    }
    // the last lane of each run holds its sum; in row order no two runs of a step share a row
    const bool last = (((starts >> 1) | 0x80000000u) >> lane) & 1u;
    if (last && key != kNone) sum[key] += v;
    __syncwarp();
  }
  if (lane < height) {
    const std::int64_t row = s * height + lane;
    if (row < nrows) ep.apply(row, sum[lane]);
  }
}

template <class V, LoadPolicy P>
__global__ __launch_bounds__(kBlock) void spmv_transpose_kernel(std::int64_t nstrips, int height, const std::int32_t *__restrict__ strip_ptr,
                                                                const std::uint32_t *__restrict__ col, const V *__restrict__ val, const V *__restrict__ x,
                                                                V alpha, V *__restrict__ out)
{
  const int          lane = threadIdx.x % cuda::kWarp;
  const std::int64_t s    = (std::int64_t(blockIdx.x) * kBlock + threadIdx.x) / cuda::kWarp;
  if (s >= nstrips) return;
  const std::int64_t r0 = s * height;
  const std::int32_t j1 = strip_ptr[s + 1];
  for (std::int32_t j = strip_ptr[s] + lane; j < j1; j += cuda::kWarp) {
    const std::uint32_t w = cuda::load_matrix<P>(col + j);
    const V             a = cuda::load_matrix<P>(val + j);
    // padding has no column, and its row may lie past the matrix: x is not read for it
    if (w != kPadWord) atomicAdd(out + column_of(w), alpha * a * cuda::load_x(x, std::uint32_t(r0 + row_in_strip_of(w))));
  }
}

// The diagonal: one warp per strip, as the transposed product reads it; the entry whose column is
// its own row goes into d (unique in the strip, so no two lanes write one row).
template <class V>
__global__ __launch_bounds__(kBlock) void diagonal_kernel(std::int64_t nstrips, int height, const std::int32_t *__restrict__ strip_ptr,
                                                          const std::uint32_t *__restrict__ col, const V *__restrict__ val, V *__restrict__ d)
{
  const int          lane = threadIdx.x % cuda::kWarp;
  const std::int64_t s    = (std::int64_t(blockIdx.x) * kBlock + threadIdx.x) / cuda::kWarp;
  if (s >= nstrips) return;
  const std::int64_t r0 = s * height;
  const std::int32_t j1 = strip_ptr[s + 1];
  for (std::int32_t j = strip_ptr[s] + lane; j < j1; j += cuda::kWarp) {
    const std::uint32_t w = col[j];
    if (w != kPadWord && std::int64_t(column_of(w)) == r0 + row_in_strip_of(w)) d[r0 + row_in_strip_of(w)] = val[j];
  }
}

template <class V, int H>
void launch(LoadPolicy p, std::int64_t nstrips, std::int64_t nrows, const std::int32_t *sp, const std::uint32_t *col, const V *val, const V *x,
            const Epilogue<V> &ep, cudaStream_t stream)
{
  const std::int64_t blocks = (nstrips * cuda::kWarp + kBlock - 1) / kBlock;
  if (p == LoadPolicy::kStream) spmv_kernel<V, H, LoadPolicy::kStream><<<unsigned(blocks), kBlock, 0, stream>>>(nstrips, nrows, sp, col, val, x, ep);
  else spmv_kernel<V, H, LoadPolicy::kDefault><<<unsigned(blocks), kBlock, 0, stream>>>(nstrips, nrows, sp, col, val, x, ep);
  cuda::check_launch("CMRS SpMV kernel");
}

template <class V, int... Hs>
void dispatch(int h, std::integer_sequence<int, Hs...>, LoadPolicy p, std::int64_t nstrips, std::int64_t nrows, const std::int32_t *sp,
              const std::uint32_t *col, const V *val, const V *x, const Epilogue<V> &ep, cudaStream_t stream)
{
  // one instantiation per height 1..16, chosen at run time
  ((h == Hs + 1 ? launch<V, Hs + 1>(p, nstrips, nrows, sp, col, val, x, ep, stream) : void()), ...);
}

// shared and subwarp: one instantiation per (buffer rows L, lanes per strip G, load policy)
template <class V, int L, int G>
void launch_shared(LoadPolicy p, std::int64_t nstrips, std::int64_t nrows, int height, const std::int32_t *sp, const std::uint32_t *col, const V *val,
                   const V *x, const Epilogue<V> &ep, cudaStream_t stream)
{
  constexpr int      per_block = kBlock / G; // strips per block
  const std::int64_t blocks    = (nstrips + per_block - 1) / per_block;
  if (p == LoadPolicy::kStream)
    shared_kernel<V, L, G, LoadPolicy::kStream><<<unsigned(blocks), kBlock, 0, stream>>>(nstrips, nrows, height, sp, col, val, x, ep);
  else shared_kernel<V, L, G, LoadPolicy::kDefault><<<unsigned(blocks), kBlock, 0, stream>>>(nstrips, nrows, height, sp, col, val, x, ep);
  cuda::check_launch(G == cuda::kWarp ? "CMRS SpMV kernel (shared)" : "CMRS SpMV kernel (subwarp)");
}

template <class V, int G>
void dispatch_shared(LoadPolicy p, std::int64_t nstrips, std::int64_t nrows, int height, const std::int32_t *sp, const std::uint32_t *col, const V *val,
                     const V *x, const Epilogue<V> &ep, cudaStream_t stream)
{
  if (height <= 1) launch_shared<V, 1, G>(p, nstrips, nrows, height, sp, col, val, x, ep, stream);
  else if (height <= 2) launch_shared<V, 2, G>(p, nstrips, nrows, height, sp, col, val, x, ep, stream);
  else if (height <= 4) launch_shared<V, 4, G>(p, nstrips, nrows, height, sp, col, val, x, ep, stream);
  else if (height <= 8) launch_shared<V, 8, G>(p, nstrips, nrows, height, sp, col, val, x, ep, stream);
  else launch_shared<V, 16, G>(p, nstrips, nrows, height, sp, col, val, x, ep, stream);
}

template <class V>
void launch_segmented(LoadPolicy p, std::int64_t nstrips, std::int64_t nrows, int height, const std::int32_t *sp, const std::uint32_t *col, const V *val,
                      const V *x, const Epilogue<V> &ep, cudaStream_t stream)
{
  const std::int64_t blocks = (nstrips * cuda::kWarp + kBlock - 1) / kBlock;
  if (p == LoadPolicy::kStream) segmented_kernel<V, LoadPolicy::kStream><<<unsigned(blocks), kBlock, 0, stream>>>(nstrips, nrows, height, sp, col, val, x, ep);
  else segmented_kernel<V, LoadPolicy::kDefault><<<unsigned(blocks), kBlock, 0, stream>>>(nstrips, nrows, height, sp, col, val, x, ep);
  cuda::check_launch("CMRS SpMV kernel (segmented)");
}

template <class V>
class DeviceMatrix final : public cuda::Operator<V> {
public:
  Params                    params; // kernel and lanes resolved (resolve_kernel)
  std::int64_t              nrows = 0, ncols = 0, nnz = 0, nstrips = 0;
  Buffer                    strip_ptr, col, val;

  void spmv(const V *x, const Epilogue<V> &ep, void *stream) const override
  {
    if (!nrows) return;
    const auto  st = static_cast<cudaStream_t>(stream);
    const auto *sp = strip_ptr.as<std::int32_t>();
    const auto *c  = col.as<std::uint32_t>();
    const V    *v  = val.as<V>();
    const int   h  = params.height;
    switch (params.kernel) {
    case Kernel::kShared:
      dispatch_shared<V, cuda::kWarp>(this->load_policy, nstrips, nrows, h, sp, c, v, x, ep, st);
      break;
    case Kernel::kSubwarp:
      if (params.lanes == 8) dispatch_shared<V, 8>(this->load_policy, nstrips, nrows, h, sp, c, v, x, ep, st);
      else dispatch_shared<V, 16>(this->load_policy, nstrips, nrows, h, sp, c, v, x, ep, st);
      break;
    case Kernel::kSegmented:
      launch_segmented<V>(this->load_policy, nstrips, nrows, h, sp, c, v, x, ep, st);
      break;
    default: // kWarp (kAuto never reaches a copy: resolve_kernel replaced it)
      dispatch<V>(h, std::make_integer_sequence<int, kMaxHeight>{}, this->load_policy, nstrips, nrows, sp, c, v, x, ep, st);
    }
  }
  void spmv_transpose(const V *x, const Epilogue<V> &ep, void *stream) const override
  {
    const auto st = static_cast<cudaStream_t>(stream);
    cuda::transpose_prologue(ep, ncols, stream); // also when there are no rows: out = beta*in
    if (!nrows || !ncols) return;
    const std::int64_t blocks = (nstrips * cuda::kWarp + kBlock - 1) / kBlock;
    auto go = [&](auto kernel) {
      kernel<<<unsigned(blocks), kBlock, 0, st>>>(nstrips, params.height, strip_ptr.as<std::int32_t>(), col.as<std::uint32_t>(), val.as<V>(), x, ep.alpha, ep.out);
    };
    if (this->load_policy == LoadPolicy::kStream) go(spmv_transpose_kernel<V, LoadPolicy::kStream>);
    else go(spmv_transpose_kernel<V, LoadPolicy::kDefault>);
    cuda::check_launch("CMRS transpose SpMV kernel");
  }
  void diagonal(V *d, void *stream) const override
  {
    if (!nrows || !ncols) return;
    const std::int64_t blocks = (nstrips * cuda::kWarp + kBlock - 1) / kBlock;
    diagonal_kernel<V><<<unsigned(blocks), kBlock, 0, static_cast<cudaStream_t>(stream)>>>(nstrips, params.height, strip_ptr.as<std::int32_t>(),
                                                                                          col.as<std::uint32_t>(), val.as<V>(), d);
    cuda::check_launch("CMRS diagonal kernel");
  }
  std::size_t bytes() const override { return strip_ptr.bytes() + col.bytes() + val.bytes(); }
  V *values(std::int64_t *count) override
  {
    *count = this->footprint.stored; // values are separate from the indices: a gather refills them
    return val.template as<V>();
  }
};

// One thread per row: writes the row's entries, packed, at their place in the (padded) strip.
template <class V, class I>
__global__ void pack_kernel(std::int64_t nrows, int height, std::int64_t base, const I *__restrict__ row_ptr, const I *__restrict__ col_in,
                            const V *__restrict__ val_in, const std::int32_t *__restrict__ strip_ptr, std::uint32_t *__restrict__ col_out,
                            V *__restrict__ val_out)
{
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= nrows) return;
  const std::int64_t  s = i / height, first = row_ptr[s * height];
  const std::int64_t  dst = strip_ptr[s] + (std::int64_t(row_ptr[i]) - first), src = std::int64_t(row_ptr[i]) - base;
  const std::int64_t  len = std::int64_t(row_ptr[i + 1] - row_ptr[i]);
  const std::uint32_t r   = std::uint32_t(i - s * height);
  for (std::int64_t k = 0; k < len; ++k) {
    col_out[dst + k] = pack(std::uint32_t(col_in[src + k]), r);
    val_out[dst + k] = val_in[src + k];
  }
}

// Unpadded strips start where their first row starts: strip_ptr[s] = row_ptr[s h] - base, s = 0..strips.
template <class I>
__global__ void strip_starts_kernel(std::int64_t nstrips, std::int64_t nrows, int height, std::int64_t base, const I *__restrict__ row_ptr,
                                    std::int32_t *__restrict__ strip_ptr)
{
  const std::int64_t s = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (s <= nstrips) strip_ptr[s] = std::int32_t(std::int64_t(row_ptr[min(nrows, s * height)]) - base);
}

// Padded strips: each strip's entries rounded up to the pad multiple, one thread per strip.
template <class I>
__global__ void strip_sizes_kernel(std::int64_t nstrips, std::int64_t nrows, int height, int pad, const I *__restrict__ row_ptr, std::int64_t *__restrict__ sizes)
{
  const std::int64_t s = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (s >= nstrips) return;
  const std::int64_t n = std::int64_t(row_ptr[min(nrows, (s + 1) * height)] - row_ptr[s * height]);
  sizes[s]             = (n + pad - 1) / pad * pad;
}


} // namespace

template <class V>
std::unique_ptr<cuda::Operator<V>> to_device(const Matrix<V> &M)
{
  check_params(M.params); // the segmented kernel's row order, for a Matrix not made by from_csr
  auto D       = std::make_unique<DeviceMatrix<V>>();
  D->params    = resolve_kernel(M.params, M.nnz, M.nrows); // as from_csr left them
  D->nrows     = M.nrows;
  D->ncols     = M.ncols;
  D->nnz       = M.nnz;
  D->nstrips   = M.strips();
  D->strip_ptr = cuda::upload(M.strip_ptr.data(), M.strip_ptr.size());
  D->col       = cuda::upload(M.col_ind.data(), M.col_ind.size());
  D->val       = cuda::upload(M.val.data(), M.val.size());
  D->footprint = footprint(M);
  return D;
}

template <class V, class I>
std::unique_ptr<cuda::Operator<V>> build_on_device(const cuda::DeviceCsr<V, I> &A, const Params &p, cuda::BuildLog *log)
{
  check_params(p);
  if (A.ncols() > kMaxCols)
    throw FormatError("CMRS: " + std::to_string(A.ncols()) + " columns in a local block exceed the 28-bit packed column index (at most " +
                      std::to_string(kMaxCols) + "); use more MPI ranks, or the sellpcuda or bellpackcuda type");
  if (A.nrows() > std::numeric_limits<std::int32_t>::max() || A.ncols() > std::numeric_limits<std::int32_t>::max())
    throw FormatError("CMRS: local block too large for 32-bit indices; use more MPI ranks");
  auto               D      = std::make_unique<DeviceMatrix<V>>();
  void *const        stream = A.stream();
  const auto         st     = static_cast<cudaStream_t>(stream);
  const std::int64_t n = A.nrows(), h = p.height, ns = (n + h - 1) / h, pad = p.pad_multiple, nnz = A.nnz();
  D->params  = resolve_kernel(p, nnz, n);
  D->nrows   = n;
  D->ncols   = A.ncols();
  D->nnz     = nnz;
  D->nstrips = ns;

  // structure: strip offsets, a gather of the row pointers (basic layout) or a scan of padded sizes
  std::int64_t stored = nnz;
  if (pad == 1) {
    checked_offset(nnz, "CMRS");
    D->strip_ptr.resize(std::size_t(ns + 1) * sizeof(std::int32_t));
    strip_starts_kernel<I><<<blocks_for(ns + 1), 256, 0, st>>>(ns, n, int(h), A.base(), A.row_ptr(), D->strip_ptr.template as<std::int32_t>());
    cuda::check_launch("CMRS strip starts kernel");
  } else {
    Buffer sizes(std::size_t(ns) * sizeof(std::int64_t));
    if (ns) strip_sizes_kernel<I><<<blocks_for(ns), 256, 0, st>>>(ns, n, int(h), int(pad), A.row_ptr(), sizes.as<std::int64_t>());
    cuda::check_launch("CMRS strip sizes kernel");
    stored = cuda::offsets_from_sizes(sizes.as<std::int64_t>(), ns, D->strip_ptr, "CMRS", stream);
  }

  // scatter: pack each row into its strip, padding words where the modified layout pads, then the
  // column sort of every strip
  cuda::enter_step(log, cuda::BuildStep::kScatter, stream);
  D->col.resize(std::size_t(stored) * sizeof(std::uint32_t));
  D->val.resize(std::size_t(stored) * sizeof(V));
  if (stored > nnz) {
    cuda::check(cudaMemsetAsync(D->col.get(), 0xFF, std::size_t(stored) * sizeof(std::uint32_t), st), "cudaMemsetAsync"); // kPadWord
    cuda::check(cudaMemsetAsync(D->val.get(), 0, std::size_t(stored) * sizeof(V), st), "cudaMemsetAsync");
  }
  if (nnz) {
    pack_kernel<V, I><<<blocks_for(n), 256, 0, st>>>(n, int(h), A.base(), A.row_ptr(), A.col_ind(), A.val(), D->strip_ptr.template as<std::int32_t>(),
                                                    D->col.template as<std::uint32_t>(), D->val.template as<V>());
    cuda::check_launch("CMRS pack kernel");
    if (p.sort_columns) {
      // stable sort of each strip by packed word = by column, then row: the host's order exactly
      // (padding words are all ones and stay at the end)
      Buffer      keys(std::size_t(stored) * sizeof(std::uint32_t)), vals(std::size_t(stored) * sizeof(V)), tmp;
      std::size_t tmp_bytes = 0;
      const auto *off       = D->strip_ptr.template as<std::int32_t>();
      cuda::check(cub::DeviceSegmentedSort::StableSortPairs(nullptr, tmp_bytes, D->col.template as<std::uint32_t>(), keys.as<std::uint32_t>(),
                                                            D->val.template as<V>(), vals.as<V>(), stored, ns, off, off + 1, st),
                  "cub::DeviceSegmentedSort");
      tmp.resize(std::max<std::size_t>(tmp_bytes, 1));
      cuda::check(cub::DeviceSegmentedSort::StableSortPairs(tmp.get(), tmp_bytes, D->col.template as<std::uint32_t>(), keys.as<std::uint32_t>(),
                                                            D->val.template as<V>(), vals.as<V>(), stored, ns, off, off + 1, st),
                  "cub::DeviceSegmentedSort");
      cuda::synchronize(stream); // before the unsorted arrays are freed
      D->col = std::move(keys);
      D->val = std::move(vals);
    }
  }
  cuda::synchronize(stream);
  D->footprint = Footprint{n, A.ncols(), nnz, stored, 4 * (stored + ns + 1), std::int64_t(sizeof(V)) * stored};
  return D;
}

template <class V>
Matrix<V> download(const cuda::Operator<V> &op)
{
  const auto &D = dynamic_cast<const DeviceMatrix<V> &>(op);
  Matrix<V>   M = cuda::host_shell<Matrix<V>>(D);
  M.nnz         = D.nnz;
  cuda::download_into(M.strip_ptr, D.strip_ptr.get(), D.nstrips + 1);
  const std::int64_t stored = M.strip_ptr.back();
  cuda::download_into(M.col_ind, D.col.get(), stored);
  cuda::download_into(M.val, D.val.get(), stored);
  // the entries of each strip (host only, for to_csr): its words that are not padding
  M.strip_nnz.assign(std::size_t(D.nstrips), 0);
  for (std::int64_t s = 0; s < D.nstrips; ++s)
    for (std::int64_t t = M.strip_ptr[s]; t < M.strip_ptr[s + 1]; ++t) M.strip_nnz[s] += M.col_ind[t] != kPadWord;
  return M;
}

GPUMATS_FORMAT_DEVICE_INSTANTIATE(GPUMATS_NO_EXTRA_V, GPUMATS_NO_EXTRA_VI)

} // namespace cmrs
} // namespace gpumats
