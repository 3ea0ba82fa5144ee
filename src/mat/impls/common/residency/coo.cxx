// MatSetPreallocationCOO / MatSetValuesCOO with device value arrays on the GPU types.
//
// Host value arrays need nothing of ours: the types inherit SeqAIJ's and MPIAIJ's COO operations,
// which end in a final assembly (or at least a state change) after which the format copy is
// brought up to date like after any change (tests/petsc/test_coo.c). What is here only exists with
// a CUDA-enabled PETSc, and only for the *cuda types:
//
// Seq (seqaij<format>cuda), values on the device:
//   - MatSetPreallocationCOO runs SeqAIJ's (A's pattern and its host COO maps, so host values
//     keep working) and makes A's aijcusparse shadow (cusparse_bridge.cxx) anew on A's own host arrays,
//     with A's host COO maps and a device copy of them, as aijcusparse's preallocation leaves its
//     matrix (PETSc 3.25 on; before, the shadow gets a COO preallocation of its own, which sorts
//     the triplets a second time).
//   - MatSetValuesCOO(device v) hands v to the shadow's MatSetValuesCOO (PETSc's device scatter;
//     for ADD_VALUES the shadow first gets A's current values), then marks A's host values stale
//     (Residency::values_written_in_shadow): the shadow is now the authoritative copy of A's values.
//   - The format copy is refilled from the shadow's device values (UpdateValuesFromDevice, the
//     values-only path with the slot maps on the GPU) in Build (seq.cxx), without a host round
//     trip (a copy with a value dictionary is encoded anew there, or keeps the new values plain
//     where no dictionary holds them); where that path cannot serve (the first values after a new
//     pattern) the host values are brought up to date first and the copy converted as usual.
//   - The host values are brought up to date (one download from the shadow) lazily, when
//     something reads them: A's MatSeqAIJGetArray/Read/Write and MatSeqAIJGetCSRAndMemType go
//     through Mat_SeqAIJ's ops hooks, as aijcusparse's do (every SeqAIJ host operation reads its
//     values through MatSeqAIJGetArrayRead since PETSc 3.16), and MatDuplicate and MatConvert
//     back to AIJ sync explicitly. Host values (MatSetValuesCOO with a host v) sync first too.
// MPI (mpiaij<format>cuda), values on the device: copied to the host once and handed to
//   MPIAIJ's MatSetValuesCOO (a round trip; the device path for the MPI types is future work).
// MPI, every type and build: MPIAIJ's MatSetPreallocationCOO makes new diagonal and off-diagonal
//   blocks and converts them into the matrix's root type, which for ours is one of our Seq types.
//   The MPI type keeps the format copies of its blocks itself (mpi.cxx), so such blocks would hold
//   a second copy each, and PETSc's converters out of MPIAIJ replace a block of an unknown type
//   with an empty one (MatSetType: mpiaijcusparse multiplied to zero). The blocks are made plain
//   SeqAIJ again after the preallocation, as MPIAIJ's other preallocations leave them.
//
// The Mat_SeqAIJ hooks need PETSc's private header src/mat/impls/aij/seq/aij.h, found where PETSc
// is used from its source tree (PETSC_DIR/PETSC_ARCH), as the GPU builds are.
#include "../types/seq_mpi.hpp"

#if PetscDefined(HAVE_CUDA)
  #include <petscdevice.h>                   // PetscGetMemType
  #include <../src/mat/impls/aij/seq/aij.h> // Mat_SeqAIJ and its ops hooks
  #include "../cuda/device.hpp"
#endif

