// A CSR block uploaded once for the device builds of the formats, and the device-wide steps those
// builds share (offsets from sizes, the steps' log). Names no CUDA type, so the glue can hold an
// upload and ask it what it would otherwise compute on the host; implemented in csr.cu.
//
// A device build reads the uploaded CSR only: the glue uploads the block (build_copy), the
// parameter choices ask it for row statistics (group_stats, longest_row: one reduction each on the
// GPU instead of a host pass over the row pointers), and the format's build_on_device computes its
// structure and scatters the entries there. The host CSR is not read again.
#pragma once

#include "device.hpp"

#include <vector>

namespace gpumats {
namespace cuda {

// The steps of a device build, for -log_view (the glue's events GpuMatsUpload, GpuMatsStructure,
// GpuMatsScatter): the upload of the CSR; the structure (row lengths, slice/strip/partition widths
// and offsets, sorts, and the parameter choices' queries); the scatter of the entries into the
// format's arrays (with the 16-bit column compression).
enum class BuildStep { kUpload, kStructure, kScatter, kDone };

// Receives the steps of a build as it enters them (kDone at the end).
class BuildLog {
public:
  virtual ~BuildLog()            = default;
  virtual void step(BuildStep s) = 0;
};

// Enters step s of a build: with a log, once the GPU has finished what was queued on `stream` so
// far (so that the log's host-timed events measure the GPU's work); without one, nothing (and no
// synchronisation).
void enter_step(BuildLog *log, BuildStep s, void *stream);

// One upload of a host CSR block: its row pointers, column indices and values, one copy each,
// ordered on `stream` (the builds queue all their work there and synchronise it at their end).
// Row statistics are computed on the GPU when first asked for and kept.
template <class V, class I>
class DeviceCsr {
public:
  // Uploads A; throws DeviceError (out of memory: out_of_memory()).
  DeviceCsr(const CsrView<V, I, I> &A, void *stream);
  // Copies A, whose arrays are on the GPU already (an aijcusparse matrix's, row_ptr[0] == 0, nnz
  // entries), device to device: no upload, and the build owns its input as after one; throws like
  // the upload.
  struct OnDevice {};
  DeviceCsr(const CsrView<V, I, I> &A, std::int64_t nnz, OnDevice, void *stream);
  // A's structure, on the GPU already, copied as OnDevice, with the values of a slot build
  // (core/values.hpp) written on the GPU: val[k] = k + 1. A.val is not read.
  struct SlotValues {};
  DeviceCsr(const CsrView<V, I, I> &A, std::int64_t nnz, SlotValues, void *stream);
  // A's structure, on the host, uploaded as by the first constructor, with the values of a slot
  // build written on the GPU (entry j of the host CSR gets j - row_ptr[0] + 1). A.val is not read.
  struct UploadSlotValues {};
  DeviceCsr(const CsrView<V, I, I> &A, UploadSlotValues, void *stream);

  std::int64_t nrows() const { return nrows_; }
  std::int64_t ncols() const { return ncols_; }
  std::int64_t nnz() const { return nnz_; }
  // the host's row_ptr[0]: entry j of the host CSR sits at col_ind()[j - base()], val()[j - base()]
  std::int64_t base() const { return base_; }
  void        *stream() const { return stream_; }
  const I     *row_ptr() const { return row_ptr_.as<I>(); } // nrows+1 entries, as on the host (starting at base())
  const I     *col_ind() const { return col_.as<I>(); }     // nnz entries (null when nnz is 0)
  const V     *val() const { return val_.as<V>(); }

