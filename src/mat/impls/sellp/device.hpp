#pragma once
// SELL-P on the GPU: what the glue and the tests may call. Implemented in cuda.cu.
#include "../common/cuda/format.hpp"
#include "core.hpp"

namespace gpumats::sellp {

// to_device, build_on_device, download (common/cuda/format.hpp). The build on the GPU computes the
// row lengths, the SELL-C-sigma order (a stable segmented sort of the lengths, longest first, in
// windows of sigma rows), the slice widths (the longest row of each slice rounded up to t) and
// their offsets (a scan), then scatters the entries and the padding into the column-major slices
// (compressed to 16-bit deltas where asked and possible); only the stored size is read back, to
// allocate. Its log is also told when the build is done.
GPUMATS_FORMAT_DEVICE_INTERFACE;

// Replaces the plain values of a device copy by codes into `table`: the distinct values of the
// matrix sorted by bit pattern (dictionary_table), 1 to 65536 of them. The device half of
// compress_values: the same codes and table as to_device(from_csr(A, p)) with p.values set.
template <class V>
void encode_values(cuda::Operator<V> &op, const std::vector<V> &table);

// stored_entries (core.hpp) of the uploaded CSR, on the GPU.
template <class V, class I>
std::int64_t stored_on_device(const cuda::DeviceCsr<V, I> &A, const Params &p);

} // namespace gpumats::sellp
