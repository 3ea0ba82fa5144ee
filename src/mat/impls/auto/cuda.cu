// cuSPARSE CSR as a device operator, and the timed trial used by autocuda.
#include "../common/cuda/check.cuh"
#include "../common/cuda/format.hpp"
#include "device.hpp"

#include <cusparse.h>

namespace gpumats {
namespace autosel {

using cuda::Buffer;
using cuda::blocks_for;

namespace {

void check_sparse(cusparseStatus_t st, const char *what)
{
  if (st != CUSPARSE_STATUS_SUCCESS) throw cuda::DeviceError(std::string(what) + " failed: " + cusparseGetErrorString(st), st == CUSPARSE_STATUS_ALLOC_FAILED);
}

template <class V>
constexpr cudaDataType value_type()
{
  return sizeof(V) == 8 ? CUDA_R_64F : CUDA_R_32F;
}

// The diagonal of a CSR: one thread per row, its entry in its own column if it stores one
template <class V>
__global__ void csr_diagonal_kernel(std::int64_t nrows, const std::int32_t *__restrict__ row_ptr, const std::int32_t *__restrict__ col,
                                    const V *__restrict__ val, V *__restrict__ d)
{
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= nrows) return;
  for (std::int32_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k)
    if (col[k] == i) {
      d[i] = val[k];
      return;
    }
}

template <class V>
class CsrMatrix final : public cuda::Operator<V> {
public:
  std::int64_t         nrows = 0, ncols = 0, nnz = 0;
  Buffer               row_ptr, col, val;
  cusparseHandle_t     handle = nullptr;
  cusparseSpMatDescr_t mat    = nullptr;
  // vector descriptors and the work buffer are made at the first product and then only repointed;
  // cusparseSpMV_preprocess runs once, as PETSc's aijcusparse does, which ALG1 needs to keep pace
  mutable cusparseDnVecDescr_t vx = nullptr, vy = nullptr;
  mutable Buffer               work;
  mutable bool                 prepared = false;
  // the same for products with A^T (CUSPARSE_OPERATION_TRANSPOSE: x has nrows entries, y ncols),
  // made at the first such product: most matrices never get one
  mutable cusparseDnVecDescr_t vxt = nullptr, vyt = nullptr;
  mutable Buffer               work_t;

  ~CsrMatrix() override
  {
    if (vx) cusparseDestroyDnVec(vx);
    if (vy) cusparseDestroyDnVec(vy);
    if (vxt) cusparseDestroyDnVec(vxt);
    if (vyt) cusparseDestroyDnVec(vyt);
    if (mat) cusparseDestroySpMat(mat);
    if (handle) cusparseDestroy(handle);
  }

