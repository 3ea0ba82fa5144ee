// MatBindToCPU for every type of ours, Seq and MPI, host and GPU: PETSc's -dm_bind_below (DMDA
// levels below a size), GAMG's -pc_gamg_cpu_pin_coarse_grids and explicit calls.
//
// A bound matrix computes as the AIJ matrix it is underneath: MatMult, MatMultAdd, their
// transposes, MatResidual and MatGetDiagonal are AIJ's host code (TypeData::saved), as
// aijcusparse's MatBindToCPU puts SeqAIJ's operations in place of its own; its products take
// SeqAIJ's host route (BindAwareProductSetFromOptions), and MatScale, MatDiagonalScale and MatAXPY
// work on the host CSR (device_values.cxx). No format copy is held or built while bound: binding frees
// the copies (their GPU memory for the *cuda types), MatAssemblyEnd builds none, -mat_view says
// the matrix is bound instead of describing a copy. Unbinding puts our operations back; the next
// use converts the matrix anew, whatever changed meanwhile. The operations are swapped, as
// aijcusparse's MatBindToCPU swaps them, rather than a flag tested in every product; where PETSc
// puts back a whole operation table it saved before the binding (its hash assembly, after a
// MatSetUp without preallocation, at the end of the first assembly), our MatAssemblyEnd swaps them
// again (KeepBinding).
//
// The host types do the same, rather than keep their host kernels: one code path for every type,
// so that the CI, which has no GPU, runs exactly what the *cuda types run when bound (the state
// kept, the copy released, the rebuild after changes made while bound); and what PETSc binds is
// small (coarse DMDA levels, GAMG's pinned coarse grids), where keeping a format copy current
// costs a conversion at every change and saves little.
//
// Values whose newest copy is on the GPU only (Residency::host_stale: MatSetValuesCOO with device
// values, a product's result, coo.cxx and cusparse_bridge.cxx) come to the host when the matrix is bound.
// Should they move to the GPU again while bound (a product formed before the binding computes its
// numeric phase anew into its result), AIJ's code still reads them current: SeqAIJ's kernels read
// their values through MatSeqAIJGetArrayRead, whose hooks bring them down (coo.cxx). That is also
// why a bound matrix keeps SeqAIJ's inode routines off, unlike a bound aijcusparse: the inode
// product reads the value array directly. The aijcusparse shadow (cusparse_bridge.cxx) is kept, as
// aijcusparse keeps its GPU matrix when bound: products formed before the binding hold it, and
// ShadowOf refills it from the host whenever the matrix has changed, so it is never used stale.
//
// Our record of the binding is TypeData::bound, not A->boundtocpu: a PETSc without devices has no
// such flag (its MatBindToCPU returns at once, every matrix counting as bound), and one with CUDA
// sets it on every new matrix; the GPU types clear it when they are installed (type_data.cxx), the
// host types keep PETSc's. PETSc's MatBindToCPU calls the type only where the flag differs from the
// request, so a host type is bound only after an unbind. The flag is what PETSc sets it to (as
// MPIAIJ's and aijcusparse's own MatBindToCPU do). The MPI GPU types' products read our record
// (mpi_products.cxx): an operand bound keeps the product on the host, in MPIAIJ's code.
#include "seq_mpi.hpp"

