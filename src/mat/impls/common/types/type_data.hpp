// What the Seq and MPI types have in common: per-Mat data kept in A->spptr, the AIJ operations we
// override (saved so we can chain to them and restore them on conversion back to AIJ), the state
// key that tells whether the format copy is current, and the conversion functions composed on
// every object so that MatConvert finds them.
#pragma once

#include "../operator/format_operator.hpp"
#include "../residency/block_copy.hpp"
#include "../residency/residency.hpp"
#include "../residency/shadow.hpp"

#include <string>
#include <vector>

namespace gpumats {

using OpFn = void (*)(void);

// A null entry in a kind's list of its own operations keeps AIJ's (saved all the same).
enum OpIndex {
  kMult,
  kMultAdd,
  kMultTranspose,
  kMultTransposeAdd,
  kAssemblyEnd,
  kDestroy,
  kDuplicate,
  kView,
  kSetFromOptions,
  kProductSetFromOptions,
  kGetDiagonal,
  kAXPY,
  kScale,
  kDiagonalScale,
  kResidual,
  kBindToCPU,
  kCreateSubMatrices,
  kGetDiagonalBlock,
  kLUFactor, // in place (MatLUFactor), as the one below
  kILUFactor,
  kCreateSubMatrix,
  kNumOps
};
constexpr MatOperation kOverridden[kNumOps] = {MATOP_MULT,        MATOP_MULT_ADD,         MATOP_MULT_TRANSPOSE,        MATOP_MULT_TRANSPOSE_ADD,
                                               MATOP_ASSEMBLY_END, MATOP_DESTROY,          MATOP_DUPLICATE,             MATOP_VIEW,
                                               MATOP_SET_FROM_OPTIONS, MATOP_PRODUCTSETFROMOPTIONS, MATOP_GET_DIAGONAL, MATOP_AXPY,
                                               MATOP_SCALE,        MATOP_DIAGONAL_SCALE,   MATOP_RESIDUAL,
                                               MATOP_BIND_TO_CPU,  MATOP_CREATE_SUBMATRICES, MATOP_GET_DIAGONAL_BLOCK,
                                               MATOP_LUFACTOR,     MATOP_ILUFACTOR,        MATOP_CREATE_SUBMATRIX};

// Base of the Seq and MPI per-matrix data (A->spptr).
struct TypeData {
  const FormatInfo *info   = nullptr;
  bool              device = false;
  OpFn              saved[kNumOps]{};
  PetscErrorCode (*retrieve)(Mat) = nullptr; // AIJ's MatRetrieveValues, which changes values without a state change
  OpFn             creategraph = nullptr; // AIJ's MatCreateGraph (type_data.cxx: GraphAsAIJ), whose signature varies with PETSc's version
  Staging          stage;
  TransposeMode    transpose = TransposeMode::kAuto; // -mat_gpumats_transpose
  // A's state when its shadow's (stand-in's) cuSPARSE transpose was last known current (-1: none)
  PetscObjectState cusparse_transpose_state = -1;
  ValuesUpdate     values_update = ValuesUpdate::kAuto; // -mat_gpumats_values_update (kDefaultValuesUpdate at creation)
  BuildAt          build_at = kDefaultBuildAt;          // -mat_gpumats_build_at
  UpdateCounts     updates;                             // of the format copies, for MatGpuMatsGetUpdateCounts and -mat_view
  // which copies of A's values are current (host CSR, format copy, aijcusparse shadow, COO maps)
  Residency        where;
  // the Kind's ToAIJ (seq.cxx, mpi.cxx), set when the type is installed, so that the operations
  // common to both kinds can strip A without naming its kind
  PetscErrorCode (*to_aij)(Mat, bool destroying) = nullptr;
  // MatSetPreallocationCOO_C and MatSetValuesCOO_C of SeqAIJ/MPIAIJ (coo.cxx); ncoo: the triplets
  // of the last preallocation (-1: none through ours)
  PetscCount       ncoo = -1;
  OpFn             coo_saved[2]{};
  // MatBindToCPU (bind.cxx): our own record, since A->boundtocpu is not one (PETSc without devices
  // has none, and sets it on every new matrix; the MPI GPU types keep it set). While bound, the
  // products, MatResidual and MatGetDiagonal are AIJ's and `unbound_ops` keeps ours for the unbind.
  bool             bound = false;
  OpFn             unbound_ops[kNumOps]{};

