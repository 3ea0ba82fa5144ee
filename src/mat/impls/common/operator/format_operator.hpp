// The PETSc glue shared by all formats (layer 3). A format plugs in with a traits struct (see
// cmrs/cmrs.cxx) giving its parameters, options, host build, device build and description; the Seq
// and MPI Mat types, conversions, vector access, logging and viewers are written once, here and
// in seq.cxx / mpi.cxx.
#pragma once

#include <petscgpumats.h>
#include <petsc/private/matimpl.h>

#include "../core/csr.hpp"
#include "../core/dictionary.hpp"
#include "../core/transform.hpp"
#include "../core/values.hpp"
#include "../types/registry.hpp"
#if GPUMATS_HAVE_CUDA
  #include "../cuda/csr.hpp"
  #include "../cuda/device.hpp"
#endif

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

// PETSc before 3.19 returned a plain 0 for success
#if PETSC_VERSION_LT(3, 19, 0)
  #define PETSC_SUCCESS 0
#endif

#if defined(PETSC_USE_COMPLEX)
  #define GPUMATS_SUPPORTED_SCALAR 0
#else
  #define GPUMATS_SUPPORTED_SCALAR 1
#endif

namespace gpumats {

using Scalar = PetscScalar;
using CsrIn  = CsrView<PetscScalar, PetscInt, PetscInt>;
// PetscOptionItems became an opaque pointer typedef in recent PETSc; setfromoptions took a pointer before.
using OptionItems = std::conditional_t<std::is_pointer<PetscOptionItems>::value, PetscOptionItems, PetscOptionItems *>;

// The block a format copy is built from, as the parameter choices and the builds read it: its CSR
// on the host, and for a GPU build the same CSR uploaded once (FormatOperator::build_copy), which
// the device build converts from and which answers the row statistics the parameter choices need
// (slice widths, strip sizes, the longest row) on the GPU instead of in host passes over the block.
struct BlockSource {
  CsrIn host;
#if GPUMATS_HAVE_CUDA
  const cuda::DeviceCsr<Scalar, PetscInt> *device = nullptr; // set for GPU builds converted on the GPU
  cuda::BuildLog                          *log    = nullptr; // the -log_view events of the build, when PETSc logs
#endif
  std::int64_t nrows() const { return host.nrows; }
  std::int64_t ncols() const { return host.ncols; }
  std::int64_t nnz() const { return host.nnz(); }
  // group_stats (core/csr.hpp) of the block: on the GPU when it is uploaded
  GroupStats groups(std::int64_t rows_per_group, std::int64_t width_multiple = 1, std::int64_t entry_multiple = 1) const
  {
#if GPUMATS_HAVE_CUDA
    if (device) return device->group_stats(rows_per_group, width_multiple, entry_multiple);
#endif
    return group_stats(host, rows_per_group, width_multiple, entry_multiple);
  }
  // whether neighbouring rows use neighbouring columns (gpumats::columns_banded, sampled on the host):
  // autocuda's model and CMRS's kernel choice differ between banded and scattered columns
  bool banded_columns() const { return nrows() == 0 || columns_banded(host); }
  std::int64_t longest_row() const
  {
#if GPUMATS_HAVE_CUDA
    if (device) return device->longest_row();
#endif
    return gpumats::longest_row(host);
  }
  // Distinct values of the block by bit pattern (value dictionaries), the count stopping past
  // kMaxDictionary: on the GPU when the block is uploaded (one pass, kept with the upload, so the
  // formats and autocuda's candidates count once), else on the host (a strided pass first rejects
  // general values after a few thousand lookups). `table`, if given, gets the sorted table when the
  // values fit in one (dictionary_table), else an empty one. (A template, so that a build with
  // complex scalars, which no format supports, never instantiates it.)
  template <class S = Scalar>
  std::int64_t distinct_values(std::vector<S> *table = nullptr) const
  {
    std::int64_t count = 0;
#if GPUMATS_HAVE_CUDA
    if (device) {
      const std::vector<S> &t = device->distinct_values(kMaxDictionary, &count);
      if (table) *table = t;
      return count;
    }
#endif
    const S *val      = host.val + (host.row_ptr ? host.row_ptr[0] : 0);
    count             = count_distinct(val, nnz(), kMaxDictionary);
    if (table) *table = code_bytes_for(count) ? dictionary_table(val, nnz()) : std::vector<S>();
    return count;
  }
  // the stream the device build queues its work on
  void *stream() const
  {
#if GPUMATS_HAVE_CUDA
    if (device) return device->stream();
#endif
    return nullptr;
  }
};

// -mat_view's words for a format's value form: plain, or codes into a value dictionary of
// `entries` values, and why a dictionary that was asked for was not used. `note` goes inside the
// parenthesis of the dictionary form.
inline std::string describe_values(Values mode, bool dictionary, std::int64_t entries, const char *note = "")
{
  const int w = code_bytes_for(entries);
  if (dictionary)
    return "values as " + std::to_string(w) + "-byte codes into a dictionary of " + std::to_string(entries) + " values (" + std::to_string(w) + " instead of " +
           std::to_string(sizeof(Scalar)) + " bytes per stored entry" + note + ")";
  if (mode == Values::kPlain) return "values plain";
  const std::string asked = mode == Values::kAuto ? "auto" : "dictionary";
  if (entries < 0) return "values " + asked + " (decided per matrix)";
  const std::string why = entries == 0 ? std::string("no entries")
                        : !w           ? std::string("more than 65536 distinct values")
                                       : std::to_string(entries) + " distinct values, a dictionary would save too little";
  return "values plain (" + asked + ": " + why + ")";
}

// A block's CSR as it is already on the GPU, beside its host CSR (the arrays of its aijcusparse
// shadow, cusparse_bridge.cxx: row_ptr[0] == 0, the same pattern and values as the host's): a GPU build
// copies it on the device instead of uploading the host's, and a values-only update gathers from
// its values.
struct DeviceCsrIn {
  const PetscInt    *row_ptr = nullptr, *col_ind = nullptr;
  const PetscScalar *val     = nullptr;
};

// How build_copy cuts long rows (-mat_gpumats_long_rows): choose_split's arguments, applied to the
// block's longest row (computed on the GPU for GPU builds). The default {0}: never.
struct SplitRule {
  std::int64_t long_rows      = 0;
  bool         only_when_told = false;
};

// The renumbering of one copy (-mat_gpumats_reorder rcm): the copy holds its block with rows and
// columns in reverse Cuthill-McKee order (the ELLPACK paper's bandwidth reduction, so neighbouring
// rows share x). Owns what a product in that order needs: the order, its inverse, and the two
// scratch vectors (x gathered into the copy's order; the copy's product, gathered back into the
// user's order through the epilogue), on the host for host products, on the GPU for device ones.
class Reordering {
public:
  // order[i]: the original row (and column: the order is symmetric) at position i
  void build(const std::vector<std::int32_t> &order, bool device);
  void clear();
  bool active() const { return n_ > 0; }
  // the order, on the host also for device copies: a values-only update renumbers its slot build
  // the same way (empty when not active)
  const std::vector<std::int32_t> &order() const { return order_; }
  // ep applied to the block's product with x, where product(xc, epc) applies epc to the copy's
  // product with xc, both in the copy's order (defined in format_operator.cxx, its one user)
  template <class Product>
  void apply(const Scalar *x, const Epilogue<Scalar> &ep, bool device, void *stream, Product &&product);
  // d = the block's diagonal (GPU copies), where fill(y) writes the copy's diagonal, in the copy's
  // order, into y (the order being symmetric, the copy's diagonal is the block's, renumbered)
  template <class Fill>
  void diagonal(Scalar *d, void *stream, Fill &&fill);

private:
  std::int64_t              n_ = 0;
  std::vector<std::int32_t> order_, inverse_;
  std::vector<Scalar>       x_, y_;
#if GPUMATS_HAVE_CUDA
  cuda::Buffer dev_order_, dev_inverse_, dev_x_, dev_y_;
#endif
};

// The long-row tail of one copy (-mat_gpumats_long_rows): rows longer than split_at keep their
// first split_at entries in the format and the rest here (core/transform.hpp's RowTail, a CSR of
// those rows only, one warp per row on the GPU), so that a few very long rows do not serialise a
// thread or a warp of the format. Owns the tail's arrays, on the host or on the GPU.
class LongRowTail {
public:
  void build(RowTail<Scalar> &&tail, bool device);
  void clear();
  std::int64_t     split_at() const { return split_at_; } // 0: no tail
  std::int64_t     nrows() const { return nrows_; }
  std::int64_t     nnz() const { return footprint_.nnz; }
  const Footprint &footprint() const { return footprint_; } // its arrays, counted at build
  // y[rows[r]] += alpha * (tail row r) . x for every tail row
  void apply(const Scalar *x, Scalar *y, Scalar alpha, bool device, void *stream) const;
  // y += alpha * T^T x, T the tail's entries: each adds alpha*v*x[its row] to y[its column]
  // (atomics on the GPU, where tail rows share columns)
  void apply_transpose(const Scalar *x, Scalar *y, Scalar alpha, bool device, void *stream) const;
  // its nnz() values, on the host or the GPU as built: what a values-only update refills
  Scalar *values(bool device);
  // y[row] = the tail's entry in the row's own column, for the tail rows that store one (GPU copies)
  void diagonal(Scalar *y, void *stream) const;

private:
  std::int64_t    split_at_ = 0, nrows_ = 0;
  Footprint       footprint_{};
  RowTail<Scalar> host_;
#if GPUMATS_HAVE_CUDA
  cuda::Buffer dev_rows_, dev_ptr_, dev_col_, dev_val_;
#endif
};

// The row map of a copy that holds the rows of its block that have entries only (off-diagonal
// blocks of the MPI types, see worth_compressing_rows): the format multiplies those rows into a
// scratch vector, which is then added into their rows of the output through the map, so a product
// never sweeps the rows without entries. Owns the map and the scratch, on the host or the GPU.
class RowMap {
public:
  void build(const std::vector<std::int32_t> &rows, std::int64_t block_rows, bool device);
  void clear();
  bool         active() const { return block_rows_ > 0; }
  std::int64_t nrows() const { return nrows_; }           // rows with entries, the copy's rows
  std::int64_t block_rows() const { return block_rows_; } // rows of the whole block
  Footprint    footprint() const;                         // the map (the scratch is the output's stand-in)
  // out = ep(A x) for a copy of A's rows with entries, where product(x, epc) applies epc to the
  // format's product of those rows. Rows without entries are left untouched, which is ep only when
  // it adds into its output (in == out, beta 1): the one product the MPI types ask of such a copy;
  // anything else throws std::logic_error.
  template <class Product>
  void apply(const Scalar *x, const Epilogue<Scalar> &ep, bool device, void *stream, Product &&product);
  // out = ep(A^T x) (x: the block's rows, out: its columns), where product(xc, ep) applies ep to
  // the format's transposed product of xc, the entries of x in the copy's rows (gathered here)
  template <class Product>
  void apply_transpose(const Scalar *x, const Epilogue<Scalar> &ep, bool device, void *stream, Product &&product);

private:
  std::int64_t              nrows_ = 0, block_rows_ = 0;
  std::vector<std::int32_t> rows_;
  std::vector<Scalar>       t_;
#if GPUMATS_HAVE_CUDA
  cuda::Buffer dev_rows_, dev_t_;
#endif
};

// The slot maps of one copy for values-only updates (core/values.hpp): for every stored value of
// the format and of its long-row tail, the position of the block's CSR value it holds, or -1 for
// the layout's own zeros, on the host or on the GPU as the copy, and on the GPU the buffer the CSR
// values are uploaded into. Made at the first values-only update after a conversion (so the
// conversion itself costs nothing more), kept until the next one: 4 bytes per stored entry, plus
// on the GPU one CSR value per nonzero.
class ValueSlots {
public:
  // format: the value array of the copy built from core/values.hpp's slot_csr (n entries, where
  // the copy lives); tail: the tail's slots; nnz: the CSR's entries
  void build(const Scalar *format, std::int64_t n, const std::vector<std::int32_t> &tail, std::int64_t nnz, bool device, void *stream);
  void clear();
  bool        ready() const { return ready_; }
  std::size_t bytes() const;
  // format[p] = csr[slot[p]] (0 where the slot is -1) for the format's n values and the tail's
  // ntail, csr being the block's nnz CSR values on the host from its first entry on. On the GPU
  // they are uploaded on `stream` and gathered there; it returns with the copy current (a
  // synchronisation, so the host may change csr at once). Throws std::logic_error if the sizes are
  // not the ones the maps were made for.
  // csr_on_device (device only): csr is already a device array, gathered from without an upload.
  void gather(const Scalar *csr, std::int64_t nnz, Scalar *format, std::int64_t n, Scalar *tail, std::int64_t ntail, bool device, void *stream,
              bool csr_on_device = false);
#if GPUMATS_HAVE_CUDA
  // the GPU's copy of the CSR values (nnz of them, from the host's csr), uploaded on `stream` into
  // the buffer gather uploads into, for a gather with csr_on_device
  const Scalar *upload(const Scalar *csr, std::int64_t nnz, void *stream);
#endif

private:
  bool                      ready_ = false;
  std::int64_t              nformat_ = 0, ntail_ = 0, nnz_ = 0;
  std::vector<std::int32_t> format_, tail_;
#if GPUMATS_HAVE_CUDA
  cuda::Buffer dev_format_, dev_tail_, dev_csr_;
#endif
};

// What a format copy was built from: the SeqAIJ block (its id), that block's nonzero state (which
// PETSc moves whenever the pattern changes: new nonzeros, MatZeroRows without
// MAT_KEEP_NONZERO_PATTERN; aijcusparse relies on it the same way), its CSR index arrays (the
// same arrays while PETSc keeps the pattern: a cheap second guard), and what the glue decided
// from them. Equal records mean the copy's structure is still right and only values may differ.
struct BlockPattern {
  bool             valid = false;
  PetscObjectId    block = -1;
  PetscObjectState nonzero_state = -1;
  const PetscInt  *row_ptr = nullptr, *col_ind = nullptr;
  PetscInt         rows = -1, cols = -1, nnz = -1, block_size = -1;
  bool             diagonal = false;

