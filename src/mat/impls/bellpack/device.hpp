// BELLPACK on the GPU: what the glue and the tests may call. Implemented in cuda.cu.
#pragma once

#include "../common/cuda/device.hpp"
#include "core.hpp"

namespace gpumats {
namespace bellpack {

// Copies a host-built BELLPACK matrix (from_csr) to the current GPU. Block discovery, the block-row
// sort and the partition layout are built on the host.
template <class V>
std::unique_ptr<cuda::Operator<V>> to_device(const Matrix<V> &M);

} // namespace bellpack
} // namespace gpumats
