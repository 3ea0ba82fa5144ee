// Products of the MPI GPU types on the GPU: MatMatMult, MatTransposeMatMult and MatPtAP, which
// GAMG's setup (prolongator smoothing, Galerkin coarse operators) and -pc_mg_galerkin call.
// MPIAIJ's own products, which the MPI types would inherit, run on the host; mpiaijcusparse's run
// in PETSc's device back-end (MatProductSymbolic_MPIAIJBACKEND in mpiaij.c), which multiplies the
// local blocks with cuSPARSE, gathers the remote rows it needs and assembles its result with COO
// on the GPU. Ours run in that same back-end:
//
//  - each MPI operand of ours is handed to it as its *stand-in* (MpiStandIn): an mpiaijcusparse
//    matrix whose blocks are aijcusparse matrices over the operand's own block CSR (ShadowOver:
//    no host copy, one upload) and whose off-diagonal column map is the operand's;
//  - the back-end's result (an mpiaijcusparse matrix) stays with the product, and C, of our type,
//    takes the pattern of its blocks at the symbolic phase (their host arrays, shared, as the Seq
//    products do: SetPattern) and their values at each numeric phase, downloaded once. The MPI
//    types keep their host blocks authoritative (mpi.cxx), and C's format copies are built from
//    them at C's first use.
//
// A product with an operand bound to the CPU, of another type, or of another kind (ABt, RARt, ABC)
// is MPIAIJ's, on the host, as is every product with -mat_gpumats_products host. The back-end's
// failures are not caught: one rank falling back to the host while the others go on would leave
// the ranks in different collective calls.
#include "seq_mpi.hpp"
#include "../runtime/events.hpp"

#include <algorithm>
#include <cstring>

#if PetscDefined(HAVE_CUDA) && PETSC_VERSION_GE(3, 23, 0)
  #define GPUMATS_MPI_DEVICE_PRODUCTS 1
  #include <../src/mat/impls/aij/mpi/mpiaij.h> // Mat_MPIAIJ: the result's blocks are set directly, as MatCreateMPIAIJWithSeqAIJ does
#endif

namespace gpumats {

#if GPUMATS_MPI_DEVICE_PRODUCTS

void MpiStandIn::release()
{
  if (standin_) (void)MatDestroy(&standin_);
  state_ = nz_ = -1;
}

PetscErrorCode MpiStandIn::of(Mat A, Mat *S)
{
  PetscObjectState st, nz;

  PetscFunctionBegin;
  PetscCall(PetscObjectStateGet((PetscObject)A, &st));
  PetscCall(MatGetNonzeroState(A, &nz));
  if (standin_ && nz != nz_) release(); // a new pattern: SeqAIJ reallocated the arrays shared
  if (standin_ && st == state_) {
    *S = standin_;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (!standin_) {
    Mat             Ad, Ao, sd = nullptr, so = nullptr;
    const PetscInt *garray;
    PetscInt       *g, nghost;

    PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, &Ao, &garray));
    PetscCall(ShadowOver(Ad, &sd));
    PetscCall(ShadowOver(Ao, &so));
    PetscCall(MatGetLocalSize(Ao, nullptr, &nghost));
    PetscCall(PetscMalloc1(nghost > 0 ? nghost : 1, &g)); // (never null: null asks for global column indices)
    if (nghost > 0) PetscCall(PetscArraycpy(g, garray, nghost));
    // takes sd, so and g; collective (sets up the ghost exchange the back-end gathers rows with)
    PetscCall(MatCreateMPIAIJWithSeqAIJ(PetscObjectComm((PetscObject)A), A->rmap->N, A->cmap->N, sd, so, g, &standin_));
  } else { // the blocks' arrays are A's: only aijcusparse's record of which side is newer moves
    auto        *s = static_cast<Mat_MPIAIJ *>(standin_->data);
    PetscScalar *v;
    for (Mat b : {s->A, s->B}) {
      PetscCall(MatSeqAIJGetArrayWrite(b, &v));
      PetscCall(MatSeqAIJRestoreArrayWrite(b, &v));
    }
    PetscCall(PetscObjectStateIncrease((PetscObject)standin_));
  }
  state_ = st, nz_ = nz;
  *S     = standin_;
  PetscFunctionReturn(PETSC_SUCCESS);
}