namespace gpumats {

namespace {

using PreallocFn  = PetscErrorCode (*)(Mat, PetscCount, PetscInt[], PetscInt[]);
using SetValuesFn = PetscErrorCode (*)(Mat, const PetscScalar[], InsertMode);

PetscErrorCode MpiPreallocationCOO(Mat A, PetscCount n, PetscInt coo_i[], PetscInt coo_j[])
{
  Mat Ad, Ao;

  PetscFunctionBegin;
  Data(A)->ncoo = n;
  PetscCall(reinterpret_cast<PreallocFn>(Data(A)->coo_saved[0])(A, n, coo_i, coo_j));
  PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, &Ao, nullptr));
  for (Mat block : {Ad, Ao}) {
    PetscBool plain;
    PetscCall(PetscObjectTypeCompare((PetscObject)block, MATSEQAIJ, &plain));
    if (!plain) PetscCall(MatConvert(block, MATSEQAIJ, MAT_INPLACE_MATRIX, &block));
  }
  PetscCall(Data(A)->blocks_replaced(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace

#if PetscDefined(HAVE_CUDA)

namespace {

// ---- the host values of a Seq GPU matrix whose values arrived on the device -------------------

PetscErrorCode GetArray(Mat A, PetscScalar **v)
{
  PetscFunctionBegin;
  PetscCall(SyncHostValues(A));
  *v = ((Mat_SeqAIJ *)A->data)->a;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GetArrayRead(Mat A, const PetscScalar **v)
{
  PetscFunctionBegin;
  PetscCall(SyncHostValues(A));
  *v = ((Mat_SeqAIJ *)A->data)->a;
  PetscFunctionReturn(PETSC_SUCCESS);
}

// every value is overwritten: no download, the host side becomes the current one
PetscErrorCode GetArrayWrite(Mat A, PetscScalar **v)
{
  PetscFunctionBegin;
  if (Data(A)) Data(A)->where.host_written();
  *v = ((Mat_SeqAIJ *)A->data)->a;
  PetscFunctionReturn(PETSC_SUCCESS);
}

// (PETSc's MatSeqAIJRestoreArray* raise the state after writes themselves)
PetscErrorCode RestoreArray(Mat, PetscScalar **v)
{
  *v = nullptr;
  return PETSC_SUCCESS;
}

PetscErrorCode RestoreArrayRead(Mat, const PetscScalar **v)
{
  *v = nullptr;
  return PETSC_SUCCESS;
}

PetscErrorCode GetCSRAndMemType(Mat A, const PetscInt **i, const PetscInt **j, PetscScalar **a, PetscMemType *mtype)
{
  Mat_SeqAIJ *aij = (Mat_SeqAIJ *)A->data;

  PetscFunctionBegin;
  PetscCall(SyncHostValues(A));
  if (i) *i = aij->i;
  if (j) *j = aij->j;
  if (a) *a = aij->a;
  if (mtype) *mtype = PETSC_MEMTYPE_HOST;
  PetscFunctionReturn(PETSC_SUCCESS);
}

void SetArrayHooks(Mat A, bool on)
{
  Mat_SeqAIJ *aij = (Mat_SeqAIJ *)A->data;
  if (!aij) return;
  aij->ops->getarray          = on ? GetArray : nullptr;
  aij->ops->restorearray      = on ? RestoreArray : nullptr;
  aij->ops->getarrayread      = on ? GetArrayRead : nullptr;
  aij->ops->restorearrayread  = on ? RestoreArrayRead : nullptr;
  aij->ops->getarraywrite     = on ? GetArrayWrite : nullptr;
  aij->ops->restorearraywrite = on ? RestoreArray : nullptr;
  aij->ops->getcsrandmemtype  = on ? GetCSRAndMemType : nullptr;
}

// ---- COO ------------------------------------------------------------------------------------

#if PETSC_VERSION_GE(3, 25, 0)
// The device twin of SeqAIJ's COO maps, as aijcusparse's own preallocation makes it (its container
// "__PETSc_MatCOOStruct_Device", read by its MatSetValuesCOO): the host struct with jmap and perm
// on the GPU. coo comes first, so the container's pointer is this struct's.
struct DeviceCOO {
  MatCOOStruct_SeqAIJ coo;
  cuda::Buffer        jmap, perm;
};

PetscErrorCode DestroyDeviceCOO(PetscCtxRt ctx)
{
  delete reinterpret_cast<DeviceCOO *>(*static_cast<MatCOOStruct_SeqAIJ **>(ctx));
  return PETSC_SUCCESS;
}

// The shadow of a COO-preallocated A: an aijcusparse matrix on A's own host arrays (as ShadowOf
// makes them) with A's COO maps, the host ones shared and a device copy of them. SeqAIJ's COO
// preallocation (the sort of the triplets) runs once, on A; the shadow's own preallocation would
// run it a second time.
PetscErrorCode CooShadow(Mat A, Mat *S)
{
  const PetscInt      *ia, *ja;
  PetscInt             n;
  PetscBool            done;
  PetscContainer       host;
  MatCOOStruct_SeqAIJ *h;

  PetscFunctionBegin;
  PetscCall(PetscObjectQuery((PetscObject)A, "__PETSc_MatCOOStruct_Host", (PetscObject *)&host));
  PetscCheck(host, PETSC_COMM_SELF, PETSC_ERR_PLIB, "SeqAIJ's MatSetPreallocationCOO left no COO maps on a %s", ((PetscObject)A)->type_name);
  PetscCall(PetscContainerGetPointer(host, &h));
  PetscCall(MatGetRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_PLIB, "no CSR row structure for the cuSPARSE shadow of a %s", ((PetscObject)A)->type_name);
  PetscCall(SharedShadow(A, ia, ja, ((Mat_SeqAIJ *)A->data)->a, S));
  PetscCall(MatRestoreRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  PetscCall(PetscObjectCompose((PetscObject)*S, "__PETSc_MatCOOStruct_Host", (PetscObject)host));
  auto *dc = new DeviceCOO;
  dc->coo  = *h;
  PetscErrorCode err = guarded(PETSC_COMM_SELF, "copying the COO maps to the GPU", [&] {
    dc->jmap = cuda::upload(h->jmap, std::size_t(h->nz + 1));
    dc->perm = cuda::upload(h->perm, std::size_t(h->Atot));
  });
  if (err) delete dc;
  PetscCall(err);
  dc->coo.jmap = dc->jmap.as<PetscCount>();
  dc->coo.perm = dc->perm.as<PetscCount>();
  PetscCall(PetscObjectContainerCompose((PetscObject)*S, "__PETSc_MatCOOStruct_Device", &dc->coo, DestroyDeviceCOO));
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif

PetscErrorCode SeqPreallocationCOO(Mat A, PetscCount n, PetscInt coo_i[], PetscInt coo_j[])
{
  TypeData *d = Data(A);
  Mat       S;

  PetscFunctionBegin;
  d->where.drop_shadow(); // a new pattern: no values anywhere yet
#if PETSC_VERSION_GE(3, 25, 0)
  PetscCall(reinterpret_cast<PreallocFn>(d->coo_saved[0])(A, n, coo_i, coo_j));
  PetscCall(CooShadow(A, &S));
  d->where.adopt_coo_shadow(S, true);
#else
  {
    PetscInt *i, *j; // PETSc may change the arrays it is given: the shadow gets the caller's triplets
    PetscCall(PetscMalloc2(n, &i, n, &j));
    PetscCall(PetscArraycpy(i, coo_i, n));
    PetscCall(PetscArraycpy(j, coo_j, n));
    PetscCall(reinterpret_cast<PreallocFn>(d->coo_saved[0])(A, n, coo_i, coo_j));
    PetscCall(MatCreate(PETSC_COMM_SELF, &S));
    PetscCall(MatSetSizes(S, A->rmap->n, A->cmap->n, A->rmap->n, A->cmap->n));
    PetscCall(MatSetBlockSizesFromMats(S, A, A));
    PetscCall(MatSetType(S, MATSEQAIJCUSPARSE));
    PetscCall(MatSetPreallocationCOO(S, n, i, j));
    PetscCall(PetscFree2(i, j));
    d->where.adopt_coo_shadow(S, false);
  }
#endif
  d->ncoo = n;
  SetArrayHooks(A, true); // (again: SeqAIJ's preallocation keeps A->data, but cheap to be sure)
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SeqSetValuesCOO(Mat A, const PetscScalar v[], InsertMode mode)
{
  TypeData    *d = Data(A);
  PetscMemType mtype = PETSC_MEMTYPE_HOST;
  Mat          S;

  PetscFunctionBegin;
  if (v) PetscCall(PetscGetMemType(v, &mtype));
  if (PetscMemTypeHost(mtype)) {
    PetscCall(SyncHostValues(A)); // ADD_VALUES adds to the current values
    PetscCall(reinterpret_cast<SetValuesFn>(d->coo_saved[1])(A, v, mode));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (!d->where.coo_in_shadow()) { // the COO maps are SeqAIJ's only (preallocated before A was of our type): through the host
    std::vector<PetscScalar> h(std::size_t(d->ncoo > 0 ? d->ncoo : 0));
    PetscCheck(d->ncoo >= 0, PETSC_COMM_SELF, PETSC_ERR_SUP, "MatSetValuesCOO with device values on a %s: call MatSetPreallocationCOO on it first",
               ((PetscObject)A)->type_name);
    PetscCall(guarded(PETSC_COMM_SELF, "copying COO values to the host", [&] { cuda::copy_to_host_sync(h.data(), v, h.size() * sizeof(PetscScalar), nullptr); }));
    PetscCall(SyncHostValues(A));
    PetscCall(reinterpret_cast<SetValuesFn>(d->coo_saved[1])(A, h.data(), mode));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  // the shadow with A's current values (uploaded unless it holds them), then PETSc's device scatter
  PetscCall(ShadowOf(A, &S));
  PetscCall(MatSetValuesCOO(S, v, mode));
  d->where.values_written_in_shadow(); // Build (seq.cxx) refills the copy from them
  PetscFunctionReturn(PETSC_SUCCESS);
}

// device values: one copy to the host, then MPIAIJ's (which sends remote entries on the host)
PetscErrorCode MpiSetValuesCOO(Mat A, const PetscScalar v[], InsertMode mode)
{
  TypeData    *d = Data(A);
  PetscMemType mtype = PETSC_MEMTYPE_HOST;

  PetscFunctionBegin;
  if (v) PetscCall(PetscGetMemType(v, &mtype));
  if (PetscMemTypeHost(mtype)) {
    PetscCall(reinterpret_cast<SetValuesFn>(d->coo_saved[1])(A, v, mode));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCheck(d->ncoo >= 0, PETSC_COMM_SELF, PETSC_ERR_SUP, "MatSetValuesCOO with device values on a %s: call MatSetPreallocationCOO on it first",
             ((PetscObject)A)->type_name);
  std::vector<PetscScalar> h(std::size_t(d->ncoo));
  PetscCall(guarded(PETSC_COMM_SELF, "copying COO values to the host", [&] { cuda::copy_to_host_sync(h.data(), v, h.size() * sizeof(PetscScalar), nullptr); }));
  PetscCall(PetscLogGpuToCpu((PetscLogDouble)(h.size() * sizeof(PetscScalar))));
  PetscCall(reinterpret_cast<SetValuesFn>(d->coo_saved[1])(A, h.data(), mode));
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace

#endif

// Seq: device values only (a CUDA PETSc and a GPU type); MPI: the preallocation always (its
// blocks), the values with device values only
PetscErrorCode InstallCOO(Mat A, bool mpi)
{
  TypeData  *d      = Data(A);
  const bool device = d->device && PetscDefined(HAVE_CUDA);
  OpFn       f0 = nullptr, f1 = nullptr;

  PetscFunctionBegin;
  if (!mpi && !device) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscObjectQueryFunction((PetscObject)A, "MatSetPreallocationCOO_C", &f0));
  PetscCall(PetscObjectQueryFunction((PetscObject)A, "MatSetValuesCOO_C", &f1));
  if (!f0 || !f1) PetscFunctionReturn(PETSC_SUCCESS); // PETSc's generic fallback (MatSetValues) then: host only
  // never save our own (which would call itself): installed once per TypeData, removed by ToAIJ
  PetscCheck(f0 != reinterpret_cast<OpFn>(MpiPreallocationCOO), PETSC_COMM_SELF, PETSC_ERR_PLIB, "petsc-gpumats: COO operations installed twice on a %s",
             ((PetscObject)A)->type_name);
  d->coo_saved[0] = f0, d->coo_saved[1] = f1;
  if (mpi) PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatSetPreallocationCOO_C", MpiPreallocationCOO));
#if PetscDefined(HAVE_CUDA)
  PetscCheck(f0 != reinterpret_cast<OpFn>(SeqPreallocationCOO), PETSC_COMM_SELF, PETSC_ERR_PLIB, "petsc-gpumats: COO operations installed twice on a %s",
             ((PetscObject)A)->type_name);
  if (mpi && device) PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatSetValuesCOO_C", MpiSetValuesCOO));
  if (!mpi) {
    PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatSetPreallocationCOO_C", SeqPreallocationCOO));
    PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatSetValuesCOO_C", SeqSetValuesCOO));
    SetArrayHooks(A, true);
  }
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode UninstallCOO(Mat A, bool mpi, bool destroying)
{
  TypeData *d = Data(A);

  PetscFunctionBegin;
  if (!d || !d->coo_saved[0]) PetscFunctionReturn(PETSC_SUCCESS);
#if PetscDefined(HAVE_CUDA)
  if (!mpi) {
    PetscCall(SyncHostValues(A)); // the plain SeqAIJ left behind reads its host values
    SetArrayHooks(A, false);
  }
#endif
  // (destroying: ours removed, AIJ's not put back, see UninstallType)
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatSetPreallocationCOO_C", destroying ? nullptr : reinterpret_cast<PreallocFn>(d->coo_saved[0])));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatSetValuesCOO_C", destroying ? nullptr : reinterpret_cast<SetValuesFn>(d->coo_saved[1])));
  d->coo_saved[0] = d->coo_saved[1] = nullptr;
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace gpumats
