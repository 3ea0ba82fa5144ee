// A matrix of ours made by a DM whose matrix type is one of our root names: the DM is given the
// concrete name and its interpolations are made in it (AdoptDM, type_data.hpp).
#include "type_data.hpp"

#include <petscdm.h>
#include <petsc/private/dmimpl.h>

namespace gpumats {

namespace {

using InterpolationFn = PetscErrorCode (*)(DM, DM, Mat *, Vec *);
constexpr char kOriginalInterpolation[] = "GpuMatsCreateInterpolation";

// The DM's own interpolation, kept on the DM (KeepFunction: a DM is destroyed without telling us)
PetscErrorCode KeepOriginal(DM dm, InterpolationFn fn) { return KeepFunction((PetscObject)dm, kOriginalInterpolation, fn); }
PetscErrorCode KeptOriginal(DM dm, InterpolationFn *fn) { return KeptFunction((PetscObject)dm, kOriginalInterpolation, fn); }

// DMDA builds the interpolation of a DM with several dof per node as a MAIJ around a scalar AIJ
// (dainterp.c), and MAIJ multiplies on the host: PCMG's restriction and interpolation then copy
// vectors between host and GPU at every level of every cycle (snes ex19, 4 dof: 660 copies in
// KSPSolve against aijcusparse's 44, docs/results/solverbench-h200-large-2026-11-23.md). PETSc
// expands the MAIJ into an AIJ for aijcusparse (MatCreateMAIJ); this does the same for our types:
// the DM's interpolation is wrapped so that a MAIJ result becomes the expanded AIJ, in the DM's type.
PetscErrorCode CreateInterpolationInType(DM dmc, DM dmf, Mat *P, Vec *scale)
{
  InterpolationFn original = nullptr;
  MatType         dmtype;
  PetscBool       maij;

  PetscFunctionBegin;
  PetscCall(KeptOriginal(dmc, &original));
  PetscCheck(original, PetscObjectComm((PetscObject)dmc), PETSC_ERR_PLIB, "DM interpolation wrapper without the DM's own interpolation");
  PetscCall(original(dmc, dmf, P, scale));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)*P, &maij, MATSEQMAIJ, MATMPIMAIJ, ""));
  PetscCall(DMGetMatType(dmc, &dmtype));
  bool device;
  // (the wrapper follows the DM's coarsened and refined copies, which an application may give
  // another matrix type: snes ex48 sets its refined levels to SBAIJ, whose MAIJ stays as with aij)
  if (!maij || !dmtype || !find_type(dmtype, &device)) PetscFunctionReturn(PETSC_SUCCESS);
  PetscBool seq;
  PetscCall(PetscObjectTypeCompare((PetscObject)*P, MATSEQMAIJ, &seq));
  // A level below -dm_bind_below has its interpolation bound to the CPU by DMCreateInterpolationScale
  // (the MAIJ, before this expansion, which makes a new matrix): the expanded one is bound in its place
  PetscBool propagates, bound;
  PetscInt  rbs, cbs;
  PetscCall(MatGetBindingPropagates(*P, &propagates));
  PetscCall(MatBoundToCPU(*P, &bound));
  PetscCall(MatGetBlockSizes(*P, &rbs, &cbs));
  PetscCall(PetscInfo(*P, "MAIJ interpolation expanded into %s\n", dmtype));
  PetscCall(MatConvert(*P, seq ? MATSEQAIJ : MATMPIAIJ, MAT_INPLACE_MATRIX, P));
  PetscCall(MatConvert(*P, dmtype, MAT_INPLACE_MATRIX, P));
  // the MAIJ's block sizes (its dof), which MatConvert_MPIMAIJ_MPIAIJ drops: Galerkin coarse
  // operators (MatPtAP) take theirs from P's (snes ex40f90: bs 2 on every level with aij)
  PetscCall(MatSetBlockSizes(*P, rbs, cbs));
  if (propagates) {
    PetscCall(MatSetBindingPropagates(*P, PETSC_TRUE));
    PetscCall(MatBindToCPU(*P, bound));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode WrapInterpolation(DM dm);

// DMCoarsen and DMRefine give the new DM the matrix type but their own fresh operations: the
// wrapper (and these hooks) follow the hierarchy PCMG builds.
PetscErrorCode WrapNewLevel(DM, DM level, void *) { return WrapInterpolation(level); }

PetscErrorCode WrapInterpolation(DM dm)
{
  InterpolationFn original = nullptr;

  PetscFunctionBegin;
  if (!dm->ops->createinterpolation || dm->ops->createinterpolation == CreateInterpolationInType) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(KeptOriginal(dm, &original));
  if (!original) PetscCall(KeepOriginal(dm, dm->ops->createinterpolation));
  dm->ops->createinterpolation = CreateInterpolationInType;
  PetscCall(DMCoarsenHookAdd(dm, WrapNewLevel, nullptr, nullptr));
  PetscCall(DMRefineHookAdd(dm, WrapNewLevel, nullptr, nullptr));
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace

PetscErrorCode AdoptDM(Mat A)
{
  TypeData   *d = Data(A);
  DM          dm;
  MatType     dmtype;
  PetscMPIInt size;

  PetscFunctionBegin;
  PetscCall(MatGetDM(A, &dm));
  if (!dm) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(DMGetMatType(dm, &dmtype));
  if (!dmtype || root_name(*d->info, d->device) != dmtype) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)dm), &size));
  const std::string concrete = concrete_name(*d->info, size > 1 ? "mpi" : "seq", d->device);
  PetscCall(PetscInfo(A, "DM matrix type %s becomes %s, so that DMDA interpolation is built in it\n", dmtype, concrete.c_str()));
  PetscCall(DMSetMatType(dm, concrete.c_str()));
  PetscCall(WrapInterpolation(dm));
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace gpumats