  // Entries of each row (nrows int32), computed on the GPU at the first call.
  const std::int32_t *row_lengths() const;
  // group_stats of core/csr.hpp, on the GPU: one pass over the row pointers, one small read back;
  // kept per (rows_per_group, width_multiple, entry_multiple), as the parameter choices and
  // autocuda's model ask the same questions several times (each a kernel, two allocations and a
  // synchronising read back, which adds up over GAMG's many small levels).
  GroupStats group_stats(std::int64_t rows_per_group, std::int64_t width_multiple = 1, std::int64_t entry_multiple = 1) const;
  // Entries of the longest row (group_stats with groups of one row).
  std::int64_t longest_row() const;
  // distinct_values (below) of val(), computed at the first call for this limit and kept: a GPU
  // build asks once for its decision (SELL-P's resolve, run once per candidate and once more for the
  // build in autocuda) and once for the table it encodes against.
  const std::vector<V> &distinct_values(std::int64_t limit, std::int64_t *count) const;

private:
  // row_ptr and col_ind of A (on the GPU already) copied device to device; val_ allocated, not filled
  void copy_structure_on_device(const CsrView<V, I, I> &A);
  // row_ptr and col_ind of A (on the host) uploaded, base_ set; val_ allocated, not filled
  void upload_structure(const CsrView<V, I, I> &A);
  // val_[k] = k + 1: the values of a slot build (core/values.hpp)
  void write_slot_values();

  std::int64_t         nrows_ = 0, ncols_ = 0, nnz_ = 0, base_ = 0;
  void                *stream_ = nullptr;
  Buffer               row_ptr_, col_, val_;
  mutable Buffer       lengths_;
  mutable std::int64_t distinct_limit_ = -1, distinct_count_ = 0;
  struct StatsKey {
    std::int64_t g, width_multiple, entry_multiple;
  };
  mutable std::vector<std::pair<StatsKey, GroupStats>> stats_; // group_stats asked so far
  mutable std::vector<V> distinct_;
};

// The distinct bit patterns among val[0..n) (on the GPU), sorted by bit pattern: the table of a
// value dictionary (common/core/dictionary.hpp's dictionary_table, entry for entry), or an empty table
// when there are more than `limit`; *count: how many (limit + 1 when more). One pass over the
// values, inserting into an open-addressing hash table in global memory (a warp inserts each of its
// distinct keys once); the pass stops once past the limit. Ordered on `stream`, read back.
template <class V>
std::vector<V> distinct_values(const V *val, std::int64_t n, std::int64_t limit, std::int64_t *count, void *stream);

// offsets[0..k] = 0, sizes[0], sizes[0]+sizes[1], ... (int32, as the formats store their slice,
// strip and partition offsets) from k int64 sizes on the GPU, ordered on `stream`; returns the
// total offsets[k], read back. Throws FormatError when it exceeds 32-bit offsets (naming `format`).
std::int64_t offsets_from_sizes(const std::int64_t *sizes, std::int64_t k, Buffer &offsets, const char *format, void *stream);

// sizes[0] + ... + sizes[k-1], reduced on the GPU and read back (ordered on `stream`).
std::int64_t sum(const std::int64_t *sizes, std::int64_t k, void *stream);

// dst[i] = i for i < n, on `stream`.
void iota(std::int32_t *dst, std::int64_t n, void *stream);

// ---- the values of a device CSR changed in place (a product's result, whose values live on the
// GPU: GAMG scales and adds to its A P before the level's PtAP) --------------------------------

// val[k] *= l[row] * r[col[k]] over the CSR's entries (l or r null: that side unscaled), ordered on
// `stream`; row_ptr starts at 0.
template <class V, class I>
void csr_diagonal_scale(std::int64_t nrows, const I *row_ptr, const I *col, V *val, const V *l, const V *r, void *stream);

// Y += a X where X's entries are among Y's (both CSRs with sorted rows, row_ptr starting at 0, the
// same number of rows): each of X's entries is found in its row of Y by binary search. With
// apply false nothing changes and the count of X's entries missing from Y comes back (0: X is a
// subset), read back; with apply true (after a count of 0) the values are added and 0 returned.
template <class V, class I>
std::int64_t csr_subset_axpy(std::int64_t nrows, V a, const I *x_row_ptr, const I *x_col, const V *x_val, const I *y_row_ptr, const I *y_col, V *y_val,
                             bool apply, void *stream);

} // namespace cuda
} // namespace gpumats
