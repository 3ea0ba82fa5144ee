// SELL-P on the GPU: what the glue and the tests may call. Implemented in cuda.cu.
#pragma once

#include "../common/cuda/format.hpp"
#include "core.hpp"

namespace gpumats {
namespace sellp {

// Copies a host-built SELL-P matrix to the current GPU.
template <class V>
std::unique_ptr<cuda::Operator<V>> to_device(const Matrix<V> &M);

// Converts a CSR on the GPU from its upload (common/cuda/csr.hpp), reading nothing on the host:
// the row lengths, the SELL-C-sigma order (a stable segmented sort of the lengths, longest first,
// in windows of sigma rows), the slice widths (the longest row of each slice rounded up to t) and
// their offsets (a scan) are computed there, then the entries and the padding are scattered into
// the column-major slices (and compressed to 16-bit deltas where asked and possible); only the
// stored size is read back, to allocate. Identical, array for array, to to_device(from_csr(A, p)).
// `log` (may be null) is told when the scatter starts and when the build is done.
template <class V, class I>
std::unique_ptr<cuda::Operator<V>> build_on_device(const cuda::DeviceCsr<V, I> &A, const Params &p, cuda::BuildLog *log = nullptr);

// The same from a host CSR, uploaded first on the default stream (the tests' entry point).
using cuda::build_on_device;

// Replaces the plain values of a device copy by codes into `table`: the distinct values of the
// matrix sorted by bit pattern (dictionary_table), 1 to 65536 of them. The device half of
// compress_values: the same codes and table as to_device(from_csr(A, p)) with p.values set.
template <class V>
void encode_values(cuda::Operator<V> &op, const std::vector<V> &table);

// stored_entries (core.hpp) of the uploaded CSR, on the GPU.
template <class V, class I>
std::int64_t stored_on_device(const cuda::DeviceCsr<V, I> &A, const Params &p);

// Brings a device copy back into host form (tests compare it with from_csr).
template <class V>
Matrix<V> download(const cuda::Operator<V> &op);

} // namespace sellp
} // namespace gpumats
