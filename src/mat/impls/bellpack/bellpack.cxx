// BELLPACK in the PETSc glue: options, defaults and the bridge to the core and the CUDA layer.
#include "../common/operator/make_operator.hpp"
#include "../common/runtime/gpu_model.hpp"
#include "host.hpp"
#include "tuning.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#if GPUMATS_HAVE_CUDA
  #include "device.hpp"
#endif

namespace gpumats {
#if GPUMATS_SUPPORTED_SCALAR
namespace {

// The execution-time model of this process's GPU model (the first one benchmarked where it has
// none, said once in -info; without a GPU, as for the host type, the first)
const bellpack::ModelChoice &process_model()
{
  static const bellpack::ModelChoice choice = [] {
    bellpack::ModelChoice c = bellpack::model_for(process_gpu_name());
    if (!c.note.empty()) (void)PetscInfo(nullptr, "BELLPACK: the execution-time model of %s, %s; %s\n", c.entry->gpu, c.entry->date, c.note.c_str());
    return c;
  }();
  return choice;
}

struct BellpackTraits {
  // partition_rows 0: chosen per matrix by the execution-time model (tuning.hpp)
  // Values plain by default, as SELL-P's (sellp.cxx says why); -mat_bellpack_values
  // dictionary|auto opt in, and autocuda weighs the dictionary (allow_compressed_values).
  // core.values is then kPlain or kDictionary; `mode` and `dict_entries` remember why, for -mat_view.
  struct Params {
    bellpack::Params core{1, 1, 0};
    bool             block_set = false; // false: take the block size of the Mat (MatSetBlockSize, DMDA dof)
    bool             partition_set = false; // R given by the user
    Values           mode          = Values::kPlain; // as asked with -mat_bellpack_values
    std::int64_t     dict_entries  = -1;             // table entries found by resolve, +0.0 included (-1: not counted)
    double           fill          = -1;             // sampled fill ratio of the block size resolved (-1: not sampled yet)
  };
  using Matrix = bellpack::Matrix<Scalar>;

