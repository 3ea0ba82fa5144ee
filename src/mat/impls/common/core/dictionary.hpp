// Value dictionary: lossless compression of a format's value array for matrices that hold few
// distinct values (constant-coefficient stencils such as PETSc's ksp ex45 hold a handful). SpMV is
// bandwidth bound, so an 8-byte double replaced by a 1-byte code into a small table cuts SELL-P's
// bytes per stored entry from 12 (value + 32-bit column) to 5, or to 3 with 16-bit column deltas,
// and BELLPACK's (whose index is shared by a block) from about 8 to about 1. Used by SELL-P
// (sellp/core.hpp) and BELLPACK (bellpack/core.hpp).
//
// One table for the whole matrix: it is exact (every value is its own entry), the cheapest to build
// (one hash pass), and its cost (at most 256 x 8 bytes with 1-byte codes) is nothing beside the
// codes of any matrix worth a GPU. A table per slice or per group of slices would only pay for
// matrices whose values vary slowly across rows, which a global count cannot see; not done.
// Values are told apart by bit pattern, not by ==, so -0.0 and 0.0 get separate codes and NaN
// payloads survive: decoding gives back the stored values bit for bit.
// What a format encodes is its own: SELL-P skips its padding (the kernels skip it by its column
// marker; it gets code 0), BELLPACK encodes every stored value, the zeros its blocks and padding
// slots hold included (with_zero).
// PETSc-free C++17.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <unordered_map>
#include <vector>

namespace gpumats {

// How values are stored: plain (sizeof(V) bytes each), as dictionary codes where the matrix has at
// most kMaxDictionary distinct values (plain otherwise), or auto: the dictionary where it also cuts
// the bytes a product streams by at least kDictionaryMinSaving.
enum class Values { kPlain = 0, kDictionary = 1, kAuto = 2 };

constexpr std::int64_t kMaxDictionary1 = 256;   // 1-byte codes
constexpr std::int64_t kMaxDictionary  = 65536; // 2-byte codes
constexpr double       kDictionaryMinSaving = 0.25;

// Bit pattern of a value, the key of the table.
template <class V>
inline std::uint64_t value_bits(V v)
{
  static_assert(sizeof(V) <= sizeof(std::uint64_t), "value type wider than 64 bits");
  std::uint64_t b = 0;
  std::memcpy(&b, &v, sizeof(V));
  return b;
}

// Code width for a table of `entries` values: 1 or 2 bytes, 0 when too many for a dictionary.
// Bytes of a format matrix's stored values: plain, or the codes and their table.
template <class Matrix>
std::int64_t stored_value_bytes(const Matrix &A)
{
  using V = typename decltype(A.val)::value_type;
  return A.code_bytes ? std::int64_t(A.code_bytes) * A.stored() + std::int64_t(sizeof(V)) * std::int64_t(A.dict.size()) : std::int64_t(sizeof(V)) * A.stored();
}

inline int code_bytes_for(std::int64_t entries) { return entries <= kMaxDictionary1 ? 1 : (entries <= kMaxDictionary ? 2 : 0); }

// The table being built: values in order of first appearance, and each bit pattern's code;
// sorted() then orders the table by bit pattern, so that the table depends on the set of values
// alone (not on the layout's order) and the device can find a code by binary search.
template <class V>
struct DictionaryBuilder {
  std::vector<V>                             table;
  std::unordered_map<std::uint64_t, std::int32_t> code_of;