  bool same(const BlockPattern &o) const
  {
    return valid && o.valid && block == o.block && nonzero_state == o.nonzero_state && row_ptr == o.row_ptr && col_ind == o.col_ind && rows == o.rows &&
           cols == o.cols && nnz == o.nnz && block_size == o.block_size && diagonal == o.diagonal;
  }
};

// One format copy of one CSR block (the whole matrix for Seq types, the diagonal or the
// off-diagonal block for MPI types), on the host or on the GPU, with its parameters. The format
// is the subclass's (build, mult_*); what the glue adds around it (renumbering, long-row tail) and
// the footprint of the whole are this class's, built by build_copy and used by apply.
class FormatOperator {
public:
  // the ELLPACK paper's cache-differentiated loads: matrix arrays evict-first so the caches keep x
  bool stream_loads = true;
  // -mat_gpumats_reorder rcm: copies of diagonal blocks in RCM order (see Reordering)
  bool reorder_rcm = false;
  // -mat_gpumats_long_rows: the row length where diagonal blocks are split (see LongRowTail);
  // -1: chosen per matrix (choose_split); 0: never
  PetscInt long_rows = -1;
  // -mat_gpumats_build host: a GPU copy is converted on the host (from_csr) and uploaded in its
  // format, the reference path, instead of converted on the GPU from one upload of the CSR
  bool build_on_host = false;

