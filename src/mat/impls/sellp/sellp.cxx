// SELL-P in the PETSc glue: options, defaults and the bridge to the core and the CUDA layer.
#include "../common/operator.hpp"
#include "host.hpp"
#if GPUMATS_HAVE_CUDA
  #include "device.hpp"
#endif

namespace gpumats {
#if GPUMATS_SUPPORTED_SCALAR
namespace {

struct SellpTraits {
  using Params = sellp::Params;
  using Matrix = sellp::Matrix<Scalar>;

  static PetscErrorCode options(OptionItems PetscOptionsObject, MPI_Comm comm, Params &p, PetscBool *changed)
  {
    PetscInt  b = p.slice_height, t = p.threads_per_row, sigma = p.sigma;
    PetscBool set_b, set_t, set_s;

    PetscFunctionBegin;
    PetscCall(PetscOptionsInt("-mat_sellp_slice_height", "Rows per SELL-P slice b: a power of two, 1-1024", "MATSELLP", b, &b, &set_b));
    PetscCall(PetscOptionsInt("-mat_sellp_threads_per_row", "Threads per row t: a power of two, 1-32 (rows are padded to multiples of t)", "MATSELLP", t, &t,
                              &set_t));
    PetscCall(PetscOptionsInt("-mat_sellp_sigma", "SELL-C-sigma sorting window in rows: 1 (no sorting) or a multiple of the slice height", "MATSELLP", sigma,
                              &sigma, &set_s));
    PetscCheck(b >= 1 && b <= sellp::kMaxThreads && sellp::is_pow2(int(b)), comm, PETSC_ERR_ARG_OUTOFRANGE,
               "-mat_sellp_slice_height %" PetscInt_FMT " is invalid: use a power of two from 1 to 1024", b);
    PetscCheck(t >= 1 && t <= 32 && sellp::is_pow2(int(t)), comm, PETSC_ERR_ARG_OUTOFRANGE,
               "-mat_sellp_threads_per_row %" PetscInt_FMT " is invalid: use a power of two from 1 to 32", t);
    PetscCheck(b * t <= sellp::kMaxThreads, comm, PETSC_ERR_ARG_INCOMP,
               "-mat_sellp_slice_height %" PetscInt_FMT " times -mat_sellp_threads_per_row %" PetscInt_FMT " = %" PetscInt_FMT
               " threads exceeds the 1024 threads of a CUDA block; lower one of them",
               b, t, b * t);
    PetscCheck(sigma == 1 || (sigma > 1 && sigma % b == 0), comm, PETSC_ERR_ARG_OUTOFRANGE,
               "-mat_sellp_sigma %" PetscInt_FMT " is invalid: use 1 (no sorting) or a positive multiple of the slice height %" PetscInt_FMT, sigma, b);
    (void)set_b, (void)set_t, (void)set_s;
    Params q{int(b), int(t), int(sigma)};
    *changed = (q.slice_height != p.slice_height || q.threads_per_row != p.threads_per_row || q.sigma != p.sigma) ? PETSC_TRUE : PETSC_FALSE;
    p        = q;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  static Params    resolve(const Params &p, const CsrIn &, PetscInt) { return p; }
  static Matrix    from_csr(const CsrIn &A, const Params &p) { return sellp::from_csr(A, p); }
  static void      spmv(const Matrix &M, const Scalar *x, const Epilogue<Scalar> &ep) { sellp::spmv(M, x, ep); }
  static Footprint footprint(const Matrix &M) { return sellp::footprint(M); }
#if GPUMATS_HAVE_CUDA
  static std::unique_ptr<cuda::Operator<Scalar>> build_device(const CsrIn &A, const Params &p) { return sellp::build_on_device(A, p); }
#endif
  static std::string describe(const Params &p)
  {
    return "slice height " + std::to_string(p.slice_height) + ", " + std::to_string(p.threads_per_row) + " threads per row, " +
           (p.sigma > 1 ? "rows sorted by length in windows of " + std::to_string(p.sigma) : std::string("no row sorting"));
  }
};

} // namespace

FormatInfo sellp_info = {"sellp", "SELL-P", make_operator<SellpTraits>, 0, 0};
#else
// complex scalars: the types are registered and refuse to be created (CheckSupported)
FormatInfo sellp_info = {"sellp", "SELL-P", nullptr, 0, 0};
#endif

} // namespace gpumats
