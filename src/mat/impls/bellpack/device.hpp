// BELLPACK on the GPU: what the glue and the tests may call. Implemented in cuda.cu.
#pragma once

#include "../common/cuda/format.hpp"
#include "core.hpp"

namespace gpumats {
namespace bellpack {

// Copies a host-built BELLPACK matrix (from_csr) to the current GPU. Block discovery, the block-row
// sort and the partition layout are built on the host.
template <class V>
std::unique_ptr<cuda::Operator<V>> to_device(const Matrix<V> &M);

// Converts a CSR (rows sorted by column, as PETSc's AIJ keeps them) on the GPU from its upload
// (common/cuda/csr.hpp), reading nothing on the host: the blocks of every block row are counted by
// merging its r rows, the block rows sorted by count (a stable radix sort, longest first), the
// partition widths and offsets computed (a scan), and the blocks filled, all there; only the
// number of slots is read back, to allocate. The choice of the block size (sampled fill
// estimation) stays with the glue. Identical, array for array, to to_device(from_csr(A, p)).
// `log` (may be null) is told when the scatter starts.
template <class V, class I>
std::unique_ptr<cuda::Operator<V>> build_on_device(const cuda::DeviceCsr<V, I> &A, const Params &p, cuda::BuildLog *log = nullptr);

// The same from a host CSR, uploaded first on the default stream (the tests' entry point).
using cuda::build_on_device;

// Replaces the plain values of a device copy by codes into `table`: the distinct values of the
// matrix sorted by bit pattern, +0.0 among them (with_zero(dictionary_table(...)): every stored
// value is encoded, block fill included), 1 to 65536 of them. The device half of compress_values:
// the same codes and table as to_device(from_csr(A, p)) with p.values set.
template <class V>
void encode_values(cuda::Operator<V> &op, const std::vector<V> &table);

// A dense (block_rows*r) x (blocks_per_row*c) matrix in BELLPACK with parameters p, built directly on
// the GPU (zero values; identity block-row order): the offline benchmarks of the execution-time
// model (config/tuning/bellpack_model.cu) time the kernel on such matrices.
template <class V>
std::unique_ptr<cuda::Operator<V>> dense_on_device(std::int64_t block_rows, int blocks_per_row, const Params &p);

// Partitions (CUDA blocks of R threads) of the r x c SpMV kernel resident on one multiprocessor at
// once: the paper's T, from the CUDA occupancy calculator.
template <class V>
int resident_partitions(const Params &p);

// Brings a device copy back, in its value form (without the host-only presence bits; tests compare
// the arrays).
template <class V>
Matrix<V> download(const cuda::Operator<V> &op);

} // namespace bellpack
} // namespace gpumats
