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
// so there is no fan-in and no shared memory.
#include "../common/cuda/blocks.cuh"
#include "../common/cuda/check.cuh"
#include "device.hpp"
#include "values.cuh"

namespace gpumats {
namespace sellp {

using cuda::Buffer;
using cuda::LoadPolicy;

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

// VS: where values come from (values.cuh): the plain array or the value dictionary's codes
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

template <class V>
class DeviceMatrix final : public cuda::Operator<V> {
public:
  Params                    params;
  std::int64_t              nrows = 0, ncols = 0, nnz = 0, nslices = 0;
  bool                      index16 = false;
  std::vector<std::int32_t> row_len; // host copy, only for download()
  Buffer                    slice_ptr, col, base, val, perm;
  int                       code_bytes = 0; // value dictionary: codes of 1 or 2 bytes into table; val unused
  Buffer                    codes, table;

  bool values_compressed() const override { return code_bytes != 0; }
  // calls f with the value source of this copy's form (values.cuh)
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
  void spmv_transpose(const V *x, const Epilogue<V> &ep, void *stream) const override
  {
    cuda::transpose_prologue(ep, ncols, stream); // also when there are no rows: out = beta*in
    if (!nrows || !ncols) return;
    const int          b_log2 = log2i(params.slice_height), t_log2 = log2i(params.threads_per_row), bt = 1 << (b_log2 + t_log2);
    const int          block  = std::max(bt, kMinBlock);
    const std::int64_t grid   = (nslices * bt + block - 1) / block;
    const auto        *pm     = perm.get() ? perm.as<std::int32_t>() : nullptr;
    with_values([&](auto vs) {
      using VS = decltype(vs);
      auto go  = [&](auto kernel) {
        kernel<<<unsigned(grid), block, 0, static_cast<cudaStream_t>(stream)>>>(nslices, nrows, b_log2, t_log2, slice_ptr.as<std::int32_t>(), col.get(),
                                                                                base.as<std::int32_t>(), vs, pm, x, ep.alpha, ep.out);
      };
      if (this->load_policy == LoadPolicy::kStream)
        index16 ? go(spmv_transpose_kernel<V, LoadPolicy::kStream, true, VS>) : go(spmv_transpose_kernel<V, LoadPolicy::kStream, false, VS>);
      else index16 ? go(spmv_transpose_kernel<V, LoadPolicy::kDefault, true, VS>) : go(spmv_transpose_kernel<V, LoadPolicy::kDefault, false, VS>);
    });
    cuda::check_launch("SELL-P transpose SpMV kernel");
  }
  std::size_t bytes() const override { return slice_ptr.bytes() + col.bytes() + base.bytes() + val.bytes() + perm.bytes() + codes.bytes() + table.bytes(); }
  V *values(std::int64_t *count) override
  {
    // values are separate from the indices, so a gather refills them; not so for dictionary codes
    *count = code_bytes ? 0 : this->footprint.stored;
    return code_bytes ? nullptr : val.template as<V>();
  }
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

// One thread per stored row position: scatters its source row into the column-major slice.
template <class V, class I>
__global__ void scatter_kernel(std::int64_t nrows, int b, const I *__restrict__ row_ptr, const I *__restrict__ col_in, const V *__restrict__ val_in,
                               const std::int32_t *__restrict__ perm, const std::int32_t *__restrict__ slice_ptr, std::int32_t *__restrict__ col_out,
                               V *__restrict__ val_out)
{
  const std::int64_t pos = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (pos >= nrows) return;
  const std::int64_t row = perm ? perm[pos] : pos, s = pos / b, i = pos % b, base = row_ptr[0];
  for (I j = row_ptr[row]; j < row_ptr[row + 1]; ++j) {
    const std::int64_t dst = slice_ptr[s] + (j - row_ptr[row]) * b + i;
    col_out[dst]           = std::int32_t(col_in[j - base]);
    val_out[dst]           = val_in[j - base];
  }
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
  D->row_len   = M.row_len;
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
std::unique_ptr<cuda::Operator<V>> build_on_device(const CsrView<V, I, I> &A, const Params &p)
{
  check_params(p);
  if (A.nrows > std::numeric_limits<std::int32_t>::max() || A.ncols > std::numeric_limits<std::int32_t>::max())
    throw FormatError("SELL-P: local block too large for 32-bit indices; use more MPI ranks");
  auto               D = std::make_unique<DeviceMatrix<V>>();
  const std::int64_t b = p.slice_height, t = p.threads_per_row, ns = (A.nrows + b - 1) / b, nnz = A.nnz();
  D->params            = p;
  D->nrows             = A.nrows;
  D->ncols             = A.ncols;
  D->nnz               = nnz;
  D->nslices           = ns;
  const std::vector<std::int32_t> order = sigma_order(A, p.sigma);
  D->row_len.resize(A.nrows);
  std::vector<std::int32_t> sp(ns + 1, 0);
  for (std::int64_t s = 0; s < ns; ++s) {
    std::int64_t longest = 0;
    for (std::int64_t pos = s * b; pos < std::min(A.nrows, (s + 1) * b); ++pos) {
      D->row_len[pos] = std::int32_t(A.row_end(order[pos]) - A.row_begin(order[pos]));
      longest         = std::max<std::int64_t>(longest, D->row_len[pos]);
    }
    sp[s + 1] = checked_offset(sp[s] + (longest + t - 1) / t * t * b, "SELL-P");
  }
  const std::int64_t stored = sp[ns];
  D->slice_ptr              = cuda::upload(sp.data(), sp.size());
  if (p.sigma > 1) D->perm = cuda::upload(order.data(), order.size());
  D->col.resize(stored * sizeof(std::int32_t));
  D->val.resize(stored * sizeof(V));
  if (stored) {
    cuda::check(cudaMemset(D->col.get(), 0xFF, stored * sizeof(std::int32_t)), "cudaMemset"); // kPadColumn = -1
    cuda::check(cudaMemset(D->val.get(), 0, stored * sizeof(V)), "cudaMemset");
  }
  if (nnz) {
    Buffer rp = cuda::upload(A.row_ptr, std::size_t(A.nrows + 1));
    Buffer ci = cuda::upload(A.col_ind + A.row_ptr[0], std::size_t(nnz));
    Buffer va = cuda::upload(A.val + A.row_ptr[0], std::size_t(nnz));
    scatter_kernel<V, I><<<unsigned((A.nrows + 255) / 256), 256>>>(A.nrows, int(b), rp.as<I>(), ci.as<I>(), va.as<V>(),
                                                                   D->perm.get() ? D->perm.template as<std::int32_t>() : nullptr,
                                                                   D->slice_ptr.template as<std::int32_t>(), D->col.template as<std::int32_t>(),
                                                                   D->val.template as<V>());
    cuda::check_launch("SELL-P scatter kernel");
  }
  if (p.index != Index::k32 && stored) {
    const std::int64_t ncolumns = stored / b;
    Buffer             too_wide(sizeof(int));
    int                wide     = 0;
    D->base.resize(ncolumns * sizeof(std::int32_t));
    cuda::check(cudaMemset(too_wide.get(), 0, sizeof(int)), "cudaMemset");
    bases_kernel<<<unsigned((ncolumns + 255) / 256), 256>>>(ncolumns, int(b), D->col.template as<std::int32_t>(), D->base.template as<std::int32_t>(),
                                                           too_wide.as<int>());
    cuda::check_launch("SELL-P bases kernel");
    cuda::copy_to_host_sync(&wide, too_wide.get(), sizeof(int), nullptr);
    if (wide) {
      D->base = Buffer();
      if (p.index == Index::k16)
        throw FormatError("SELL-P: the columns of a slice column span more than 2^16, too wide for 16-bit indices; use 32-bit indices (-mat_sellp_index 32) "
                          "or a smaller slice height");
    } else {
      Buffer delta(stored * sizeof(std::uint16_t));
      delta_kernel<<<unsigned((stored + 255) / 256), 256>>>(stored, int(b), D->col.template as<std::int32_t>(), D->base.template as<std::int32_t>(),
                                                           delta.as<std::uint16_t>());
      cuda::check_launch("SELL-P delta kernel");
      cuda::synchronize(nullptr);
      D->col     = std::move(delta);
      D->index16 = true;
    }
  }
  cuda::synchronize(nullptr);
  D->footprint.rows        = A.nrows;
  D->footprint.cols        = A.ncols;
  D->footprint.nnz         = nnz;
  D->footprint.stored      = stored;
  D->footprint.index_bytes = (D->index16 ? 2 * stored + 4 * (stored / b) : 4 * stored) + 4 * (ns + 1 + (p.sigma > 1 ? A.nrows : 0));
  D->footprint.value_bytes = std::int64_t(sizeof(V)) * stored;
  return D;
}

template <class V>
Matrix<V> download(const cuda::Operator<V> &op)
{
  const auto &D = dynamic_cast<const DeviceMatrix<V> &>(op);
  Matrix<V>   M;
  M.params  = D.params;
  M.nrows   = D.nrows;
  M.ncols   = D.ncols;
  M.nnz     = D.nnz;
  M.row_len = D.row_len;
  M.slice_ptr.resize(D.nslices + 1);
  cuda::copy_to_host_sync(M.slice_ptr.data(), D.slice_ptr.get(), M.slice_ptr.size() * sizeof(std::int32_t), nullptr);
  const std::int64_t stored = M.slice_ptr.back();
  M.col_ind.resize(stored);
  M.val.resize(stored);
  M.index16 = D.index16;
  if (D.index16) {
    M.col_ind.clear();
    M.col_delta.resize(stored);
    M.col_base.resize(stored / D.params.slice_height);
    if (stored) {
      cuda::copy_to_host_sync(M.col_delta.data(), D.col.get(), stored * sizeof(std::uint16_t), nullptr);
      cuda::copy_to_host_sync(M.col_base.data(), D.base.get(), M.col_base.size() * sizeof(std::int32_t), nullptr);
    }
  } else if (stored) {
    cuda::copy_to_host_sync(M.col_ind.data(), D.col.get(), stored * sizeof(std::int32_t), nullptr);
  }
  M.code_bytes = D.code_bytes;
  if (D.code_bytes) { // the dictionary form: codes and table instead of values
    M.val.clear();
    M.dict.resize(D.table.bytes() / sizeof(V));
    cuda::copy_to_host_sync(M.dict.data(), D.table.get(), D.table.bytes(), nullptr);
    if (D.code_bytes == 1) M.code8.resize(stored), cuda::copy_to_host_sync(M.code8.data(), D.codes.get(), stored, nullptr);
    else M.code16.resize(stored), cuda::copy_to_host_sync(M.code16.data(), D.codes.get(), stored * 2, nullptr);
  } else if (stored) cuda::copy_to_host_sync(M.val.data(), D.val.get(), stored * sizeof(V), nullptr);
  if (D.perm.get()) {
    M.row_perm.resize(D.nrows);
    cuda::copy_to_host_sync(M.row_perm.data(), D.perm.get(), D.nrows * sizeof(std::int32_t), nullptr);
  }
  return M;
}

// ---- value dictionary, encoded on the device (dictionary.hpp) ---------------------------------
// The host finds the distinct values (one hash pass over the CSR values, which it holds anyway) and
// sorts them by bit pattern; the conversion stays on the GPU, and each stored entry's code is its
// value's position in that table, found by binary search. The same table and codes as the host's
// compress_values, array for array.

namespace {

template <class V>
__device__ __forceinline__ std::uint64_t device_bits(V v)
{
  std::uint64_t b = 0;
  memcpy(&b, &v, sizeof(V));
  return b;
}

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
  const std::uint64_t key = device_bits(val[e]);
  int                 lo = 0, hi = entries; // first table entry not below key
  while (lo < hi) {
    const int mid = (lo + hi) / 2;
    if (device_bits(table[mid]) < key) lo = mid + 1;
    else hi = mid;
  }
  if (lo < entries && device_bits(table[lo]) == key) code[e] = C(lo);
  else atomicOr(missing, 1);
}

} // namespace

template <class V>
void encode_values(cuda::Operator<V> &op, const std::vector<V> &table)
{
  auto              &D = dynamic_cast<DeviceMatrix<V> &>(op);
  const int          w = code_bytes_for(std::int64_t(table.size()));
  const std::int64_t stored = D.footprint.stored;
  if (!w || table.empty()) throw FormatError("SELL-P: a value dictionary holds 1 to 65536 values, not " + std::to_string(table.size()));
  if (D.code_bytes) throw FormatError("SELL-P: the values are already encoded");
  if (!stored) return;
  Buffer codes(std::size_t(stored) * w), missing(sizeof(int));
  Buffer tab = cuda::upload(table.data(), table.size());
  int    bad = 0;
  cuda::check(cudaMemset(missing.get(), 0, sizeof(int)), "cudaMemset");
  auto go = [&](auto kernel, auto *out) {
    kernel<<<unsigned((stored + 255) / 256), 256>>>(stored, D.col.get(), D.val.template as<V>(), tab.as<V>(), int(table.size()), out, missing.as<int>());
  };
  if (w == 1) D.index16 ? go(encode_kernel<V, std::uint8_t, true>, codes.as<std::uint8_t>()) : go(encode_kernel<V, std::uint8_t, false>, codes.as<std::uint8_t>());
  else D.index16 ? go(encode_kernel<V, std::uint16_t, true>, codes.as<std::uint16_t>()) : go(encode_kernel<V, std::uint16_t, false>, codes.as<std::uint16_t>());
  cuda::check_launch("SELL-P dictionary encode kernel");
  cuda::copy_to_host_sync(&bad, missing.get(), sizeof(int), nullptr);
  if (bad) throw FormatError("SELL-P: a stored value is missing from the value dictionary");
  D.codes                  = std::move(codes);
  D.table                  = std::move(tab);
  D.val                    = Buffer();
  D.code_bytes             = w;
  D.footprint.value_bytes  = std::int64_t(w) * stored + std::int64_t(sizeof(V) * table.size());
}

#define GPUMATS_SELLP_INSTANTIATE(V)                                                                                         \
  template std::unique_ptr<cuda::Operator<V>> to_device<V>(const Matrix<V> &);                                               \
  template std::unique_ptr<cuda::Operator<V>> build_on_device<V, std::int32_t>(const CsrView<V, std::int32_t, std::int32_t> &, \
                                                                              const Params &);                                 \
  template std::unique_ptr<cuda::Operator<V>> build_on_device<V, std::int64_t>(const CsrView<V, std::int64_t, std::int64_t> &, \
                                                                              const Params &);                                 \
  template Matrix<V> download<V>(const cuda::Operator<V> &);                                                                  \
  template void      encode_values<V>(cuda::Operator<V> &, const std::vector<V> &);
GPUMATS_SELLP_INSTANTIATE(float)
GPUMATS_SELLP_INSTANTIATE(double)

} // namespace sellp
} // namespace gpumats
