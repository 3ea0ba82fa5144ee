// The cuSPARSE bridge: the parts of a solver stack that PETSc already runs on the GPU for
// aijcusparse and that are not the point of our formats, namely sparse matrix-matrix products
// (GAMG's prolongator smoothing and Galerkin products PtAP, AtB, ...) and triangular
// factorizations (ILU/ICC/LU/Cholesky with MATSOLVERCUSPARSE), run through PETSc's own aijcusparse
// code on a *shadow*: an aijcusparse matrix holding the same CSR as one of our *cuda Seq matrices.
//
// The shadow is made at the first product or factorization that needs it and kept with the
// matrix: when the matrix changes only its values are copied again (one memcpy on the host, one
// upload by aijcusparse), when its nonzero pattern changes it is made anew. What it costs is one
// more host CSR and the device CSR that aijcusparse itself would hold; -mat_gpumats_products host
// (or a CPU-only PETSc) keeps PETSc's host products instead.
//
// Products come back in our type: the result's pattern is written into its SeqAIJ once, at the
// symbolic phase; the product's aijcusparse result becomes the result's shadow and holds its
// values, which come down into the host CSR only when something reads them there (host_stale, as
// after MatSetValuesCOO with device values; scaling and additions change them on the GPU,
// device_values.cxx); the format copy is built from that CSR on the GPU at its first use. Format copies
// are built where they will be multiplied: a result at its first use, the operands of a Galerkin
// product (PtAP, RARt: a multigrid's level operator and transfer) when the product is formed,
// inside the setup.
#include "seq_mpi.hpp"
#include "../runtime/events.hpp"

#include <algorithm>
#include <cstring>

#if PetscDefined(HAVE_CUDA)
  #include <../src/mat/impls/aij/seq/aij.h> // Mat_SeqAIJ: a product's pattern is written into C's arrays directly
PETSC_EXTERN PetscErrorCode MatGetFactor_seqaijcusparse_cusparse(Mat, MatFactorType, Mat *);
#endif

