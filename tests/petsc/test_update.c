static char help[] = "Every way of changing an assembled matrix is seen by the next MatMult of every type under test.\n"
                     "  -types a,b,c : types under test (default cmrs,sellp,bellpack)\n";

/*
   The same change is applied to an AIJ reference and to the matrix under test; after each change
   their products must agree. Changes: values set and added after assembly, a new nonzero (also in
   the off-diagonal block of another rank), MatZeroRows, MatScale, MatShift, MatDiagonalSet,
   MatStoreValues/MatRetrieveValues, and direct writes through MatSeqAIJGetArray. MatSetValues
   without re-assembly must make MatMult refuse rather than use a stale copy.
*/
#include "testmats.h"

typedef PetscErrorCode (*Change)(Mat, PetscInt);

static PetscErrorCode Reassemble(Mat A)
{
  PetscFunctionBeginUser;
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SetValues(Mat A, PetscInt step)
{
  PetscInt rs, re, N;

  PetscFunctionBeginUser;
  PetscCall(MatGetSize(A, NULL, &N));
  PetscCall(MatGetOwnershipRange(A, &rs, &re));
  re = PetscMin(re, N); /* diagonal entries of a rectangular matrix stop at its width */
  for (PetscInt i = rs; i < re; i += 7) PetscCall(MatSetValue(A, i, i, 10.0 + step, INSERT_VALUES));
  PetscCall(MatAssemblyBegin(A, MAT_FLUSH_ASSEMBLY)); /* inserting and adding need a flush in between */
  PetscCall(MatAssemblyEnd(A, MAT_FLUSH_ASSEMBLY));
  for (PetscInt i = rs + 1; i < re; i += 5) PetscCall(MatSetValue(A, i, i, 0.5, ADD_VALUES));
  PetscCall(Reassemble(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode NewNonzeros(Mat A, PetscInt step)
{
  PetscInt rs, re, N;

  PetscFunctionBeginUser;
  PetscCall(MatGetSize(A, NULL, &N));
  PetscCall(MatGetOwnershipRange(A, &rs, &re));
  /* far from the diagonal: a new column of the diagonal block or of another rank's columns */
  for (PetscInt i = rs; i < re; i += 11) PetscCall(MatSetValue(A, i, (i * 37 + 5 + step) % N, 0.25, ADD_VALUES));
  PetscCall(Reassemble(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode ZeroRows(Mat A, PetscInt step)
{
  PetscInt rs, re, rows[4], n = 0;

  PetscFunctionBeginUser;
  PetscCall(MatGetOwnershipRange(A, &rs, &re));
  for (PetscInt i = rs + step; i < re && n < 4; i += 13) rows[n++] = i;
  PetscCall(MatZeroRows(A, n, rows, 2.0, NULL, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Scale(Mat A, PetscInt step)
{
  PetscFunctionBeginUser;
  PetscCall(MatScale(A, -1.5));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscBool Square(Mat A)
{
  PetscInt M, N;
  MatGetSize(A, &M, &N);
  return M == N ? PETSC_TRUE : PETSC_FALSE;
}

static PetscErrorCode Shift(Mat A, PetscInt step)
{
  PetscFunctionBeginUser;
  if (Square(A)) PetscCall(MatShift(A, 3.0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DiagonalSet(Mat A, PetscInt step)
{
  Vec d;

  PetscFunctionBeginUser;
  if (!Square(A)) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatCreateVecs(A, NULL, &d));
  PetscCall(TestVector(d, 40 + step));
  PetscCall(MatDiagonalSet(A, d, INSERT_VALUES));
  PetscCall(VecDestroy(&d));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Store, scale, retrieve: the retrieved values must be the ones used next. */
static PetscErrorCode StoreRetrieve(Mat A, PetscInt step)
{
  Vec x, y;

  PetscFunctionBeginUser;
  PetscCall(MatSetOption(A, MAT_NEW_NONZERO_LOCATIONS, PETSC_FALSE));
  PetscCall(MatStoreValues(A));
  PetscCall(MatScale(A, 5.0));
  PetscCall(MatCreateVecs(A, &x, &y));
  PetscCall(VecSet(x, 1.0));
  PetscCall(MatMult(A, x, y)); /* builds the format copy of the scaled values */
  PetscCall(MatRetrieveValues(A));
  PetscCall(MatSetOption(A, MAT_NEW_NONZERO_LOCATIONS, PETSC_TRUE));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Writes straight into the CSR values of a sequential matrix. */
static PetscErrorCode WriteArray(Mat A, PetscInt step)
{
  PetscMPIInt  size;
  PetscScalar *a;
  PetscInt     nz;
  MatInfo      info;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
  if (size > 1) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatGetInfo(A, MAT_LOCAL, &info));
  nz = (PetscInt)info.nz_used;
  PetscCall(MatSeqAIJGetArray(A, &a));
  for (PetscInt k = 0; k < nz; k += 3) a[k] = 1.0 / (1.0 + k);
  PetscCall(MatSeqAIJRestoreArray(A, &a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Compare(Mat R, Mat B, const char *name)
{
  return CheckSameProduct(R, B, 5, name);
}

/* MatSetValues after assembly and no re-assembly: MatMult must refuse (never use the stale copy). */
static PetscErrorCode UnassembledRefused(Mat B, const char *name)
{
  Vec            x, y;
  PetscErrorCode err;
  PetscInt       rs, re;

  PetscFunctionBeginUser;
  PetscCall(MatCreateVecs(B, &x, &y));
  PetscCall(VecSet(x, 1.0));
  PetscCall(MatGetOwnershipRange(B, &rs, &re));
  /* every rank sets a value (a rank without rows into another rank's row), so every rank's
     MatMult must refuse and none enters the ghost exchange alone */
  PetscCall(MatSetValue(B, re > rs ? rs : 0, re > rs ? rs : 0, 1.0, ADD_VALUES));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  err = MatMult(B, x, y);
  PetscCall(PetscPopErrorHandler());
  PetscCall(Check(PetscObjectComm((PetscObject)B), err ? PETSC_TRUE : PETSC_FALSE, name, "MatMult ran on an unassembled matrix"));
  PetscCall(Reassemble(B));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  TypeList    types;
  const char *mats[]    = {"poisson2d", "random-empty-rows", "rank-without-rows", "blocks3"};
  const char *cnames[]  = {"set-values", "new-nonzeros", "zero-rows", "scale", "shift", "diagonal-set", "store-retrieve", "write-array"};
  Change      changes[] = {SetValues, NewNonzeros, ZeroRows, Scale, Shift, DiagonalSet, StoreRetrieve, WriteArray};

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGpuMatsInitialize());
  PetscCall(GetTypeList(&types));
  for (size_t m = 0; m < sizeof(mats) / sizeof(mats[0]); m++) {
    for (PetscInt t = 0; t < types.ntypes; t++) {
      Mat  A, B;
      char name[256];
      PetscCall(TestMatrix(PETSC_COMM_WORLD, mats[m], &A));
      PetscCall(MatConvert(A, types.types[t], MAT_INITIAL_MATRIX, &B));
      for (size_t c = 0; c < sizeof(changes) / sizeof(changes[0]); c++) {
        PetscCall(changes[c](A, (PetscInt)c));
        PetscCall(changes[c](B, (PetscInt)c));
        PetscCall(PetscSNPrintf(name, sizeof(name), "%s/%s/%s", cnames[c], types.types[t], mats[m]));
        PetscCall(Compare(A, B, name));
      }
      PetscCall(PetscSNPrintf(name, sizeof(name), "unassembled-refused/%s/%s", types.types[t], mats[m]));
      PetscCall(UnassembledRefused(B, name));
      PetscCall(MatDestroy(&A));
      PetscCall(MatDestroy(&B));
    }
  }
  PetscCall(FreeTypeList(&types));
  PetscCall(PetscFinalize());
  return check_failures ? 1 : 0;
}