  virtual ~TypeData() = default;
  // every format copy stale: the next use brings them up to date, by their values only where the
  // pattern allows (after changes PETSc does not record in a state, such as MatRetrieveValues)
  virtual void invalidate() { where.format_stale(); }
  // every format copy freed (GPU memory included): the next use converts anew (MatBindToCPU)
  virtual void release_copies() { invalidate(); }
  // A's blocks were made anew on every rank (an MPI matrix's COO preallocation; collective): the
  // format copies are rebuilt at the next use
  virtual PetscErrorCode blocks_replaced(Mat A)
  {
    invalidate();
    return PETSC_SUCCESS;
  }

  template <class Fn, class... Args>
  PetscErrorCode call(OpIndex i, Args... args) const
  {
    return reinterpret_cast<Fn>(saved[i])(args...);
  }
};

inline TypeData *Data(Mat A) { return static_cast<TypeData *>(A->spptr); }

// A function pointer kept on a PETSc object, in a container rather than as a composed function:
// PETSc's -checkfunctionlist, which its test harness sets, reports each composed function still
// set when its object is destroyed, and the objects we keep functions on (factor matrices, DMs)
// are destroyed without telling us. KeptFunction gives null where none was kept.
template <class Fn>
PetscErrorCode KeepFunction(PetscObject obj, const char *name, Fn fn)
{
  PetscContainer c;

  PetscFunctionBegin;
  PetscCall(PetscContainerCreate(PETSC_COMM_SELF, &c));
  PetscCall(PetscContainerSetPointer(c, reinterpret_cast<void *>(fn)));
  PetscCall(PetscObjectCompose(obj, name, (PetscObject)c));
  PetscCall(PetscContainerDestroy(&c));
  PetscFunctionReturn(PETSC_SUCCESS);
}

template <class Fn>
PetscErrorCode KeptFunction(PetscObject obj, const char *name, Fn *fn)
{
  PetscContainer c = nullptr;
  void          *p = nullptr;

  PetscFunctionBegin;
  PetscCall(PetscObjectQuery(obj, name, (PetscObject *)&c));
  if (c) PetscCall(PetscContainerGetPointer(c, &p));
  *fn = reinterpret_cast<Fn>(p);
  PetscFunctionReturn(PETSC_SUCCESS);
}

// The symbolic phases of a factor matrix, and a factor's one for its type routed through ours:
// PETSc's is kept on the factor B under `key` (KeepFunction) and `lu` or `chol` takes its slot.
// A factor type without a symbolic phase on B is left as it is.
using LUSymbolicFn   = PetscErrorCode (*)(Mat, Mat, IS, IS, const MatFactorInfo *);
using CholSymbolicFn = PetscErrorCode (*)(Mat, Mat, IS, const MatFactorInfo *);

inline PetscErrorCode RouteFactorSymbolic(Mat B, MatFactorType ftype, const char *key, LUSymbolicFn lu, CholSymbolicFn chol)
{
  MatOps ops = B->ops;

  PetscFunctionBegin;
  switch (ftype) {
  case MAT_FACTOR_LU:
  case MAT_FACTOR_ILU: {
    LUSymbolicFn &slot = ftype == MAT_FACTOR_LU ? ops->lufactorsymbolic : ops->ilufactorsymbolic;
    if (slot) {
      PetscCall(KeepFunction((PetscObject)B, key, slot));
      slot = lu;
    }
    break;
  }
  case MAT_FACTOR_CHOLESKY:
  case MAT_FACTOR_ICC: {
    CholSymbolicFn &slot = ftype == MAT_FACTOR_CHOLESKY ? ops->choleskyfactorsymbolic : ops->iccfactorsymbolic;
    if (slot) {
      PetscCall(KeepFunction((PetscObject)B, key, slot));
      slot = chol;
    }
    break;
  }
  default:
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "no factor type %d for %s", (int)ftype, ((PetscObject)B)->type_name);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

using ConvertFn = PetscErrorCode (*)(Mat, MatType, MatReuse, Mat *);

// Installs d on A: saves and overrides the operations, wraps MatRetrieveValues, gives A its
// concrete type name, composes the converters into this type (`into`) and out of it (`back`) and
// MatGpuMatsGetUpdateCounts' query, selects CUDA vectors for device types.
PetscErrorCode InstallType(Mat A, TypeData *d, const char *prefix, const OpFn ours[kNumOps], ConvertFn into, ConvertFn back);
// Undoes InstallType: A is a plain AIJ again and d is deleted. With `destroying` (from A's destroy)
// AIJ's own composed functions are not put back, only ours removed: PETSc's MatHeaderMerge (in-place
// MatTranspose, which GAMG's MIS-k coarsening calls, MatAXPY with a new pattern) takes A's function
// list away before it calls the destroy and overwrites A after it, so a function composed then
// makes a new list that nothing frees (PETSc 3.25: a 16-byte block per matrix at -malloc_dump);
// AIJ's destroy removes those functions anyway.
PetscErrorCode UninstallType(Mat A, const char *prefix, const char *base, bool destroying = false);
// Removes from M every function InstallType composes for a type of format f (M: a matrix of that
// type being uninstalled, or one that received copies of its functions)
PetscErrorCode ForgetTypeFunctions(Mat M, const char *prefix, const FormatInfo &f, bool device);
// SeqAIJ's MATSOLVERPETSC getter, wrapped so that a factor of ours carries none of our functions
// (factor.cxx)
PetscErrorCode RegisterPetscFactors();

// MatResidual(A, b, x, r) checks nothing itself (AIJ's fallback, MatMult, would): b and r must have
// A's rows, x its columns, and x differ from r.
PetscErrorCode CheckResidualArgs(Mat A, Vec b, Vec x, Vec r);

// A made a plain `base` (MATSEQAIJ/MATMPIAIJ) in place: our data goes (TypeData::to_aij), and
// an AIJ subclass of PETSc's (aijcusparse) is converted.
PetscErrorCode StripToAIJ(Mat A, MatType base);

// Generic MatConvert bodies, instantiated per (kind, format, device) in seq.cxx / mpi.cxx.
// Kind provides: prefix, base (MATSEQAIJ/MATMPIAIJ), FromAIJ(Mat, FormatInfo&, bool), ToAIJ(Mat).

// MatConvert into one of our types. PETSc hands over the type name it was asked for (a root name
// such as "cmrscuda" or a concrete one); the registry says which format and form that is.
template <class Kind>
PetscErrorCode ConvertInto(Mat A, MatType newtype, MatReuse reuse, Mat *B)
{
  bool              device = false;
  const FormatInfo *f      = find_type(newtype, &device);
  Mat               C      = A;

  PetscFunctionBegin;
  PetscCheck(f, PetscObjectComm((PetscObject)A), PETSC_ERR_PLIB, "petsc-gpumats converter called for %s, which is not one of its types", newtype);
  if (reuse == MAT_REUSE_MATRIX) {
    PetscCall(MatCopy(A, *B, SAME_NONZERO_PATTERN));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (reuse == MAT_INITIAL_MATRIX) PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &C));
  PetscErrorCode err = StripToAIJ(C, Kind::base);
  if (!err) err = Kind::FromAIJ(C, *f, device);
  if (err && C != A) PetscCall(MatDestroy(&C)); // a failed conversion leaves nothing behind
  PetscCall(err);
  *B = C;
  PetscFunctionReturn(PETSC_SUCCESS);
}

// MatConvert out of our types into AIJ (or an AIJ subclass of PETSc's, such as aijcusparse): our
// data goes, the SeqAIJ/MPIAIJ underneath stays, and PETSc's own converter takes it from there.
template <class Kind>
PetscErrorCode ConvertBack(Mat A, MatType newtype, MatReuse reuse, Mat *B)
{
  Mat       C = A;
  PetscBool plain;

  PetscFunctionBegin;
  if (reuse == MAT_REUSE_MATRIX) {
    PetscCall(MatCopy(A, *B, SAME_NONZERO_PATTERN));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (reuse == MAT_INITIAL_MATRIX) PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &C));
  PetscCall(Kind::ToAIJ(C));
  // C is Kind::base now: into any other type asked for (aijcusparse: a plain AIJ would then be
  // multiplied with the caller's CUDA vectors)
  const std::string want(newtype);
  plain = want == "aij" || want == Kind::base ? PETSC_TRUE : PETSC_FALSE;
  if (!plain) PetscCall(MatConvert(C, newtype, MAT_INPLACE_MATRIX, &C));
  *B = C;
  PetscFunctionReturn(PETSC_SUCCESS);
}

