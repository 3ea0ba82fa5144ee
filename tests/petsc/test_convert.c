static char help[] = "MatConvert to and from every type under test (initial, reuse, in place), between types, MatDuplicate and MatCopy.\n"
                     "  -types a,b,c : types under test (default cmrs,sellp,bellpack)\n";

/*
   Round trips must be exact: AIJ -> type -> AIJ gives back the very same matrix (MatEqual on AIJ
   compares values bit for bit). Converted, duplicated and copied matrices keep the type and
   multiply like the source. A conversion builds each format copy once (MatGpuMatsGetUpdateCounts),
   and a change right after it, without assembly, is seen.
*/
#include <petsc/private/matimpl.h> /* the composed functions of a matrix (its qlist) */
#include "testmats.h"

/* B x == A x (A: AIJ) within rounding; names the check */
static PetscErrorCode CheckProduct(Mat A, Mat B, const char *name)
{
  return CheckSameProduct(A, B, 11, name);
}

/* the matrix's type is <seq|mpi><root> */
static PetscErrorCode CheckType(Mat B, const char *root, const char *name)
{
  PetscMPIInt size;
  char        expect[64];
  PetscBool   ok;
  MatType     t;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)B), &size));
  PetscCall(ConcreteName(root, size, expect, sizeof(expect)));
  PetscCall(MatGetType(B, &t));
  PetscCall(PetscStrcmp(t, expect, &ok));
  PetscCall(Check(PetscObjectComm((PetscObject)B), ok, name, t));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* once converted back to AIJ, C carries no function composed under our type's name (PETSc's
   -checkfunctionlist lists every one left when the matrix is destroyed) */