namespace gpumats {

namespace {

// Where our types compute in the format rather than in AIJ's code: AIJ's while bound.
constexpr OpIndex kFormatOps[] = {kMult, kMultAdd, kMultTranspose, kMultTransposeAdd, kResidual, kGetDiagonal};

} // namespace

PetscErrorCode BindToCPU(Mat A, PetscBool flg)
{
  TypeData  *d    = Data(A);
  const bool bind = flg ? true : false;

  PetscFunctionBegin;
#if PetscDefined(HAVE_DEVICE)
  A->boundtocpu = flg; // (MatBindToCPU sets it before calling the type; so does a direct call)
#endif
  // MPIAIJ's: its blocks (plain SeqAIJ, which have nothing to bind) and its work vectors
  if (d->saved[kBindToCPU]) PetscCall(d->call<PetscErrorCode (*)(Mat, PetscBool)>(kBindToCPU, A, flg));
  if (bind == d->bound) PetscFunctionReturn(PETSC_SUCCESS);
  if (bind) {
    PetscCall(SyncHostValues(A)); // AIJ's code reads the host CSR
    d->release_copies();
    for (OpIndex i : kFormatOps) {
      PetscCall(MatGetOperation(A, kOverridden[i], &d->unbound_ops[i]));
      PetscCall(MatSetOperation(A, kOverridden[i], d->saved[i])); // (MatResidual's may be null: MatMult and VecAYPX then)
    }
  } else
    for (OpIndex i : kFormatOps) PetscCall(MatSetOperation(A, kOverridden[i], d->unbound_ops[i]));
  d->bound = bind;
  PetscCall(PetscInfo(A, "%s: %s\n", ((PetscObject)A)->type_name,
                      bind ? "bound to the CPU, AIJ's host code computes, no format copy held" : "unbound, the format copy is made at the next use"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode KeepBinding(Mat A)
{
  TypeData *d = Data(A);

  PetscFunctionBegin;
  if (!d->bound) PetscFunctionReturn(PETSC_SUCCESS);
  for (OpIndex i : kFormatOps) {
    OpFn now;
    PetscCall(MatGetOperation(A, kOverridden[i], &now));
    if (now == d->saved[i]) continue;
    d->unbound_ops[i] = now;
    PetscCall(MatSetOperation(A, kOverridden[i], d->saved[i]));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode ViewBound(Mat A, PetscViewer viewer, PetscBool *bound)
{
  const TypeData *d = Data(A);

  PetscFunctionBegin;
  *bound = d->bound ? PETSC_TRUE : PETSC_FALSE;
  if (!d->bound) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscViewerASCIIPrintf(viewer,
                                   "%s%s: bound to the CPU (MatBindToCPU): MatMult, MatMultAdd, their transposes, MatResidual and MatGetDiagonal "
                                   "in AIJ's host code; no format copy held until the first use after MatBindToCPU(A, PETSC_FALSE)\n",
                                   d->info->title, d->device ? " (CUDA)" : " (host)"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

#if PetscDefined(HAVE_CUDA)

namespace {

// As aijcusparse decides (MatProductSetFromOptions_SeqAIJCUSPARSE): an operand bound to the CPU
// (ours, or an aijcusparse one) keeps the whole product on the host, in SeqAIJ's code, whose
// MatProductSetFromOptions every one of our operands saved.
PetscErrorCode ProductSetFromOptions(Mat C)
{
  Mat_Product *p       = C->product;
  Mat          op[3]   = {p->A, p->B, p->type == MATPRODUCT_ABC ? p->C : nullptr};
  Mat          ours    = nullptr;
  bool         on_host = false;

  PetscFunctionBegin;
  for (Mat X : op) {
    if (!X) continue;
    if (OurDeviceSeq(X)) {
      if (!ours) ours = X;
      on_host = on_host || Data(X)->bound;
    } else {
      PetscBool cusp;
      PetscCall(PetscObjectTypeCompare((PetscObject)X, MATSEQAIJCUSPARSE, &cusp));
      on_host = on_host || (cusp && X->boundtocpu);
    }
  }
  if (on_host && ours) {
    PetscCall(PetscInfo(C, "%s product with an operand bound to the CPU: SeqAIJ's host product\n", MatProductTypes[p->type]));
    PetscCall(Data(ours)->call<PetscErrorCode (*)(Mat)>(kProductSetFromOptions, C));
  } else PetscCall(reinterpret_cast<PetscErrorCode (*)(Mat)>(CusparseProductSetFromOptions())(C));
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace

OpFn BindAwareProductSetFromOptions() { return (OpFn)ProductSetFromOptions; }

#else

OpFn BindAwareProductSetFromOptions() { return nullptr; }

#endif

} // namespace gpumats