// build(A, true) inside A's MatAssemblyEnd (Seq types), except that a copy refused for want of GPU
// memory (PETSC_ERR_MEM) does not fail the assembly: the AIJ matrix is complete, whereas PETSc's
// MatAssemblyEnd, interrupted by an error, would leave it unassembled and unusable (and its count
// of nested assemblies off). The copy is left stale and built at the first use instead, which
// raises the same error there while the memory is still short (tests/petsc/test_oom.c). Every
// other error is raised as it was.
PetscErrorCode BuildInAssembly(Mat A, PetscErrorCode (*build)(Mat, bool));

// Whether the final assembly of A should build its format copy now (-mat_gpumats_build_at
// assembly): not when A's values are all zero, as far as a sample of them shows. DMCreateMatrix
// assembles zeros to fix the pattern and the values follow in an assembly of their own, so a copy
// built from the zeros is replaced before any use (ksp ex45 200^3: one of its two builds, an
// upload of the whole CSR each). A sample can only err one way: a matrix whose sampled values are
// zero but others are not is built at its first use instead, as with -mat_gpumats_build_at use.
// A matrix whose newest values are on the GPU (host_stale) is not sampled: it is built. Nor is a
// copy built when the one built at the last assembly was never read (Residency::built_unread): a
// matrix assembled over and over before its first use (MatFilter assembles once per row) would
// otherwise refill its copy at every assembly, O(nnz) each, where aijcusparse copies once at the
// first use; it is built at that use. A matrix used between assemblies (a Newton step's Jacobian,
// a time step's operator) still builds at each. MPI types decide together (the build is
// collective): all ranks' blocks must look zero, or one rank's copy be unread.
PetscErrorCode BuildAtThisAssembly(Mat A, const Mat *blocks, int nblocks, PetscBool *build);
// Whether a SeqAIJ matrix (an MPIAIJ: its diagonal block) was assembled with MAT_STRUCTURE_ONLY: a
// pattern without values, of which no format copy can be built (the first product then says so);
// conversions into our types keep it
PetscErrorCode StructureOnly(Mat A, bool *only);

