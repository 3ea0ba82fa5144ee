// PETSc's own LU, ILU, Cholesky and ICC (MATSOLVERPETSC) of our Seq types.
//
// They are SeqAIJ's, run on the SeqAIJ data underneath our types: MatGetFactor finds SeqAIJ's getter
// by the "seqaij" prefix of our names (the host types' default; the GPU types' with
// -pc_factor_mat_solver_type petsc). Its ILU(0) symbolic phase copies A's composed functions into
// the factor (MatDuplicateNoCreate_SeqAIJ), ours among them, and the factor's destroy removes only
// SeqAIJ's: PETSc's -checkfunctionlist, which its test harness sets through -petsc_ci, then reports
// each of ours at the factor's destruction (PETSc 3.25's ksp tutorials with a host type swapped in:
// 17 cases). So SeqAIJ's getter is registered again here, wrapped: the same factor, whose symbolic
// phase, for a matrix of ours, is followed by the removal of our functions from the factor.
// Registering under our exact names would not do: with a solver type given, MatGetFactor takes the
// first registered name that prefixes the matrix's, SeqAIJ's; without one, the first exact name in
// registration order, where PETSc's own solver comes before cuSPARSE, the GPU types' default.
#include "type_data.hpp"

namespace gpumats {

namespace {

using GetFactorFn = PetscErrorCode (*)(Mat, MatFactorType, Mat *);

constexpr const char *kSavedSymbolic = "GpuMatsPetscSymbolic";

// the factor B of A no longer carries the functions of A's type
PetscErrorCode ForgetOursOn(Mat B, Mat A)
{
  bool              device;
  const FormatInfo *f = find_type(((PetscObject)A)->type_name, &device);

  PetscFunctionBegin;
  if (f) PetscCall(ForgetTypeFunctions(B, "seq", *f, device));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode LUFactorSymbolic(Mat B, Mat A, IS row, IS col, const MatFactorInfo *info)
{
  LUSymbolicFn saved = nullptr;

  PetscFunctionBegin;
  PetscCall(KeptFunction((PetscObject)B, kSavedSymbolic, &saved));
  PetscCheck(saved, PETSC_COMM_SELF, PETSC_ERR_PLIB, "factor without its symbolic phase");
  PetscCall(saved(B, A, row, col, info));
  PetscCall(ForgetOursOn(B, A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode CholFactorSymbolic(Mat B, Mat A, IS perm, const MatFactorInfo *info)
{
  CholSymbolicFn saved = nullptr;

  PetscFunctionBegin;
  PetscCall(KeptFunction((PetscObject)B, kSavedSymbolic, &saved));
  PetscCheck(saved, PETSC_COMM_SELF, PETSC_ERR_PLIB, "factor without its symbolic phase");
  PetscCall(saved(B, A, perm, info));
  PetscCall(ForgetOursOn(B, A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

GetFactorFn seqaij_getter[4] = {}; // SeqAIJ's own, by MatFactorType - 1 (LU, Cholesky, ILU, ICC)

PetscErrorCode GetFactorPetsc(Mat A, MatFactorType ftype, Mat *B)
{
  GetFactorFn getter = ftype >= MAT_FACTOR_LU && ftype <= MAT_FACTOR_ICC ? seqaij_getter[ftype - 1] : nullptr;
  bool        device;

  PetscFunctionBegin;
  PetscCheck(getter, PETSC_COMM_SELF, PETSC_ERR_SUP, "PETSc's factorization has no factor type %d for %s", (int)ftype, ((PetscObject)A)->type_name);
  PetscCall(getter(A, ftype, B));
  if (!find_type(((PetscObject)A)->type_name, &device)) PetscFunctionReturn(PETSC_SUCCESS); // AIJ's own: as it was
  PetscCall(RouteFactorSymbolic(*B, ftype, kSavedSymbolic, LUFactorSymbolic, CholFactorSymbolic));
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace

PetscErrorCode RegisterPetscFactors()
{
  PetscFunctionBegin;
  for (MatFactorType ft : {MAT_FACTOR_LU, MAT_FACTOR_CHOLESKY, MAT_FACTOR_ILU, MAT_FACTOR_ICC}) {
    GetFactorFn current = nullptr;
    PetscCall(MatSolverTypeGet(MATSOLVERPETSC, MATSEQAIJ, ft, nullptr, nullptr, &current));
    if (!current || current == GetFactorPetsc) continue; // (none, or ours from an earlier registration)
    seqaij_getter[ft - 1] = current;
    PetscCall(MatSolverTypeRegister(MATSOLVERPETSC, MATSEQAIJ, ft, GetFactorPetsc));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace gpumats