  // code of v, added if new; -1 once the table would exceed `limit` entries
  std::int32_t code(V v, std::int64_t limit)
  {
    const std::uint64_t b  = value_bits(v);
    auto                it = code_of.find(b);
    if (it != code_of.end()) return it->second;
    if (std::int64_t(table.size()) >= limit) return -1;
    code_of.emplace(b, std::int32_t(table.size()));
    table.push_back(v);
    return std::int32_t(table.size()) - 1;
  }
  // sorts the table by bit pattern; returns new code of each old code
  std::vector<std::int32_t> sort()
  {
    std::vector<std::int32_t> order(table.size()), renumber(table.size());
    for (std::size_t k = 0; k < order.size(); ++k) order[k] = std::int32_t(k);
    std::sort(order.begin(), order.end(), [this](std::int32_t a, std::int32_t b) { return value_bits(table[a]) < value_bits(table[b]); });
    std::vector<V> sorted(table.size());
    for (std::size_t k = 0; k < order.size(); ++k) sorted[k] = table[order[k]], renumber[order[k]] = std::int32_t(k);
    table = std::move(sorted);
    return renumber;
  }
};

// The end of a format's compress_values: `code` holds d's codes in order of first appearance, one
// per stored entry; they are renumbered to the sorted table (but where skip(e): SELL-P's padding
// keeps code 0) and stored in 1 or 2 bytes, the table moved into dict. Returns the code width.
template <class V, class Skip>
int store_codes(DictionaryBuilder<V> &d, std::vector<std::int32_t> &code, Skip skip, std::vector<V> &dict, std::vector<std::uint8_t> &code8,
                std::vector<std::uint16_t> &code16)
{
  const int                       w        = code_bytes_for(std::int64_t(d.table.size()));
  const std::vector<std::int32_t> renumber = d.sort();
  for (std::size_t e = 0; e < code.size(); ++e)
    if (!skip(std::int64_t(e))) code[e] = renumber[std::size_t(code[e])];
  if (w == 1) code8.assign(code.begin(), code.end());
  else code16.assign(code.begin(), code.end());
  dict = std::move(d.table);
  return w;
}

// The sorted table of the distinct values of val[0..n), or an empty one when there are more than
// kMaxDictionary (what the device builder is given: it encodes by binary search).
template <class V>
std::vector<V> dictionary_table(const V *val, std::int64_t n)
{
  DictionaryBuilder<V> d;
  for (std::int64_t e = 0; e < n; ++e)
    if (d.code(val[e], kMaxDictionary) < 0) return {};
  d.sort();
  return d.table;
}

// Distinct bit patterns among val[0..n), counting stops past `limit` (returns limit + 1). A strided
// pass first: when every 64th value already exceeds the limit, the full pass is skipped, so a
// matrix of general values is rejected after a few thousand lookups.
template <class V>
std::int64_t count_distinct(const V *val, std::int64_t n, std::int64_t limit)
{
  for (std::int64_t stride : {std::int64_t(64), std::int64_t(1)}) {
    DictionaryBuilder<V> d;
    for (std::int64_t e = 0; e < n; e += stride)
      if (d.code(val[e], limit) < 0) return limit + 1;
    if (stride == 1) return std::int64_t(d.table.size());
  }
  return 0;
}

// The table with +0.0 in it (at the front: its bit pattern, 0, sorts first), for a format that
// also encodes the zeros it stores beside the matrix's values (BELLPACK's block fill); empty stays
// empty, and a table that would grow past kMaxDictionary comes back empty (too many values).
template <class V>
std::vector<V> with_zero(std::vector<V> table)
{
  if (table.empty() || value_bits(table.front()) == 0) return table;
  if (std::int64_t(table.size()) >= kMaxDictionary) return {};
  table.insert(table.begin(), V(0));
  return table;
}

// Bytes per stored entry of values: plain, or codes plus the table spread over the stored entries.
template <class V>
double dictionary_value_bytes(std::int64_t entries, std::int64_t stored)
{
  const int w = code_bytes_for(entries);
  return w ? double(w) + double(sizeof(V)) * double(entries) / double(stored ? stored : 1) : double(sizeof(V));
}

// Whether `mode` stores a matrix of `entries` distinct values as a dictionary, given the bytes the
// product streams per stored entry for its columns (and pointers): auto asks that the total bytes
// per stored entry drop by kDictionaryMinSaving, so that a tiny matrix whose table would cost as
// much as its codes save stays plain.
template <class V>
bool use_dictionary(Values mode, std::int64_t entries, std::int64_t stored, double index_bytes_per_entry)
{
  if (mode == Values::kPlain || !code_bytes_for(entries) || !stored) return false;
  if (mode == Values::kDictionary) return true;
  const double plain = double(sizeof(V)) + index_bytes_per_entry, dict = dictionary_value_bytes<V>(entries, stored) + index_bytes_per_entry;
  return dict <= (1.0 - kDictionaryMinSaving) * plain;
}

} // namespace gpumats