namespace gpumats {

#if PetscDefined(HAVE_CUDA)

namespace {

PetscLogEvent product_event = 0, pattern_event = 0;

} // namespace

PetscErrorCode GpuProductsWanted(Mat C, bool sparse, bool *wanted)
{
  Mat_Product *p         = C->product;
  char         where[16] = "gpu";
  const char  *title = nullptr, *option = nullptr;
  PetscBool    usecpu = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCall(PetscOptionsGetString(((PetscObject)C)->options, ((PetscObject)C)->prefix, "-mat_gpumats_products", where, sizeof(where), nullptr));
  PetscCheck(!std::strcmp(where, "gpu") || !std::strcmp(where, "host"), PetscObjectComm((PetscObject)C), PETSC_ERR_ARG_OUTOFRANGE,
             "-mat_gpumats_products %s: use gpu (cuSPARSE on the GPU, the default) or host (PETSc's AIJ products)", where);
  *wanted = !std::strcmp(where, "gpu");
  // the options block and the backend option of the call that made the product
  static const struct {
    MatProductType type;
    const char    *title, *option;
  } kCalls[] = {
    {MATPRODUCT_AB,   "MatMatMult",          "-matmatmult_backend_cpu"         },
    {MATPRODUCT_AtB,  "MatTransposeMatMult", "-mattransposematmult_backend_cpu"},
    {MATPRODUCT_PtAP, "MatPtAP",             "-matptap_backend_cpu"            },
    {MATPRODUCT_RARt, "MatRARt",             "-matrart_backend_cpu"            },
    {MATPRODUCT_ABC,  "MatMatMatMult",       "-matmatmatmult_backend_cpu"      },
  };
  for (const auto &c : kCalls)
    if (c.type == p->type) title = c.title, option = c.option;
  if (!sparse || !title) PetscFunctionReturn(PETSC_SUCCESS);
  // (as aijcusparse and PETSc's MPIAIJ device back-end: the product's own name for a product
  // made by MatMatMult and the like, MatProduct's otherwise)
  const std::string section = p->api_user ? std::string(title) : std::string("MatProduct_") + MatProductTypes[p->type];
  PetscOptionsBegin(PetscObjectComm((PetscObject)C), ((PetscObject)C)->prefix, section.c_str(), "Mat");
  PetscCall(PetscOptionsBool(p->api_user ? option : "-mat_product_algorithm_backend_cpu", "Use CPU code", title, usecpu, &usecpu, nullptr));
  PetscOptionsEnd();
  if (usecpu) *wanted = false;
  PetscFunctionReturn(PETSC_SUCCESS);
}

namespace {

// ---- products ---------------------------------------------------------------------------------

// What a product C = op(A, B[, D]) of our matrices keeps between its symbolic and numeric phases:
// the same product of the operands' shadows, done by aijcusparse on the GPU.
struct ProductData {
  Mat inner = nullptr;
  Mat shadow[3]{}; // the operands' shadows, referenced, so a pattern change cannot free them under us
};

// Mat_Product::destroy receives the data pointer itself before PETSc 3.23 and its address since
// (PetscCtxDestroyFn, declared with a void * argument that holds a void **)
#if PETSC_VERSION_GE(3, 23, 0)
inline ProductData *&DataOf(void *arg) { return *static_cast<ProductData **>(arg); }
#else
inline ProductData *DataOf(void *arg) { return static_cast<ProductData *>(arg); }
#endif

PetscErrorCode FreeProductData(ProductData *pd)
{
  PetscFunctionBegin;
  if (!pd) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatDestroy(&pd->inner));
  for (Mat &s : pd->shadow) PetscCall(MatDestroy(&s));
  delete pd;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode ProductDataDestroy(void *arg)
{
  PetscFunctionBegin;
  PetscCall(FreeProductData(DataOf(arg)));
#if PETSC_VERSION_GE(3, 23, 0)
  DataOf(arg) = nullptr;
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

// The operands of C's product: A, B and (ABC only) C
int Operands(Mat C, Mat op[3])
{
  Mat_Product *p = C->product;
  op[0] = p->A, op[1] = p->B, op[2] = p->type == MATPRODUCT_ABC ? p->C : nullptr;
  return op[2] ? 3 : 2;
}

// The operand's matrix to hand to aijcusparse: its shadow when it is ours, else itself. With
// `build`, X's format copy is made current too, from the shadow's CSR on the GPU: for the operands
// of a Galerkin product, which the solve multiplies (GAMG's level operators and prolongators), so
// that their copies are built here, in the setup, rather than at their first product inside the
// solve. The operands of other products are mostly intermediates that are never multiplied by a
// vector (GAMG's graph and tentative prolongators): building their copies was a tenth of GAMG's
// setup on ksp ex56 with autocuda, for copies never used. A factorization's matrix
// is not built either: GAMG's coarsest operator is factored, never multiplied, and bjacobi factors
// it at the first PCApply, inside KSPSolve; a matrix the solve does multiply (GMRES with ILU) has
// its copy from its assembly, or builds it at its first product.
PetscErrorCode Stand_in(Mat X, Mat *S, bool build)
{
  PetscFunctionBegin;
  if (OurDeviceSeq(X)) {
    PetscCall(ShadowOf(X, S));
    if (build) PetscCall(SeqEnsureCurrent(X));
  } else *S = X;
  PetscFunctionReturn(PETSC_SUCCESS);
}

// whether the operands of C's product are a level operator and a transfer (see Stand_in)
bool Galerkin(Mat C) { return C->product->type == MATPRODUCT_PtAP || C->product->type == MATPRODUCT_RARt; }

// The host route: SeqAIJ's MatProductSetFromOptions, saved on whichever operand is ours
PetscErrorCode HostProduct(Mat C)
{
  Mat op[3];

  PetscFunctionBegin;
  const int k = Operands(C, op);
  for (int i = 0; i < k; ++i)
    if (OurDeviceSeq(op[i])) {
      PetscCall(Data(op[i])->call<PetscErrorCode (*)(Mat)>(kProductSetFromOptions, C));
      break;
    }
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace

// Whether SeqAIJ allocates a, j and i in one block (older PETSc; 3.25 does not): then they cannot be
// freed or lent one by one
template <class T>
auto SingleMalloc(const T *c, int) -> decltype(bool(c->singlemalloc))
{
  return c->singlemalloc;
}
template <class T>
bool SingleMalloc(const T *, long)
{
  return false;
}

// Gives the Seq matrix C, not yet preallocated, the CSR pattern of the product's aijcusparse
// result `inner`, and assembles it. The values are left unset: the caller marks them as held on the
// GPU (host_stale), so they are downloaded before any host read.
//
// C's row offsets and column indices are inner's host arrays themselves: C never frees them, and
// inner is composed on C, so it lives as long as C does. A copy into arrays of C's own would cost
// what the copy of the pattern from the GPU into inner's had cost once more, for memory touched
// the first time (in GAMG's largest products, a share of the setup).
// C's value array is its own, allocated and left untouched. A PETSc whose SeqAIJ allocates its
// arrays in one block copies the pattern instead, in one copy rather than through
// MatSeqAIJSetPreallocationCSR, which inserts row by row (seconds on GAMG's largest products).
bool SamePattern(Mat X, Mat Y)
{
  auto          *x = static_cast<Mat_SeqAIJ *>(X->data), *y = static_cast<Mat_SeqAIJ *>(Y->data);
  const PetscInt m = X->rmap->n;
  if (m != Y->rmap->n || X->cmap->n != Y->cmap->n || !x->i || !y->i || x->i[m] != y->i[m]) return false;
  return std::equal(x->i, x->i + m + 1, y->i) && std::equal(x->j, x->j + x->i[m], y->j);
}

PetscErrorCode SetPattern(Mat C, Mat inner)
{
  const PetscInt m  = C->rmap->n;
  auto          *in = static_cast<Mat_SeqAIJ *>(inner->data);
  PetscInt      *ia = in->i, *ja = in->j, *nnz;

  PetscFunctionBegin;
  PetscCheck(inner->rmap->n == m && ia && (m == 0 || ia[0] == 0), PETSC_COMM_SELF, PETSC_ERR_PLIB, "no CSR row structure in the cuSPARSE product");
  PetscCall(PetscMalloc1(m + 1, &nnz));
  for (PetscInt r = 0; r < m; ++r) nnz[r] = ia[r + 1] - ia[r];
  PetscCall(MatSeqAIJSetPreallocation(C, 0, nnz));
  PetscCall(PetscFree(nnz));
  auto *c = static_cast<Mat_SeqAIJ *>(C->data);
  PetscCheck(c->i[m] == ia[m], PETSC_COMM_SELF, PETSC_ERR_PLIB, "preallocation of a product's pattern: %" PetscInt_FMT " slots for %" PetscInt_FMT " entries", c->i[m], ia[m]);
  if (SingleMalloc(c, 0)) PetscCall(PetscArraycpy(c->j, ja, ia[m]));
  else {
    // C's own pattern arrays (allocated, not yet touched) go back, its value array stays
    const PetscBool free_a = c->free_a;
    PetscScalar    *va     = c->a;
    c->free_a              = PETSC_FALSE;
    PetscCall(MatSeqXAIJFreeAIJ(C, &c->a, &c->j, &c->i));
    c->a       = va;
    c->free_a  = free_a;
    c->i       = ia;
    c->j       = ja;
    c->free_ij = PETSC_FALSE;
    PetscCall(PetscObjectCompose((PetscObject)C, "GpuMatsPatternOwner", (PetscObject)inner));
  }
  for (PetscInt r = 0; r < m; ++r) c->ilen[r] = c->imax[r];
  c->nz = ia[m];
  PetscCall(MatAssemblyBegin(C, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(C, MAT_FINAL_ASSEMBLY));
  PetscCall(MatSetOption(C, MAT_NEW_NONZERO_LOCATION_ERR, PETSC_TRUE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

namespace {

// pd's references to the shadows among the operands' stand-ins S (those that are not the operand)
PetscErrorCode HoldShadows(ProductData *pd, const Mat op[], const Mat S[], int k)
{
  PetscFunctionBegin;
  for (int i = 0; i < k; ++i) {
    PetscCall(MatDestroy(&pd->shadow[i]));
    if (S[i] == op[i]) continue;
    PetscCall(PetscObjectReference((PetscObject)S[i]));
    pd->shadow[i] = S[i];
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

// The same product as C's of the stand-ins S, up to its symbolic phase
PetscErrorCode CreateInner(Mat C, ProductData *pd, Mat S[3])
{
  PetscFunctionBegin;
  PetscCall(MatProductCreate(S[0], S[1], S[2], &pd->inner));
  PetscCall(MatProductSetType(pd->inner, C->product->type));
  PetscCall(MatProductSetAlgorithm(pd->inner, MATPRODUCTALGORITHMDEFAULT));
  PetscCall(MatProductSetFill(pd->inner, C->product->fill));
  PetscCall(MatProductSetFromOptions(pd->inner));
  PetscFunctionReturn(PETSC_SUCCESS);
}

// The operands C's product has now, as aijcusparse takes them. Where one is not the matrix the
// symbolic phase multiplied (MatProductReplaceMats: MatMatMult(B, A, MAT_REUSE_MATRIX, &C) after
// MatMatMult(A, B, ...) with operands of one pattern, or an operand whose shadow was made anew),
// the inner product is formed again over them and must come out with C's pattern.
PetscErrorCode RefreshOperands(Mat C, ProductData *pd)
{
  Mat          op[3], S[3]{};
  Mat_Product *ip      = pd->inner->product;
  const Mat    was[3]  = {ip->A, ip->B, ip->C};
  bool         changed = false;

  PetscFunctionBegin;
  const int k = Operands(C, op);
  for (int i = 0; i < k; ++i) {
    PetscCall(Stand_in(op[i], &S[i], Galerkin(C)));
    changed = changed || S[i] != was[i];
  }
  if (!changed) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(HoldShadows(pd, op, S, k));
  Mat old = pd->inner; // (C's shadow, and the owner of C's pattern arrays: both keep it alive)
  pd->inner = nullptr;
  PetscCall(CreateInner(C, pd, S));
  PetscCall(MatProductSymbolic(pd->inner));
  PetscCall(MatDestroy(&old));
  PetscCheck(SamePattern(pd->inner, C), PETSC_COMM_SELF, PETSC_ERR_ARG_INCOMP,
             "the nonzero pattern of an operand changed since the symbolic product: create the product again (MAT_INITIAL_MATRIX)");
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode ProductNumeric(Mat C)
{
  auto *pd = static_cast<ProductData *>(C->product->data);

  PetscFunctionBegin;
  PetscCall(RefreshOperands(C, pd));
  PetscCall(PetscLogEventBegin(product_event, C, 0, 0, 0));
  PetscCall(MatProductNumeric(pd->inner));
  PetscCall(PetscLogEventEnd(product_event, C, 0, 0, 0));
  // The values stay on the GPU, in inner, which is C's shadow: C's host values are brought up to
  // date when something reads them (host_stale, as after MatSetValuesCOO with device values), its
  // scaling and additions happen there (device_values.cxx), and its format copy is built from inner's
  // CSR at its first use. GAMG scales and adds to its A P_t before PtAP reads it, and never reads
  // the values of most products on the host: ksp ex56 -ne 59 took each product's values down
  // (520 MB for A P_t) and, after host scaling, up again.
  // MatProductNumeric raises C's state once when this returns (matproduct.c): the shadow is
  // current for that state (otherwise it would be refilled and uploaded at C's first use).
  PetscCall(Data(C)->where.adopt_product_values(C, pd->inner, true));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode ProductSymbolic(Mat C)
{
  Mat_Product    *p  = C->product;
  auto           *pd = new ProductData;
  Mat             op[3], S[3]{};

  PetscFunctionBegin;
  const int k = Operands(C, op);
  for (int i = 0; i < k; ++i) PetscCall(Stand_in(op[i], &S[i], Galerkin(C)));
  PetscCall(HoldShadows(pd, op, S, k));
  PetscCall(PetscLogEventBegin(product_event, C, 0, 0, 0));
  PetscCall(CreateInner(C, pd, S));
  // cuSPARSE's SpGEMM keeps its whole work space on the GPU and refuses the largest products
  // (CUSPARSE_STATUS_INSUFFICIENT_RESOURCES, as aijcusparse's GAMG does on ksp ex56 -ne 79): such
  // a product is computed by PETSc's host code instead, and the solve goes on
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, nullptr));
  PetscErrorCode err = MatProductSymbolic(pd->inner);
  PetscCall(PetscPopErrorHandler());
  PetscCall(PetscLogEventEnd(product_event, C, 0, 0, 0));
  if (err) {
    PetscCall(PetscInfo(C, "cuSPARSE could not form the %s product (PETSc error %d): PETSc's host product instead\n", MatProductTypes[p->type], (int)err));
    // The failed product is not destroyed: PETSc's aijcusparse cannot free a product whose SpGEMM
    // failed part way (thrust aborts the process: "CUDA free failed: cudaErrorInvalidValue", ksp
    // ex56 -ne 79). Its GPU memory stays taken until the process ends; the solve goes on.
    pd->inner = nullptr;
    PetscCall(FreeProductData(pd));
    PetscCall(HostProduct(C));
    PetscCheck(C->ops->productsymbolic && C->ops->productsymbolic != ProductSymbolic, PetscObjectComm((PetscObject)C), PETSC_ERR_SUP, "no host product %s to fall back to", MatProductTypes[p->type]);
    PetscCall(C->ops->productsymbolic(C));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  // C is of our type (the first of our operands') from here on, with inner's pattern and zeros
  PetscCall(MatSetSizes(C, pd->inner->rmap->n, pd->inner->cmap->n, pd->inner->rmap->N, pd->inner->cmap->N));
  PetscCall(MatSetBlockSizesFromMats(C, pd->inner, pd->inner));
  PetscCall(MatSetType(C, ((PetscObject)op[OurDeviceSeq(op[0]) ? 0 : OurDeviceSeq(op[1]) ? 1 : 2])->type_name));
  Data(C)->build_at = BuildAt::kUse; // not from the zeros below: built at the first use, from inner on the GPU
  PetscCall(PetscLogEventBegin(pattern_event, C, 0, 0, 0));
  PetscCall(SetPattern(C, pd->inner));
  PetscCall(PetscLogEventEnd(pattern_event, C, 0, 0, 0));
  // from here inner holds C's values (whatever the symbolic phase left, as for aijcusparse's own
  // products); C's host array is never read before a download (host_stale)
  PetscCall(Data(C)->where.adopt_product_values(C, pd->inner, false));
  p->data                  = pd;
  p->destroy               = ProductDataDestroy;
  C->ops->productnumeric   = ProductNumeric;
  PetscFunctionReturn(PETSC_SUCCESS);
}

// ---- products with a dense operand ------------------------------------------------------------

// One of ours times a dense matrix (AB, AtB, ABt, PtAP, RARt: MatMatMult(A, X) with X dense, as
// in a block solve's right-hand sides) runs as it does for aijcusparse: cuSPARSE's SpMM on A's
// shadow, into a seqdensecuda result (a seqdense C is converted back after each numeric phase).
// PETSc's phases read A from C->product, so the shadow stands in there for the length of each
// call. Its numeric phase is set on C->ops->productnumeric itself, which a later in-place
// conversion of C (MatMatSolve of a cuSPARSE factor turns its right-hand side into seqdensecuda)
// leaves in place; SeqAIJ's host product goes through C's matmultnumeric, which that conversion
// replaced with a dense-dense one.
constexpr const char *kSavedDenseNumeric = "GpuMatsDenseNumeric";
using ProductFn                          = PetscErrorCode (*)(Mat);

// The products aijcusparse computes on the GPU for two operands (and, with three, MATPRODUCT_ABC).
bool TwoOperandGpuProduct(MatProductType t)
{
  return t == MATPRODUCT_AB || t == MATPRODUCT_AtB || t == MATPRODUCT_ABt || t == MATPRODUCT_PtAP || t == MATPRODUCT_RARt;
}

bool DenseOnGpu(Mat C)
{
  Mat_Product *p       = C->product;
  PetscBool    isdense = PETSC_FALSE;
  if (!OurDeviceSeq(p->A) || !p->B) return false;
  if (PetscObjectBaseTypeCompare((PetscObject)p->B, MATSEQDENSE, &isdense) || !isdense) return false;
  return TwoOperandGpuProduct(p->type);
}

// f(C) with A's shadow as C's first operand
PetscErrorCode WithShadowAsA(Mat C, ProductFn f)
{
  Mat_Product *p = C->product;
  Mat          A = p->A, S;

  PetscFunctionBegin;
  PetscCall(Stand_in(A, &S, false));
  p->A                     = S;
  const PetscErrorCode err = f(C);
  p->A                     = A;
  PetscCall(err);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DenseNumeric(Mat C)
{
  ProductFn saved = nullptr;
  PetscBool on_gpu;

  PetscFunctionBegin;
  PetscCall(KeptFunction((PetscObject)C, kSavedDenseNumeric, &saved));
  PetscCheck(saved, PETSC_COMM_SELF, PETSC_ERR_PLIB, "dense product without its numeric phase");
  // aijcusparse's numeric phase writes into C's array as GPU memory: a C converted to host dense
  // since (MatConvert in place, or its own return to seqdense after a numeric phase) goes to the
  // GPU for the length of the call and comes back
  PetscCall(PetscObjectTypeCompare((PetscObject)C, MATSEQDENSECUDA, &on_gpu));
  const bool was_host = !on_gpu;
  if (was_host) PetscCall(MatConvert(C, MATSEQDENSECUDA, MAT_INPLACE_MATRIX, &C));
  if (OurDeviceSeq(C->product->A)) PetscCall(WithShadowAsA(C, saved));
  else PetscCall(saved(C)); // (MatProductReplaceMats gave it an aijcusparse A)
  PetscCall(PetscObjectTypeCompare((PetscObject)C, MATSEQDENSECUDA, &on_gpu)); // (aijcusparse may have brought it back)
  if (was_host && on_gpu) PetscCall(MatConvert(C, MATSEQDENSE, MAT_INPLACE_MATRIX, &C));
  PetscFunctionReturn(PETSC_SUCCESS);
}

// aijcusparse's choice and symbolic phase, with the shadow as C->product->A
PetscErrorCode CusparseDenseSymbolic(Mat C)
{
  Mat S = C->product->A;

  PetscFunctionBegin;
  PetscCall((*S->ops->productsetfromoptions)(C));
  PetscCheck(C->ops->productsymbolic, PETSC_COMM_SELF, PETSC_ERR_PLIB, "aijcusparse has no %s product with a dense matrix", MatProductTypes[C->product->type]);
  PetscCall((*C->ops->productsymbolic)(C));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DenseSymbolic(Mat C)
{
  PetscFunctionBegin;
  PetscCall(WithShadowAsA(C, CusparseDenseSymbolic));
  PetscCheck(C->ops->productnumeric && C->ops->productnumeric != DenseNumeric, PETSC_COMM_SELF, PETSC_ERR_PLIB, "aijcusparse's dense product left no numeric phase");
  PetscCall(KeepFunction((PetscObject)C, kSavedDenseNumeric, C->ops->productnumeric));
  C->ops->productnumeric = DenseNumeric;
  PetscFunctionReturn(PETSC_SUCCESS);
}

// Takes products whose operands are all ours (GPU) or aijcusparse; everything else, and every
// product with -mat_gpumats_products host, goes to SeqAIJ's own (host) products. (Ours times a
// dense matrix never reaches here: PETSc finds it by type names, in ProductAsAIJ.)
PetscErrorCode ProductSetFromOptions(Mat C)
{
  Mat_Product *p = C->product;
  Mat          op[3];
  PetscBool    gpu = PETSC_TRUE, cusp;
  bool         wanted;

  PetscFunctionBegin;
  const int k   = Operands(C, op);
  bool      any = false;
  for (int i = 0; i < k; ++i) {
    PetscCall(PetscObjectTypeCompare((PetscObject)op[i], MATSEQAIJCUSPARSE, &cusp));
    const bool ours = OurDeviceSeq(op[i]);
    any             = any || ours;
    if (!ours && !cusp) gpu = PETSC_FALSE;
  }
  PetscCall(GpuProductsWanted(C, gpu, &wanted));
  if (!TwoOperandGpuProduct(p->type) && p->type != MATPRODUCT_ABC) gpu = PETSC_FALSE;
  if (gpu && any && wanted) {
    C->ops->productsymbolic = ProductSymbolic;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(HostProduct(C));
  PetscFunctionReturn(PETSC_SUCCESS);
}

// ---- factorizations ---------------------------------------------------------------------------

// MATSOLVERCUSPARSE's factor matrix B gets A's shadow in place of A at its symbolic and numeric
// phases; PETSc's own functions are kept on B under these names and called through.
constexpr const char *kSavedSymbolic = "GpuMatsCusparseSymbolic", *kSavedNumeric = "GpuMatsCusparseNumeric";

using Numeric = PetscErrorCode (*)(Mat, Mat, const MatFactorInfo *);

bool IsLU(Mat B) { return B->factortype == MAT_FACTOR_LU || B->factortype == MAT_FACTOR_ILU || B->factortype == MAT_FACTOR_ILUDT; }

PetscErrorCode FactorNumeric(Mat B, Mat A, const MatFactorInfo *info);

// After PETSc's symbolic phase has set B's numeric function: keep it and put ours in front
PetscErrorCode WrapNumeric(Mat B)
{
  Numeric &slot = IsLU(B) ? B->ops->lufactornumeric : B->ops->choleskyfactornumeric;

  PetscFunctionBegin;
  if (slot && slot != FactorNumeric) {
    PetscCall(KeepFunction((PetscObject)B, kSavedNumeric, slot));
    slot = FactorNumeric;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode FactorNumeric(Mat B, Mat A, const MatFactorInfo *info)
{
  Numeric saved = nullptr;
  Mat     S;

  PetscFunctionBegin;
  PetscCall(KeptFunction((PetscObject)B, kSavedNumeric, &saved));
  PetscCheck(saved, PETSC_COMM_SELF, PETSC_ERR_PLIB, "cuSPARSE factor without its numeric phase");
  PetscCall(Stand_in(A, &S, false));
  PetscCall(saved(B, S, info));
  PetscCall(WrapNumeric(B)); // in case PETSc's numeric phase chose another one for the next time
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode LUFactorSymbolic(Mat B, Mat A, IS row, IS col, const MatFactorInfo *info)
{
  LUSymbolicFn saved = nullptr;
  Mat        S;

  PetscFunctionBegin;
  PetscCall(KeptFunction((PetscObject)B, kSavedSymbolic, &saved));
  PetscCall(Stand_in(A, &S, false));
  PetscCall(saved(B, S, row, col, info));
  PetscCall(WrapNumeric(B));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode CholFactorSymbolic(Mat B, Mat A, IS perm, const MatFactorInfo *info)
{
  CholSymbolicFn saved = nullptr;
  Mat          S;

  PetscFunctionBegin;
  PetscCall(KeptFunction((PetscObject)B, kSavedSymbolic, &saved));
  PetscCall(Stand_in(A, &S, false));
  PetscCall(saved(B, S, perm, info));
  PetscCall(WrapNumeric(B));
  PetscFunctionReturn(PETSC_SUCCESS);
}

// MatGetFactor for MATSOLVERCUSPARSE on our GPU Seq types: PETSc's aijcusparse factor matrix
// (which reads only A's sizes and block sizes here), with its symbolic phase routed to A's shadow.
PetscErrorCode GetFactorCusparse(Mat A, MatFactorType ftype, Mat *B)
{
  PetscFunctionBegin;
  PetscCall(MatGetFactor_seqaijcusparse_cusparse(A, ftype, B));
  PetscCall(RouteFactorSymbolic(*B, ftype, kSavedSymbolic, LUFactorSymbolic, CholFactorSymbolic));
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace

PetscErrorCode RegisterCusparseBridge()
{
  PetscFunctionBegin;
  PetscCall(RegisterShadowEvent());
  PetscCall(RegisterRankEvent("GpuMatsSpGEMM", &product_event));
  PetscCall(RegisterRankEvent("GpuMatsPattern", &pattern_event));
  // exact type names: MatGetFactor without a solver type takes these before the prefix match
  // that gives AIJ subclasses PETSc's own host factorization
  for (const TypeForm &t : type_forms()) {
    if (!t.device) continue;
    const std::string seq = concrete_name(*t.format, "seq", true);
    for (MatFactorType ft : {MAT_FACTOR_LU, MAT_FACTOR_CHOLESKY, MAT_FACTOR_ILU, MAT_FACTOR_ICC}) PetscCall(MatSolverTypeRegister(MATSOLVERCUSPARSE, seq.c_str(), ft, GetFactorCusparse));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

OpFn CusparseProductSetFromOptions() { return (OpFn)ProductSetFromOptions; }

// aijcusparse does not drop its transpose at every change of values it is not told of (a product's
// numeric phase rewriting a shadow, the values of a shadow over A's host arrays: test_mult and
// test_product fail where only aijcusparse's own record decides), so a change of A since the last
// such product frees the transpose here, through the option (turned off, aijcusparse frees it),
// and the product below builds it anew (cusparseCsr2cscEx2 on the GPU); for the MPI stand-in, the
// blocks' transposes.
PetscErrorCode CusparseTranspose(Mat A, Mat S, Vec x, Vec in, Vec out)
{
  TypeData        *d = Data(A);
  PetscObjectState st;

  PetscFunctionBegin;
  PetscCall(PetscObjectStateGet((PetscObject)A, &st));
  if (st != d->cusparse_transpose_state) {
    PetscCall(PetscInfo(A, "products with A^T by cuSPARSE's transpose of its %s shadow, made at this product\n", ((PetscObject)S)->type_name));
    PetscCall(MatSetOption(S, MAT_FORM_EXPLICIT_TRANSPOSE, PETSC_FALSE));
    d->cusparse_transpose_state = st;
  }
  PetscCall(MatSetOption(S, MAT_FORM_EXPLICIT_TRANSPOSE, PETSC_TRUE)); // (a flag: the transpose is made at the product)
  if (in) PetscCall(MatMultTransposeAdd(S, x, in, out));
  else PetscCall(MatMultTranspose(S, x, out));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode TakeDenseProduct(Mat C, bool *taken)
{
  bool wanted;

  PetscFunctionBegin;
  *taken = false;
  if (!DenseOnGpu(C) || Data(C->product->A)->bound) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(GpuProductsWanted(C, false, &wanted));
  if (!wanted) PetscFunctionReturn(PETSC_SUCCESS);
  C->ops->productsymbolic = DenseSymbolic;
  *taken                  = true;
  PetscFunctionReturn(PETSC_SUCCESS);
}

#else // a PETSc without CUDA: nothing to bridge to

PetscErrorCode RegisterCusparseBridge() { return PETSC_SUCCESS; }
OpFn           CusparseProductSetFromOptions() { return nullptr; }
PetscErrorCode TakeDenseProduct(Mat, bool *taken)
{
  *taken = false;
  return PETSC_SUCCESS;
}

#endif

} // namespace gpumats