// DMDA builds its interpolation matrices in the DM's matrix type only when that name starts with
// aij, seqaij or mpiaij (dainterp.c), and as plain host AIJ otherwise, which would put every level
// transfer of PCMG on the host. When A was created by a DM whose matrix type is one of our root
// names, the DM is given A's concrete name (seqaij.../mpiaij...: same format, same form), so its
// later matrices, its coarsened and refined copies and their interpolations are all of our type.
PetscErrorCode AdoptDM(Mat A);

// The cuSPARSE bridge (cusparse_bridge.cxx): registers MATSOLVERCUSPARSE for the GPU Seq types and the
// log events; the MatProductSetFromOptions of the GPU Seq types (null without a CUDA PETSc).
PetscErrorCode RegisterCusparseBridge();
OpFn           CusparseProductSetFromOptions();
// For ProductAsAIJ: one of our GPU Seq matrices times a dense one (PETSc looks the product up by
// type names that ours never match), taken to cuSPARSE as for aijcusparse; `taken` says whether
PetscErrorCode TakeDenseProduct(Mat C, bool *taken);
// Whether C's product may run on the GPU as far as the user's options go: -mat_gpumats_products
// (gpu or host) and, where both operands are sparse GPU matrices (`sparse`), the host-code options
// aijcusparse reads there (-matmatmult_backend_cpu, -mat_product_algorithm_backend_cpu, ...)
PetscErrorCode GpuProductsWanted(Mat C, bool sparse, bool *wanted);