  // The block and pattern the copy was built from (BuildFromSeqAIJ records it); not valid before
  // the first conversion, after a failed one, and once the parameters changed (forget_pattern)
  BlockPattern pattern;

  // Builds the copy of block A: renumbered by `order` unless it is empty (new position ->
  // original row and column), its long rows cut by `split`, or (for blocks that are neither, the
  // off-diagonal ones) with compress_rows its rows with entries only (RowMap). A GPU copy uploads
  // the block once, on `stream`, and builds from that upload (the split decision reads its longest
  // row there). Throws like build(), and then holds nothing.
  // on_device: A as it is on the GPU already, copied there instead of uploaded where the block
  // goes to the format unchanged (not renumbered, split or row-compressed).
  void build_copy(const CsrIn &A, const std::vector<std::int32_t> &order, SplitRule split, PetscInt block_size, bool device, bool compress_rows = false,
                  void *stream = nullptr, const DeviceCsrIn *on_device = nullptr);
  // Refills the values of the copy build_copy made, from A: the block as handed to build_copy then
  // (same structure, new values). Renumbering, split and row map stay; the format's values and the
  // tail's are gathered through the slot maps (ValueSlots), made at the first call after a
  // conversion by building the copy once more from slot values (core/values.hpp), with the same
  // order, split, row map and resolved parameters. On the host or the GPU, as the copy; returns
  // with the copy current. false, and the copy untouched: the copy holds its values compressed
  // (SELL-P's value dictionary, whose table the new values may not fit), or the slot build cannot
  // be exact in this scalar type (a float PETSc and more than 2^24 entries); the caller then
  // converts in full. Throws
  // like build_copy, and then the copy must be converted anew (its values may be half refilled).
  // values_on_device (GPU copies only): A.val is a device array of the block's nnz values (from
  // entry 0, not A.row_ptr[0]), e.g. an aijcusparse shadow's after MatSetValuesCOO with device
  // values; A's structure is read on the host as always, its values are gathered on the GPU
  // without an upload.
  // structure_on_device (with values_on_device): A's row pointers and column indices on the GPU
  // too (the aijcusparse shadow's), from which the slot build of a copy that is not renumbered,
  // split or row-compressed is made on the GPU, without a host pass or an upload.
  bool update_values(const CsrIn &A, PetscInt block_size, bool device, void *stream, bool values_on_device = false,
                     const DeviceCsrIn *structure_on_device = nullptr);
  // after new parameters or a failed update: the next change converts in full
  void forget_pattern()
  {
    pattern = BlockPattern{};
    slots_.clear();
  }
  // bytes of the slot maps held (0 until the first values-only update)
  std::size_t slot_bytes() const { return slots_.bytes(); }
  // out = ep(A x) through the renumbering, the format and the tail; throws like mult_*
  void apply(const Scalar *x, const Epilogue<Scalar> &ep, bool device, void *stream);
  // out = ep(A^T x) (out and in: the block's columns; x: its rows) from this same copy, without a
  // transposed one: the format's and the tail's transposed products, between the same two gathers
  // when the copy is renumbered (the order is symmetric, so A^T = P^T B^T P with B = P A P^T)
  void apply_transpose(const Scalar *x, const Epilogue<Scalar> &ep, bool device, void *stream);
  // d = the diagonal of the block (nrows entries; 0 where the block stores none), read from this
  // GPU copy through the renumbering, the format and the tail: MatGetDiagonal without the host. A
  // copy of a block's rows with entries only (an off-diagonal block) has none to give: logic_error.
  void diagonal(Scalar *d, std::int64_t nrows, void *stream);
  // the format's footprint plus the tail's, counted once by build_copy
  const Footprint &total_footprint() const { return total_footprint_; }
  // what the glue adds to the format (RCM order, long-row tail, row map), for parameters()
  std::string glue_notes() const;