namespace {

PetscLogEvent product_event = 0, result_event = 0;

// What C = op(A, B) keeps between its phases: the back-end's product of the operands' stand-ins
struct MpiProduct {
  Mat inner = nullptr;
  Mat standin[2]{}; // the operands' stand-ins (those of ours), referenced, so a pattern change cannot free them under us
};

PetscErrorCode FreeMpiProduct(MpiProduct *pd)
{
  PetscFunctionBegin;
  if (!pd) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatDestroy(&pd->inner));
  for (Mat &s : pd->standin) PetscCall(MatDestroy(&s));
  delete pd;
  PetscFunctionReturn(PETSC_SUCCESS);
}

// Mat_Product::destroy receives the address of the data pointer (PetscCtxDestroyFn)
PetscErrorCode MpiProductDestroy(void *arg)
{
  PetscFunctionBegin;
  PetscCall(FreeMpiProduct(*static_cast<MpiProduct **>(arg)));
  *static_cast<MpiProduct **>(arg) = nullptr;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StandInFor(Mat X, Mat *S)
{
  PetscFunctionBegin;
  if (OurDeviceMpi(X)) PetscCall(MpiStandInOf(X, S));
  else *S = X;
  PetscFunctionReturn(PETSC_SUCCESS);
}

// C's block values from the back-end result's block (one download from the GPU)
PetscErrorCode CopyBlockValues(Mat from, Mat to)
{
  const PetscScalar *v;
  PetscScalar       *w;
  PetscInt           nf, nt;

  PetscFunctionBegin;
  nf = static_cast<Mat_SeqAIJ *>(from->data)->nz;
  nt = static_cast<Mat_SeqAIJ *>(to->data)->nz;
  PetscCheck(nf == nt, PETSC_COMM_SELF, PETSC_ERR_PLIB, "product block of %" PetscInt_FMT " nonzeros for a result block of %" PetscInt_FMT, nf, nt);
  PetscCall(MatSeqAIJGetArrayRead(from, &v));
  PetscCall(MatSeqAIJGetArrayWrite(to, &w));
  PetscCall(PetscArraycpy(w, v, nt));
  PetscCall(MatSeqAIJRestoreArrayWrite(to, &w));
  PetscCall(MatSeqAIJRestoreArrayRead(from, &v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode ZeroBlockValues(Mat block)
{
  PetscScalar *w;

  PetscFunctionBegin;
  PetscCall(MatSeqAIJGetArrayWrite(block, &w));
  PetscCall(PetscArrayzero(w, static_cast<Mat_SeqAIJ *>(block->data)->nz));
  PetscCall(MatSeqAIJRestoreArrayWrite(block, &w));
  PetscFunctionReturn(PETSC_SUCCESS);
}

// A new Seq block of C with the pattern of the back-end result's block
PetscErrorCode BlockLike(Mat inner_block, PetscInt m, PetscInt n, Mat *B)
{
  PetscFunctionBegin;
  PetscCall(MatCreate(PETSC_COMM_SELF, B));
  PetscCall(MatSetSizes(*B, m, n, m, n));
  PetscCall(MatSetBlockSizesFromMats(*B, inner_block, inner_block));
  PetscCall(MatSetType(*B, MATSEQAIJ));
  PetscCall(SetPattern(*B, inner_block));
  PetscCall(ZeroBlockValues(*B)); // (a product's symbolic phase leaves zeros, as PETSc's do)
  PetscFunctionReturn(PETSC_SUCCESS);
}

// pd's references to the operands' stand-ins S that are not the operand itself
PetscErrorCode HoldStandIns(MpiProduct *pd, const Mat op[2], const Mat S[2])
{
  PetscFunctionBegin;
  for (int i = 0; i < 2; ++i) {
    PetscCall(MatDestroy(&pd->standin[i]));
    if (S[i] == op[i]) continue;
    PetscCall(PetscObjectReference((PetscObject)S[i]));
    pd->standin[i] = S[i];
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

// The inner product, of the operands' stand-ins made the same way as at the symbolic phase
PetscErrorCode MakeInner(Mat C, MpiProduct *pd, Mat S[2])
{
  PetscFunctionBegin;
  PetscCall(MatProductCreate(S[0], S[1], nullptr, &pd->inner));
  PetscCall(MatProductSetType(pd->inner, C->product->type));
  PetscCall(MatProductSetAlgorithm(pd->inner, MATPRODUCTALGORITHMDEFAULT));
  PetscCall(MatProductSetFill(pd->inner, C->product->fill));
  PetscCall(MatProductSetFromOptions(pd->inner));
  PetscCheck(pd->inner->ops->productsymbolic, PetscObjectComm((PetscObject)C), PETSC_ERR_PLIB, "mpiaijcusparse has no %s product", MatProductTypes[C->product->type]);
  PetscCall(MatProductSymbolic(pd->inner));
  PetscFunctionReturn(PETSC_SUCCESS);
}

// The operands C's product has now, as the back-end takes them. Where one is not the matrix the
// symbolic phase multiplied (MatProductReplaceMats: MatMatMult(B, A, MAT_REUSE_MATRIX, &C) after
// MatMatMult(A, B, ...) with operands of one pattern; an operand with new blocks, whose stand-in
// was made anew), the inner product is formed again over them and must come out with C's pattern
// on every rank (collective: the stand-ins and C's pattern are the same on every rank).
PetscErrorCode RefreshOperands(Mat C, MpiProduct *pd)
{
  Mat          op[2] = {C->product->A, C->product->B}, S[2];
  Mat_Product *ip    = pd->inner->product;
  bool         changed = false;

  PetscFunctionBegin;
  for (int i = 0; i < 2; ++i) {
    PetscCall(StandInFor(op[i], &S[i]));
    changed = changed || S[i] != (i ? ip->B : ip->A);
  }
  if (!changed) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(HoldStandIns(pd, op, S));
  Mat old = pd->inner; // (the owner of C's blocks' pattern arrays, which keep it alive)
  pd->inner = nullptr;
  PetscCall(MakeInner(C, pd, S));
  PetscCall(MatDestroy(&old));
  auto     *in = static_cast<Mat_MPIAIJ *>(pd->inner->data), *c = static_cast<Mat_MPIAIJ *>(C->data);
  int       same = SamePattern(in->A, c->A) && SamePattern(in->B, c->B) && std::equal(c->garray, c->garray + c->B->cmap->n, in->garray);
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &same, 1, MPI_INT, MPI_LAND, PetscObjectComm((PetscObject)C)));
  PetscCheck(same, PetscObjectComm((PetscObject)C), PETSC_ERR_ARG_INCOMP,
             "the nonzero pattern of an operand changed since the symbolic product: create the product again (MAT_INITIAL_MATRIX)");
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode Numeric(Mat C)
{
  auto *pd = static_cast<MpiProduct *>(C->product->data);
  Mat   op[2] = {C->product->A, C->product->B};

  PetscFunctionBegin;
  PetscCall(RefreshOperands(C, pd));
  PetscCall(PetscLogEventBegin(product_event, C, 0, 0, 0));
  PetscCall(MatProductNumeric(pd->inner));
  PetscCall(PetscLogEventEnd(product_event, C, 0, 0, 0));
  auto *in = static_cast<Mat_MPIAIJ *>(pd->inner->data);
  auto *c  = static_cast<Mat_MPIAIJ *>(C->data);
  PetscCall(PetscLogEventBegin(result_event, C, 0, 0, 0));
  PetscCall(CopyBlockValues(in->A, c->A));
  PetscCall(CopyBlockValues(in->B, c->B));
  PetscCall(PetscLogEventEnd(result_event, C, 0, 0, 0));
  // A Galerkin product's transfer restricts in the solve: its copies, transposed ones included,
  // are built here, in the setup (after the product, which may have changed nothing of P)
  if (C->product->type == MATPRODUCT_PtAP && OurDeviceMpi(op[1])) PetscCall(MpiPrepareTranspose(op[1]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode Symbolic(Mat C)
{
  Mat_Product *p  = C->product;
  auto        *pd = new MpiProduct;
  Mat          op[2] = {p->A, p->B}, S[2];

  PetscFunctionBegin;
  for (int i = 0; i < 2; ++i) PetscCall(StandInFor(op[i], &S[i]));
  PetscCall(HoldStandIns(pd, op, S));
  PetscCall(PetscLogEventBegin(product_event, C, 0, 0, 0));
  PetscCall(MakeInner(C, pd, S));
  PetscCall(PetscLogEventEnd(product_event, C, 0, 0, 0));

  // C: of our type (the first of our operands'), with the result's blocks' pattern and its column map
  Mat  inner = pd->inner, Ad, Ao;
  auto *in   = static_cast<Mat_MPIAIJ *>(inner->data);
  PetscInt m = inner->rmap->n, nghost;
  PetscCall(MatSetSizes(C, m, inner->cmap->n, inner->rmap->N, inner->cmap->N));
  PetscCall(MatSetBlockSizesFromMats(C, inner, inner));
  PetscCall(MatSetType(C, ((PetscObject)op[OurDeviceMpi(op[0]) ? 0 : 1])->type_name));
  Data(C)->build_at = BuildAt::kUse; // not from the zeros below: at the first use, after the numeric phase
  PetscCall(PetscLayoutSetUp(C->rmap));
  PetscCall(PetscLayoutSetUp(C->cmap));
  PetscCall(MatGetLocalSize(in->B, nullptr, &nghost));
  PetscCall(BlockLike(in->A, m, inner->cmap->n, &Ad));
  PetscCall(BlockLike(in->B, m, nghost, &Ao));
  auto *c = static_cast<Mat_MPIAIJ *>(C->data);
  PetscCheck(!c->A && !c->B && !c->garray, PETSC_COMM_SELF, PETSC_ERR_PLIB, "product result already holds blocks");
  c->A = Ad, c->B = Ao;
  PetscCall(PetscMalloc1(nghost > 0 ? nghost : 1, &c->garray));
  if (nghost > 0) PetscCall(PetscArraycpy(c->garray, in->garray, nghost));
  C->preallocated     = PETSC_TRUE;
  C->nooffprocentries = PETSC_TRUE;
  PetscCall(MatSetOption(C, MAT_NO_OFF_PROC_ENTRIES, PETSC_TRUE));
  PetscCall(MatAssemblyBegin(C, MAT_FINAL_ASSEMBLY)); // (collective: the ghost exchange of C is set up)
  PetscCall(MatAssemblyEnd(C, MAT_FINAL_ASSEMBLY));
  PetscCall(MatSetOption(C, MAT_NO_OFF_PROC_ENTRIES, PETSC_FALSE));
  PetscCall(MatSetOption(C, MAT_NEW_NONZERO_LOCATION_ERR, PETSC_TRUE));
  p->data                = pd;
  p->destroy             = MpiProductDestroy;
  C->ops->productnumeric = Numeric;
  PetscFunctionReturn(PETSC_SUCCESS);
}

// Whether X may take part in a product on the GPU: ours unbound, or mpiaijcusparse unbound
PetscErrorCode OnDevice(Mat X, bool *yes)
{
  PetscBool cusp;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)X, MATMPIAIJCUSPARSE, &cusp));
  *yes = (OurDeviceMpi(X) && !Bound(X)) || (cusp && !X->boundtocpu);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode ProductSetFromOptions(Mat C)
{
  Mat_Product *p = C->product;
  Mat          op[2] = {p->A, p->B}, ours = nullptr;
  // (a C that already has a type and blocks, from MatProductCreateWithMat, keeps MPIAIJ's products)
  bool gpu = (p->type == MATPRODUCT_AB || p->type == MATPRODUCT_AtB || p->type == MATPRODUCT_PtAP) && !((PetscObject)C)->type_name, yes = false;
  bool         wanted;

  PetscFunctionBegin;
  for (Mat X : op) {
    if (!ours && OurDeviceMpi(X)) ours = X;
    PetscCall(OnDevice(X, &yes));
    gpu = gpu && yes;
  }
  PetscCheck(ours, PetscObjectComm((PetscObject)C), PETSC_ERR_PLIB, "a product of the MPI GPU types without one of them");
  PetscCall(GpuProductsWanted(C, gpu, &wanted));
  if (gpu && wanted) {
    C->ops->productsymbolic = Symbolic;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscInfo(C, "%s product of %s and %s: MPIAIJ's host product\n", MatProductTypes[p->type], ((PetscObject)op[0])->type_name, ((PetscObject)op[1])->type_name));
  PetscCall(Data(ours)->call<PetscErrorCode (*)(Mat)>(kProductSetFromOptions, C));
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace

PetscErrorCode RegisterMpiProductEvents()
{
  PetscFunctionBegin;
  PetscCall(RegisterRankEvent("GpuMatsMpiSpGEMM", &product_event));
  PetscCall(RegisterRankEvent("GpuMatsMpiResult", &result_event));
  PetscFunctionReturn(PETSC_SUCCESS);
}

OpFn MpiProductSetFromOptions() { return (OpFn)ProductSetFromOptions; }
bool MpiStandInAvailable() { return true; }

#else // a PETSc without CUDA, or older than the back-end's interface used here: MPIAIJ's products

  #if PetscDefined(HAVE_CUDA)
void           MpiStandIn::release() { }
PetscErrorCode MpiStandIn::of(Mat, Mat *S)
{
  *S = nullptr;
  return PETSC_ERR_SUP;
}
  #endif
PetscErrorCode RegisterMpiProductEvents() { return PETSC_SUCCESS; }
OpFn           MpiProductSetFromOptions() { return nullptr; }
bool           MpiStandInAvailable() { return false; }

#endif

} // namespace gpumats