static PetscErrorCode CheckNoneComposed(Mat C, const char *root, const char *name)
{
  PetscMPIInt  size;
  char         concrete[64], first[256] = "";
  const char **names = NULL;
  int          n     = 0;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)C), &size));
  PetscCall(ConcreteName(root, size, concrete, sizeof(concrete)));
  PetscCall(PetscFunctionListGet(((PetscObject)C)->qlist, &names, &n));
  for (int i = 0; i < n && !first[0]; i++)
    if (names[i] && strstr(names[i], concrete)) PetscCall(PetscStrncpy(first, names[i], sizeof(first)));
  PetscCall(PetscFree(names));
  PetscCall(Check(PetscObjectComm((PetscObject)C), first[0] ? PETSC_FALSE : PETSC_TRUE, name, first));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CheckExact(Mat A, Mat C, const char *name)
{
  PetscBool eq;

  PetscFunctionBeginUser;
  PetscCall(MatEqual(A, C, &eq));
  PetscCall(Check(PetscObjectComm((PetscObject)A), eq, name, "values or pattern differ"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* B's copies brought up to date since (c, v) */
static PetscErrorCode UpdatesSince(Mat B, PetscInt64 c, PetscInt64 v, PetscInt64 *n)
{
  PetscInt64 c1, v1;

  PetscFunctionBeginUser;
  PetscCall(MatGpuMatsGetUpdateCounts(B, &c1, &v1));
  *n = (c1 - c) + (v1 - v);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A duplicate of B (converted from the AIJ matrix A, their values equal) assembled with a new value
   each time, after a product. Used between assemblies (a Newton step's Jacobian): each assembly brings the
   copies up to date, at `assembly`. Assembled many times before a use (MatFilter assembles once per
   row it filters): the first assembly does, the others leave it to the use, which does it once; at
   `use` only the use does. Every product agrees with a reference that takes the same values. */
static PetscErrorCode AssembliesBeforeUse(Mat B, Mat A, const char *when, const char *type, const char *mname, Vec x, Vec y)
{
  const PetscBool at_assembly = strcmp(when, "assembly") ? PETSC_FALSE : PETSC_TRUE;
  PetscMPIInt     size;
  PetscInt64      c, v, n, per, refills = 0;
  PetscInt        rs, re, ncols, col = -1;
  const PetscInt *cols;
  Mat             R, D;
  MPI_Comm        comm = PetscObjectComm((PetscObject)B);
  char            name[256];

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  per = size > 1 ? 2 : 1; /* (an MPI matrix counts its two blocks) */
  PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &R));
  PetscCall(MatDuplicate(B, MAT_COPY_VALUES, &D)); /* (B stays as it is for the checks after this) */
  PetscCall(MatMult(D, x, y));
  PetscCall(MatGetOwnershipRange(R, &rs, &re));
  if (re > rs) { /* an entry of this rank's first row, so that the pattern stays (0 rows: nothing to set) */
    PetscCall(MatGetRow(R, rs, &ncols, &cols, NULL));
    if (ncols) col = cols[0];
    PetscCall(MatRestoreRow(R, rs, &ncols, &cols, NULL));
  }
  for (PetscInt k = 0; k < 33; k++) {
    const PetscBool used_between = k < 3 ? PETSC_TRUE : PETSC_FALSE; /* 3 used between, then 30 not */
    if (col >= 0) {
      PetscCall(MatSetValue(R, rs, col, 2.0 + k, INSERT_VALUES));
      PetscCall(MatSetValue(D, rs, col, 2.0 + k, INSERT_VALUES));
    }
    PetscCall(MatGpuMatsGetUpdateCounts(D, &c, &v));
    PetscCall(MatAssemblyBegin(R, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(R, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyBegin(D, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(D, MAT_FINAL_ASSEMBLY));
    PetscCall(UpdatesSince(D, c, v, &n));
    if (used_between || k == 3) {
      PetscCall(PetscSNPrintf(name, sizeof(name), "assembly-%s-%s-builds/%s/%s", when, used_between ? "after-use" : "first-unused", type, mname));
      PetscCall(Check(comm, n == (at_assembly ? per : 0) ? PETSC_TRUE : PETSC_FALSE, name, "an assembly after a use did not refresh the copies as -mat_gpumats_build_at says"));
    } else refills += n;
    if (used_between) {
      PetscCall(PetscSNPrintf(name, sizeof(name), "assembly-%s-used-between-product/%s/%s", when, type, mname));
      PetscCall(CheckProduct(R, D, name));
    }
  }
  PetscCall(PetscSNPrintf(name, sizeof(name), "assembly-%s-unused-again-builds-nothing/%s/%s", when, type, mname));
  PetscCall(Check(comm, refills == 0 ? PETSC_TRUE : PETSC_FALSE, name, "assemblies refilled copies that nothing had used since the last one"));
  PetscCall(MatGpuMatsGetUpdateCounts(D, &c, &v));
  PetscCall(MatMult(D, x, y));
  PetscCall(UpdatesSince(D, c, v, &n));
  PetscCall(PetscSNPrintf(name, sizeof(name), "assembly-%s-unused-built-at-use/%s/%s", when, type, mname));
  PetscCall(Check(comm, n == per ? PETSC_TRUE : PETSC_FALSE, name, "the first use after 30 unused assemblies did not bring the copies up to date once"));
  PetscCall(PetscSNPrintf(name, sizeof(name), "assembly-%s-unused-product/%s/%s", when, type, mname));
  PetscCall(CheckProduct(R, D, name));
  PetscCall(MatDestroy(&R));
  PetscCall(MatDestroy(&D));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CheckType_(Mat A, const char *mname, const char *type, TypeList *types)
{
  Mat  B, C, D, E, A2, F;
  char name[256];

  PetscFunctionBeginUser;
  /* initial: AIJ -> type -> AIJ */
  PetscCall(MatConvert(A, type, MAT_INITIAL_MATRIX, &B));
  PetscCall(PetscSNPrintf(name, sizeof(name), "convert-initial-type/%s/%s", type, mname));
  PetscCall(CheckType(B, type, name));
  PetscCall(PetscSNPrintf(name, sizeof(name), "convert-initial-product/%s/%s", type, mname));
  PetscCall(CheckProduct(A, B, name));
  PetscCall(MatConvert(B, MATAIJ, MAT_INITIAL_MATRIX, &C));
  PetscCall(PetscSNPrintf(name, sizeof(name), "convert-back-type/%s/%s", type, mname));
  PetscCall(CheckType(C, "aij", name));
  PetscCall(PetscSNPrintf(name, sizeof(name), "round-trip-exact/%s/%s", type, mname));
  PetscCall(CheckExact(A, C, name));

  /* PETSc's own ILU(0) of ours (SeqAIJ's, whose symbolic phase copies the matrix's composed
     functions into the factor): the factor carries none of ours */
  {
    PetscMPIInt size;
    PetscInt    m, n;
    PetscBool   missing = PETSC_TRUE;
    PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
    PetscCall(MatGetSize(B, &m, &n));
    if (size == 1 && m == n && m > 0) { /* (MatMissingDiagonal is gone from later PETSc) */
      missing = PETSC_FALSE;
      for (PetscInt i = 0; i < m && !missing; i++) {
        PetscInt        nc;
        const PetscInt *cols;
        PetscBool       found = PETSC_FALSE;
        PetscCall(MatGetRow(B, i, &nc, &cols, NULL));
        for (PetscInt k = 0; k < nc; k++) found = (PetscBool)(found || cols[k] == i);
        PetscCall(MatRestoreRow(B, i, &nc, &cols, NULL));
        missing = (PetscBool)!found;
      }
    }
    if (!missing) {
      Mat           Fct;
      IS            rows, cols;
      MatFactorInfo info;
      PetscCall(MatGetFactor(B, MATSOLVERPETSC, MAT_FACTOR_ILU, &Fct));
      PetscCall(MatGetOrdering(B, MATORDERINGNATURAL, &rows, &cols));
      PetscCall(MatFactorInfoInitialize(&info));
      info.fill = 1.0;
      PetscCall(MatILUFactorSymbolic(Fct, B, rows, cols, &info));
      PetscCall(PetscSNPrintf(name, sizeof(name), "petsc-ilu-factor-none-composed/%s/%s", type, mname));
      PetscCall(CheckNoneComposed(Fct, type, name));
      PetscCall(ISDestroy(&rows));
      PetscCall(ISDestroy(&cols));
      PetscCall(MatDestroy(&Fct));
    }
  }

  /* out of our type into the reference's (aijcusparse in the GPU suite): that type, same product */
  {
    Mat       G, Aref;
    PetscBool same;
    PetscCall(MatConvert(B, types->ref, MAT_INITIAL_MATRIX, &G));
    PetscCall(MatConvert(A, types->ref, MAT_INITIAL_MATRIX, &Aref));
    MatType   gt, rt;
    PetscCall(MatGetType(G, &gt));
    PetscCall(MatGetType(Aref, &rt));
    PetscCall(PetscStrcmp(gt, rt, &same));
    PetscCall(PetscSNPrintf(name, sizeof(name), "convert-to-reference-type/%s/%s", type, mname));
    PetscCall(Check(PetscObjectComm((PetscObject)A), same, name, "MatConvert did not return the reference type"));
    PetscCall(PetscSNPrintf(name, sizeof(name), "convert-to-reference-product/%s/%s", type, mname));
    PetscCall(CheckSameProduct(Aref, G, 12, name));
    PetscCall(MatDestroy(&G));
    PetscCall(MatDestroy(&Aref));
  }

  /* one conversion per copy (one per block on each rank of an MPI matrix), none again at the
     first product; a change right after the conversion (MatConvert moves the state once) is seen */
  {
    PetscInt64  conversions, values_only;
    PetscMPIInt size;
    Mat         As, H;
    PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
    PetscCall(MatGpuMatsGetUpdateCounts(B, &conversions, &values_only));
    PetscCall(PetscSNPrintf(name, sizeof(name), "converted-once/%s/%s", type, mname));
    PetscCall(Check(PetscObjectComm((PetscObject)B), conversions == (size > 1 ? 2 : 1) && values_only == 0 ? PETSC_TRUE : PETSC_FALSE, name,
                    "the first product after MatConvert brought the copies up to date again"));
    PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &As));
    PetscCall(MatScale(As, -2.0));
    for (int inplace = 0; inplace < 2; inplace++) {
      if (inplace) {
        PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &H));
        PetscCall(MatConvert(H, type, MAT_INPLACE_MATRIX, &H));
      } else PetscCall(MatConvert(A, type, MAT_INITIAL_MATRIX, &H));
      if (size == 1) { /* one state increase, as small a change as PETSc records */
        PetscScalar *a;
        MatInfo      info;
        PetscCall(MatGetInfo(H, MAT_LOCAL, &info));
        PetscCall(MatSeqAIJGetArray(H, &a));
        for (PetscInt k = 0; k < (PetscInt)info.nz_used; k++) a[k] *= -2.0;
        PetscCall(MatSeqAIJRestoreArray(H, &a));
      } else PetscCall(MatScale(H, -2.0));
      PetscCall(PetscSNPrintf(name, sizeof(name), "change-right-after-convert-%s/%s/%s", inplace ? "inplace" : "initial", type, mname));
      PetscCall(CheckProduct(As, H, name));
      PetscCall(MatDestroy(&H));
    }
    PetscCall(MatDestroy(&As));
  }

  /* a copy is brought up to date inside each MatAssemblyEnd (-mat_gpumats_build_at assembly, the
     default): two assemblies and one product build each copy twice; at the first use after a
     final assembly with -mat_gpumats_build_at use: once */
  {
    PetscInt64  c0, v0, c1, v1, expected;
    PetscMPIInt size;
    char        when[16] = "assembly";
    Vec         x, y;
    PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)B), &size));
    PetscCall(PetscOptionsGetString(NULL, NULL, "-mat_gpumats_build_at", when, sizeof(when), NULL));
    PetscCall(MatSetFromOptions(B)); /* (MatConvert reads no options) */
    PetscCall(MatCreateVecs(B, &x, &y));
    PetscCall(VecSet(x, 1.0));
    PetscCall(MatMult(B, x, y));
    PetscCall(MatGpuMatsGetUpdateCounts(B, &c0, &v0));
    for (int k = 0; k < 2; k++) {
      PetscCall(MatAssemblyBegin(B, MAT_FINAL_ASSEMBLY));
      PetscCall(MatAssemblyEnd(B, MAT_FINAL_ASSEMBLY));
    }
    PetscCall(MatMult(B, x, y));
    PetscCall(MatGpuMatsGetUpdateCounts(B, &c1, &v1));
    expected = (size > 1 ? 2 : 1) * (strcmp(when, "assembly") ? 1 : 2);
    PetscCall(PetscSNPrintf(name, sizeof(name), "builds-per-assembly-%s/%s/%s", when, type, mname));
    PetscCall(Check(PetscObjectComm((PetscObject)B), (c1 - c0) + (v1 - v0) == expected ? PETSC_TRUE : PETSC_FALSE, name,
                    "the copies were not brought up to date as often as -mat_gpumats_build_at says"));
    PetscCall(AssembliesBeforeUse(B, A, when, type, mname, x, y));
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&y));
  }

  /* in place both ways */
  PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &D));
  PetscCall(MatConvert(D, type, MAT_INPLACE_MATRIX, &D));
  PetscCall(PetscSNPrintf(name, sizeof(name), "convert-inplace-type/%s/%s", type, mname));
  PetscCall(CheckType(D, type, name));
  PetscCall(PetscSNPrintf(name, sizeof(name), "convert-inplace-product/%s/%s", type, mname));
  PetscCall(CheckProduct(A, D, name));
  PetscCall(MatConvert(D, MATAIJ, MAT_INPLACE_MATRIX, &D));
  PetscCall(PetscSNPrintf(name, sizeof(name), "round-trip-inplace-exact/%s/%s", type, mname));
  PetscCall(CheckExact(A, D, name));
  PetscCall(PetscSNPrintf(name, sizeof(name), "round-trip-inplace-none-composed/%s/%s", type, mname));
  PetscCall(CheckNoneComposed(D, type, name));

  /* reuse: new values into an existing converted matrix */
  PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &A2));
  PetscCall(MatScale(A2, 3.0));
  PetscCall(MatConvert(A, type, MAT_INITIAL_MATRIX, &E));
  PetscCall(MatConvert(A2, type, MAT_REUSE_MATRIX, &E));
  PetscCall(PetscSNPrintf(name, sizeof(name), "convert-reuse-product/%s/%s", type, mname));
  PetscCall(CheckProduct(A2, E, name));
  PetscCall(MatConvert(E, MATAIJ, MAT_REUSE_MATRIX, &C));
  PetscCall(PetscSNPrintf(name, sizeof(name), "convert-back-reuse-exact/%s/%s", type, mname));
  PetscCall(CheckExact(A2, C, name));

  /* duplicate and copy keep the type */
  PetscCall(MatDuplicate(B, MAT_COPY_VALUES, &F));
  PetscCall(PetscSNPrintf(name, sizeof(name), "duplicate-type/%s/%s", type, mname));
  PetscCall(CheckType(F, type, name));
  PetscCall(PetscSNPrintf(name, sizeof(name), "duplicate-product/%s/%s", type, mname));
  PetscCall(CheckProduct(A, F, name));
  PetscCall(MatCopy(E, F, SAME_NONZERO_PATTERN));
  PetscCall(PetscSNPrintf(name, sizeof(name), "copy-type/%s/%s", type, mname));
  PetscCall(CheckType(F, type, name));
  PetscCall(PetscSNPrintf(name, sizeof(name), "copy-product/%s/%s", type, mname));
  PetscCall(CheckProduct(A2, F, name));
  PetscCall(MatDestroy(&F));

  /* transpose keeps the type and the values, in every reuse mode */
  {
    Mat At, T, T2;
    PetscCall(MatTranspose(A, MAT_INITIAL_MATRIX, &At));
    PetscCall(MatTranspose(B, MAT_INITIAL_MATRIX, &T));
    PetscCall(PetscSNPrintf(name, sizeof(name), "transpose-type/%s/%s", type, mname));
    PetscCall(CheckType(T, type, name));
    PetscCall(PetscSNPrintf(name, sizeof(name), "transpose-product/%s/%s", type, mname));
    PetscCall(CheckProduct(At, T, name));
    PetscCall(MatTranspose(B, MAT_REUSE_MATRIX, &T));
    PetscCall(PetscSNPrintf(name, sizeof(name), "transpose-reuse-product/%s/%s", type, mname));
    PetscCall(CheckProduct(At, T, name));
    PetscCall(MatDuplicate(B, MAT_COPY_VALUES, &T2));
    PetscCall(MatTranspose(T2, MAT_INPLACE_MATRIX, &T2));
    PetscCall(PetscSNPrintf(name, sizeof(name), "transpose-inplace-type/%s/%s", type, mname));
    PetscCall(CheckType(T2, type, name));
    PetscCall(PetscSNPrintf(name, sizeof(name), "transpose-inplace-product/%s/%s", type, mname));
    PetscCall(CheckProduct(At, T2, name));
    PetscCall(MatDestroy(&At));
    PetscCall(MatDestroy(&T));
    PetscCall(MatDestroy(&T2));
  }

  /* MatCreateSubMatrix keeps the type (fieldsplit's blocks; GAMG's levels on fewer ranks), also
     where the rows and the columns keep the matrix's distribution (MPIAIJ's joined-blocks path),
     and a reuse takes new values */
  {
    Mat      Sref, S, S2ref;
    IS       rows, cols;
    PetscInt rs, re, cs, ce;
    PetscCall(MatGetOwnershipRange(A, &rs, &re));
    PetscCall(MatGetOwnershipRangeColumn(A, &cs, &ce));
    for (int odd = 0; odd < 2; odd++) { /* this rank's rows and columns; every other row of them */
      PetscCall(ISCreateStride(PetscObjectComm((PetscObject)A), odd ? (re - rs) / 2 : re - rs, rs, odd ? 2 : 1, &rows));
      PetscCall(ISCreateStride(PetscObjectComm((PetscObject)A), ce - cs, cs, 1, &cols));
      PetscCall(MatCreateSubMatrix(A, rows, cols, MAT_INITIAL_MATRIX, &Sref));
      PetscCall(MatCreateSubMatrix(B, rows, cols, MAT_INITIAL_MATRIX, &S));
      PetscCall(PetscSNPrintf(name, sizeof(name), "submatrix%s-type/%s/%s", odd ? "-odd-rows" : "", type, mname));
      PetscCall(CheckType(S, type, name));
      PetscCall(PetscSNPrintf(name, sizeof(name), "submatrix%s-product/%s/%s", odd ? "-odd-rows" : "", type, mname));
      PetscCall(CheckProduct(Sref, S, name));
      PetscCall(MatCreateSubMatrix(A2, rows, cols, MAT_INITIAL_MATRIX, &S2ref));
      PetscCall(MatCreateSubMatrix(E, rows, cols, MAT_REUSE_MATRIX, &S)); /* E: A2's values */
      PetscCall(PetscSNPrintf(name, sizeof(name), "submatrix%s-reuse-product/%s/%s", odd ? "-odd-rows" : "", type, mname));
      PetscCall(CheckProduct(S2ref, S, name));
      PetscCall(MatDestroy(&S2ref));
      PetscCall(MatDestroy(&Sref));
      PetscCall(MatDestroy(&S));
      PetscCall(ISDestroy(&rows));
      PetscCall(ISDestroy(&cols));
    }
  }

  /* between types under test */
  for (PetscInt u = 0; u < types->ntypes; u++) {
    Mat G;
    PetscCall(MatConvert(B, types->types[u], MAT_INITIAL_MATRIX, &G));
    PetscCall(PetscSNPrintf(name, sizeof(name), "convert-%s-to-%s-type/%s", type, types->types[u], mname));
    PetscCall(CheckType(G, types->types[u], name));
    PetscCall(PetscSNPrintf(name, sizeof(name), "convert-%s-to-%s-product/%s", type, types->types[u], mname));
    PetscCall(CheckProduct(A, G, name));
    PetscCall(MatDestroy(&G));
  }
  /* into the types AIJ has converters of its own for, asked for by their plain names as PETSc's
     callers do (PCASM's -sub_mat_type dense, GDSW's MATIS): AIJ's converter runs on ours, so the
     result is what it makes of AIJ (the same type and block sizes), in every reuse mode */
  {
    const MatType into[] = {MATDENSE, MATBAIJ, MATIS};
    for (size_t k = 0; k < sizeof(into) / sizeof(into[0]); k++) {
      Mat       Gref, G, H;
      MatType   gt, rt;
      PetscInt  rbs, cbs, rbs_ref, cbs_ref;
      PetscBool same, norows;
      /* PETSc 3.18's MatConvert of an AIJ into MATIS ends the process of a rank without rows */
      PetscCall(PetscStrcmp(mname, "rank-without-rows", &norows));
      if (norows && !strcmp(into[k], MATIS)) continue;
      PetscCall(MatConvert(A, into[k], MAT_INITIAL_MATRIX, &Gref));
      PetscCall(MatConvert(B, into[k], MAT_INITIAL_MATRIX, &G));
      PetscCall(MatGetType(G, &gt));
      PetscCall(MatGetType(Gref, &rt));
      PetscCall(PetscStrcmp(gt, rt, &same));
      PetscCall(PetscSNPrintf(name, sizeof(name), "convert-to-%s-type/%s/%s", into[k], type, mname));
      PetscCall(Check(PetscObjectComm((PetscObject)A), same, name, gt));
      PetscCall(MatGetBlockSizes(G, &rbs, &cbs));
      PetscCall(MatGetBlockSizes(Gref, &rbs_ref, &cbs_ref));
      PetscCall(PetscSNPrintf(name, sizeof(name), "convert-to-%s-block-sizes/%s/%s", into[k], type, mname));
      PetscCall(Check(PetscObjectComm((PetscObject)A), rbs == rbs_ref && cbs == cbs_ref ? PETSC_TRUE : PETSC_FALSE, name, "not the block sizes of AIJ's conversion"));
      PetscCall(PetscSNPrintf(name, sizeof(name), "convert-to-%s-product/%s/%s", into[k], type, mname));
      PetscCall(CheckProduct(A, G, name));
      PetscCall(MatConvert(E, into[k], MAT_REUSE_MATRIX, &G)); /* E: A2's values */
      PetscCall(PetscSNPrintf(name, sizeof(name), "convert-to-%s-reuse-product/%s/%s", into[k], type, mname));
      PetscCall(CheckProduct(A2, G, name));
      PetscCall(MatDuplicate(B, MAT_COPY_VALUES, &H));
      PetscCall(MatConvert(H, into[k], MAT_INPLACE_MATRIX, &H));
      PetscCall(MatGetType(H, &gt));
      PetscCall(PetscStrcmp(gt, rt, &same));
      PetscCall(PetscSNPrintf(name, sizeof(name), "convert-to-%s-inplace-type/%s/%s", into[k], type, mname));
      PetscCall(Check(PetscObjectComm((PetscObject)A), same, name, gt));
      PetscCall(PetscSNPrintf(name, sizeof(name), "convert-to-%s-inplace-product/%s/%s", into[k], type, mname));
      PetscCall(CheckProduct(A, H, name));
      PetscCall(MatDestroy(&G));
      PetscCall(MatDestroy(&Gref));
      PetscCall(MatDestroy(&H));
    }
  }

  PetscCall(MatDestroy(&A2));
  PetscCall(MatDestroy(&B));
  PetscCall(MatDestroy(&C));
  PetscCall(MatDestroy(&D));
  PetscCall(MatDestroy(&E));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatCopy from AIJ into ours with another pattern allocates what AIJ's own MatCopy does, the
   source's entries, where the matrices have a block size of 2 (PETSc's preallocator for two types
   counts whole blocks: 52 entries for this tridiagonal matrix's 28 on one rank) */