  static PetscErrorCode options(OptionItems PetscOptionsObject, MPI_Comm comm, Params &p, PetscBool *changed)
  {
    PetscInt    rc[2] = {p.core.r, p.core.c}, n = 2, R = p.core.partition_rows, T = p.core.row_threads;
    PetscBool   set_rc, set_R, set_T;
    const char *values[] = {"plain", "dictionary", "auto"}; // the order of Values
    PetscInt    vx       = PetscInt(p.mode);

    PetscFunctionBegin;
    PetscCall(PetscOptionsIntArray("-mat_bellpack_block_size", "Dense block size r,c (1-8 each; one value for square blocks); default: the matrix block size",
                                   "MATBELLPACK", rc, &n, &set_rc));
    PetscCall(PetscOptionsInt("-mat_bellpack_partition_rows", "Block rows per ELLPACK partition R (threads per CUDA block): a power of two, 1-1024 (0: chosen per matrix by the execution-time model)",
                              "MATBELLPACK", R, &R, &set_R));
    PetscCall(PetscOptionsInt("-mat_bellpack_row_threads",
                              "GPU kernel: threads per block row, a power of two 1-32 (0: chosen at each product from the number of block rows and the longest)",
                              "MATBELLPACK", T, &T, &set_T));
    PetscCall(PetscOptionsEList("-mat_bellpack_values",
                                "Values: plain, dictionary (1- or 2-byte codes into a table of the distinct values, block fill's zero included, exact; plain when there are "
                                "more than 65536), or auto (the dictionary where it also cuts the bytes of a product by 25%)",
                                "MATBELLPACK", values, 3, values[vx], &vx, nullptr));
    PetscCheck(T >= 0 && T <= 32 && !(T & (T - 1)), comm, PETSC_ERR_ARG_OUTOFRANGE,
               "-mat_bellpack_row_threads %" PetscInt_FMT " is invalid: use a power of two from 1 to 32, or 0 to choose per product", T);
    if (set_rc && n == 1) rc[1] = rc[0];
    PetscCheck(!set_rc || (n >= 1 && n <= 2), comm, PETSC_ERR_ARG_SIZ, "-mat_bellpack_block_size takes r,c or a single size, not %" PetscInt_FMT " values", n);
    PetscCheck(!set_rc || (rc[0] >= 1 && rc[0] <= bellpack::kMaxBlock && rc[1] >= 1 && rc[1] <= bellpack::kMaxBlock), comm, PETSC_ERR_ARG_OUTOFRANGE,
               "-mat_bellpack_block_size %" PetscInt_FMT ",%" PetscInt_FMT " is out of range: r and c must each be 1 to 8", rc[0], rc[1]);
    PetscCheck(R == 0 || (R >= 1 && R <= 1024 && !(R & (R - 1))), comm, PETSC_ERR_ARG_OUTOFRANGE,
               "-mat_bellpack_partition_rows %" PetscInt_FMT " is invalid: use a power of two from 1 to 1024, or 0 to let the execution-time model choose", R);
    Params q = p;
    if (set_rc) q.core.r = int(rc[0]), q.core.c = int(rc[1]), q.block_set = true;
    q.core.partition_rows = int(R);
    q.partition_set       = R != 0;
    q.core.row_threads    = int(T);
    q.mode                = Values(vx);
    *changed = (q.core.r != p.core.r || q.core.c != p.core.c || q.core.partition_rows != p.core.partition_rows || q.core.row_threads != p.core.row_threads ||
                q.block_set != p.block_set || q.mode != p.mode)
                 ? PETSC_TRUE
                 : PETSC_FALSE;
    p = q;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  // Block size: the user's, else the matrix's (MatSetBlockSize, DMDA dof), else the one whose
  // estimated bytes per nonzero, fill * (value + index / (r*c)), are fewest, with the fill
  // estimated on about 1% of the block rows (the paper's fill estimation by sampling).
  // The fill estimates sample about 1% of the block rows on the host, cheap next to a build, so
  // they stay there for GPU builds too.
  static Params resolve(const Params &p, const BlockSource &src, PetscInt bs)
  {
    Params       q = p;
    const CsrIn &A = src.host;
    if (!q.block_set) q.core = block_size(q.core, A, bs);
    q.fill = sampled_fill(A, q.core.r, q.core.c); // once per build: the partition, the dictionary and the bytes read it
    if (!q.core.partition_rows) {
      // the paper's model: N blocks per thread from the sampled fill ratio, L = ceil(block rows / R)
      const std::int64_t r = q.core.r, c = q.core.c, block_rows = (A.nrows + r - 1) / r;
      q.core.partition_rows = bellpack::choose_partition_rows(*process_model().entry, int(r), int(c), block_rows, q.fill * double(A.nnz()) / double(r * c));
    }
    resolve_values(q, src);
    return q;
  }
  // Counts the distinct values (BlockSource::distinct_values: on the GPU for GPU builds) and adds
  // +0.0, which the block fill and padding store (with_zero), then decides plain or dictionary with
  // the core's rule on the sampled stored entries. Runs on every build, so new values get a new
  // table, or plain values if too many.
  static void resolve_values(Params &q, const BlockSource &S)
  {
    q.core.values  = Values::kPlain;
    q.dict_entries = -1;
    if (q.mode == Values::kPlain) return;
    if (!S.nnz()) {
      q.dict_entries = 0;
      return;
    }
    std::vector<Scalar> table;
    const std::int64_t  count = S.distinct_values(&table);
    // +0.0 joins the table unless the values hold it (65536 values without it: 65537, too many)
    const bool has_zero = !table.empty() && value_bits(table.front()) == 0;
    q.dict_entries      = code_bytes_for(count) && !has_zero ? count + 1 : count;
    const double stored = stored_estimate(q, S.host);
    if (code_bytes_for(q.dict_entries) && use_dictionary<Scalar>(q.mode, q.dict_entries, std::int64_t(stored), 4.0 / double(q.core.r * q.core.c)))
      q.core.values = Values::kDictionary;
    else if (q.mode == Values::kDictionary && !code_bytes_for(q.dict_entries))
      (void)PetscInfo(nullptr, "BELLPACK: %" PetscInt64_FMT "%s distinct values, more than a value dictionary holds (65536): values stay plain\n",
                      (PetscInt64)std::min(q.dict_entries, kMaxDictionary), q.dict_entries > kMaxDictionary ? "+" : "");
  }
  // stored entries from the fill ratio resolve sampled (every caller's parameters come from resolve)
  static double stored_estimate(const Params &p, const CsrIn &A)
  {
    if (p.fill < 0) throw std::logic_error("BELLPACK: a stored-entry estimate from parameters that resolve has not filled in");
    return p.fill * double(A.nnz());
  }
  // The fill ratio of r x c blocks, estimated on about 1% of the block rows, as in the paper's
  // fill estimation, and on at most about kFillSample entries: the sample of a small matrix with
  // long rows (GAMG's coarse operators: a few thousand rows of hundreds of entries) is then not a
  // third of it
  static constexpr std::int64_t kFillSample = 1 << 16;
  static double                 sampled_fill(const CsrIn &A, int r, int c)
  {
    const std::int64_t block_rows = (A.nrows + r - 1) / r;
    return bellpack::block_fill(A, r, c, std::max<std::int64_t>({1, block_rows / 100, A.nnz() / kFillSample}));
  }
  // autocuda's BELLPACK candidate: the dictionary where it cuts the bytes by 25% (values auto)
  static void allow_compressed_values(Params &p)
  {
    if (p.mode == Values::kPlain) p.mode = Values::kAuto;
  }
  // the slot build of a values-only update: the same layout, its values plain
  static void plain_values(Params &p) { p.core.values = Values::kPlain; }
  static bellpack::Params block_size(bellpack::Params q, const CsrIn &A, PetscInt bs)
  {
    if (bs > 1 && bs <= bellpack::kMaxBlock) {
      q.r = q.c = int(bs);
      return q;
    }
    double best = std::numeric_limits<double>::max();
    for (int r : {1, 2, 3, 4, 6, 8})
      for (int c : {1, 2, 3, 4, 6, 8}) {
        const double bytes = sampled_fill(A, r, c) * (sizeof(Scalar) + 4.0 / double(r * c));
        if (bytes < best - 1e-12) best = bytes, q.r = r, q.c = c;
      }
    return q;
  }
  static Matrix    from_csr(const CsrIn &A, const Params &p) { return bellpack::from_csr(A, p.core); }
  static void      spmv(const Matrix &M, const Scalar *x, const Epilogue<Scalar> &ep) { bellpack::spmv(M, x, ep); }
  static void      spmv_transpose(const Matrix &M, const Scalar *x, const Epilogue<Scalar> &ep) { bellpack::spmv_transpose(M, x, ep); }
  static Footprint footprint(const Matrix &M) { return bellpack::footprint(M); }
#if GPUMATS_HAVE_CUDA
  // the conversion stays on the GPU; a dictionary's codes are encoded there too (make_operator.hpp,
  // from value_table and encode_device)
  static std::unique_ptr<cuda::Operator<Scalar>> build_device(const BlockSource &A, const Params &p) { return bellpack::build_on_device(*A.device, p.core, A.log); }
  // the dictionary of a GPU build or values-only update: the block's distinct values and +0.0,
  // which the block fill and padding store (empty: more than a dictionary holds)
  static bool                dictionary(const Params &p) { return p.core.values == Values::kDictionary; }
  static std::vector<Scalar> value_table(std::vector<Scalar> distinct) { return with_zero(std::move(distinct)); }
  static void                encode_device(cuda::Operator<Scalar> &D, const std::vector<Scalar> &table) { bellpack::encode_values(D, table); }
  static std::unique_ptr<cuda::Operator<Scalar>> upload(const Matrix &M) { return bellpack::to_device(M); }
#endif
  // from the sampled fill ratio (sampled_fill)
  static double predicted_bytes(const Params &p, const BlockSource &src)
  {
    const std::int64_t r = p.core.r, c = p.core.c, block_rows = (src.nrows() + r - 1) / r;
    const double       stored = stored_estimate(p, src.host);
    // resolve() has counted the distinct values where the dictionary applies
    const double value = p.core.values == Values::kDictionary ? dictionary_value_bytes<Scalar>(p.dict_entries, std::int64_t(stored)) : double(sizeof(Scalar));
    return stored * value + 4.0 * stored / double(r * c) + 4.0 * double(block_rows);
  }
  // a thread walks the blocks of its block row; a row of L entries spans at least L/c blocks
  static double critical_steps(const Params &p, const BlockSource &A) { return double((A.longest_row() + p.core.c - 1) / p.core.c); }
  static std::string describe(const Params &p)
  {
    return "block size " + std::to_string(p.core.r) + "x" + std::to_string(p.core.c) + (p.block_set ? "" : " (from the matrix block size or fill estimation)") +
           ", partitions of " + (p.core.partition_rows ? std::to_string(p.core.partition_rows) : std::string("auto")) + " block rows" +
           (p.partition_set ? "" : std::string(" (execution-time model, ") + process_model().entry->gpu + ", " + process_model().entry->date + ")") + ", " +
           (p.core.row_threads ? std::to_string(p.core.row_threads) : std::string("auto")) + " GPU threads per block row, " + values(p);
  }
  static std::string values(const Params &p) { return describe_values(p.mode, p.core.values == Values::kDictionary, p.dict_entries); }
};

} // namespace

FormatInfo bellpack_info = {"bellpack", "bellpack", "BELLPACK", true, true, make_operator<BellpackTraits>, 0, 0};
#else
// complex scalars: the types are registered and refuse to be created (CheckSupported)
FormatInfo bellpack_info = {"bellpack", "bellpack", "BELLPACK", true, true, nullptr, 0, 0};
#endif

} // namespace gpumats

/*MC
   MATBELLPACK - "bellpack" - BELLPACK (blocked ELLPACK) matrix type, computed on the host

   Choi, Singh and Vuduc (2010): r x c dense blocks with one column index each, block rows sorted by
   length and stored ELLPACK-style in partitions of R block rows. The block size comes from the
   matrix's (`MatSetBlockSize()`) or from sampled fill estimation. The host form is the reference
   `MATBELLPACKCUDA` is checked against. Concrete types: `MATSEQBELLPACK` ("seqaijbellpack") and
   `MATMPIBELLPACK` ("mpiaijbellpack").

   Options Database Keys:
+  -mat_type bellpack - sets the matrix type to `MATBELLPACK` during a call to `MatSetFromOptions()`
.  -mat_bellpack_block_size <r,c> - dense block size, 1-8 each (default: the matrix block size, else by fill estimation)
.  -mat_bellpack_partition_rows <R> - block rows per partition, a power of two up to 1024 (0: the execution-time model)
.  -mat_bellpack_row_threads <T> - GPU: threads per block row, a power of two up to 32 (0: chosen per product)
.  -mat_bellpack_values <plain,dictionary,auto> - plain values or 1-/2-byte codes into a table of the distinct values
-  -mat_gpumats_* - the options of every type: see `MATGPUMATS`

   Level: beginner

.seealso: [](ch_matrices), `MATBELLPACKCUDA`, `MATGPUMATS`, `MATAIJ`, `MATBAIJ`
M*/

/*MC
   MATBELLPACKCUDA - "bellpackcuda" - BELLPACK matrix type for NVIDIA GPUs

   `MATBELLPACK`'s partitions on an NVIDIA GPU, a CUDA block of R threads each, T threads per block
   row (`-mat_bellpack_row_threads`) multiplying whole r x c blocks; R comes from the paper's
   execution-time model, calibrated per GPU model. Concrete types: `MATSEQBELLPACKCUDA`
   ("seqaijbellpackcuda") and `MATMPIBELLPACKCUDA` ("mpiaijbellpackcuda").

   Options Database Keys:
+  -mat_type bellpackcuda - sets the matrix type to `MATBELLPACKCUDA` during a call to `MatSetFromOptions()`
.  -mat_bellpack_* - as for `MATBELLPACK`
-  -mat_gpumats_* - see `MATGPUMATS`, the GPU-only ones included

   Level: beginner

.seealso: [](ch_matrices), `MATBELLPACK`, `MATGPUMATS`, `MATAUTOCUDA`, `MATAIJCUSPARSE`
M*/
