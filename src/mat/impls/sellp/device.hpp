// SELL-P on the GPU: what the glue and the tests may call. Implemented in cuda.cu.
#pragma once

#include "../common/cuda/device.hpp"
#include "core.hpp"

namespace gpumats {
namespace sellp {

// Copies a host-built SELL-P matrix to the current GPU.
template <class V>
std::unique_ptr<cuda::Operator<V>> to_device(const Matrix<V> &M);

// Converts a host CSR on the GPU: the host computes slice widths and the sigma order from the row
// lengths (O(rows)), the CSR arrays are uploaded as they are and scattered into the padded,
// column-major slices there. Identical, array for array, to to_device(from_csr(A, p)).
template <class V, class I>
std::unique_ptr<cuda::Operator<V>> build_on_device(const CsrView<V, I, I> &A, const Params &p);

// Replaces the plain values of a device copy by codes into `table`: the distinct values of the
// matrix sorted by bit pattern (dictionary_table), 1 to 65536 of them. The device half of
// compress_values: the same codes and table as to_device(from_csr(A, p)) with p.values set.
template <class V>
void encode_values(cuda::Operator<V> &op, const std::vector<V> &table);

// Brings a device copy back into host form (tests compare it with from_csr).
template <class V>
Matrix<V> download(const cuda::Operator<V> &op);

} // namespace sellp
} // namespace gpumats