static PetscErrorCode CheckCopyNewPattern(const char *type)
{
  Mat         A, G;
  MatInfo     ginfo, ainfo;
  PetscInt    rs, re, N;
  PetscMPIInt size;
  char        name[256];

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  N = 10 * size;
  PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, 10, 10, N, N, 3, NULL, 2, NULL, &A));
  PetscCall(MatSetBlockSize(A, 2));
  PetscCall(MatGetOwnershipRange(A, &rs, &re));
  for (PetscInt i = rs; i < re; i++) {
    for (PetscInt j = i - 1; j <= i + 1; j++)
      if (j >= 0 && j < N) PetscCall(MatSetValue(A, i, j, j == i ? 2.0 : -1.0, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatCreate(PETSC_COMM_WORLD, &G));
  PetscCall(MatSetSizes(G, 10, 10, N, N));
  PetscCall(MatSetBlockSize(G, 2));
  PetscCall(MatSetType(G, type));
  PetscCall(MatSetUp(G));
  PetscCall(MatAssemblyBegin(G, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(G, MAT_FINAL_ASSEMBLY));
  PetscCall(MatCopy(A, G, DIFFERENT_NONZERO_PATTERN));
  PetscCall(MatGetInfo(G, MAT_GLOBAL_SUM, &ginfo));
  PetscCall(MatGetInfo(A, MAT_GLOBAL_SUM, &ainfo));
  PetscCall(PetscSNPrintf(name, sizeof(name), "copy-new-pattern-allocated/%s", type));
  PetscCall(Check(PETSC_COMM_WORLD, ginfo.nz_allocated == ainfo.nz_used ? PETSC_TRUE : PETSC_FALSE, name, "allocated entries are not the source's"));
  PetscCall(PetscSNPrintf(name, sizeof(name), "copy-new-pattern-type/%s", type));
  PetscCall(CheckType(G, type, name));
  PetscCall(PetscSNPrintf(name, sizeof(name), "copy-new-pattern-product/%s", type));
  PetscCall(CheckProduct(A, G, name));
  PetscCall(MatDestroy(&G));
  PetscCall(MatDestroy(&A));
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
    for (PetscInt t = 0; t < types.ntypes; t++) PetscCall(CheckType_(A, test_matrices[m], types.types[t], &types));
    PetscCall(MatDestroy(&A));
  }
  for (PetscInt t = 0; t < types.ntypes; t++) PetscCall(CheckCopyNewPattern(types.types[t]));
  PetscCall(FreeTypeList(&types));
  PetscCall(PetscFinalize());
  return check_failures ? 1 : 0;
}
