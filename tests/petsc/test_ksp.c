static char help[] = "KSP solves with every type under test take the reference type's iteration count and reach its residual.\n"
                     "  -types a,b,c : types under test (default cmrs,sellp,bellpack)\n"
                     "  -ref t       : reference type (default aij)\n";

/*
   CG with Jacobi, GMRES with the default preconditioner (ILU on one rank, block Jacobi with ILU
   on several) and GMRES with no preconditioner on SPD and nonsymmetric matrices. Products differ
   from the reference only by rounding, so iteration counts must be equal and the final residuals
   agree to a few digits.
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

static PetscErrorCode Solve(Mat A, const char *type, KSPType ksptype, PCType pctype, PetscInt *its, PetscReal *rnorm)
{
  Mat B;
  Vec x, b;
  KSP ksp;
  PC  pc;

  PetscFunctionBeginUser;
  PetscCall(MatConvert(A, type, MAT_INITIAL_MATRIX, &B));
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
  } cases[] = {
    {"cg-jacobi",           0.0, KSPCG,    PCJACOBI},
    {"gmres-default-pc",    0.3, KSPGMRES, NULL    },
    {"gmres-none",          0.3, KSPGMRES, PCNONE  },
    {"cg-default-pc",       0.0, KSPCG,    NULL    },
  };

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGpuMatsInitialize());
  PetscCall(GetTypeList(&types));
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
    Mat       A;
    PetscInt  its_ref;
    PetscReal r_ref;
    PetscCall(Laplacian3d(PETSC_COMM_WORLD, 14, cases[c].beta, &A));
    PetscCall(Solve(A, types.ref, cases[c].ksp, cases[c].pc, &its_ref, &r_ref));
    for (PetscInt t = 0; t < types.ntypes; t++) {
      PetscInt  its;
      PetscReal r;
      char      name[256], why[256];
      PetscCall(Solve(A, types.types[t], cases[c].ksp, cases[c].pc, &its, &r));
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