// The COO operations (coo.cxx), installed by FromAIJ, removed by ToAIJ (which first brings the
// host values up to date): device values for the GPU types with a CUDA PETSc; for every MPI type,
// the preallocation keeps its blocks plain SeqAIJ.
PetscErrorCode InstallCOO(Mat A, bool mpi);
PetscErrorCode UninstallCOO(Mat A, bool mpi, bool destroying = false); // (destroying: see UninstallType)
// Brings the host CSR values of a Seq GPU matrix up to date where its newest values are on the GPU
// only (Residency::make_host_current); otherwise nothing.
PetscErrorCode SyncHostValues(Mat A);
#if PetscDefined(HAVE_CUDA)
// Whether A is one of our GPU Seq types, whose data is a TypeData
inline bool OurDeviceSeq(Mat A) { return OurDeviceOf(A, "seq"); }
// The aijcusparse shadow of a GPU Seq matrix, current with its values (Residency::shadow_for)
PetscErrorCode ShadowOf(Mat A, Mat *S);
// Gives the Seq matrix C (type set, not yet preallocated) the CSR pattern of the aijcusparse
// matrix `inner` (its host arrays, shared: inner is composed on C and lives as long as C) and
// assembles it; C's values are left unset for the caller (cusparse_bridge.cxx)
PetscErrorCode SetPattern(Mat C, Mat inner);
// Whether two SeqAIJ matrices (of any subtype) have the same CSR pattern, row offsets and columns
bool SamePattern(Mat X, Mat Y);
// An MPI GPU matrix as mpiaijcusparse's product back-end sees it (mpi_products.cxx): an
// mpiaijcusparse matrix whose diagonal and off-diagonal blocks are aijcusparse matrices over the
// MPI matrix's own block CSR (SharedShadow) with its column map. Made anew when the matrix's
// nonzero pattern moves (collectively, as every rank sees the same nonzero state), and told its
// host values are newer when only the values move.
class MpiStandIn {
public:
  MpiStandIn() = default;
  MpiStandIn(const MpiStandIn &) = delete;
  MpiStandIn &operator=(const MpiStandIn &) = delete;
  ~MpiStandIn() { release(); }
  PetscErrorCode of(Mat A, Mat *S);
  void           release();

private:
  Mat              standin_ = nullptr;
  PetscObjectState state_ = -1, nz_ = -1;
};
// The stand-in of an MPI GPU matrix of ours (mpi.cxx keeps it with the matrix)
PetscErrorCode MpiStandInOf(Mat A, Mat *S);
// Whether A is one of our GPU MPI types
inline bool OurDeviceMpi(Mat A) { return OurDeviceOf(A, "mpi"); }
#endif
// The MatProductSetFromOptions of the GPU MPI types (mpi_products.cxx): AB, AtB and PtAP on the GPU
// through PETSc's mpiaijcusparse back-end, MPIAIJ's host products otherwise (null without a CUDA
// PETSc recent enough)
OpFn           MpiProductSetFromOptions();
PetscErrorCode RegisterMpiProductEvents();
// Brings an MPI matrix's format copies up to date now, and its transposed copies where its
// transpose products take the explicit path (-mat_gpumats_transpose explicit): for the transfer of a Galerkin product, which the solve restricts with, so that
// the copies are built in the setup rather than at the first restriction inside the solve (mpi.cxx)
PetscErrorCode MpiPrepareTranspose(Mat A);
// Whether the MPI GPU types have their stand-in (mpi_products.cxx: a CUDA PETSc recent enough)
bool MpiStandInAvailable();
// The way A's products with A^T go (-mat_gpumats_transpose); given
// a product's vectors, that product's way (cuSPARSE's only with CUDA vectors, which aijcusparse
// multiplies; the other ways take any vector)
PetscErrorCode TransposePathOf(Mat A, Vec x, Vec in, Vec out, TransposePath *path);
#if PetscDefined(HAVE_CUDA)
// out = S^T x (+ in) by aijcusparse with MAT_FORM_EXPLICIT_TRANSPOSE: S is A's shadow (Seq) or
// stand-in (MPI), whose cuSPARSE transpose is made anew where A changed since the last such product
PetscErrorCode CusparseTranspose(Mat A, Mat S, Vec x, Vec in, Vec out);
#endif
// Brings the format copy of one of our Seq matrices up to date now (seq.cxx): for a use the glue
// foresees, such as an operand of a product on the GPU, whose shadow then serves the build.
PetscErrorCode SeqEnsureCurrent(Mat A);

