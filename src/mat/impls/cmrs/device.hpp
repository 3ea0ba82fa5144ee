// CMRS on the GPU: what the glue and the tests may call. Implemented in cuda.cu.
#pragma once

#include "../common/cuda/format.hpp"
#include "core.hpp"

namespace gpumats {
namespace cmrs {

// Copies a host-built CMRS matrix to the current GPU.
template <class V>
std::unique_ptr<cuda::Operator<V>> to_device(const Matrix<V> &M);

// Converts a CSR on the GPU from its upload (common/cuda/csr.hpp), reading nothing on the host:
// the strip offsets (a gather of the row pointers, or a scan of the padded strip sizes for the
// modified layout), the packing of each row's entries into its strip and the stable sort of every
// strip by packed word (CUB's segmented sort) all run there, which costs little more than
// aijcusparse's own upload. Identical, array for array, to to_device(from_csr(A, p)). `log` (may
// be null) is told when the scatter starts.
template <class V, class I>
std::unique_ptr<cuda::Operator<V>> build_on_device(const cuda::DeviceCsr<V, I> &A, const Params &p, cuda::BuildLog *log = nullptr);

// The same from a host CSR, uploaded first on the default stream (the tests' entry point).
using cuda::build_on_device;

// Brings a device copy back into host form (tests compare it with from_csr).
template <class V>
Matrix<V> download(const cuda::Operator<V> &op);

} // namespace cmrs
} // namespace gpumats
