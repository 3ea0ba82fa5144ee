// The uploaded CSR of the device builds and their shared device-wide steps (csr.hpp).
#include "csr.hpp"
#include "blocks.cuh"
#include "check.cuh"

#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <cstring>
#include <limits>

namespace gpumats {
namespace cuda {

namespace {

constexpr int kThreads = 256;

// Blocks for a grid-stride loop over n items: enough to fill the GPU, few enough that the
// per-warp atomics of the reductions below stay cheap.
unsigned stride_blocks(std::int64_t n) { return unsigned(std::min<std::int64_t>((n + kThreads - 1) / kThreads, 4096)); }

template <class I>
__global__ void row_lengths_kernel(std::int64_t nrows, const I *__restrict__ row_ptr, std::int32_t *__restrict__ len)
{
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < nrows) len[i] = std::int32_t(row_ptr[i + 1] - row_ptr[i]);
}

__device__ __forceinline__ long long warp_sum(long long v)
{
  for (int o = 16; o; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ __forceinline__ long long warp_max(long long v)
{
  for (int o = 16; o; o /= 2) v = max(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// group_stats: a thread per group of g rows (grid-stride), reduced over the warp, then one atomic
// per warp and statistic into out = {padded_width, padded_entries, longest_group, longest_row}.
template <class I>
__global__ void group_stats_kernel(std::int64_t nrows, std::int64_t g, std::int64_t width_multiple, std::int64_t entry_multiple, const I *__restrict__ row_ptr,
                                   long long *__restrict__ out)
{
  const std::int64_t ngroups = (nrows + g - 1) / g;
  long long          width = 0, entries = 0, group = 0, row = 0;
  for (std::int64_t s = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; s < ngroups; s += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t r0 = s * g, r1 = min(nrows, r0 + g), n = std::int64_t(row_ptr[r1] - row_ptr[r0]);
    std::int64_t       longest = 0;
    for (std::int64_t i = r0; i < r1; ++i) longest = max(longest, std::int64_t(row_ptr[i + 1] - row_ptr[i]));
    width += (longest + width_multiple - 1) / width_multiple * width_multiple * g;
    entries += (n + entry_multiple - 1) / entry_multiple * entry_multiple;
    group = max(group, (long long)n);
    row   = max(row, (long long)longest);
  }
  width = warp_sum(width), entries = warp_sum(entries), group = warp_max(group), row = warp_max(row);
  if (threadIdx.x % 32 == 0) {
    atomicAdd(reinterpret_cast<unsigned long long *>(out), (unsigned long long)width);
    atomicAdd(reinterpret_cast<unsigned long long *>(out + 1), (unsigned long long)entries);
    atomicMax(out + 2, group);
    atomicMax(out + 3, row);
  }
}

__global__ void iota_kernel(std::int32_t *__restrict__ dst, std::int64_t n)
{
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = std::int32_t(i);
}

template <class V>
__global__ void slot_values_kernel(V *__restrict__ val, std::int64_t n)
{
  const std::int64_t k = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k < n) val[k] = V(k + 1);
}

__global__ void narrow_kernel(const std::int64_t *__restrict__ in, std::int32_t *__restrict__ out, std::int64_t n)
{
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = std::int32_t(in[i]);
}

} // namespace

void enter_step(BuildLog *log, BuildStep s, void *stream)
{
  if (!log) return;
  synchronize(stream);
  log->step(s);
}

template <class V, class I>
void DeviceCsr<V, I>::upload_structure(const CsrView<V, I, I> &A)
{
  base_ = A.row_ptr ? std::int64_t(A.row_ptr[0]) : 0; // also without rows: the offsets kernels read row_ptr[0]
  row_ptr_.resize(std::size_t(nrows_ + 1) * sizeof(I));
  if (A.row_ptr) copy_to_device(row_ptr_.get(), A.row_ptr, std::size_t(nrows_ + 1) * sizeof(I), stream_);
  else check(cudaMemsetAsync(row_ptr_.get(), 0, sizeof(I), static_cast<cudaStream_t>(stream_)), "cudaMemsetAsync"); // no rows, no array
  if (nnz_) {
    col_.resize(std::size_t(nnz_) * sizeof(I));
    val_.resize(std::size_t(nnz_) * sizeof(V));
    copy_to_device(col_.get(), A.col_ind + base_, std::size_t(nnz_) * sizeof(I), stream_);
  }
}

template <class V, class I>
void DeviceCsr<V, I>::write_slot_values()
{
  if (!nnz_) return;
  slot_values_kernel<V><<<unsigned((nnz_ + kThreads - 1) / kThreads), kThreads, 0, static_cast<cudaStream_t>(stream_)>>>(val_.as<V>(), nnz_);
  check_launch("slot values kernel");
}

template <class V, class I>
DeviceCsr<V, I>::DeviceCsr(const CsrView<V, I, I> &A, void *stream) : nrows_(A.nrows), ncols_(A.ncols), nnz_(A.nnz()), stream_(stream)
{
  upload_structure(A);
  if (nnz_) copy_to_device(val_.get(), A.val + base_, std::size_t(nnz_) * sizeof(V), stream);
}

template <class V, class I>
void DeviceCsr<V, I>::copy_structure_on_device(const CsrView<V, I, I> &A)
{
  row_ptr_.resize(std::size_t(nrows_ + 1) * sizeof(I));
  if (nrows_) copy_on_device(row_ptr_.get(), A.row_ptr, std::size_t(nrows_ + 1) * sizeof(I), stream_);
  else check(cudaMemsetAsync(row_ptr_.get(), 0, sizeof(I), static_cast<cudaStream_t>(stream_)), "cudaMemsetAsync");
  if (nnz_) {
    col_.resize(std::size_t(nnz_) * sizeof(I));
    val_.resize(std::size_t(nnz_) * sizeof(V));
    copy_on_device(col_.get(), A.col_ind, std::size_t(nnz_) * sizeof(I), stream_);
  }
}

template <class V, class I>
DeviceCsr<V, I>::DeviceCsr(const CsrView<V, I, I> &A, std::int64_t nnz, OnDevice, void *stream) : nrows_(A.nrows), ncols_(A.ncols), nnz_(nnz), stream_(stream)
{
  copy_structure_on_device(A);
  if (nnz_) copy_on_device(val_.get(), A.val, std::size_t(nnz_) * sizeof(V), stream);
}

template <class V, class I>
DeviceCsr<V, I>::DeviceCsr(const CsrView<V, I, I> &A, std::int64_t nnz, SlotValues, void *stream) : nrows_(A.nrows), ncols_(A.ncols), nnz_(nnz), stream_(stream)
{
  copy_structure_on_device(A);
  write_slot_values();
}

template <class V, class I>
DeviceCsr<V, I>::DeviceCsr(const CsrView<V, I, I> &A, UploadSlotValues, void *stream) : nrows_(A.nrows), ncols_(A.ncols), nnz_(A.nnz()), stream_(stream)
{
  upload_structure(A);
  write_slot_values();
}

template <class V, class I>
const std::int32_t *DeviceCsr<V, I>::row_lengths() const
{
  if (nrows_ && !lengths_.get()) {
    Buffer len(std::size_t(nrows_) * sizeof(std::int32_t));
    row_lengths_kernel<I><<<unsigned((nrows_ + kThreads - 1) / kThreads), kThreads, 0, static_cast<cudaStream_t>(stream_)>>>(nrows_, row_ptr(), len.as<std::int32_t>());
    check_launch("row lengths kernel");
    lengths_ = std::move(len);
  }
  return lengths_.as<std::int32_t>();
}

template <class V, class I>
GroupStats DeviceCsr<V, I>::group_stats(std::int64_t g, std::int64_t width_multiple, std::int64_t entry_multiple) const
{
  if (g < 1 || width_multiple < 1 || entry_multiple < 1) throw std::logic_error("group_stats: group size and multiples must be positive");
  GroupStats s;
  if (!nrows_) return s;
  for (const auto &k : stats_)
    if (k.first.g == g && k.first.width_multiple == width_multiple && k.first.entry_multiple == entry_multiple) return k.second;
  const auto st = static_cast<cudaStream_t>(stream_);
  Buffer     out(4 * sizeof(long long));
  long long  h[4];
  check(cudaMemsetAsync(out.get(), 0, out.bytes(), st), "cudaMemsetAsync");
  group_stats_kernel<I><<<stride_blocks((nrows_ + g - 1) / g), kThreads, 0, st>>>(nrows_, g, width_multiple, entry_multiple, row_ptr(), out.as<long long>());
  check_launch("group statistics kernel");
  copy_to_host_sync(h, out.get(), sizeof(h), stream_);
  s.padded_width = h[0], s.padded_entries = h[1], s.longest_group = h[2], s.longest_row = h[3];
  stats_.push_back({StatsKey{g, width_multiple, entry_multiple}, s});
  return s;
}

template <class V, class I>
std::int64_t DeviceCsr<V, I>::longest_row() const
{
  return group_stats(1).longest_row; // (kept with the other statistics)
}

std::int64_t offsets_from_sizes(const std::int64_t *sizes, std::int64_t k, Buffer &offsets, const char *format, void *stream)
{
  const auto st = static_cast<cudaStream_t>(stream);
  offsets       = Buffer(std::size_t(k + 1) * sizeof(std::int32_t));
  if (!k) {
    check(cudaMemsetAsync(offsets.get(), 0, sizeof(std::int32_t), st), "cudaMemsetAsync");
    return 0;
  }
  Buffer       sums(std::size_t(k + 1) * sizeof(std::int64_t)), tmp;
  std::size_t  tmp_bytes = 0;
  std::int64_t total     = 0;
  check(cudaMemsetAsync(sums.get(), 0, sizeof(std::int64_t), st), "cudaMemsetAsync");
  check(cub::DeviceScan::InclusiveSum(nullptr, tmp_bytes, sizes, sums.as<std::int64_t>() + 1, k, st), "cub::DeviceScan::InclusiveSum");
  tmp.resize(std::max<std::size_t>(tmp_bytes, 1));
  check(cub::DeviceScan::InclusiveSum(tmp.get(), tmp_bytes, sizes, sums.as<std::int64_t>() + 1, k, st), "cub::DeviceScan::InclusiveSum");
  copy_to_host_sync(&total, sums.as<std::int64_t>() + k, sizeof(total), stream);
  checked_offset(total, format);
  narrow_kernel<<<unsigned((k + 1 + kThreads - 1) / kThreads), kThreads, 0, st>>>(sums.as<std::int64_t>(), offsets.as<std::int32_t>(), k + 1);
  check_launch("offsets kernel");
  return total;
}

std::int64_t sum(const std::int64_t *sizes, std::int64_t k, void *stream)
{
  if (!k) return 0;
  const auto   st = static_cast<cudaStream_t>(stream);
  Buffer       out(sizeof(std::int64_t)), tmp;
  std::size_t  tmp_bytes = 0;
  std::int64_t total     = 0;
  check(cub::DeviceReduce::Sum(nullptr, tmp_bytes, sizes, out.as<std::int64_t>(), k, st), "cub::DeviceReduce::Sum");
  tmp.resize(std::max<std::size_t>(tmp_bytes, 1));
  check(cub::DeviceReduce::Sum(tmp.get(), tmp_bytes, sizes, out.as<std::int64_t>(), k, st), "cub::DeviceReduce::Sum");
  copy_to_host_sync(&total, out.get(), sizeof(total), stream);
  return total;
}

void iota(std::int32_t *dst, std::int64_t n, void *stream)
{
  if (!n) return;
  iota_kernel<<<unsigned((n + kThreads - 1) / kThreads), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(dst, n);
  check_launch("iota kernel");
}

namespace {

// one warp per row (grid-stride over rows): the lanes take the row's entries
template <class V, class I>
__global__ void diagonal_scale_kernel(std::int64_t nrows, const I *__restrict__ row_ptr, const I *__restrict__ col, V *__restrict__ val, const V *__restrict__ l,
                                      const V *__restrict__ r)
{
  const std::int64_t warps = std::int64_t(gridDim.x) * blockDim.x / 32;
  for (std::int64_t row = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32; row < nrows; row += warps) {
    const V s = l ? l[row] : V(1);
    for (I k = row_ptr[row] + I(threadIdx.x % 32); k < row_ptr[row + 1]; k += 32) val[k] *= r ? s * r[col[k]] : s;
  }
}

// one warp per row of X; each lane looks its entries up in Y's row by binary search, counting
// misses (one atomic per warp) or adding a x into the slot found (X's columns in a row are
// distinct, so no two lanes write one slot)
template <class V, class I>
__global__ void subset_axpy_kernel(std::int64_t nrows, V a, const I *__restrict__ xp, const I *__restrict__ xc, const V *__restrict__ xv, const I *__restrict__ yp,
                                   const I *__restrict__ yc, V *__restrict__ yv, bool apply, unsigned long long *__restrict__ missing)
{
  const std::int64_t warps = std::int64_t(gridDim.x) * blockDim.x / 32;
  unsigned long long miss  = 0;
  for (std::int64_t row = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32; row < nrows; row += warps) {
    const I y0 = yp[row], y1 = yp[row + 1];
    for (I k = xp[row] + I(threadIdx.x % 32); k < xp[row + 1]; k += 32) {
      const I c  = xc[k];
      I       lo = y0, hi = y1; // first slot with column >= c
      while (lo < hi) {
        const I mid = lo + (hi - lo) / 2;
        if (yc[mid] < c) lo = mid + 1;
        else hi = mid;
      }
      if (lo == y1 || yc[lo] != c) ++miss;
      else if (apply) yv[lo] += a * xv[k];
    }
  }
  for (int o = 16; o; o /= 2) miss += __shfl_xor_sync(0xffffffffu, miss, o);
  if (threadIdx.x % 32 == 0 && miss) atomicAdd(missing, miss);
}

unsigned warp_per_row_blocks(std::int64_t nrows) { return unsigned(std::max<std::int64_t>(1, std::min<std::int64_t>((nrows * 32 + kThreads - 1) / kThreads, 65536))); }

} // namespace

template <class V, class I>
void csr_diagonal_scale(std::int64_t nrows, const I *row_ptr, const I *col, V *val, const V *l, const V *r, void *stream)
{
  if (nrows <= 0 || (!l && !r)) return;
  diagonal_scale_kernel<V, I><<<warp_per_row_blocks(nrows), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(nrows, row_ptr, col, val, l, r);
  check_launch("diagonal scale kernel");
}

template <class V, class I>
std::int64_t csr_subset_axpy(std::int64_t nrows, V a, const I *x_row_ptr, const I *x_col, const V *x_val, const I *y_row_ptr, const I *y_col, V *y_val,
                             bool apply, void *stream)
{
  if (nrows <= 0) return 0;
  const auto         st = static_cast<cudaStream_t>(stream);
  Buffer             missing(sizeof(unsigned long long));
  unsigned long long h  = 0;
  check(cudaMemsetAsync(missing.get(), 0, missing.bytes(), st), "cudaMemsetAsync");
  subset_axpy_kernel<V, I><<<warp_per_row_blocks(nrows), kThreads, 0, st>>>(nrows, a, x_row_ptr, x_col, x_val, y_row_ptr, y_col, y_val, apply,
                                                                            missing.as<unsigned long long>());
  check_launch("subset axpy kernel");
  copy_to_host_sync(&h, missing.get(), sizeof(h), stream);
  return std::int64_t(h);
}

#define GPUMATS_CSR_OPS(V, I) \
  template void csr_diagonal_scale<V, I>(std::int64_t, const I *, const I *, V *, const V *, const V *, void *); \
  template std::int64_t csr_subset_axpy<V, I>(std::int64_t, V, const I *, const I *, const V *, const I *, const I *, V *, bool, void *);
GPUMATS_CSR_OPS(float, std::int32_t)
GPUMATS_CSR_OPS(double, std::int32_t)
GPUMATS_CSR_OPS(float, std::int64_t)
GPUMATS_CSR_OPS(double, std::int64_t)
#undef GPUMATS_CSR_OPS

namespace {

constexpr std::uint64_t kEmptyKey      = ~std::uint64_t(0); // a NaN pattern; the value itself is flagged apart
constexpr int           kMaxSlotsLog2  = 18;                 // 2^18 slots: at most a quarter full below 65536 keys
constexpr std::uint64_t kMinSlots      = 1024;

// The table's slots: four per key it may have to hold (the values, or the limit and one more,
// whichever is fewer), a power of two. A small matrix (GAMG's coarse levels) gets a small table to
// clear and read back instead of 2 MB.
std::uint64_t distinct_slots(std::int64_t n, std::int64_t limit)
{
  const std::uint64_t keys = std::uint64_t(std::min(n, limit + 1));
  std::uint64_t       s    = kMinSlots;
  while (s < 4 * keys && s < (std::uint64_t(1) << kMaxSlotsLog2)) s *= 2;
  return s;
}

__device__ __forceinline__ std::uint64_t slot_of(std::uint64_t key, std::uint64_t mask)
{
  key ^= key >> 33; // the mixing steps of MurmurHash3's finalizer: values differ mostly in high bits
  key *= 0xff51afd7ed558ccdULL;
  key ^= key >> 33;
  return key & mask;
}

// Grid-stride over the values. In each warp, one lane per distinct key (match_any) inserts it:
// probe linearly from its hash slot; a slot never changes once it holds a key, so a plain read that
// finds the key ends the probe, and an empty slot is claimed by atomicCAS. state[0]: keys inserted,
// state[1]: past the limit, state[2]: the empty-key pattern seen. Past the limit every thread stops
// at its next value, and a probe in progress at its next slot: the first wave of the grid (a million
// threads) inserts general values far past the limit before any thread reads the flag again, and
// without the check in the probe those inserts would fill the table and probe it end to end
// (GAMG's products, whose values are general).
template <class V>
__global__ void distinct_kernel(const V *__restrict__ val, std::int64_t n, std::int64_t limit, unsigned long long *__restrict__ table, std::uint64_t mask,
                                unsigned long long *__restrict__ state)
{
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  volatile unsigned long long *stop_flag = state + 1;
  for (std::int64_t base = std::int64_t(blockIdx.x) * blockDim.x; base < n; base += stride) { // the bounds are the same for the warp
    // every exit and every match_any is taken by the whole warp: lane 0 reads the stop flag for all
    unsigned long long stop = (threadIdx.x % 32) == 0 ? *stop_flag : 0;
    if (__shfl_sync(0xffffffffu, stop, 0)) return;
    const std::int64_t  e      = base + threadIdx.x;
    const bool          active = e < n;
    const std::uint64_t key    = active ? device_bits(val[e]) : kEmptyKey;
    const unsigned      peers  = __match_any_sync(0xffffffffu, (unsigned long long)key);
    if (active && (__ffs(peers) - 1) == int(threadIdx.x % 32)) { // this key's leader in the warp
      if (key == kEmptyKey) atomicOr(state + 2, 1ULL);
      else {
        std::uint64_t s = slot_of(key, mask);
        for (std::uint64_t probes = 0;; ++probes, s = (s + 1) & mask) {
          if (probes > mask || (probes && *stop_flag)) { // full (only past the limit), or past it: too many
            atomicOr(state + 1, 1ULL);
            break;
          }
          unsigned long long cur = table[s];
          if (cur == key) break;
          if (cur == kEmptyKey) {
            cur = atomicCAS(table + s, (unsigned long long)kEmptyKey, (unsigned long long)key);
            if (cur == kEmptyKey) {
              if (std::int64_t(atomicAdd(state, 1ULL) + 1) > limit) atomicOr(state + 1, 1ULL);
              break;
            }
            if (cur == key) break;
          }
        }
      }
    }
    __syncwarp();
  }
}

// The occupied slots' keys, in no order, into keys[0..*count): the readback of distinct_values.
__global__ void gather_keys_kernel(const unsigned long long *__restrict__ table, std::uint64_t slots, unsigned long long *__restrict__ keys,
                                   unsigned long long *__restrict__ count)
{
  for (std::uint64_t s = std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; s < slots; s += std::uint64_t(gridDim.x) * blockDim.x)
    if (table[s] != kEmptyKey) keys[atomicAdd(count, 1ULL)] = table[s];
}

} // namespace

template <class V>
std::vector<V> distinct_values(const V *val, std::int64_t n, std::int64_t limit, std::int64_t *count, void *stream)
{
  *count = 0;
  if (n <= 0) return {};
  const auto          st    = static_cast<cudaStream_t>(stream);
  const std::uint64_t slots = distinct_slots(n, limit);
  Buffer              table(slots * sizeof(unsigned long long)), state(3 * sizeof(unsigned long long));
  unsigned long long  h[3];
  check(cudaMemsetAsync(table.get(), 0xff, table.bytes(), st), "cudaMemsetAsync"); // every slot kEmptyKey
  check(cudaMemsetAsync(state.get(), 0, state.bytes(), st), "cudaMemsetAsync");
  const unsigned blocks = unsigned(std::min<std::int64_t>((n + 255) / 256, 4096));
  distinct_kernel<V><<<blocks, 256, 0, st>>>(val, n, limit, table.as<unsigned long long>(), slots - 1, state.as<unsigned long long>());
  check_launch("distinct values kernel");
  copy_to_host_sync(h, state.get(), sizeof(h), stream);
  const std::int64_t found = std::int64_t(h[0]) + (h[2] ? 1 : 0);
  if (h[1] || found > limit) {
    *count = limit + 1;
    return {};
  }
  // the keys gathered on the GPU (h[0] of them), so that a few values read back a few words, not
  // the table (2 MB for a block of 65537 nonzeros or more)
  std::vector<std::uint64_t> bits(static_cast<std::size_t>(h[0]));
  if (h[0]) {
    Buffer keys(std::size_t(h[0]) * sizeof(unsigned long long));
    check(cudaMemsetAsync(state.get(), 0, sizeof(unsigned long long), st), "cudaMemsetAsync");
    gather_keys_kernel<<<unsigned(std::min<std::uint64_t>((slots + 255) / 256, 4096)), 256, 0, st>>>(table.as<unsigned long long>(), slots, keys.as<unsigned long long>(),
                                                                                                state.as<unsigned long long>());
    check_launch("distinct keys gather kernel");
    copy_to_host_sync(bits.data(), keys.get(), keys.bytes(), stream);
  }
  if (h[2]) bits.push_back(kEmptyKey);
  std::sort(bits.begin(), bits.end()); // by bit pattern, as the dictionaries order their tables
  std::vector<V> out(bits.size());
  for (std::size_t k = 0; k < bits.size(); ++k) std::memcpy(&out[k], &bits[k], sizeof(V));
  *count = std::int64_t(out.size());
  return out;
}

template <class V, class I>
const std::vector<V> &DeviceCsr<V, I>::distinct_values(std::int64_t limit, std::int64_t *count) const
{
  if (distinct_limit_ != limit) {
    distinct_        = cuda::distinct_values(val(), nnz_, limit, &distinct_count_, stream_);
    distinct_limit_  = limit;
  }
  *count = distinct_count_;
  return distinct_;
}

template class DeviceCsr<float, std::int32_t>;
template class DeviceCsr<float, std::int64_t>;
template class DeviceCsr<double, std::int32_t>;
template class DeviceCsr<double, std::int64_t>;
template std::vector<float>  distinct_values<float>(const float *, std::int64_t, std::int64_t, std::int64_t *, void *);
template std::vector<double> distinct_values<double>(const double *, std::int64_t, std::int64_t, std::int64_t *, void *);

} // namespace cuda
} // namespace gpumats
