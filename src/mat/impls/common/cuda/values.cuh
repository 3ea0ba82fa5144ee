// Where the SELL-P and BELLPACK kernels get the value of a stored entry: the plain value array, or
// a code into the value dictionary (common/core/dictionary.hpp). The kernels take one of these as a
// template parameter, so the dictionary form is the same kernel with a different load, not a copy.
//
// The dictionary table is read with __ldg from global memory rather than staged in shared memory:
// a table of a few entries stays in L1 after the first warps touch it, a 65536-entry table (512 KiB
// of doubles) would not fit in shared memory at all, and staging would cost every block a table
// load before its first product. Whether a shared-memory table pays for 1-byte codes is for the
// benchmark to tell (examples/bench.cu, -types sellpcuda,sellpcuda:dict).
#pragma once

#include "blocks.cuh"

#include <cstdint>

namespace gpumats {
namespace cuda {

constexpr int kMaxDictionary1Entries = 256; // kMaxDictionary1, as an int for the shared array

// prepare(): called by every thread of the block before any other load and before any thread
// returns (the shared-memory table synchronises the block).
template <class V>
struct PlainValues {
  const V *__restrict__ val;
  __device__ __forceinline__ void prepare() {}
  template <LoadPolicy P>
  __device__ __forceinline__ V load(std::int64_t e) const
  {
    return load_matrix<P>(val + e);
  }
};

// C: std::uint8_t or std::uint16_t codes. The code stream is the matrix data (streamed under the
// load policy); the table is reused by every entry, so it goes through the read-only cache.
template <class V, class C>
struct DictionaryValues {
  const C *__restrict__ code;
  const V *__restrict__ table;
  __device__ __forceinline__ void prepare() {}
  template <LoadPolicy P>
  __device__ __forceinline__ V load(std::int64_t e) const
  {
    return __ldg(table + load_matrix<P>(code + e));
  }
};

// 1-byte codes with the table (at most 256 values) staged in shared memory by each block
// (SELL-P's -mat_sellp_dictionary_shared; BELLPACK's kernels return early, so they do not use it): no L1 traffic for the table, at the price of a table load and a
// barrier per block. Which one wins is for the benchmark.
template <class V>
struct SharedDictionaryValues {
  const std::uint8_t *__restrict__ code;
  const V *__restrict__ table;
  int entries;
  V  *staged;
  __device__ __forceinline__ void prepare()
  {
    __shared__ V tab[kMaxDictionary1Entries];
    for (int k = threadIdx.x; k < entries; k += blockDim.x) tab[k] = table[k];
    __syncthreads();
    staged = tab;
  }
  template <LoadPolicy P>
  __device__ __forceinline__ V load(std::int64_t e) const
  {
    return staged[load_matrix<P>(code + e)];
  }
};

// The code of the value whose bit pattern is `key` in a table sorted by bit pattern (binary
// search), or -1 when it is not there: the device encoders of SELL-P and BELLPACK.
template <class V>
__device__ __forceinline__ int dictionary_code(std::uint64_t key, const V *__restrict__ table, int entries)
{
  int lo = 0, hi = entries; // first table entry not below key
  while (lo < hi) {
    const int mid = (lo + hi) / 2;
    if (device_bits(table[mid]) < key) lo = mid + 1;
    else hi = mid;
  }
  return lo < entries && device_bits(table[lo]) == key ? lo : -1;
}

} // namespace cuda
} // namespace gpumats