  // out = alpha*A*x + beta*in: cuSPARSE updates y in place, so a separate `in` is copied to out first
  void spmv(const V *x, const Epilogue<V> &ep, void *stream) const override
  {
    if (!nrows) return;
    auto     st = static_cast<cudaStream_t>(stream);
    V *const y  = ep.out;
    if (ep.beta != V(0) && ep.in != ep.out) cuda::check(cudaMemcpyAsync(ep.out, ep.in, nrows * sizeof(V), cudaMemcpyDeviceToDevice, st), "cudaMemcpyAsync");
    check_sparse(cusparseSetStream(handle, st), "cusparseSetStream");
    const V alpha = ep.alpha, beta = ep.beta;
    if (!vx) {
      check_sparse(cusparseCreateDnVec(&vx, ncols, const_cast<V *>(x), value_type<V>()), "cusparseCreateDnVec");
      check_sparse(cusparseCreateDnVec(&vy, nrows, y, value_type<V>()), "cusparseCreateDnVec");
    } else {
      check_sparse(cusparseDnVecSetValues(vx, const_cast<V *>(x)), "cusparseDnVecSetValues");
      check_sparse(cusparseDnVecSetValues(vy, y), "cusparseDnVecSetValues");
    }
    if (!prepared) {
      std::size_t bytes = 0;
      check_sparse(cusparseSpMV_bufferSize(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, mat, vx, &beta, vy, value_type<V>(), CUSPARSE_SPMV_CSR_ALG1, &bytes),
                   "cusparseSpMV_bufferSize");
      work.resize(std::max<std::size_t>(bytes, 1));
#if CUSPARSE_VERSION >= 12400
      check_sparse(cusparseSpMV_preprocess(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, mat, vx, &beta, vy, value_type<V>(), CUSPARSE_SPMV_CSR_ALG1,
                                           work.get()),
                   "cusparseSpMV_preprocess");
#endif
      prepared = true;
    }
    check_sparse(cusparseSpMV(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, mat, vx, &beta, vy, value_type<V>(), CUSPARSE_SPMV_CSR_ALG1, work.get()),
                 "cusparseSpMV");
  }
  // out = alpha*A^T*x + beta*in by cusparseSpMV with CUSPARSE_OPERATION_TRANSPOSE on the same CSR
  // (what aijcusparse does unless MAT_FORM_EXPLICIT_TRANSPOSE is set): no transposed copy. CSR
  // ALG1, as forward and as aijcusparse. out gets beta*in first (the prologue of our own formats)
  // and cuSPARSE adds into it with beta = 1: the transposed product scatters, so cuSPARSE scales y
  // in a pass of its own anyway, and this way a NaN-filled out is never read when beta == 0.
  void spmv_transpose(const V *x, const Epilogue<V> &ep, void *stream) const override
  {
    cuda::transpose_prologue(ep, ncols, stream);
    if (!nrows || !ncols || !nnz) return; // nothing to add (and cuSPARSE is not handed an empty matrix)
    check_sparse(cusparseSetStream(handle, static_cast<cudaStream_t>(stream)), "cusparseSetStream");
    const V alpha = ep.alpha, one = V(1);
    if (!vxt) {
      check_sparse(cusparseCreateDnVec(&vxt, nrows, const_cast<V *>(x), value_type<V>()), "cusparseCreateDnVec");
      check_sparse(cusparseCreateDnVec(&vyt, ncols, ep.out, value_type<V>()), "cusparseCreateDnVec");
      std::size_t bytes = 0;
      check_sparse(cusparseSpMV_bufferSize(handle, CUSPARSE_OPERATION_TRANSPOSE, &alpha, mat, vxt, &one, vyt, value_type<V>(), CUSPARSE_SPMV_CSR_ALG1, &bytes),
                   "cusparseSpMV_bufferSize");
      work_t.resize(std::max<std::size_t>(bytes, 1));
    } else {
      check_sparse(cusparseDnVecSetValues(vxt, const_cast<V *>(x)), "cusparseDnVecSetValues");
      check_sparse(cusparseDnVecSetValues(vyt, ep.out), "cusparseDnVecSetValues");
    }
    check_sparse(cusparseSpMV(handle, CUSPARSE_OPERATION_TRANSPOSE, &alpha, mat, vxt, &one, vyt, value_type<V>(), CUSPARSE_SPMV_CSR_ALG1, work_t.get()),
                 "cusparseSpMV (transpose)");
  }
  void diagonal(V *d, void *stream) const override
  {
    if (!nrows || !nnz) return;
    csr_diagonal_kernel<V><<<blocks_for(nrows), 256, 0, static_cast<cudaStream_t>(stream)>>>(nrows, row_ptr.as<std::int32_t>(), col.as<std::int32_t>(),
                                                                                              val.as<V>(), d);
    cuda::check_launch("CSR diagonal kernel");
  }
  std::size_t bytes() const override { return row_ptr.bytes() + col.bytes() + val.bytes(); }
  V *values(std::int64_t *count) override
  {
    // the analysis of cusparseSpMV_preprocess is redone at the next product: new values must not
    // meet what it may have derived from the old ones
    prepared = false;
    *count   = nnz;
    return val.template as<V>();
  }
};

// row_ptr - base and the column indices, as the 32-bit arrays cuSPARSE is given
template <class I>
__global__ void rebase_kernel(std::int64_t n, std::int64_t base, const I *__restrict__ in, std::int32_t *__restrict__ out)
{
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = std::int32_t(std::int64_t(in[i]) - base);
}

template <class V>
void describe_csr(CsrMatrix<V> &D)
{
  check_sparse(cusparseCreate(&D.handle), "cusparseCreate");
  check_sparse(cusparseCreateCsr(&D.mat, D.nrows, D.ncols, D.nnz, D.row_ptr.get(), D.col.get(), D.val.get(), CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                 CUSPARSE_INDEX_BASE_ZERO, value_type<V>()),
               "cusparseCreateCsr");
  D.footprint = Footprint{D.nrows, D.ncols, D.nnz, D.nnz, 4 * (D.nnz + D.nrows + 1), std::int64_t(sizeof(V)) * D.nnz};
}

} // namespace

template <class V, class I>
std::unique_ptr<cuda::Operator<V>> csr_from_device(const cuda::DeviceCsr<V, I> &A)
{
  if (A.nrows() > std::numeric_limits<std::int32_t>::max() || A.ncols() > std::numeric_limits<std::int32_t>::max())
    throw FormatError("CSR: local block too large for 32-bit indices; use more MPI ranks");
  checked_offset(A.nnz(), "CSR");
  auto               D   = std::make_unique<CsrMatrix<V>>();
  const std::int64_t nnz = A.nnz();
  const auto         st  = static_cast<cudaStream_t>(A.stream());
  D->nrows               = A.nrows();
  D->ncols               = A.ncols();
  D->nnz                 = nnz;
  D->row_ptr.resize(std::size_t(A.nrows() + 1) * sizeof(std::int32_t));
  D->col.resize(std::size_t(std::max<std::int64_t>(nnz, 1)) * sizeof(std::int32_t)); // cuSPARSE is handed real pointers
  D->val.resize(std::size_t(std::max<std::int64_t>(nnz, 1)) * sizeof(V));
  rebase_kernel<I><<<blocks_for(A.nrows() + 1), 256, 0, st>>>(A.nrows() + 1, A.base(), A.row_ptr(), D->row_ptr.template as<std::int32_t>());
  cuda::check_launch("CSR row pointer kernel");
  if (nnz) {
    rebase_kernel<I><<<blocks_for(nnz), 256, 0, st>>>(nnz, 0, A.col_ind(), D->col.template as<std::int32_t>());
    cuda::check_launch("CSR column kernel");
    cuda::check(cudaMemcpyAsync(D->val.get(), A.val(), std::size_t(nnz) * sizeof(V), cudaMemcpyDeviceToDevice, st), "cudaMemcpyAsync");
  }
  cuda::synchronize(A.stream());
  describe_csr(*D);
  return D;
}

template <class V, class I>
std::unique_ptr<cuda::Operator<V>> csr_to_device(const CsrView<V, I, I> &A)
{
  validate_csr(A, "CSR");
  auto               D   = std::make_unique<CsrMatrix<V>>();
  const std::int64_t nnz = A.nnz();
  D->nrows               = A.nrows;
  D->ncols               = A.ncols;
  D->nnz                 = nnz;
  std::vector<std::int32_t> rp(A.nrows + 1), ci(nnz);
  for (std::int64_t i = 0; i <= A.nrows; ++i) rp[i] = checked_offset(std::int64_t(A.row_ptr[i] - A.row_ptr[0]), "CSR");
  for (std::int64_t k = 0; k < nnz; ++k) ci[k] = std::int32_t(A.col_ind[A.row_ptr[0] + k]);
  D->row_ptr = cuda::upload(rp.data(), rp.size());
  D->col     = nnz ? cuda::upload(ci.data(), ci.size()) : Buffer(sizeof(std::int32_t));
  D->val     = nnz ? cuda::upload(A.val + A.row_ptr[0], std::size_t(nnz)) : Buffer(sizeof(V));
  describe_csr(*D);
  return D;
}

template <class V>
double time_spmv(const cuda::Operator<V> &op, std::int64_t nrows, std::int64_t ncols, int warmup, int reps, void *stream)
{
  auto   st = static_cast<cudaStream_t>(stream);
  Buffer x(std::max<std::int64_t>(ncols, 1) * sizeof(V)), y(std::max<std::int64_t>(nrows, 1) * sizeof(V));
  cuda::check(cudaMemsetAsync(x.get(), 0, x.bytes(), st), "cudaMemsetAsync"); // zeros: timing does not depend on the values
  const Epilogue<V> ep{V(1), V(0), nullptr, y.as<V>()};
  for (int r = 0; r < warmup; ++r) op.spmv(x.as<V>(), ep, stream);
  cudaEvent_t start, stop;
  cuda::check(cudaEventCreate(&start), "cudaEventCreate");
  cuda::check(cudaEventCreate(&stop), "cudaEventCreate");
  cuda::check(cudaEventRecord(start, st), "cudaEventRecord");
  for (int r = 0; r < reps; ++r) op.spmv(x.as<V>(), ep, stream);
  cuda::check(cudaEventRecord(stop, st), "cudaEventRecord");
  cuda::check(cudaEventSynchronize(stop), "cudaEventSynchronize");
  float ms = 0;
  cuda::check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return 1e3 * double(ms) / reps;
}

#define GPUMATS_AUTO_INSTANTIATE(V)                                                                                            \
  template std::unique_ptr<cuda::Operator<V>> csr_to_device<V, std::int32_t>(const CsrView<V, std::int32_t, std::int32_t> &); \
  template std::unique_ptr<cuda::Operator<V>> csr_to_device<V, std::int64_t>(const CsrView<V, std::int64_t, std::int64_t> &); \
  template std::unique_ptr<cuda::Operator<V>> csr_from_device<V, std::int32_t>(const cuda::DeviceCsr<V, std::int32_t> &);     \
  template std::unique_ptr<cuda::Operator<V>> csr_from_device<V, std::int64_t>(const cuda::DeviceCsr<V, std::int64_t> &);     \
  template double time_spmv<V>(const cuda::Operator<V> &, std::int64_t, std::int64_t, int, int, void *);
GPUMATS_AUTO_INSTANTIATE(float)
GPUMATS_AUTO_INSTANTIATE(double)

} // namespace autosel
} // namespace gpumats
