// SELL-P in the PETSc glue: options, defaults and the bridge to the core and the CUDA layer.
#include "../common/operator/make_operator.hpp"
#include "host.hpp"
#if GPUMATS_HAVE_CUDA
  #include "device.hpp"
#endif

namespace gpumats {
#if GPUMATS_SUPPORTED_SCALAR
namespace {

struct SellpTraits {
  // the core parameters plus which of them the user set; the others are chosen per matrix
  // 32-bit indices by default: the 16-bit form's per-slice-column base costs more than the bytes
  // it saves on a 7-point stencil (poisson7's sellpcuda and sellpcuda:i16 rows of
  // docs/results/h200-2026-11-27-autocuda.csv)
  // Values plain by default; -mat_sellp_values auto|dictionary opt in. The dictionary pays in the
  // product where values repeat (build/bin/bench -matrix poisson7 -constant_values;
  // docs/results/dictionary-h200-2026-11-23.csv), but resolve() then counts the distinct values
  // at every build, which on the host costs several times a conversion; so sellp keeps plain
  // values unless asked, and autocuda weighs the dictionary (allow_compressed_values). core.values
  // is then kPlain or kDictionary, and `mode`/`dict_entries` remember why, for -mat_view.
  struct Params {
    sellp::Params core{0, 0, 0, sellp::Index::k32, Values::kPlain};
    Values mode         = Values::kPlain; // as asked with -mat_sellp_values
    std::int64_t  dict_entries = -1;                    // distinct values found by resolve (-1: not counted)
    std::int64_t  stored       = -1;                    // stored entries, where resolve counted them (for predicted_bytes)
  };
  using Matrix = sellp::Matrix<Scalar>;

