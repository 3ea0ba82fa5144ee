// CMRS in the PETSc glue: options, defaults and the bridge to the core and the CUDA layer.
#include "../common/operator.hpp"
#include "host.hpp"
#if GPUMATS_HAVE_CUDA
  #include "device.hpp"
#endif

namespace gpumats {
#if GPUMATS_SUPPORTED_SCALAR
namespace {

struct CmrsTraits {
  using Params = cmrs::Params;
  using Matrix = cmrs::Matrix<Scalar>;

  static PetscErrorCode options(OptionItems PetscOptionsObject, MPI_Comm comm, Params &p, PetscBool *changed)
  {
    const char *kernels[] = {"basic", "modified"};
    PetscInt    h = p.height, k = p.pad_multiple > 1 ? 1 : 0;
    PetscBool   sort = p.sort_columns ? PETSC_TRUE : PETSC_FALSE, set_h, set_s, set_k;

    PetscFunctionBegin;
    PetscCall(PetscOptionsInt("-mat_cmrs_height", "Rows per CMRS strip, 1-16", "MATCMRS", h, &h, &set_h));
    PetscCall(PetscOptionsBool("-mat_cmrs_sort", "Order the entries of each strip by column", "MATCMRS", sort, &sort, &set_s));
    PetscCall(PetscOptionsEList("-mat_cmrs_kernel", "CMRS layout: basic, or modified (strips of 16 rows padded to multiples of 32 entries)", "MATCMRS", kernels, 2,
                                kernels[k], &k, &set_k));
    PetscCheck(!set_h || (h >= 1 && h <= cmrs::kMaxHeight), comm, PETSC_ERR_ARG_OUTOFRANGE,
               "-mat_cmrs_height %" PetscInt_FMT " is out of range: a strip holds 1 to 16 rows (the row within the strip is packed into 4 bits)", h);
    PetscCheck(!(set_k && k == 1 && set_h && h != cmrs::kMaxHeight), comm, PETSC_ERR_ARG_INCOMP,
               "-mat_cmrs_kernel modified works on strips of 16 rows; drop -mat_cmrs_height %" PetscInt_FMT " or use -mat_cmrs_kernel basic", h);
    Params q = p;
    if (set_h) q.height = int(h);
    if (set_s) q.sort_columns = sort;
    if (set_k) {
      q.pad_multiple = k == 1 ? 32 : 1;
      if (k == 1) q.height = cmrs::kMaxHeight;
    }
    *changed = (q.height != p.height || q.sort_columns != p.sort_columns || q.pad_multiple != p.pad_multiple) ? PETSC_TRUE : PETSC_FALSE;
    p        = q;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  static Params    resolve(const Params &p, const CsrIn &, PetscInt) { return p; }
  static Matrix    from_csr(const CsrIn &A, const Params &p) { return cmrs::from_csr(A, p); }
  static void      spmv(const Matrix &M, const Scalar *x, const Epilogue<Scalar> &ep) { cmrs::spmv(M, x, ep); }
  static Footprint footprint(const Matrix &M) { return cmrs::footprint(M); }
#if GPUMATS_HAVE_CUDA
  static std::unique_ptr<cuda::Operator<Scalar>> build_device(const CsrIn &A, const Params &p) { return cmrs::build_on_device(A, p); }
#endif
  static double predicted_bytes(const Params &p, const CsrIn &A)
  {
    const std::int64_t h = p.height, pad = p.pad_multiple;
    std::int64_t       stored = 0, strips = 0;
    for (std::int64_t r0 = 0; r0 < A.nrows; r0 += h, ++strips) {
      const std::int64_t n = A.row_begin(std::min(A.nrows, r0 + h)) - A.row_begin(r0);
      stored += (n + pad - 1) / pad * pad;
    }
    return double(stored) * (sizeof(Scalar) + 4) + 4.0 * double(strips + 1);
  }
  // a warp walks its strip in steps of 32 entries
  static double critical_steps(const Params &p, const CsrIn &A)
  {
    std::int64_t longest = 0;
    for (std::int64_t r0 = 0; r0 < A.nrows; r0 += p.height) longest = std::max(longest, A.row_begin(std::min(A.nrows, r0 + p.height)) - A.row_begin(r0));
    return double((longest + 31) / 32);
  }
  static std::string describe(const Params &p)
  {
    return "strip height " + std::to_string(p.height) + (p.sort_columns ? ", entries sorted by column" : ", entries in row order") +
           (p.pad_multiple > 1 ? ", modified layout (strips padded to " + std::to_string(p.pad_multiple) + " entries)" : ", basic layout (no padding)");
  }
};

} // namespace

FormatInfo cmrs_info = {"cmrs", "CMRS", make_operator<CmrsTraits>, 0, 0};
#else
// complex scalars: the types are registered and refuse to be created (CheckSupported)
FormatInfo cmrs_info = {"cmrs", "CMRS", nullptr, 0, 0};
#endif

} // namespace gpumats
