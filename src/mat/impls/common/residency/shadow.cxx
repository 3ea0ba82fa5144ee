// aijcusparse matrices over our matrices' host CSR (shadow.hpp). Sharing the host arrays makes a
// shadow cost no host copy (GAMG makes one for each operand of its products); what it costs is the
// device CSR that aijcusparse itself would hold.
#include "shadow.hpp"
#include "../operator/quiet.hpp"
#include "../runtime/events.hpp"

#if PetscDefined(HAVE_CUDA)
  #include <../src/mat/impls/aij/seq/aij.h> // Mat_SeqAIJ: a shadow's arrays are the matrix's own
  #if GPUMATS_HAVE_CUDA
    #include "../cuda/pin.hpp"
  #endif
#endif

namespace gpumats {

#if PetscDefined(HAVE_CUDA)

namespace {

PetscLogEvent shadow_event = 0;

} // namespace

PetscErrorCode RegisterShadowEvent()
{
  PetscFunctionBegin;
  PetscCall(RegisterRankEvent("GpuMatsShadow", &shadow_event));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscLogEvent ShadowEvent() { return shadow_event; }

// The upload of a shadow's host CSR, made at once while its arrays are page-locked (cuda::HostPin)
// rather than by aijcusparse at the shadow's first use from pageable memory: the fine operator of
// ksp ex56 -ne 59 (50.8M nonzeros) took 0.07-0.10 s that way. A new shadow sends its pattern and
// values, a refilled one its values; a small one is left to aijcusparse's own copy.
PetscErrorCode UploadPinned(Mat S, bool pattern)
{
  PetscFunctionBegin;
#if GPUMATS_HAVE_CUDA
  auto             *s  = static_cast<Mat_SeqAIJ *>(S->data);
  const std::size_t nz = s->nz > 0 ? std::size_t(s->nz) : 0;
  if (nz * sizeof(PetscScalar) < cuda::HostPin::kMinPinBytes) PetscFunctionReturn(PETSC_SUCCESS);
  const cuda::HostPin values(s->a, nz * sizeof(PetscScalar)), columns(pattern ? s->j : nullptr, nz * sizeof(PetscInt));
  const PetscScalar  *a;
  PetscCall(MatSeqAIJCUSPARSEGetArrayRead(S, &a)); // aijcusparse's copy to the GPU, of what it lacks
  PetscCall(MatSeqAIJCUSPARSERestoreArrayRead(S, &a));
  if (values.pinned())
    PetscCall(PetscInfo(S, "aijcusparse shadow: %s of %zu nonzeros uploaded from page-locked host arrays\n", pattern ? "pattern and values" : "values", nz));
#else
  (void)S, (void)pattern;
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

// An aijcusparse matrix over A's host CSR arrays, which it never owns or frees (as
// MatCreateSeqAIJWithArrays makes one), without SeqAIJ's inode search: the shadow's products,
// factorizations and solves run in cuSPARSE, which has no use for inodes, and the search reads
// every column index on the host (a visible share of a GAMG setup on large elasticity problems).
PetscErrorCode SharedShadow(Mat A, const PetscInt *ia, const PetscInt *ja, const PetscScalar *va, Mat *S)
{
  const PetscInt m = A->rmap->n;

  PetscFunctionBegin;
  PetscCheck(m <= 0 || ia[0] == 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "the row offsets of a cuSPARSE shadow must start at 0");
  PetscCall(MatCreate(PETSC_COMM_SELF, S));
  PetscCall(MatSetSizes(*S, m, A->cmap->n, m, A->cmap->n));
  PetscCall(MatSetBlockSizesFromMats(*S, A, A));
  PetscCall(MatSetType(*S, MATSEQAIJ));
  PetscCall(MatSetOption(*S, MAT_USE_INODES, PETSC_FALSE));
  PetscCall(MatSeqAIJSetPreallocation(*S, MAT_SKIP_ALLOCATION, nullptr));
  auto *s = static_cast<Mat_SeqAIJ *>((*S)->data);
  if (!s->imax) PetscCall(PetscMalloc1(m, &s->imax)); // (SeqAIJ allocates these unless it skips the allocation)
  if (!s->ilen) PetscCall(PetscMalloc1(m, &s->ilen));
  s->i       = const_cast<PetscInt *>(ia);
  s->j       = const_cast<PetscInt *>(ja);
  s->a       = const_cast<PetscScalar *>(va);
  s->nonew   = -1; // a new nonzero is an error
  s->free_a  = PETSC_FALSE;
  s->free_ij = PETSC_FALSE;
  for (PetscInt r = 0; r < m; ++r) s->ilen[r] = s->imax[r] = ia[r + 1] - ia[r];
  s->maxnz = m > 0 ? ia[m] : 0; // (MatGetInfo's allocated nonzeros, in -ksp_view: as MatCreateSeqAIJWithArrays says)
  PetscCall(WithoutOptionViewers([S]() {
    PetscFunctionBegin;
    PetscCall(MatAssemblyBegin(*S, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(*S, MAT_FINAL_ASSEMBLY));
    PetscFunctionReturn(PETSC_SUCCESS);
  }));
  PetscCall(MatConvert(*S, MATSEQAIJCUSPARSE, MAT_INPLACE_MATRIX, S));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode ShadowOver(Mat A, Mat *S)
{
  const PetscInt    *ia, *ja;
  const PetscScalar *va;
  PetscInt           n;
  PetscBool          done;

  PetscFunctionBegin;
  PetscCall(MatGetRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done)); // (SeqAIJ's own arrays)
  PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_PLIB, "no CSR row structure for the cuSPARSE shadow of a %s", ((PetscObject)A)->type_name);
  PetscCall(MatSeqAIJGetArrayRead(A, &va));
  PetscCall(SharedShadow(A, ia, ja, va, S));
  PetscCall(MatSeqAIJRestoreArrayRead(A, &va));
  PetscCall(MatRestoreRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  PetscFunctionReturn(PETSC_SUCCESS);
}

void BlockShadow::release()
{
  if (shadow_) (void)MatDestroy(&shadow_);
  made_.forget();
}

PetscErrorCode BlockShadow::of(Mat block, Mat *S)
{
  MatStamp     now;
  PetscScalar *vs;

  PetscFunctionBegin;
  PetscCall(made_.read(block, &now));
  if (shadow_ && !made_.same_pattern(now)) release(); // another block, or arrays SeqAIJ reallocated
  if (shadow_ && made_.current_for(now)) {
    // what is known of the block's symmetry, set at any time without a state change: with it
    // block Jacobi's sub-solver defaults to ICC on a symmetric matrix, as on mpiaijcusparse's block
    PetscCall(MatPropagateSymmetryOptions(block, shadow_));
    *S = shadow_;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscLogEventBegin(shadow_event, block, 0, 0, 0));
  const bool made = !shadow_;
  if (made) PetscCall(ShadowOver(block, &shadow_));
  else { // the arrays are the block's: only aijcusparse's record of which side is newer moves
    PetscCall(MatSeqAIJGetArrayWrite(shadow_, &vs));
    PetscCall(MatSeqAIJRestoreArrayWrite(shadow_, &vs));
  }
  PetscCall(UploadPinned(shadow_, made));
  PetscCall(MatPropagateSymmetryOptions(block, shadow_));
  made_.made_from(now);
  PetscCall(PetscLogEventEnd(shadow_event, block, 0, 0, 0));
  *S = shadow_;
  PetscFunctionReturn(PETSC_SUCCESS);
}

#endif

} // namespace gpumats
