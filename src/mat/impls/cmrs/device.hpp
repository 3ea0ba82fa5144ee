// CMRS on the GPU: what the glue and the tests may call. Implemented in cuda.cu.
#pragma once

#include "../common/cuda/device.hpp"
#include "core.hpp"

namespace gpumats {
namespace cmrs {

// Copies a host-built CMRS matrix to the current GPU.
template <class V>
std::unique_ptr<cuda::Operator<V>> to_device(const Matrix<V> &M);

// Converts a host CSR on the GPU: the CSR arrays are uploaded as they are and packed, padded and
// (optionally) sorted there, which costs little more than aijcusparse's own upload. The result
// is identical, array for array, to to_device(from_csr(A, p)).
template <class V, class I>
std::unique_ptr<cuda::Operator<V>> build_on_device(const CsrView<V, I, I> &A, const Params &p);

// Brings a device copy back into host form (tests compare it with from_csr).
template <class V>
Matrix<V> download(const cuda::Operator<V> &op);

} // namespace cmrs
} // namespace gpumats