  static PetscErrorCode options(OptionItems PetscOptionsObject, MPI_Comm comm, Params &p, PetscBool *changed)
  {
    const char *indices[] = {"auto", "32", "16"}; // auto: 16-bit where every slice column allows
    PetscInt    b = p.core.slice_height, t = p.core.threads_per_row, sigma = p.core.sigma, ix = p.core.index == sellp::Index::k16_if_possible ? 0 : (p.core.index == sellp::Index::k32 ? 1 : 2);
    const char *values[] = {"plain", "dictionary", "auto"}; // the order of Values
    PetscInt    vx       = PetscInt(p.mode);
    PetscBool   set_b, set_t, set_s, set_i, set_v, shared = p.core.shared_table ? PETSC_TRUE : PETSC_FALSE;

    PetscFunctionBegin;
    PetscCall(PetscOptionsInt("-mat_sellp_slice_height", "Rows per SELL-P slice b: a power of two, 1-1024 (0: chosen per matrix)", "MATSELLP", b, &b, &set_b));
    PetscCall(PetscOptionsInt("-mat_sellp_threads_per_row", "Threads per row t: a power of two, 1-32, rows padded to multiples of t (0: chosen per matrix)",
                              "MATSELLP", t, &t, &set_t));
    PetscCall(PetscOptionsInt("-mat_sellp_sigma", "SELL-C-sigma sorting window in rows: 1 (no sorting) or a multiple of the slice height (0: chosen per matrix)",
                              "MATSELLP", sigma, &sigma, &set_s));
    PetscCall(PetscOptionsEList("-mat_sellp_index", "Column indices: 16-bit deltas per slice column where they fit (auto), always 32-bit, or 16-bit (error if they do not fit)",
                                "MATSELLP", indices, 3, indices[ix], &ix, &set_i));
    // dictionary where the matrix has more than 65536 distinct values falls back to plain values
    // with a PetscInfo line rather than failing: the values of a matrix change under the user
    // (MatSetValues, MatScale) and an error in the middle of a solve helps nobody
    PetscCall(PetscOptionsEList("-mat_sellp_values",
                                "Values: plain, dictionary (1- or 2-byte codes into a table of the distinct values, exact; plain when there are more than 65536), or "
                                "auto (the dictionary where it also cuts the bytes of a product by 25%)",
                                "MATSELLP", values, 3, values[vx], &vx, &set_v));
    PetscCall(PetscOptionsBool("-mat_sellp_dictionary_shared", "GPU, dictionary of at most 256 values: each thread block stages the table in shared memory (else read through the read-only cache)",
                               "MATSELLP", shared, &shared, nullptr));
    PetscCheck(b == 0 || (b >= 1 && b <= sellp::kMaxThreads && sellp::is_pow2(int(b))), comm, PETSC_ERR_ARG_OUTOFRANGE,
               "-mat_sellp_slice_height %" PetscInt_FMT " is invalid: use a power of two from 1 to 1024", b);
    PetscCheck(t == 0 || (t >= 1 && t <= 32 && sellp::is_pow2(int(t))), comm, PETSC_ERR_ARG_OUTOFRANGE,
               "-mat_sellp_threads_per_row %" PetscInt_FMT " is invalid: use a power of two from 1 to 32", t);
    PetscCheck(b * t <= sellp::kMaxThreads, comm, PETSC_ERR_ARG_INCOMP,
               "-mat_sellp_slice_height %" PetscInt_FMT " times -mat_sellp_threads_per_row %" PetscInt_FMT " = %" PetscInt_FMT
               " threads exceeds the 1024 threads of a CUDA block; lower one of them",
               b, t, b * t);
    PetscCheck(sigma >= 0, comm, PETSC_ERR_ARG_OUTOFRANGE, "-mat_sellp_sigma %" PetscInt_FMT " is invalid: use 0 (chosen per matrix), 1 (no sorting) or a multiple of the slice height", sigma);
    PetscCheck(sigma <= 1 || sigma % (b ? b : 32) == 0, comm, PETSC_ERR_ARG_OUTOFRANGE,
               "-mat_sellp_sigma %" PetscInt_FMT " is invalid: use 1 (no sorting) or a positive multiple of the slice height %" PetscInt_FMT
               " (32 when the slice height is chosen per matrix)",
               sigma, b ? b : 32);
    (void)set_b, (void)set_t, (void)set_s, (void)set_i, (void)set_v;
    const sellp::Index index[] = {sellp::Index::k16_if_possible, sellp::Index::k32, sellp::Index::k16};
    Params             q{{int(b), int(t), int(sigma), index[ix], Values::kPlain, bool(shared)}, Values(vx), -1};
    *changed = (q.core.slice_height != p.core.slice_height || q.core.threads_per_row != p.core.threads_per_row || q.core.sigma != p.core.sigma ||
                q.core.index != p.core.index || q.mode != p.mode || q.core.shared_table != p.core.shared_table)
                 ? PETSC_TRUE
                 : PETSC_FALSE;
    p        = q;
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  // Fills in what the user left to the matrix: threads per row from the mean row length (one
  // thread per row while rows are short; a slice is one warp, b*t = 32, so the fan-in is a warp
  // shuffle) and SELL-C-sigma sorting when slices would otherwise carry much padding.
  static Params resolve(const Params &p, const BlockSource &A, PetscInt)
  {
    Params             q   = p;
    const std::int64_t n   = A.nrows();
    const double       mu  = n ? double(A.nnz()) / double(n) : 0;
    if (!q.core.threads_per_row) {
      int t = 1;
      while (t < 32 && mu / (2 * t) >= 32) t *= 2; // keep >= 32 entries per thread
      q.core.threads_per_row = q.core.slice_height ? std::min(t, sellp::kMaxThreads / q.core.slice_height) : t;
    }
    if (!q.core.slice_height) q.core.slice_height = std::max(1, 32 / q.core.threads_per_row);
    if (!q.core.sigma) {
      // padding of the unsorted layout, from the row lengths alone (stored_entries with sigma 1;
      // on the GPU for GPU builds)
      const std::int64_t b      = q.core.slice_height;
      const std::int64_t stored = A.groups(b, q.core.threads_per_row).padded_width;
      q.core.sigma = (A.nnz() && double(stored) > kSortAbovePadding * double(A.nnz())) ? int(std::max<std::int64_t>(b, kSigmaRows / b * b)) : 1;
    }
    resolve_values(q, A);
    return q;
  }
  // Counts the distinct values (stopping past 65536; on the GPU for GPU builds, on the host a
  // strided pass first rejects general values after a few thousand lookups) and decides plain or
  // dictionary with the core's rule, on the bytes per stored entry the columns will take. Runs on
  // every build, so new values (MatSetValues after assembly, MatScale: the glue rebuilds the copy)
  // get a new table, or plain values if too many.
  static void resolve_values(Params &q, const BlockSource &S)
  {
    const CsrIn &A = S.host;
    q.core.values  = Values::kPlain;
    q.dict_entries = -1;
    q.stored       = -1;
    if (q.mode == Values::kPlain) return;
    if (!A.nnz()) {
      q.dict_entries = 0;
      return;
    }
    q.dict_entries = S.distinct_values(); // where the values are: one pass on the GPU for GPU builds, on the host otherwise
    // too many values for any table (general values, as GAMG's products have): plain, without the
    // stored-entry count (a sort of the row lengths when rows are sorted) the decision would need
    const bool fits = code_bytes_for(q.dict_entries) != 0;
    const std::int64_t b = q.core.slice_height, stored = fits ? (q.stored = stored_entries(S, q.core)) : 0;
    const bool         i16 = fits && q.core.index != sellp::Index::k32 && sellp::index16_fits_sampled(A, b, 64);
    if (fits && use_dictionary<Scalar>(q.mode, q.dict_entries, stored, i16 ? 2.0 + 4.0 / double(b) : 4.0)) q.core.values = Values::kDictionary;
    else if (q.mode == Values::kDictionary && !fits)
      (void)PetscInfo(nullptr, "SELL-P: %" PetscInt64_FMT "%s distinct values, more than a value dictionary holds (65536): values stay plain\n",
                      (PetscInt64)std::min(q.dict_entries, kMaxDictionary), q.dict_entries > kMaxDictionary ? "+" : "");
  }
  // autocuda's SELL-P candidate: the dictionary where it cuts the bytes by 25% (values auto)
  static void allow_compressed_values(Params &p)
  {
    if (p.mode == Values::kPlain) p.mode = Values::kAuto;
  }
  // the slot build of a values-only update: the same layout, its values plain
  static void plain_values(Params &p) { p.core.values = Values::kPlain; }
  static constexpr double kSortAbovePadding = 1.25; // sort rows when unsorted slices would store 25% more than nnz
  static constexpr int    kSigmaRows        = 4096; // window of the sort: rows of one window share x locality

  static Matrix    from_csr(const CsrIn &A, const Params &p) { return sellp::from_csr(A, p.core); }
  static void      spmv(const Matrix &M, const Scalar *x, const Epilogue<Scalar> &ep) { sellp::spmv(M, x, ep); }
  static void      spmv_transpose(const Matrix &M, const Scalar *x, const Epilogue<Scalar> &ep) { sellp::spmv_transpose(M, x, ep); }
  static Footprint footprint(const Matrix &M) { return sellp::footprint(M); }
#if GPUMATS_HAVE_CUDA
  // the conversion stays on the GPU; a dictionary's codes are encoded there too (make_operator.hpp,
  // from value_table and encode_device)
  static std::unique_ptr<cuda::Operator<Scalar>> build_device(const BlockSource &A, const Params &p) { return sellp::build_on_device(*A.device, p.core, A.log); }
  // the dictionary of a GPU build or values-only update: the block's distinct values (the padding
  // is skipped by its column marker; empty: more than a dictionary holds)
  static bool                dictionary(const Params &p) { return p.core.values == Values::kDictionary; }
  static std::vector<Scalar> value_table(std::vector<Scalar> distinct) { return distinct; }
  static void                encode_device(cuda::Operator<Scalar> &D, const std::vector<Scalar> &table) { sellp::encode_values(D, table); }
  static std::unique_ptr<cuda::Operator<Scalar>> upload(const Matrix &M) { return sellp::to_device(M); }
#endif
  // stored_entries, on the GPU for GPU builds
  static std::int64_t stored_entries(const BlockSource &A, const sellp::Params &p)
  {
    if (p.sigma <= 1) return A.groups(p.slice_height, p.threads_per_row).padded_width;
#if GPUMATS_HAVE_CUDA
    if (A.device) return sellp::stored_on_device(*A.device, p);
#endif
    return sellp::stored_entries(A.host, p);
  }
  static double predicted_bytes(const Params &p, const BlockSource &A)
  {
    const std::int64_t b = p.core.slice_height, stored = p.stored >= 0 ? p.stored : stored_entries(A, p.core), slices = (A.nrows() + b - 1) / b;
    const bool         idx16 = p.core.index != sellp::Index::k32 && sellp::index16_fits_sampled(A.host, b, 64); // sampled on the host
    const double       index = idx16 ? 2.0 + 4.0 / double(b) : 4.0;
    // resolve() has counted the distinct values where the dictionary applies
    const double value = p.core.values == Values::kDictionary ? dictionary_value_bytes<Scalar>(p.dict_entries, stored) : double(sizeof(Scalar));
    return double(stored) * (value + index) + 4.0 * double(slices + 1) + (p.core.sigma > 1 ? 4.0 * double(A.nrows()) : 0.0);
  }
  // a thread walks entries t apart along its row
  static double critical_steps(const Params &p, const BlockSource &A) { return double((A.longest_row() + p.core.threads_per_row - 1) / p.core.threads_per_row); }
  static std::string describe(const Params &p)
  {
    auto n = [](int v) { return v ? std::to_string(v) : std::string("auto"); };
    const char *ix = p.core.index == sellp::Index::k32 ? "32-bit" : (p.core.index == sellp::Index::k16 ? "16-bit" : "16-bit where they fit");
    return "slice height " + n(p.core.slice_height) + ", " + n(p.core.threads_per_row) + " threads per row, " +
           (p.core.sigma > 1 ? "rows sorted by length in windows of " + std::to_string(p.core.sigma) : (p.core.sigma == 1 ? std::string("no row sorting") : std::string("sorting auto"))) +
           ", column indices " + ix + ", " + values(p);
  }
  static std::string values(const Params &p)
  {
    const bool shared = p.core.shared_table && code_bytes_for(p.dict_entries) == 1;
    return describe_values(p.mode, p.core.values == Values::kDictionary, p.dict_entries, shared ? ", table in shared memory on the GPU" : "");
  }
};

} // namespace

FormatInfo sellp_info = {"sellp", "padsell", "SELL-P", true, true, make_operator<SellpTraits>, 0, 0};
#else
// complex scalars: the types are registered and refuse to be created (CheckSupported)
FormatInfo sellp_info = {"sellp", "padsell", "SELL-P", true, true, nullptr, 0, 0};
#endif

} // namespace gpumats

/*MC
   MATSELLP - "sellp" - SELL-P (padded sliced ELLPACK) matrix type, computed on the host

   Anzt, Tomov and Dongarra (2014): slices of `b` rows, each row padded to the slice's longest
   rounded up to a multiple of `t` threads per row, column-major inside a slice, rows optionally
   sorted by length within windows of `sigma` rows (SELL-C-sigma). The host form is the reference
   `MATSELLPCUDA` is checked against. Concrete types: `MATSEQSELLP` ("seqaijpadsell") and
   `MATMPISELLP` ("mpiaijpadsell").

   Options Database Keys:
+  -mat_type sellp - sets the matrix type to `MATSELLP` during a call to `MatSetFromOptions()`
.  -mat_sellp_slice_height <b> - rows per slice, a power of two up to 1024 (0: chosen per matrix)
.  -mat_sellp_threads_per_row <t> - threads per row, a power of two up to 32 (0: chosen per matrix)
.  -mat_sellp_sigma <s> - SELL-C-sigma sorting window (1: no sorting; 0: chosen per matrix)
.  -mat_sellp_index <32,auto,16> - 32-bit column indices or 16-bit deltas per slice column
.  -mat_sellp_values <plain,dictionary,auto> - plain values or 1-/2-byte codes into a table of the distinct values
.  -mat_sellp_dictionary_shared <bool> - GPU: stage a dictionary of at most 256 values in shared memory
-  -mat_gpumats_* - the options of every type: see `MATGPUMATS`

   Level: beginner

.seealso: [](ch_matrices), `MATSELLPCUDA`, `MATGPUMATS`, `MATAIJ`, `MATSELL`
M*/

/*MC
   MATSELLPCUDA - "sellpcuda" - SELL-P matrix type for NVIDIA GPUs

   `MATSELLP`'s slices on an NVIDIA GPU, `t` threads per row reading a slice's columns in coalesced
   loads; 16-bit column deltas and value dictionaries shrink what each product reads where they
   fit. Concrete types: `MATSEQSELLPCUDA` ("seqaijpadsellcuda") and `MATMPISELLPCUDA`
   ("mpiaijpadsellcuda").

   Options Database Keys:
+  -mat_type sellpcuda - sets the matrix type to `MATSELLPCUDA` during a call to `MatSetFromOptions()`
.  -mat_sellp_* - as for `MATSELLP`
-  -mat_gpumats_* - see `MATGPUMATS`, the GPU-only ones included

   Level: beginner

.seealso: [](ch_matrices), `MATSELLP`, `MATGPUMATS`, `MATAUTOCUDA`, `MATSELLCUDA`, `MATAIJCUSPARSE`
M*/
