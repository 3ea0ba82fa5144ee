// BELLPACK on the GPU: device storage and the SpMV kernel (the paper's Algorithm 2).
//
// One thread per sorted block row, one CUDA block of R threads per partition. For every slot k
// the R threads read R consecutive block-column indices and then, for each of the r*c block
// entries, R consecutive values: every load of the matrix is a contiguous warp-wide run. A thread
// loads the c entries of x its block touches once (through the read-only path) and reuses them for
// the r rows of the block, which is where blocking saves loads. Block sizes are compile-time
// template arguments (r, c = 1..8), so the accumulators and x entries stay in registers.
#include "../common/cuda/blocks.cuh"
#include "../common/cuda/check.cuh"
#include "device.hpp"

#include <utility>

namespace gpumats {
namespace bellpack {

using cuda::Buffer;
using cuda::Epilogue;
using cuda::LoadPolicy;

namespace {

template <class V, int BR, int BC, LoadPolicy P>
__global__ void spmv_kernel(std::int64_t block_rows, std::int64_t nrows, std::int64_t ncols, const std::int32_t *__restrict__ part_ptr,
                            const std::int32_t *__restrict__ bcol, const V *__restrict__ val, const std::int32_t *__restrict__ perm,
                            const V *__restrict__ x, Epilogue<V> ep)
{
  constexpr int      RC  = BR * BC;
  const int          R   = blockDim.x, i = threadIdx.x;
  const std::int64_t q   = blockIdx.x, pos = q * R + i;
  if (pos >= block_rows) return;
  const std::int32_t  first = part_ptr[q], width = (part_ptr[q + 1] - first) / R;
  const std::int32_t *bc    = bcol + first + i;
  const V            *v     = val + std::int64_t(first) * RC + i;

  V acc[BR];
#pragma unroll
  for (int a = 0; a < BR; ++a) acc[a] = V(0);
  for (std::int32_t k = 0; k < width; ++k) {
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
  const std::int64_t I = perm[pos];
#pragma unroll
  for (int a = 0; a < BR; ++a)
    if (I * BR + a < nrows) cuda::apply(ep, I * BR + a, acc[a]);
}

template <class V>
class DeviceMatrix final : public cuda::Operator<V> {
public:
  Params       params;
  std::int64_t nrows = 0, ncols = 0, block_rows = 0, partitions = 0;
  Buffer       part_ptr, bcol, val, perm;

  template <int BR, int BC>
  void launch(const V *x, const Epilogue<V> &ep, cudaStream_t st) const
  {
    auto args = [&](auto kernel) {
      kernel<<<unsigned(partitions), params.partition_rows, 0, st>>>(block_rows, nrows, ncols, part_ptr.as<std::int32_t>(), bcol.as<std::int32_t>(),
                                                                     val.as<V>(), perm.as<std::int32_t>(), x, ep);
    };
    if (this->load_policy == LoadPolicy::kStream) args(spmv_kernel<V, BR, BC, LoadPolicy::kStream>);
    else args(spmv_kernel<V, BR, BC, LoadPolicy::kDefault>);
  }

  template <int... K>
  void dispatch(const V *x, const Epilogue<V> &ep, cudaStream_t st, std::integer_sequence<int, K...>) const
  {
    // K enumerates (r-1)*8 + (c-1): one instantiation per supported block size
    const int key = (params.r - 1) * kMaxBlock + (params.c - 1);
    ((key == K ? launch<K / kMaxBlock + 1, K % kMaxBlock + 1>(x, ep, st) : void()), ...);
  }

  void spmv(const V *x, const Epilogue<V> &ep, void *stream) const override
  {
    if (!nrows) return;
    dispatch(x, ep, static_cast<cudaStream_t>(stream), std::make_integer_sequence<int, kMaxBlock * kMaxBlock>{});
    cuda::check_launch("BELLPACK SpMV kernel");
  }
  std::size_t bytes() const override { return part_ptr.bytes() + bcol.bytes() + val.bytes() + perm.bytes(); }
};

} // namespace

template <class V>
std::unique_ptr<cuda::Operator<V>> to_device(const Matrix<V> &M)
{
  auto D        = std::make_unique<DeviceMatrix<V>>();
  D->params     = M.params;
  D->nrows      = M.nrows;
  D->ncols      = M.ncols;
  D->block_rows = M.block_rows;
  D->partitions = M.partitions();
  D->part_ptr   = cuda::upload(M.part_ptr.data(), M.part_ptr.size());
  D->bcol       = cuda::upload(M.block_col.data(), M.block_col.size());
  D->val        = cuda::upload(M.val.data(), M.val.size());
  D->perm       = cuda::upload(M.row_perm.data(), M.row_perm.size());
  D->footprint  = footprint(M);
  return D;
}

template std::unique_ptr<cuda::Operator<float>>  to_device<float>(const Matrix<float> &);
template std::unique_ptr<cuda::Operator<double>> to_device<double>(const Matrix<double> &);

} // namespace bellpack
} // namespace gpumats