// MatBindToCPU of every type, Seq and MPI (bind.cxx): a bound matrix multiplies, forms residuals
// and gives its diagonal in AIJ's host code (the saved operations) and holds no format copy; its
// values come to the host first where the newest are on the GPU only. Unbinding puts our
// operations back, and the next use brings the copy up to date.
PetscErrorCode BindToCPU(Mat A, PetscBool flg);
inline bool    Bound(Mat A) { return Data(A) && Data(A)->bound; }
// At each MatAssemblyEnd: the binding's operations again where a whole operation table saved
// before MatBindToCPU was put back since (PETSc's hash assembly, from a MatSetUp without
// preallocation, restores the table it saved then when its assembly ends)
PetscErrorCode KeepBinding(Mat A);
// -mat_view ::ascii_info of a bound matrix: the line saying so (*bound true), in place of the
// format's lines, which would need a copy; nothing where A is not bound
PetscErrorCode ViewBound(Mat A, PetscViewer viewer, PetscBool *bound);
// The MatProductSetFromOptions of the GPU Seq types: SeqAIJ's host products where an operand is
// bound to the CPU, the cuSPARSE bridge otherwise (null without a CUDA PETSc)
OpFn BindAwareProductSetFromOptions();

// MatAXPY of the Seq and MPI types (axpy.cxx): SUBSET_NONZERO_PATTERN by a merge of sorted rows,
// everything else AIJ's
PetscErrorCode SeqAXPY(Mat Y, PetscScalar a, Mat X, MatStructure str);
PetscErrorCode MpiAXPY(Mat Y, PetscScalar a, Mat X, MatStructure str);
// MatAXPYGetPreallocation_C of every type: B of Y's type preallocated for the union of X's and Y's
// patterns, row by row (PETSc's MatAXPY of two different types with a new pattern)
PetscErrorCode AXPYPreallocation(Mat Y, Mat X, Mat *B);
// Values that live on the GPU (device_values.cxx): MatScale and MatDiagonalScale of the GPU Seq types
// (null without a CUDA PETSc), which change the shadow's values where A's newest values are its
// only, and AIJ's otherwise; DeviceAXPY does MatAXPY (SUBSET or SAME) there when Y's values are on
// the GPU only and X's CSR is on the GPU too, *done false where it did nothing (X's nonzeros not
// all among Y's, X on the host, Y's values on the host).
OpFn           DeviceScaleOp();
OpFn           DeviceDiagonalScaleOp();
PetscErrorCode DeviceAXPY(Mat Y, PetscScalar a, Mat X, MatStructure str, bool *done);
// Reads the format's options when the user calls MatSetFromOptions, chaining to AIJ's first.
PetscErrorCode SetFromOptionsCommon(Mat A, OptionItems PetscOptionsObject, FormatOperator &proto, PetscBool *changed);

} // namespace gpumats
