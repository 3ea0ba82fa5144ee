// The GPU pieces of the autocuda type: plain CSR through cuSPARSE (the candidate every format has to
// beat) and a timed trial of a device operator. Implemented in cuda.cu.
#pragma once

#include "../common/cuda/csr.hpp"

namespace gpumats {
namespace autosel {

// CSR on the current GPU, multiplied by cusparseSpMV (CUSPARSE_SPMV_CSR_ALG1).
template <class V, class I>
std::unique_ptr<cuda::Operator<V>> csr_to_device(const CsrView<V, I, I> &A);
// The same from the block's upload: its arrays copied on the GPU (32-bit indices, offsets from 0),
// none read on the host.
template <class V, class I>
std::unique_ptr<cuda::Operator<V>> csr_from_device(const cuda::DeviceCsr<V, I> &A);

// Mean time in microseconds of `reps` products y = A x after `warmup` untimed ones, by CUDA events
// on `stream`; x and y are scratch device arrays of the operator's sizes.
template <class V>
double time_spmv(const cuda::Operator<V> &op, std::int64_t nrows, std::int64_t ncols, int warmup, int reps, void *stream);

} // namespace autosel
} // namespace gpumats
