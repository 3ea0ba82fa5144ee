// Small device building blocks shared by the kernels: matrix-stream loads with a cache policy,
// x loads through the read-only path, and warp reductions (the epilogue is the core's
// Epilogue::apply, core/csr.hpp). nvcc-only.
#pragma once

#include "device.hpp"

#include <cuda_runtime.h>
#include <cstdint>

namespace gpumats {
namespace cuda {

constexpr int kWarp = 32;

// A value's bit pattern, zero-extended to 64 bits: value dictionaries compare and sort values by
// it, so -0 and 0 and each NaN pattern are kept apart and the codes reproduce the values exactly.
template <class V>
__device__ __forceinline__ std::uint64_t device_bits(V v)
{
  static_assert(sizeof(V) <= sizeof(std::uint64_t), "value type wider than 64 bits");
  std::uint64_t b = 0;
  memcpy(&b, &v, sizeof(V));
  return b;
}

// Matrix arrays are read exactly once per SpMV: with kStream they are loaded evict-first
// (ld.global.cs) so the cache keeps x, which is re-read by neighbouring rows.
template <LoadPolicy P, class T>
__device__ __forceinline__ T load_matrix(const T *p)
{
  if constexpr (P == LoadPolicy::kStream) return __ldcs(p);
  else return __ldg(p);
}

template <class V>
__device__ __forceinline__ V load_x(const V *x, std::uint32_t i)
{
  return __ldg(x + i);
}

template <int N>
struct NextPow2 {
  static constexpr int value = N <= 1 ? 1 : 2 * NextPow2<(N + 1) / 2>::value;
};
template <>
struct NextPow2<1> {
  static constexpr int value = 1;
};

template <int N>
struct Log2 {
  static constexpr int value = N <= 1 ? 0 : 1 + Log2<N / 2>::value;
};
template <>
struct Log2<1> {
  static constexpr int value = 0;
};

// Sums LEN values per lane over each aligned group of 2*OFF lanes (OFF a power of two) with
// transposing steps while LEN > 1, then plain xor steps: LEN/2 + LEN/4 + ... shuffles in place of
// LEN*log2(2*OFF). Afterwards, with G = 2*OFF and g the lane's index in its group, v[0..R) hold
// complete sums, R = max(1, LEN/G): lanes with g % S == 0, S = max(1, G/LEN), hold values
// (g/S)*R .. (g/S)*R + R-1 (with G = 32 and LEN <= 32: TransposeReduce's result).
template <int LEN, int OFF>
struct GroupReduce {
  template <class V>
  static __device__ __forceinline__ void run(V *v, int lane)
  {
    if constexpr (OFF > 0) {
      if constexpr (LEN > 1) {
        constexpr int half  = LEN / 2;
        const bool    upper = lane & OFF;
#pragma unroll
        for (int i = 0; i < half; ++i) {
          const V send = upper ? v[i] : v[i + half];
          const V keep = upper ? v[i + half] : v[i];
          v[i]         = keep + __shfl_xor_sync(0xffffffffu, send, OFF);
        }
        GroupReduce<half, OFF / 2>::run(v, lane);
      } else {
        v[0] += __shfl_xor_sync(0xffffffffu, v[0], OFF);
        GroupReduce<1, OFF / 2>::run(v, lane);
      }
    }
  }
};

// Reduces LEN = 2^p values per lane over a full warp with LEN-1+5-p shuffles instead of 5*LEN:
// at each of the first p steps a lane keeps half of its values and trades the other half with its
// partner OFF lanes away. Afterwards lane l holds the sum of value (l >> (5-p)); returns it.
// Template recursion keeps every index a compile-time constant, so v stays in registers.
template <int LEN, int OFF = kWarp / 2>
struct TransposeReduce {
  static_assert(LEN >= 1 && LEN <= kWarp && (LEN & (LEN - 1)) == 0, "LEN must be a power of two up to 32");
  template <class V>
  static __device__ __forceinline__ V run(V *v, int lane)
  {
    GroupReduce<LEN, OFF>::run(v, lane);
    return v[0];
  }
};

} // namespace cuda
} // namespace gpumats
