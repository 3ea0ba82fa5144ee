static char help[] = "MatMult, MatMultAdd, MatMultTranspose and MatGetDiagonal of every type under test against the reference type.\n"
                     "  -types a,b,c : types under test (default cmrs,sellp,bellpack)\n"
                     "  -ref t       : reference type (default aij)\n";

/*
   For each test matrix (testmats.h) and each type: y = A x with y prefilled with NaN (a product
   must never read y), z = y + A x into another vector and in place, y = A^T x, and the diagonal,
   all compared with the reference type within the rounding bound of any summation order.
*/
#include "testmats.h"

/* z = y + op(B) x by madd (MatMultAdd or MatMultTransposeAdd), into z prefilled with NaN and then
   in place (z = y first), each compared with zref within tol of the magnitude bound mag */
static PetscErrorCode CheckAdd(PetscErrorCode (*madd)(Mat, Vec, Vec, Vec), Mat B, Vec x, Vec y, Vec z, Vec zref, Vec mag, PetscReal tol, const char *what,
                               const char *type, const char *mname)
{
  MPI_Comm  comm = PetscObjectComm((PetscObject)B);
  PetscBool ok;
  char      why[256] = "", name[256];

  PetscFunctionBeginUser;
  PetscCall(VecSet(z, NAN));
  PetscCall(madd(B, x, y, z));
  PetscCall(CompareVecs(z, zref, mag, tol, &ok, why, sizeof(why)));
  PetscCall(PetscSNPrintf(name, sizeof(name), "%s/%s/%s", what, type, mname));
  PetscCall(Check(comm, ok, name, why));
  PetscCall(VecCopy(y, z));
  PetscCall(madd(B, x, z, z));
  PetscCall(CompareVecs(z, zref, mag, tol, &ok, why, sizeof(why)));
  PetscCall(PetscSNPrintf(name, sizeof(name), "%s-in-place/%s/%s", what, type, mname));
  PetscCall(Check(comm, ok, name, why));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CheckOne(Mat Aaij, const char *mname, const char *type, const char *ref)
{
  MPI_Comm  comm = PetscObjectComm((PetscObject)Aaij);
  Mat       B, R;
  Vec       x, y, z, yin, yref, zref, mag, xt, yt, yt_ref, magt, d, dref;
  PetscBool ok;
  char      why[256] = "", name[256];
  PetscReal tol      = 1e3 * PETSC_MACHINE_EPSILON;

  PetscFunctionBeginUser;
  PetscCall(MatConvert(Aaij, type, MAT_INITIAL_MATRIX, &B));
  PetscCall(MatConvert(Aaij, ref, MAT_INITIAL_MATRIX, &R));
  PetscCall(MatCreateVecs(B, &x, &y));
  PetscCall(VecDuplicate(y, &z));
  PetscCall(VecDuplicate(y, &yin));
  PetscCall(VecDuplicate(y, &yref));
  PetscCall(VecDuplicate(y, &zref));
  PetscCall(VecDuplicate(y, &mag));
  PetscCall(TestVector(x, 1));
  PetscCall(TestVector(yin, 2));

  /* y = A x, y full of NaN before */
  PetscCall(VecSet(y, NAN));
  PetscCall(MatMult(B, x, y));
  PetscCall(MatMult(R, x, yref));
  PetscCall(Magnitude(Aaij, x, NULL, mag));
  PetscCall(CompareVecs(y, yref, mag, tol, &ok, why, sizeof(why)));
  PetscCall(PetscSNPrintf(name, sizeof(name), "mult/%s/%s", type, mname));
  PetscCall(Check(comm, ok, name, why));

  /* z = y + A x, z != y, and in place */
  PetscCall(MatMultAdd(R, x, yin, zref));
  PetscCall(Magnitude(Aaij, x, yin, mag));
  PetscCall(CheckAdd(MatMultAdd, B, x, yin, z, zref, mag, tol, "multadd", type, mname));

  /* y = A^T x (AIJ's implementation, through the type's vectors) */
  PetscCall(MatCreateVecs(B, &yt, &xt));
  PetscCall(VecDuplicate(yt, &yt_ref));
  PetscCall(VecDuplicate(yt, &magt));
  PetscCall(TestVector(xt, 3));
  PetscCall(VecSet(yt, NAN));
  PetscCall(MatMultTranspose(B, xt, yt));
  PetscCall(MatMultTranspose(R, xt, yt_ref));
  {
    Mat At;
    PetscCall(MatTranspose(Aaij, MAT_INITIAL_MATRIX, &At));
    PetscCall(Magnitude(At, xt, NULL, magt));
    PetscCall(MatDestroy(&At));
  }
  PetscCall(CompareVecs(yt, yt_ref, magt, tol, &ok, why, sizeof(why)));
  PetscCall(PetscSNPrintf(name, sizeof(name), "multtranspose/%s/%s", type, mname));
  PetscCall(Check(comm, ok, name, why));

  /* z = y + A^T x, z != y, and in place; the magnitude bound of |A^T| |x| + |y| */
  {
    Vec yint, zt, zt_ref, magzt;
    Mat At;
    PetscCall(VecDuplicate(yt, &yint));
    PetscCall(VecDuplicate(yt, &zt));
    PetscCall(VecDuplicate(yt, &zt_ref));
    PetscCall(VecDuplicate(yt, &magzt));
    PetscCall(TestVector(yint, 4));
    PetscCall(MatTranspose(Aaij, MAT_INITIAL_MATRIX, &At));
    PetscCall(Magnitude(At, xt, yint, magzt));
    /* the reference as A^T x, then + y: aijcusparse's MatMultTransposeAdd (PETSc 3.25) adds into the
       old contents of z when z != y, which are not y */
    PetscCall(MatMultTranspose(R, xt, zt_ref));
    PetscCall(VecAXPY(zt_ref, 1.0, yint));
    PetscCall(CheckAdd(MatMultTransposeAdd, B, xt, yint, zt, zt_ref, magzt, tol, "multtransposeadd", type, mname));
    /* a change of values after a product with A^T: the transposed copy must not be used stale */
    PetscCall(MatScale(B, -3.0));
    PetscCall(MatScale(R, -3.0));
    PetscCall(MatMultTranspose(B, xt, yt));
    PetscCall(MatMultTranspose(R, xt, yt_ref));
    PetscCall(VecScale(magt, 3.0));
    PetscCall(CompareVecs(yt, yt_ref, magt, tol, &ok, why, sizeof(why)));
    PetscCall(PetscSNPrintf(name, sizeof(name), "multtranspose-after-scale/%s/%s", type, mname));
    PetscCall(Check(comm, ok, name, why));
    PetscCall(MatDestroy(&At));
    PetscCall(VecDestroy(&yint));
    PetscCall(VecDestroy(&zt));
    PetscCall(VecDestroy(&zt_ref));
    PetscCall(VecDestroy(&magzt));
  }

  /* the diagonal (Jacobi) */
  {
    PetscInt M, N;
    PetscCall(MatGetSize(B, &M, &N));
    if (M == N) {
      PetscCall(VecDuplicate(y, &d));
      PetscCall(VecDuplicate(y, &dref));
      PetscCall(MatGetDiagonal(B, d));
      PetscCall(MatGetDiagonal(R, dref));
      PetscCall(VecSet(mag, 0.0));
      PetscCall(CompareVecs(d, dref, mag, 0.0, &ok, why, sizeof(why)));
      PetscCall(PetscSNPrintf(name, sizeof(name), "getdiagonal/%s/%s", type, mname));
      PetscCall(Check(comm, ok, name, why));
      PetscCall(VecDestroy(&d));
      PetscCall(VecDestroy(&dref));
    }
  }
  PetscCall(VecDestroy(&xt));
  PetscCall(VecDestroy(&yt));
  PetscCall(VecDestroy(&yt_ref));
  PetscCall(VecDestroy(&magt));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&z));
  PetscCall(VecDestroy(&yin));
  PetscCall(VecDestroy(&yref));
  PetscCall(VecDestroy(&zref));
  PetscCall(VecDestroy(&mag));
  PetscCall(MatDestroy(&B));
  PetscCall(MatDestroy(&R));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  TypeList types;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGpuMatsInitialize());
  PetscCall(GetTypeList(&types));
  for (PetscInt m = 0; m < NTESTMATS; m++) {
    Mat A;
    PetscCall(TestMatrix(PETSC_COMM_WORLD, test_matrices[m], &A));
    for (PetscInt t = 0; t < types.ntypes; t++) PetscCall(CheckOne(A, test_matrices[m], types.types[t], types.ref));
    PetscCall(MatDestroy(&A));
  }
  PetscCall(FreeTypeList(&types));
  PetscCall(PetscFinalize());
  return check_failures ? 1 : 0;
}
