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

#include "../core/dictionary.hpp"
#include "blocks.cuh"
#include "check.cuh"

#include <cstdint>
#include <string>
#include <vector>

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

// *code = the code of v, or *missing raised when v is not in the table: one entry of a format's
// encode kernel.
template <class V, class C>
__device__ __forceinline__ void encode_entry(V v, const V *__restrict__ table, int entries, C *code, int *missing)
{
  const int k = dictionary_code(device_bits(v), table, entries);
  if (k >= 0) *code = C(k);
  else atomicOr(missing, 1);
}

// The host side of a format's device encoder for a copy holding footprint.stored values in `val`:
// checks the table (sorted by bit pattern, 1 to kMaxDictionary values), uploads it, and calls
// launch(code_bytes, codes, table, missing) to queue the format's encode kernel, which writes the
// codes and raises *missing for a value the table lacks (a FormatError here). The copy then holds
// codes and table instead of val, and its footprint counts them.
template <class V, class Launch>
void encode_dictionary(const char *format, const std::vector<V> &table, int &code_bytes, Buffer &codes, Buffer &on_device, Buffer &val, Footprint &fp, Launch &&launch)
{
  const int          w      = code_bytes_for(std::int64_t(table.size()));
  const std::int64_t stored = fp.stored;
  if (!w || table.empty()) throw FormatError(std::string(format) + ": a value dictionary holds 1 to 65536 values, not " + std::to_string(table.size()));
  // (encoded already: encoded anew from the plain values of a values-only update, open_plain_values)
  if (code_bytes && !val.get() && stored) throw FormatError(std::string(format) + ": the values are already encoded and no plain values were given");
  if (!stored) return;
  Buffer c(std::size_t(stored) * w), missing(sizeof(int));
  Buffer tab = upload(table.data(), table.size());
  int    bad = 0;
  check(cudaMemset(missing.get(), 0, sizeof(int)), "cudaMemset");
  launch(w, c, tab, missing.as<int>());
  check_launch((std::string(format) + " dictionary encode kernel").c_str());
  copy_to_host_sync(&bad, missing.get(), sizeof(int), nullptr);
  if (bad) throw FormatError(std::string(format) + ": a stored value is missing from the value dictionary");
  codes          = std::move(c);
  on_device      = std::move(tab);
  val            = Buffer();
  code_bytes     = w;
  fp.value_bytes = std::int64_t(w) * stored + std::int64_t(sizeof(V) * table.size());
}

// A values-only update of a copy holding codes (Operator::open_plain_values): a plain array of
// its `stored` values in the codes' layout, allocated beside them for the update's gather. The
// encoder (encode_dictionary) drops it again, keep_plain_values keeps it instead. Null where the
// copy holds plain values already.
template <class V>
V *open_plain_values(int code_bytes, Buffer &val, std::int64_t stored, std::int64_t *count)
{
  *count = 0;
  if (!code_bytes) return nullptr;
  val    = Buffer(std::size_t(stored) * sizeof(V));
  *count = stored;
  return val.template as<V>();
}

// After open_plain_values and the gather, when the new values are too many for a dictionary: the
// copy keeps them plain, codes and table go, and its footprint counts the plain array. The layout
// (slices or blocks, columns) does not depend on the values' form, so nothing else changes.
template <class V>
void keep_plain_values(const char *format, int &code_bytes, Buffer &codes, Buffer &table, const Buffer &val, Footprint &fp)
{
  if (!code_bytes) return;
  if (fp.stored && !val.get()) throw FormatError(std::string(format) + ": no plain values were opened to keep in place of the dictionary");
  codes          = Buffer();
  table          = Buffer();
  code_bytes     = 0;
  fp.value_bytes = std::int64_t(sizeof(V)) * fp.stored;
}

} // namespace cuda
} // namespace gpumats
