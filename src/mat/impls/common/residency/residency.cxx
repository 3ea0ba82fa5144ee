// Residency (residency.hpp): the one record of which copies of a matrix's values are current.
#include "residency.hpp"
#include "shadow.hpp"
#include "../types/type_data.hpp"

#if PetscDefined(HAVE_CUDA)
  #include <../src/mat/impls/aij/seq/aij.h> // Mat_SeqAIJ: the host values a download goes into
#endif

namespace gpumats {

PetscErrorCode Residency::format_current(Mat A, PetscBool *current)
{
  MatStamp now;

  PetscFunctionBegin;
  PetscCall(format_.read(A, &now));
  *current = format_.current_for(now) ? PETSC_TRUE : PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode Residency::format_built(Mat A, bool in_assembly)
{
  MatStamp now;

  PetscFunctionBegin;
  PetscCall(format_.read(A, &now));
  format_.made_from(now, in_assembly);
  built_unread_ = in_assembly;
  PetscFunctionReturn(PETSC_SUCCESS);
}

void Residency::drop_shadow()
{
  if (shadow_) (void)MatDestroy(&shadow_);
  shadow_made_.forget();
  shadow_coo_ = coo_pending_ = host_stale_ = shadow_shares_ = false;
}

PetscErrorCode Residency::make_host_current(Mat A)
{
  PetscFunctionBegin;
#if PetscDefined(HAVE_CUDA)
  const PetscScalar *sv;

  if (!host_stale_) PetscFunctionReturn(PETSC_SUCCESS);
  Mat_SeqAIJ    *aij = (Mat_SeqAIJ *)A->data;
  const PetscInt nz  = A->rmap->n ? aij->i[A->rmap->n] : 0;
  host_stale_        = false; // first: the reads below must not come back here
  // aijcusparse downloads its device values (and counts the copy in -log_view's GpuToCpu), into
  // A's own array where the shadow shares it
  PetscCall(MatSeqAIJGetArrayRead(shadow_, &sv));
  if (sv != aij->a) PetscCall(PetscArraycpy(aij->a, sv, nz));
  PetscCall(MatSeqAIJRestoreArrayRead(shadow_, &sv));
  // no state change: A's values are the ones it had, now on both sides, so the shadow is current
  // for A's present state (shadow_for uploads nothing until A changes)
  PetscObjectState st;
  PetscCall(PetscObjectStateGet((PetscObject)A, &st));
  shadow_made_.values_agree_at(st);
#else
  (void)A; // without a CUDA PETSc no values live on the GPU
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

#if PetscDefined(HAVE_CUDA)

PetscErrorCode Residency::shadow_for(Mat A, Mat *S)
{
  MatStamp           now;
  const PetscScalar *va;
  PetscScalar       *vs;

  PetscFunctionBegin;
  PetscCall(shadow_made_.read(A, &now));
  if (shadow_ && coo_pending_) { // made by MatSetPreallocationCOO, before PETSc raised A's nonzero state
    shadow_made_.pattern_from(now);
    coo_pending_ = false;
  }
  if (shadow_ && !shadow_made_.same_pattern(now)) {
    PetscCall(make_host_current(A)); // (a new pattern through the host: nothing stale then, but never lose values)
    drop_shadow();
  }
  if (shadow_ && host_stale_) shadow_made_.values_agree_at(now.state);
  if (shadow_ && shadow_made_.current_for(now)) {
    *S = shadow_;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscLogEventBegin(ShadowEvent(), A, 0, 0, 0));
  const bool made = !shadow_;
  if (made) {
    // A's own host arrays, shared, so that making the shadow costs no copy on the host (GAMG makes
    // one for each operand of its products). The shadow never owns or frees them; it is dropped
    // (above) as soon as A's nonzero state moves, which is when SeqAIJ reallocates them.
    PetscCall(ShadowOver(A, &shadow_));
    shadow_shares_ = true;
  } else {
    // marks the host side current: aijcusparse uploads at its next use
    PetscCall(MatSeqAIJGetArrayWrite(shadow_, &vs));
    if (!shadow_shares_) { // (shared arrays hold A's values already)
      PetscCall(MatSeqAIJGetArrayRead(A, &va));
      PetscCall(PetscArraycpy(vs, va, static_cast<Mat_SeqAIJ *>(A->data)->nz));
      PetscCall(MatSeqAIJRestoreArrayRead(A, &va));
    }
    PetscCall(MatSeqAIJRestoreArrayWrite(shadow_, &vs));
  }
  PetscCall(UploadPinned(shadow_, made));
  shadow_made_.made_from(now);
  PetscCall(PetscLogEventEnd(ShadowEvent(), A, 0, 0, 0));
  *S = shadow_;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode Residency::shadow_csr_on_device(Mat A, DeviceCsrIn *csr, PetscBool *have)
{
  Mat                S;
  const int         *i, *j;
  const PetscScalar *a;

  PetscFunctionBegin;
  *have = PETSC_FALSE;
  if (!shadow_ || sizeof(PetscInt) != sizeof(int)) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(shadow_for(A, &S));
  PetscCall(MatSeqAIJCUSPARSEGetIJ(S, PETSC_FALSE, &i, &j)); // uploads what aijcusparse does not hold yet
  PetscCall(MatSeqAIJCUSPARSEGetArrayRead(S, &a));
  csr->row_ptr = reinterpret_cast<const PetscInt *>(i);
  csr->col_ind = reinterpret_cast<const PetscInt *>(j);
  csr->val     = a;
  // (restored at once: aijcusparse keeps the arrays while S does not change)
  PetscCall(MatSeqAIJCUSPARSERestoreArrayRead(S, &a));
  PetscCall(MatSeqAIJCUSPARSERestoreIJ(S, PETSC_FALSE, &i, &j));
  *have = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

void Residency::adopt_coo_shadow(Mat S, bool shares_host)
{
  drop_shadow(); // a new pattern: no values anywhere yet
  shadow_        = S;
  shadow_shares_ = shares_host;
  shadow_coo_    = true;
  coo_pending_   = true;
}

PetscErrorCode Residency::adopt_product_values(Mat C, Mat inner, bool raised_on_return)
{
  PetscFunctionBegin;
  if (shadow_ != inner) {
    PetscCall(make_host_current(C)); // (values of an earlier product, still only in the old shadow)
    drop_shadow();
    PetscCall(PetscObjectReference((PetscObject)inner));
    shadow_ = inner;
  }
  MatStamp now;
  PetscCall(shadow_made_.read(C, &now));
  if (raised_on_return) now.state += 1;
  shadow_made_.made_from(now);
  host_stale_ = true;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode ShadowOf(Mat A, Mat *S)
{
  PetscFunctionBegin;
  PetscCall(Data(A)->where.shadow_for(A, S));
  PetscFunctionReturn(PETSC_SUCCESS);
}

#endif

PetscErrorCode SyncHostValues(Mat A)
{
  PetscFunctionBegin;
  if (Data(A)) PetscCall(Data(A)->where.make_host_current(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace gpumats