  virtual ~FormatOperator() = default;
  // same parameters, nothing built
  virtual std::unique_ptr<FormatOperator> clone_parameters() const = 0;
  // reads -mat_<format>_* inside an open options block; returns whether a parameter changed
  virtual PetscErrorCode set_from_options(OptionItems PetscOptionsObject, MPI_Comm comm, PetscBool *changed) = 0;
  // (re)builds from a block: a device build converts on the GPU from A.device, or without it
  // (-mat_gpumats_build host) on the host and uploads the result; throws FormatError or
  // cuda::DeviceError and then holds nothing
  virtual void build(const BlockSource &A, PetscInt block_size, bool device) = 0;
  // A copy of B with exactly the format and parameters this built copy has, nothing chosen anew
  // (BELLPACK's choice costs a pass of sampling, and autocuda's may rest on timings): the slot
  // build of update_values
  virtual std::unique_ptr<FormatOperator> build_like(const BlockSource &B, PetscInt block_size, bool device) const = 0;
  // The format's value array, where the copy lives (host or GPU), and its length: what a values-only
  // update overwrites. Null (and 0) when nothing is built or the values are held compressed.
  virtual Scalar *values(std::int64_t *count) = 0;
  // A values-only update of a GPU copy that holds its values in a value dictionary (values() is
  // null): the table the format encodes against is made from `distinct` (the block's distinct
  // values, sorted by bit pattern), a plain value array in the copy's layout is opened beside the
  // codes, gather(plain, n) fills it, and the format encodes it anew, as at its build. `distinct`
  // empty (more values than a dictionary holds): the copy keeps the gathered values plain, in the
  // same layout. false, the copy untouched: no such copy (the caller converts).
  virtual bool refill_compressed(const std::vector<Scalar> &distinct, const std::function<void(Scalar *, std::int64_t)> &gather)
  {
    (void)distinct, (void)gather;
    return false;
  }
  virtual void clear()                                                 = 0;
  virtual void mult_host(const Scalar *x, const Epilogue<Scalar> &ep) const = 0;
  // the implicit product with the transpose of what was built (out: its columns, x: its rows)
  virtual void mult_transpose_host(const Scalar *x, const Epilogue<Scalar> &ep) const = 0;
#if GPUMATS_HAVE_CUDA
  virtual void mult_device(const Scalar *x, const Epilogue<Scalar> &ep, void *stream) const = 0;
  virtual void mult_transpose_device(const Scalar *x, const Epilogue<Scalar> &ep, void *stream) const = 0;
  // the format's stored diagonal entries into d, in the copy's order (cuda::Operator::diagonal)
  virtual void diagonal_device(Scalar *d, void *stream) const = 0;
#endif
  // The inputs of autocuda's model, from one choice of the parameters for A: bytes, what one product
  // would move with this format (its arrays, x and y), from the CSR's structure (exact where cheap,
  // sampled otherwise); steps, the dependent steps of the longest work item (a thread's row in
  // SELL-P, a warp's strip in CMRS, a thread's block row in BELLPACK), what bounds the time when
  // one row is far longer than the rest.
  struct Estimate {
    double bytes = 0, steps = 0;
  };
  virtual Estimate estimate(const BlockSource &A, PetscInt block_size) const = 0;
  // lets the format hold its values compressed wherever its own rule says it pays (SELL-P: values
  // auto, the value dictionary where it cuts a product's bytes by 25%); autocuda weighs its SELL-P
  // candidate so. Formats without a compressed form ignore it.
  virtual void        allow_compressed_values() {}
  virtual Footprint   footprint() const  = 0; // the format's own, stored when it was built
  virtual std::string parameters() const = 0; // the chosen parameters, for -mat_view and benchmarks
  virtual std::size_t device_bytes() const = 0;

protected:
  // the glue's settings (stream_loads, reorder_rcm, long_rows) copied into a clone
  void copy_settings_to(FormatOperator &o) const
  {
    o.stream_loads  = stream_loads;
    o.reorder_rcm   = reorder_rcm;
    o.long_rows     = long_rows;
    o.build_on_host = build_on_host;
  }

private:
  // The CSRs a block goes through before the format sees it (build_copy's order, split and row
  // compression), kept alive while the format is built from the last of them.
  struct Staged {
    Csr<Scalar, PetscInt>     P, H, C; // the block in the copy's order; the head of its rows after a split; its rows with entries
    RowTail<Scalar>           T;       // the tail of the split
    std::vector<std::int32_t> rows;    // where C's rows sit in A
  };
  // The CSR the format is built from: A through the order, the split and the row compression
  static CsrIn stage(const CsrIn &A, const std::vector<std::int32_t> &order, std::int64_t split_at, bool compress_rows, Staged &s);
  // apply (transpose false) and apply_transpose (true)
  void run(const Scalar *x, const Epilogue<Scalar> &ep, bool device, void *stream, bool transpose);
  // drops the format's copy and the glue's parts
  void clear_all();

