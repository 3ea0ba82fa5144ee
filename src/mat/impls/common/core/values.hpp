// Values-only updates of a format copy whose nonzero pattern has not changed (PETSc-free C++17).
//
// Nonlinear and time-dependent codes reassemble the same pattern at every step. Every format keeps
// its values in an array of its own, apart from its indices (CMRS's packed words, SELL-P's 32- or
// 16-bit columns, BELLPACK's block columns), and where each CSR value lands depends on the
// structure only. So a copy can be refilled by one gather from the CSR values through a slot map:
// for every stored value, padding and block fill included, the position of the CSR value it holds
// (relative to the CSR's first entry), or -1 where the layout stores an explicit zero.
//
// No format needs its own inverse of its conversion to get the map: the copy is built once more,
// with the same parameters, from a CSR of the same structure whose values are their own positions
// plus one (slot_csr_values). Conversions only move values (and fill in zeros), so the built
// copy's value array holds slot + 1, and 0 where the layout pads (slots_from_values). That is exact
// while every position + 1 is an integer of the value type: up to 2^53 entries in double, 2^24 in
// float (slot_map_exact); beyond, the caller converts in full instead.
#pragma once

#include "csr.hpp"

#include <complex>
#include <cstdint>
#include <limits>
#include <vector>

namespace gpumats {

// Whether a slot map of a CSR of nnz entries can be built through values of type V: every
// position + 1 exactly representable, and every position a 32-bit slot.
template <class V>
constexpr bool slot_map_exact(std::int64_t nnz)
{
  constexpr int digits = std::numeric_limits<V>::digits; // 53 for double, 24 for float
  return nnz >= 0 && nnz < std::numeric_limits<std::int32_t>::max() && (digits >= 62 || nnz <= (std::int64_t(1) << digits));
}

// The values of the slot build for a CSR whose entries occupy positions [begin, end) of its value
// array (begin = row_ptr[0]): v[k] = k - begin + 1, so that the view keeps A's own row pointers.
template <class V>
std::vector<V> slot_csr_values(std::int64_t begin, std::int64_t end)
{
  std::vector<V> v(std::size_t(end > 0 ? end : 0), V(0));
  for (std::int64_t k = begin; k < end; ++k) v[std::size_t(k)] = V(k - begin + 1);
  return v;
}

// A CSR of A's structure with the slot build's values (they live in `storage`).
template <class V, class RI, class CI>
CsrView<V, RI, CI> slot_csr(const CsrView<V, RI, CI> &A, std::vector<V> &storage)
{
  const std::int64_t begin = A.nrows ? std::int64_t(A.row_ptr[0]) : 0;
  storage                  = slot_csr_values<V>(begin, begin + A.nnz());
  return {A.nrows, A.ncols, A.row_ptr, A.col_ind, storage.data()};
}

// slot[p] = val[p] - 1 for the value array of a copy built from slot_csr: the CSR position, or -1
// for the layout's own zeros. (The device twin is cuda::slots_from_values.) std::real: the glue
// compiles with complex scalars too, which it then refuses at run time.
template <class V>
void slots_from_values(const V *val, std::int64_t n, std::int32_t *slot)
{
  for (std::int64_t p = 0; p < n; ++p) slot[p] = std::int32_t(std::real(val[p])) - 1;
}

// The slot map of the value array that build(slot_csr(A)) returns (any container of V, or a
// format's Matrix<V>::val): build is the format's conversion with the copy's parameters.
template <class V, class RI, class CI, class Build>
std::vector<std::int32_t> slot_map(const CsrView<V, RI, CI> &A, Build &&build)
{
  if (!slot_map_exact<V>(A.nnz())) throw FormatError("slot map: " + std::to_string(A.nnz()) + " entries exceed the exact integers of the value type");
  std::vector<V>            storage;
  const auto                values = build(slot_csr(A, storage));
  std::vector<std::int32_t> slot(values.size());
  slots_from_values(values.data(), std::int64_t(values.size()), slot.data());
  return slot;
}

// The values-only update itself: val[p] = csr[slot[p]] (csr: the CSR's values from its first
// entry on), and 0 where slot[p] is -1, so padding and block fill stay explicit zeros whatever the
// value array held. (The device twin is cuda::gather_values.)
template <class V>
void gather_values(V *val, const V *csr, const std::int32_t *slot, std::int64_t n)
{
  for (std::int64_t p = 0; p < n; ++p) val[p] = slot[p] >= 0 ? csr[slot[p]] : V(0);
}

} // namespace gpumats
