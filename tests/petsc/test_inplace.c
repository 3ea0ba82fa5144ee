static char help[] = "In-place factorizations and matrices without values: what PETSc's mat tests ex15, ex68, ex107 and ex161 do with our types.\n"
                     "  -types a,b,c : types under test (default: the registry's host types)\n";

/*
   MatLUFactor and MatILUFactor factor a matrix in place: PETSc puts the factor's
   data in place of the matrix's and keeps the matrix's operations, which left ours running on
   data that was no longer theirs (the next MatDestroy crashed). For each type: the in-place
   factor of the type solves as AIJ's does, and MatView and MatDestroy work after it.

   A matrix assembled with MAT_STRUCTURE_ONLY holds a pattern without values. Its assembly and
   its conversion into the type must work (PETSc's products read such patterns); a product with a
   vector has no values to read and must fail with PETSC_ERR_ARG_WRONGSTATE, not crash. (One rank:
   the in-place factorizations are SeqAIJ's.)
*/
#include "testmats.h"

static PetscErrorCode SolveError(Mat F, Vec b, Vec x, Vec u, PetscReal *err)
{
  PetscFunctionBeginUser;
  PetscCall(MatSolve(F, b, x));
  PetscCall(VecAXPY(x, -1.0, u));
  PetscCall(VecNorm(x, NORM_INFINITY, err));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A = the poisson2d test matrix as `type`, factored in place by `kind` ("lu" or "ilu"): its solve
   of A u = b must give u back (exactly for LU) */
static PetscErrorCode InPlace(Mat A0, const char *type, const char *kind)
{
  Mat           A;
  Vec           u, b, x;
  IS            row, col;
  MatFactorInfo info;
  PetscReal     err;
  PetscBool     lu, ilu;
  char          name[256], why[128];

  PetscFunctionBeginUser;
  PetscCall(MatConvert(A0, type, MAT_INITIAL_MATRIX, &A));
  PetscCall(MatCreateVecs(A, &u, &b));
  PetscCall(VecDuplicate(u, &x));
  PetscCall(TestVector(u, 7));
  PetscCall(MatMult(A, u, b));
  PetscCall(MatFactorInfoInitialize(&info));
  PetscCall(MatGetOrdering(A, MATORDERINGNATURAL, &row, &col));
  PetscCall(PetscStrcmp(kind, "lu", &lu));
  PetscCall(PetscStrcmp(kind, "ilu", &ilu));
  if (lu) PetscCall(MatLUFactor(A, row, col, &info));
  else PetscCall(MatILUFactor(A, row, col, &info));
  PetscCall(SolveError(A, b, x, u, &err));
  PetscCall(PetscSNPrintf(name, sizeof(name), "%s in-place %s then MatSolve", type, kind));
  PetscCall(PetscSNPrintf(why, sizeof(why), "|x - u| = %g", (double)err));
  /* (ILU(0) of a 5-point Laplacian is not exact: it need only be a factorization that ran) */
  PetscCall(Check(PETSC_COMM_WORLD, (PetscBool)(ilu ? err == err : err < 1e-8), name, why));
  {
    PetscViewer v; /* (a view of the factor must not crash) */
    PetscCall(PetscViewerASCIIOpen(PETSC_COMM_SELF, "/dev/null", &v));
    PetscCall(PetscViewerPushFormat(v, PETSC_VIEWER_ASCII_INFO));
    PetscCall(MatView(A, v));
    PetscCall(PetscViewerPopFormat(v));
    PetscCall(PetscViewerDestroy(&v));
  }
  PetscCall(ISDestroy(&row));
  PetscCall(ISDestroy(&col));
  PetscCall(VecDestroy(&u));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&x));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A 20 x 20 tridiagonal pattern assembled with MAT_STRUCTURE_ONLY, as `type` directly and as AIJ
   converted in place: both work; MatMult fails with PETSC_ERR_ARG_WRONGSTATE */
static PetscErrorCode Tridiagonal(const char *type, Mat *A)
{
  PetscFunctionBeginUser;
  PetscCall(MatCreate(PETSC_COMM_SELF, A));
  PetscCall(MatSetSizes(*A, 20, 20, 20, 20));
  PetscCall(MatSetType(*A, type));
  PetscCall(MatSetOption(*A, MAT_STRUCTURE_ONLY, PETSC_TRUE));
  PetscCall(MatSetUp(*A));
  for (PetscInt i = 0; i < 20; i++)
    for (PetscInt j = PetscMax(0, i - 1); j <= PetscMin(19, i + 1); j++) PetscCall(MatSetValue(*A, i, j, 1.0, INSERT_VALUES));
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode StructureOnly(const char *type)
{
  Mat            A[2];
  Vec            x, y;
  PetscErrorCode err[2];
  char           name[256], why[128];

  PetscFunctionBeginUser;
  PetscCall(Tridiagonal(type, &A[0]));
  PetscCall(Tridiagonal(MATSEQAIJ, &A[1]));
  PetscCall(MatConvert(A[1], type, MAT_INPLACE_MATRIX, &A[1]));
  PetscCall(MatCreateVecs(A[0], &x, &y));
  PetscCall(VecSet(x, 1.0));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  for (int k = 0; k < 2; k++) err[k] = MatMult(A[k], x, y);
  PetscCall(PetscPopErrorHandler());
  PetscCall(PetscSNPrintf(name, sizeof(name), "%s MAT_STRUCTURE_ONLY: assembled, converted, MatMult refused", type));
  PetscCall(PetscSNPrintf(why, sizeof(why), "MatMult returned %d and %d, expected %d", (int)err[0], (int)err[1], (int)PETSC_ERR_ARG_WRONGSTATE));
  PetscCall(Check(PETSC_COMM_WORLD, (PetscBool)(err[0] == PETSC_ERR_ARG_WRONGSTATE && err[1] == PETSC_ERR_ARG_WRONGSTATE), name, why));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(MatDestroy(&A[0]));
  PetscCall(MatDestroy(&A[1]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  TypeList    tl;
  Mat         A0;
  PetscMPIInt size;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCheck(size == 1, PETSC_COMM_WORLD, PETSC_ERR_WRONG_MPI_SIZE, "one rank: in-place factorizations are SeqAIJ's");
  PetscCall(PetscGpuMatsInitialize());
  PetscCall(GetTypeList(&tl));
  PetscCall(TestMatrix(PETSC_COMM_SELF, "poisson2d", &A0));
  for (PetscInt t = 0; t < tl.ntypes; t++) {
    PetscCall(InPlace(A0, tl.types[t], "lu"));
    PetscCall(InPlace(A0, tl.types[t], "ilu"));
    PetscCall(StructureOnly(tl.types[t]));
  }
  PetscCall(MatDestroy(&A0));
  PetscCall(FreeTypeList(&tl));
  PetscCall(PetscFinalize());
  return check_failures ? 1 : 0;
}