  Reordering  reorder_;
  LongRowTail tail_;
  RowMap      rowmap_;
  ValueSlots  slots_;
  Footprint   total_footprint_{};
};

// The -log_view events of the GPU builds (build_events.cxx), nested in the format's Convert event:
// GpuMatsUpload (the CSR's upload), GpuMatsStructure (row statistics, widths, offsets, sorts, and
// the parameter choices' queries) and GpuMatsScatter (the entries into the format's arrays).
PetscErrorCode RegisterBuildEvents();
#if GPUMATS_HAVE_CUDA
// The log of one GPU build: opens and closes those events as the build enters its steps (the
// build synchronises at each step, so the events hold the GPU's time); null when PETSc is not
// logging, so that a build then never waits between its steps.
std::unique_ptr<cuda::BuildLog> BuildEventsIfLogging();
#endif

// Runs `body` and turns the format core's and the CUDA layer's exceptions into PETSc errors.
template <class F>
PetscErrorCode guarded(MPI_Comm comm, const char *context, F &&body)
{
  PetscFunctionBegin;
  try {
    body();
  } catch (const FormatError &e) {
    SETERRQ(comm, PETSC_ERR_SUP, "%s: %s", context, e.what());
#if GPUMATS_HAVE_CUDA
  } catch (const cuda::DeviceError &e) {
    SETERRQ(comm, e.out_of_memory() ? PETSC_ERR_MEM : PETSC_ERR_GPU, "%s: %s", context, e.what());
#endif
  } catch (const std::bad_alloc &) {
    SETERRQ(comm, PETSC_ERR_MEM, "%s: out of host memory", context);
  } catch (const std::exception &e) {
    SETERRQ(comm, PETSC_ERR_LIB, "%s: %s", context, e.what());
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

// ---- shared pieces of the Seq and MPI types (options, block_build, view, apply, device_select) ----

// How MatMultTranspose(Add) multiplies (-mat_gpumats_transpose): explicit, with a copy of the
// transpose in the format, built at the first such product after a change and kept while the
// matrix does not change; implicit, scattering the stored copy's products into the result (with
// atomics on the GPU), with no second copy; cusparse (GPU types), with cuSPARSE's SpMV on a
// transposed CSR that aijcusparse builds on the GPU (csr2csc) for its MAT_FORM_EXPLICIT_TRANSPOSE,
// here of the matrix's aijcusparse shadow (the MPI types: of their blocks' stand-in), made again
// at the first such product after a change. auto, the default, is implicit, with or without
// MAT_FORM_EXPLICIT_TRANSPOSE (GAMG sets it on its prolongators), by measurement: the copy in the
// format takes about 0.3 s to build for ksp ex56's hierarchy, more than a solve's restrictions
// save (docs/results/gamg-transpose-h200-2026-11-28.md); with cuSPARSE's transposed CSR, built on
// the GPU, ksp ex56's restrictions took less GPU time than the implicit ones but its KSPSolve was
// no faster (docs/results/gamg-restriction-h200-2026-11-29.md), and it holds a second CSR on the GPU.
enum class TransposeMode { kAuto = 0, kExplicit = 1, kImplicit = 2, kCusparse = 3 };
const char *TransposeModeName(TransposeMode m); // "auto", "explicit", "implicit", "cusparse"
// Whether products with A^T use the explicit copy in the format
inline bool UseExplicitTranspose(TransposeMode mode) { return mode == TransposeMode::kExplicit; }
// The way a product with A^T goes. cusparse_ok: A is a GPU type of a CUDA PETSc, not bound to the
// CPU, whose shadow (or stand-in) can multiply the product's vectors; where it is not, cusparse
// falls back to the implicit way
enum class TransposePath { kImplicit, kFormatCopy, kCusparse };
inline TransposePath ChooseTransposePath(TransposeMode mode, bool cusparse_ok)
{
  if (mode == TransposeMode::kExplicit) return TransposePath::kFormatCopy;
  if (mode == TransposeMode::kCusparse && cusparse_ok) return TransposePath::kCusparse;
  return TransposePath::kImplicit;
}

// What a change of the matrix that keeps its nonzero pattern does to the format copies
// (-mat_gpumats_values_update): auto refills their values only (FormatOperator::update_values);
// rebuild converts them in full, as a change of pattern does.
enum class ValuesUpdate { kAuto = 0, kRebuild = 1 };
// The default of -mat_gpumats_values_update: auto, for GPU copies as for host ones: a values-only
// update takes less than a full conversion on the GPU and less than aijcusparse's values copy
// (examples/values_update through tests/gpu/build_check.sh;
// docs/results/build-check-h200-2026-11-24.txt); the first one, which makes the slot maps, costs
// about one conversion, because its slot build writes on the GPU into an upload of the structure
// rather than setting a slot CSR on the host.
constexpr ValuesUpdate kDefaultValuesUpdate = ValuesUpdate::kAuto;
const char *ValuesUpdateName(ValuesUpdate m); // "auto", "rebuild"
// When a final assembly brings the format copies up to date (-mat_gpumats_build_at): inside
// MatAssemblyEnd (assembly), or at the first use after it (use: a product, MatGetDiagonal, a view),
// as aijcusparse copies to the GPU at its first use. A build that fails at first use fails that
// call with the same error and leaves the AIJ matrix as it was; a MatConvert into our types builds
// at once either way (all or nothing).
// The default is assembly, by measurement (ksp ex45 200^3 in tests/gpu/build_check.sh; the
// copy counts of tests/gpu/run.sh): building at first use shortens ex45's first build, but moves
// builds of matrices first multiplied in the solve (PCMG's, a Newton step's new Jacobian) into
// KSPSolve: one more host-to-GPU copy there than aijcusparse in ex45 CG+MG and snes ex19
// GMRES+MG, which the copy-count checks of tests/gpu/run.sh catch. An assembly of all-zero values (DMCreateMatrix's)
// builds nothing either way, nor does one that follows an assembly whose copy was never used
// (BuildAtThisAssembly: MatFilter assembles once per row). Products of our
// types on the GPU (cusparse_bridge.cxx) build their results at their first use from the GPU whatever
// this says, so GAMG's intermediate products are never built from zeros, or at all if unused.
enum class BuildAt { kUse = 0, kAssembly = 1 };
constexpr BuildAt kDefaultBuildAt = BuildAt::kAssembly;
const char *BuildAtName(BuildAt m); // "use", "assembly"
// This rank's format copies converted in full and refilled by values only, since the matrix
// became the type (an MPI matrix counts its diagonal and off-diagonal blocks each; transposed
// copies are not counted): what MatGpuMatsGetUpdateCounts reports and -mat_view prints.
struct UpdateCounts {
  PetscInt64 conversions = 0, values_only = 0;
};
// The -log_view event of values-only updates, "GpuMatsValues" (a conversion logs its format's
// <FORMAT>Convert event)
extern PetscLogEvent values_event;

// Checks that this build of the plug-in can run `device` types of format f; a clear error otherwise.
PetscErrorCode CheckSupported(Mat A, const FormatInfo &f, bool device);
// Makes the GPU of this rank current, once: PETSc's choice when PETSc has CUDA (its vectors live
// there), else the node-local rank modulo the visible GPUs. Collective on comm the first time.
PetscErrorCode SelectDevice(MPI_Comm comm);
// "GPU 1 of 2, NVIDIA H200 (chosen by ...)": the current GPU, for -mat_view
PetscErrorCode DeviceDescription(std::string *s);
// The CUDA stream PETSc's vector operations use, so kernels are ordered with them.
PetscErrorCode CurrentStream(void **stream);
// Reads the format's options for A (from SetFromOptions): the format's own and the glue's into op,
// -mat_gpumats_transpose into *transpose, -mat_gpumats_values_update into *values and
// -mat_gpumats_build_at into *build_at (which change no copy, so they do not set *changed). New parameters make op forget its pattern.
PetscErrorCode ReadFormatOptions(Mat A, const FormatInfo &f, bool device, FormatOperator &op, TransposeMode *transpose, ValuesUpdate *values,
                                 BuildAt *build_at, OptionItems PetscOptionsObject, PetscBool *changed);
// Brings op up to date with a SeqAIJ block, logging what it does (-log_view, -info); the block
// stays untouched. With values auto, and op built from this block with its nonzero pattern still
// (op.pattern), only the values move (FormatOperator::update_values, event GpuMatsValues);
// otherwise, or where that cannot be exact, op is converted in full (event <FORMAT>Convert).
// What to build is a BlockBuild: counts (may be null) counts which one it was.
// diagonal: the block is a diagonal block (its columns are the rows' own unknowns), so
// -mat_gpumats_reorder may renumber both, and -mat_gpumats_long_rows may split its rows; an
// off-diagonal block (not diagonal, not transposed) keeps its rows with entries only where at most
// half of its rows have any (RowMap).
// transposed: op becomes the copy of the block's transpose (for products with A^T), not renumbered,
// and always converted in full (it is dropped when the matrix changes and made again when needed).
// on_device (GPU copies, not transposed): the block's CSR as it is on the GPU already, read there
// instead of uploading the host's (the host CSR is still read for the structure decisions).
// host_stale: the block's newest values are on_device's only (Residency::host_stale); the host's
// are read (MatSeqAIJGetArrayRead, which brings them down) only where the build needs them: on the
// host, transposed, renumbered, or with long rows split off (the tail is cut from the host CSR).
struct BlockBuild {
  bool               device     = false; // a GPU copy
  PetscInt           block_size = 1;
  bool               diagonal   = false;
  bool               transposed = false;
  ValuesUpdate       values     = ValuesUpdate::kRebuild;
  UpdateCounts      *counts     = nullptr;
  const DeviceCsrIn *on_device  = nullptr;
  bool               host_stale = false;
};
PetscErrorCode BuildFromSeqAIJ(Mat block, const FormatInfo &f, FormatOperator &op, const BlockBuild &how);
// The values-only update of a GPU copy from values that are on the GPU only (MatSetValuesCOO with
// device values, coo.cxx): the block's structure is read on the host (it is current there: only
// its values are stale), device_values holds its nnz values on the device. *done is false, and op
// untouched, where a values-only update cannot serve (no copy of this pattern yet, the pattern
// changed, a value dictionary, an inexact slot build): the caller then brings the host values up
// to date and calls BuildFromSeqAIJ. Counted as a values-only update.
// how: block_size, diagonal and counts as for BuildFromSeqAIJ; on_device (may be null) the block's
// row pointers and column indices on the GPU as well, for the first update's slot build
// (FormatOperator::update_values).
PetscErrorCode UpdateValuesFromDevice(Mat block, const FormatInfo &f, FormatOperator &op, const PetscScalar *device_values, const BlockBuild &how, PetscBool *done);
// Prints the -mat_view ::ascii_info lines of one format copy.
PetscErrorCode ViewOperator(PetscViewer viewer, const FormatInfo &f, const char *what, const FormatOperator &op, bool device);
// Prints the -mat_view ::ascii_info line of same-pattern changes: the mode, the counts (of all
// ranks, for MPI types) and the bytes of the slot maps held.
PetscErrorCode ViewUpdates(PetscViewer viewer, ValuesUpdate mode, const UpdateCounts &counts, double slot_bytes);
// Prints the -mat_view ::ascii_info line of the transpose products: the mode, the path it takes, and
// the transposed copies held (`held` of them, `stored` entries and `bytes` in all; held == 0: none).
PetscErrorCode ViewTranspose(PetscViewer viewer, TransposeMode mode, TransposePath path, PetscInt64 held, PetscInt64 stored, double bytes);

// Where a kernel reads or writes a Vec: host arrays for host types; device arrays for *cuda types
// (a VECCUDA array directly, any other Vec staged through a device buffer owned by the Mat).
struct Staging {
#if GPUMATS_HAVE_CUDA
  cuda::Buffer slot[3]; // x, y/in, out
#endif
};
class VecArray {
public:
  enum Mode { kRead, kWrite, kReadWrite };
  PetscErrorCode get(Vec v, Mode mode, bool device, Staging *stage, int slot, void *stream);
  PetscErrorCode restore();
  Scalar        *ptr() const { return ptr_; }

private:
  Vec         vec_ = nullptr;
  Mode        mode_ = kRead;
  Scalar     *host_ = nullptr, *ptr_ = nullptr;
  PetscInt    n_ = 0;
  bool        device_ = false, staged_ = false;
  void       *stream_ = nullptr;
};

// out = alpha*A*x + beta*in through op, on the host or the device, with logging; with transpose,
// out = alpha*A^T*x + beta*in from the same op (its implicit transposed product). in may be null
// (beta = 0) and may be the same Vec as out. op is not const: a product writes its scratch vectors.
// gpu_timer false: no PETSc GPU timer around the kernels (-log_view_gpu_time), whose end
// synchronises the stream: for a product that other work is meant to overlap.
PetscErrorCode ApplyOperator(const FormatInfo &f, FormatOperator &op, bool device, const Scalar *x, Scalar alpha, Scalar beta, const Scalar *in,
                             Scalar *out, void *stream, bool transpose = false, bool gpu_timer = true);

// v = the diagonal of the (square, or diagonal) block op holds, read from its GPU copy, when v's
// array lives on the GPU (a VECCUDA): *done true. Otherwise nothing is written and *done is false,
// and the caller reads AIJ's host CSR. Without it a *cuda type's MatGetDiagonal comes
// back on the host, and the solver's next vector operation copies it up: one copy per Jacobi or
// Chebyshev set-up of every level, also inside KSPSolve.
PetscErrorCode DiagonalOnDevice(FormatOperator &op, Vec v, PetscBool *done);

} // namespace gpumats
