#pragma once
// BELLPACK on the GPU: what the glue and the tests may call. Implemented in cuda.cu.
#include "../common/cuda/format.hpp"
#include "core.hpp"

namespace gpumats::bellpack {

// to_device, build_on_device, download (common/cuda/format.hpp). to_device copies what the host
// built: block discovery, the block-row sort and the partition layout. The build on the GPU counts
// the blocks of every block row by merging its r rows, sorts the block rows by count (a stable
// radix sort, longest first), computes the partition widths and offsets (a scan) and fills the
// blocks, all there; only the number of slots is read back, to allocate. The choice of the block
// size (sampled fill estimation) stays with the glue. download leaves out the host-only presence
// bits.
GPUMATS_FORMAT_DEVICE_INTERFACE;

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

} // namespace gpumats::bellpack
