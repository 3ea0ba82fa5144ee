// BELLPACK in the PETSc glue: options, defaults and the bridge to the core and the CUDA layer.
#include "../common/operator.hpp"
#include "host.hpp"
#include "tuning.hpp"

#include <limits>
#if GPUMATS_HAVE_CUDA
  #include "device.hpp"
#endif

namespace gpumats {
#if GPUMATS_SUPPORTED_SCALAR
namespace {

struct BellpackTraits {
  // partition_rows 0: chosen per matrix by the execution-time model (tuning.hpp)
  struct Params {
    bellpack::Params core{1, 1, 0};
    bool             block_set = false; // false: take the block size of the Mat (MatSetBlockSize, DMDA dof)
    bool             partition_set = false; // R given by the user
  };
  using Matrix = bellpack::Matrix<Scalar>;

  static PetscErrorCode options(OptionItems PetscOptionsObject, MPI_Comm comm, Params &p, PetscBool *changed)
  {
    PetscInt  rc[2] = {p.core.r, p.core.c}, n = 2, R = p.core.partition_rows, T = p.core.row_threads;
    PetscBool set_rc, set_R, set_T;

    PetscFunctionBegin;
    PetscCall(PetscOptionsIntArray("-mat_bellpack_block_size", "Dense block size r,c (1-8 each; one value for square blocks); default: the matrix block size",
                                   "MATBELLPACK", rc, &n, &set_rc));
    PetscCall(PetscOptionsInt("-mat_bellpack_partition_rows", "Block rows per ELLPACK partition R (threads per CUDA block): a power of two, 1-1024 (0: chosen per matrix by the execution-time model)",
                              "MATBELLPACK", R, &R, &set_R));
    PetscCall(PetscOptionsInt("-mat_bellpack_row_threads",
                              "GPU kernel: threads per block row, a power of two 1-32 (0: chosen at each product from the number of block rows and the longest)",
                              "MATBELLPACK", T, &T, &set_T));
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
    *changed = (q.core.r != p.core.r || q.core.c != p.core.c || q.core.partition_rows != p.core.partition_rows || q.core.row_threads != p.core.row_threads ||
                q.block_set != p.block_set)
                 ? PETSC_TRUE
                 : PETSC_FALSE;
    p = q;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  // Block size: the user's, else the matrix's (MatSetBlockSize, DMDA dof), else the one whose
  // estimated bytes per nonzero, fill * (value + index / (r*c)), are fewest, with the fill
  // estimated on about 1% of the block rows (the paper's fill estimation by sampling).
  // The fill estimates sample about 1% of the block rows on the host (36 block sizes of a 200^3
  // 7-point stencil: about 1 ms), so they stay there for GPU builds too.
  static Params resolve(const Params &p, const BlockSource &src, PetscInt bs)
  {
    Params       q = p;
    const CsrIn &A = src.host;
    if (!q.block_set) q.core = block_size(q.core, A, bs);
    if (!q.core.partition_rows) {
      // the paper's model: N blocks per thread from the sampled fill ratio, L = ceil(block rows / R)
      const std::int64_t r = q.core.r, c = q.core.c, block_rows = (A.nrows + r - 1) / r;
      const double       fill = bellpack::block_fill(A, int(r), int(c), std::max<std::int64_t>(1, block_rows / 100));
      q.core.partition_rows   = bellpack::choose_partition_rows(int(r), int(c), block_rows, fill * double(A.nnz()) / double(r * c));
    }
    return q;
  }
  static bellpack::Params block_size(bellpack::Params q, const CsrIn &A, PetscInt bs)
  {
    if (bs > 1 && bs <= bellpack::kMaxBlock) {
      q.r = q.c = int(bs);
      return q;
    }
    double best = std::numeric_limits<double>::max();
    for (int r : {1, 2, 3, 4, 6, 8})
      for (int c : {1, 2, 3, 4, 6, 8}) {
        const std::int64_t block_rows = (A.nrows + r - 1) / r;
        const double       fill       = bellpack::block_fill(A, r, c, std::max<std::int64_t>(1, block_rows / 100));
        const double       bytes      = fill * (sizeof(Scalar) + 4.0 / double(r * c));
        if (bytes < best - 1e-12) best = bytes, q.r = r, q.c = c;
      }
    return q;
  }
  static Matrix    from_csr(const CsrIn &A, const Params &p) { return bellpack::from_csr(A, p.core); }
  static void      spmv(const Matrix &M, const Scalar *x, const Epilogue<Scalar> &ep) { bellpack::spmv(M, x, ep); }
  static void      spmv_transpose(const Matrix &M, const Scalar *x, const Epilogue<Scalar> &ep) { bellpack::spmv_transpose(M, x, ep); }
  static Footprint footprint(const Matrix &M) { return bellpack::footprint(M); }
#if GPUMATS_HAVE_CUDA
  static std::unique_ptr<cuda::Operator<Scalar>> build_device(const BlockSource &A, const Params &p) { return bellpack::build_on_device(*A.device, p.core, A.log); }
  static std::unique_ptr<cuda::Operator<Scalar>> upload(const Matrix &M) { return bellpack::to_device(M); }
#endif
  // the fill ratio is estimated on about 1% of the block rows, as in the paper's fill estimation
  static double predicted_bytes(const Params &p, const BlockSource &src)
  {
    const CsrIn       &A = src.host;
    const std::int64_t r = p.core.r, c = p.core.c, block_rows = (A.nrows + r - 1) / r;
    const double       fill   = bellpack::block_fill(A, int(r), int(c), std::max<std::int64_t>(1, block_rows / 100));
    const double       stored = fill * double(A.nnz());
    return stored * sizeof(Scalar) + 4.0 * stored / double(r * c) + 4.0 * double(block_rows);
  }
  // a thread walks the blocks of its block row; a row of L entries spans at least L/c blocks
  static double critical_steps(const Params &p, const BlockSource &A) { return double((A.longest_row() + p.core.c - 1) / p.core.c); }
  static std::string describe(const Params &p)
  {
    return "block size " + std::to_string(p.core.r) + "x" + std::to_string(p.core.c) + (p.block_set ? "" : " (from the matrix block size or fill estimation)") +
           ", partitions of " + (p.core.partition_rows ? std::to_string(p.core.partition_rows) : std::string("auto")) + " block rows" +
           (p.partition_set ? "" : std::string(" (execution-time model, ") + bellpack::kModelSource + ")") + ", " +
           (p.core.row_threads ? std::to_string(p.core.row_threads) : std::string("auto")) + " GPU threads per block row";
  }
};

} // namespace

FormatInfo bellpack_info = {"bellpack", "bellpack", "BELLPACK", true, true, make_operator<BellpackTraits>, 0, 0};
#else
// complex scalars: the types are registered and refuse to be created (CheckSupported)
FormatInfo bellpack_info = {"bellpack", "bellpack", "BELLPACK", true, true, nullptr, 0, 0};
#endif

} // namespace gpumats
