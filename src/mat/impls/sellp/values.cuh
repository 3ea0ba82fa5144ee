// Where the SELL-P kernels get the value of a stored entry: the plain value array, or a code into
// the value dictionary (dictionary.hpp). The kernels take one of these as a template parameter, so
// the dictionary form is the same kernel with a different load, not a copy of it.
//
// The dictionary table is read with __ldg from global memory rather than staged in shared memory:
// a table of a few entries stays in L1 after the first warps touch it, a 65536-entry table (512 KiB
// of doubles) would not fit in shared memory at all, and staging would cost every block a table
// load before its first product. Whether a shared-memory table pays for 1-byte codes is for the
// benchmark to tell (examples/bench.cu, -types sellpcuda,sellpcuda:dict).
#pragma once

#include "../common/cuda/blocks.cuh"

#include <cstdint>

namespace gpumats {
namespace sellp {

template <class V>
struct PlainValues {
  const V *__restrict__ val;
  template <cuda::LoadPolicy P>
  __device__ __forceinline__ V load(std::int64_t e) const
  {
    return cuda::load_matrix<P>(val + e);
  }
};

// C: std::uint8_t or std::uint16_t codes. The code stream is the matrix data (streamed under the
// load policy); the table is reused by every entry, so it goes through the read-only cache.
template <class V, class C>
struct DictionaryValues {
  const C *__restrict__ code;
  const V *__restrict__ table;
  template <cuda::LoadPolicy P>
  __device__ __forceinline__ V load(std::int64_t e) const
  {
    return __ldg(table + cuda::load_matrix<P>(code + e));
  }
};

} // namespace sellp
} // namespace gpumats
