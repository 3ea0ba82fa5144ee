static char help[] = "KSP solves with every type under test take the reference type's iteration count and reach its residual.\n"
                     "  -types a,b,c : types under test (default cmrs,sellp,bellpack)\n"
                     "  -ref t       : reference type (default aij)\n";

/*
   CG with Jacobi, GMRES with the default preconditioner (ILU on one rank, block Jacobi with ILU
   on several) and GMRES with no preconditioner on SPD and nonsymmetric matrices. Products differ
   from the reference only by rounding, so iteration counts must be equal and the final residuals
   agree to a few digits. With the matrix marked symmetric (MAT_SYMMETRIC), the default
   preconditioner is ICC where the reference's is (on several ranks: block Jacobi's sub-solver on
   each rank's diagonal block, which must know what the matrix knows), and the preconditioner in
   use, block Jacobi's sub-solver's included, is the reference's in every case.
*/
#include "testmats.h"
#include <petscksp.h>

/* 3D 7-point Laplacian plus an optional convection term (nonsymmetric when beta != 0) */
static PetscErrorCode Laplacian3d(MPI_Comm comm, PetscInt g, PetscReal beta, Mat *A)
{
  PetscInt rs, re;

  PetscFunctionBeginUser;
  PetscCall(TestCreate(comm, g * g * g, g * g * g, LAYOUT_DECIDE, 1, A));
  PetscCall(MatGetOwnershipRange(*A, &rs, &re));
  for (PetscInt i = rs; i < re; i++) {
    PetscInt x = i % g, y = (i / g) % g, z = i / (g * g);
    PetscCall(MatSetValue(*A, i, i, 6.0, INSERT_VALUES));
    if (x > 0) PetscCall(MatSetValue(*A, i, i - 1, -1.0 - beta, INSERT_VALUES));
    if (x < g - 1) PetscCall(MatSetValue(*A, i, i + 1, -1.0 + beta, INSERT_VALUES));
    if (y > 0) PetscCall(MatSetValue(*A, i, i - g, -1.0, INSERT_VALUES));
    if (y < g - 1) PetscCall(MatSetValue(*A, i, i + g, -1.0, INSERT_VALUES));
    if (z > 0) PetscCall(MatSetValue(*A, i, i - g * g, -1.0, INSERT_VALUES));
    if (z < g - 1) PetscCall(MatSetValue(*A, i, i + g * g, -1.0, INSERT_VALUES));
  }
  PetscCall(TestAssemble(*A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Solve(Mat A, const char *type, KSPType ksptype, PCType pctype, PetscBool symmetric, PetscInt *its, PetscReal *rnorm, char used[64])
{
  Mat B;
  Vec x, b;
  KSP ksp;
  PC  pc;

  PetscFunctionBeginUser;
  PetscCall(MatConvert(A, type, MAT_INITIAL_MATRIX, &B));
  if (symmetric) PetscCall(MatSetOption(B, MAT_SYMMETRIC, PETSC_TRUE));
  PetscCall(MatCreateVecs(B, &x, &b));
  PetscCall(TestVector(b, 9));
  PetscCall(KSPCreate(PetscObjectComm((PetscObject)A), &ksp));
  PetscCall(KSPSetOperators(ksp, B, B));
  PetscCall(KSPSetType(ksp, ksptype));
  PetscCall(KSPGetPC(ksp, &pc));
  if (pctype) PetscCall(PCSetType(pc, pctype));
  PetscCall(KSPSetTolerances(ksp, 1e-10, PETSC_DEFAULT, PETSC_DEFAULT, 500));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(KSPGetIterationNumber(ksp, its));
  PetscCall(KSPGetResidualNorm(ksp, rnorm));
  {
    PCType    t, sub = "";
    PetscBool bj;
    PetscCall(PCGetType(pc, &t));
    PetscCall(PetscObjectTypeCompare((PetscObject)pc, PCBJACOBI, &bj));
    if (bj) {
      KSP     *subksp;
      PetscInt n;
      PC       subpc;
      PetscCall(PCBJacobiGetSubKSP(pc, &n, NULL, &subksp));
      PetscCall(KSPGetPC(subksp[0], &subpc));
      PetscCall(PCGetType(subpc, &sub));
    }
    PetscCall(PetscSNPrintf(used, 64, "%s%s%s", t, bj ? "/" : "", sub));
  }
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscCall(MatDestroy(&B));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  TypeList types;
  struct {
    const char *name;
    PetscReal   beta;
    KSPType     ksp;
    PCType      pc;
    PetscBool   symmetric;
  } cases[] = {
    {"cg-jacobi",                  0.0, KSPCG,    PCJACOBI, PETSC_FALSE},
    {"gmres-default-pc",           0.3, KSPGMRES, NULL,     PETSC_FALSE},
    {"gmres-none",                 0.3, KSPGMRES, PCNONE,   PETSC_FALSE},
    {"cg-default-pc",              0.0, KSPCG,    NULL,     PETSC_FALSE},
    {"cg-default-pc-symmetric",    0.0, KSPCG,    NULL,     PETSC_TRUE },
  };

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGpuMatsInitialize());
  PetscCall(GetTypeList(&types));
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
    Mat       A;
    PetscInt  its_ref;
    PetscReal r_ref;
    char      pc_ref[64];
    PetscCall(Laplacian3d(PETSC_COMM_WORLD, 14, cases[c].beta, &A));
    PetscCall(Solve(A, types.ref, cases[c].ksp, cases[c].pc, cases[c].symmetric, &its_ref, &r_ref, pc_ref));
    for (PetscInt t = 0; t < types.ntypes; t++) {
      PetscInt  its;
      PetscReal r;
      char      name[256], why[256], pc_used[64];
      PetscBool same_pc;
      PetscCall(Solve(A, types.types[t], cases[c].ksp, cases[c].pc, cases[c].symmetric, &its, &r, pc_used));
      PetscCall(PetscStrcmp(pc_used, pc_ref, &same_pc));
      PetscCall(PetscSNPrintf(name, sizeof(name), "ksp-pc-%s/%s", cases[c].name, types.types[t]));
      PetscCall(PetscSNPrintf(why, sizeof(why), "preconditioner %s; %s: %s", pc_used, types.ref, pc_ref));
      PetscCall(Check(PETSC_COMM_WORLD, same_pc, name, why));
      PetscCall(PetscSNPrintf(name, sizeof(name), "ksp-%s/%s", cases[c].name, types.types[t]));
      PetscCall(PetscSNPrintf(why, sizeof(why), "%" PetscInt_FMT " iterations, residual %g; %s: %" PetscInt_FMT " iterations, residual %g", its, (double)r, types.ref,
                              its_ref, (double)r_ref));
      PetscCall(Check(PETSC_COMM_WORLD, (its == its_ref && PetscAbsReal(r - r_ref) <= 1e-3 * r_ref) ? PETSC_TRUE : PETSC_FALSE, name, why));
    }
    PetscCall(MatDestroy(&A));
  }
  PetscCall(FreeTypeList(&types));
  PetscCall(PetscFinalize());
  return check_failures ? 1 : 0;
}
