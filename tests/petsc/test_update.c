static char help[] = "Every way of changing an assembled matrix is seen by the next MatMult of every type under test, and a change that\n"
                     "keeps the nonzero pattern moves the values only (-mat_gpumats_values_update auto, the default) or converts in full\n"
                     "(-mat_gpumats_values_update rebuild).\n"
                     "  -types a,b,c : types under test (default cmrs,sellp,bellpack)\n"
                     "  -many_values_grid g, -many_values_only, -many_values_expect_dictionary : the many-values case (ManyValuesAfterFew)\n";

/*
   The same change is applied to an AIJ reference and to the matrix under test, three times in a
   row; after each application their products must agree. Changes: values inserted, added, and
   both (with a flush between), a new nonzero (also in the off-diagonal block of another rank),
   MatZeroRows without and with MAT_KEEP_NONZERO_PATTERN, MatScale, MatShift, MatDiagonalSet,
   MatStoreValues/MatRetrieveValues, direct writes through MatSeqAIJGetArray, MatZeroEntries and
   MatAXPY with SUBSET_NONZERO_PATTERN (a true subset, and on one rank an X that is not one), a
   new preallocation with fewer entries (new blocks whose nonzero state repeats the last ones'), and
   PETSc's filter of small values (whose assemblies, one per row, refill the copies at most once).
   The first application of a change may alter the pattern (a missing diagonal entry); the second
   and third of a change that keeps it must then bring the format copies up to date by their values
   only (MatGpuMatsGetUpdateCounts), or, with -mat_gpumats_values_update rebuild, never so. The
   matrix under test reads the run's options (-mat_gpumats_reorder, -mat_gpumats_long_rows,
   -mat_gpumats_values_update) through MatSetFromOptions, as a user's matrix does. MatSetValues
   without re-assembly must make MatMult refuse rather than use a stale copy. Last, a matrix of
   two values whose values all become distinct (ManyValuesAfterFew).
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

/* v on the diagonal of every `stride`-th row this rank owns, from its `first`-th on; the diagonal
   of a rectangular matrix stops at its width */
static PetscErrorCode SetDiagonal(Mat A, PetscInt first, PetscInt stride, PetscScalar v, InsertMode mode)
{
  PetscInt rs, re, N;

  PetscFunctionBeginUser;
  PetscCall(MatGetSize(A, NULL, &N));
  PetscCall(MatGetOwnershipRange(A, &rs, &re));
  re = PetscMin(re, N);
  for (PetscInt i = rs + first; i < re; i += stride) PetscCall(MatSetValue(A, i, i, v, mode));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SetValues(Mat A, PetscInt step)
{
  PetscFunctionBeginUser;
  PetscCall(SetDiagonal(A, 0, 7, 10.0 + step, INSERT_VALUES));
  PetscCall(MatAssemblyBegin(A, MAT_FLUSH_ASSEMBLY)); /* inserting and adding need a flush in between */
  PetscCall(MatAssemblyEnd(A, MAT_FLUSH_ASSEMBLY));
  PetscCall(SetDiagonal(A, 1, 5, 0.5, ADD_VALUES));
  PetscCall(Reassemble(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Only inserted, or only added: the diagonal of every 3rd row (and of every 4th). */
static PetscErrorCode InsertValues(Mat A, PetscInt step)
{
  PetscFunctionBeginUser;
  PetscCall(SetDiagonal(A, 0, 3, -2.0 - step, INSERT_VALUES));
  PetscCall(Reassemble(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode AddValues(Mat A, PetscInt step)
{
  PetscFunctionBeginUser;
  PetscCall(SetDiagonal(A, 0, 4, 0.25 * (1 + step), ADD_VALUES));
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

/* Without MAT_KEEP_NONZERO_PATTERN: the rows lose their entries, but for 2 on the diagonal. */
static PetscErrorCode ZeroRows(Mat A, PetscInt step)
{
  PetscInt rs, re, rows[4], n = 0;

  PetscFunctionBeginUser;
  PetscCall(MatGetOwnershipRange(A, &rs, &re));
  for (PetscInt i = rs + step % 13; i < re && n < 4; i += 13) rows[n++] = i;
  PetscCall(MatZeroRows(A, n, rows, 2.0, NULL, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* With MAT_KEEP_NONZERO_PATTERN: the rows keep their entries, as explicit zeros, and a diagonal
   value (so only rows that have a diagonal entry are zeroed). The pattern stays. */
static PetscErrorCode ZeroRowsKeep(Mat A, PetscInt step)
{
  PetscInt rs, re, rows[4], n = 0;

  PetscFunctionBeginUser;
  PetscCall(MatGetOwnershipRange(A, &rs, &re));
  for (PetscInt i = rs + step % 11; i < re && n < 4; i += 11) {
    PetscInt        nc;
    const PetscInt *cols;
    PetscBool       has_diagonal = PETSC_FALSE;
    PetscCall(MatGetRow(A, i, &nc, &cols, NULL));
    for (PetscInt k = 0; k < nc; k++) has_diagonal = has_diagonal || cols[k] == i;
    PetscCall(MatRestoreRow(A, i, &nc, &cols, NULL));
    if (has_diagonal) rows[n++] = i;
  }
  PetscCall(MatSetOption(A, MAT_KEEP_NONZERO_PATTERN, PETSC_TRUE));
  PetscCall(MatZeroRows(A, n, rows, 3.0 + step, NULL, NULL));
  PetscCall(MatSetOption(A, MAT_KEEP_NONZERO_PATTERN, PETSC_FALSE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode ZeroEntries(Mat A, PetscInt step)
{
  PetscFunctionBeginUser;
  PetscCall(MatZeroEntries(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Scale(Mat A, PetscInt step)
{
  PetscFunctionBeginUser;
  PetscCall(MatScale(A, -1.5));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* PETSc's filter of small values (MatFilter, MatChop before PETSc 3.20), keeping the pattern: both
   assemble once per row they go through (PETSc 3.18 and 3.25), as GAMG's graph does with a threshold */
static PetscErrorCode Filter(Mat A, PetscInt step)
{
  PetscFunctionBeginUser;
#if PETSC_VERSION_LT(3, 20, 0)
  PetscCall(MatChop(A, 0.5));
#else
  PetscCall(MatFilter(A, 0.5, PETSC_FALSE, PETSC_FALSE));
#endif
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
  for (PetscInt k = 0; k < nz; k += 3) a[k] = 1.0 / (1.0 + k + step);
  PetscCall(MatSeqAIJRestoreArray(A, &a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscBool Sequential(Mat A)
{
  PetscMPIInt size;
  MPI_Comm_size(PetscObjectComm((PetscObject)A), &size);
  return size == 1 ? PETSC_TRUE : PETSC_FALSE;
}

/* A + alpha X, X of A's type with entries at every other position of A's rows (a strict subset of
   A's pattern, empty rows included) and MatAXPY told SUBSET_NONZERO_PATTERN, as GAMG's prolongator
   smoothing does (MatAYPX(A P, a, P)); with `outside`, X also has an entry outside A's pattern,
   which SUBSET_NONZERO_PATTERN wrongly claims (AIJ inserts it: the types must do the same). */
static PetscErrorCode AxpyWith(Mat A, PetscInt step, PetscBool outside)
{
  Mat      X;
  MatType  type;
  PetscInt rs, re, cs, ce, m, n, M, N, *dnz, *onz;

  PetscFunctionBeginUser;
  if (outside && !Sequential(A)) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatGetType(A, &type));
  PetscCall(MatGetSize(A, &M, &N));
  PetscCall(MatGetLocalSize(A, &m, &n));
  PetscCall(MatGetOwnershipRange(A, &rs, &re));
  PetscCall(MatGetOwnershipRangeColumn(A, &cs, &ce));
  PetscCall(PetscCalloc2(m, &dnz, m, &onz));
  for (PetscInt i = rs; i < re; i++) {
    PetscInt        nc;
    const PetscInt *cols;
    PetscCall(MatGetRow(A, i, &nc, &cols, NULL));
    for (PetscInt k = (i + step) % 2; k < nc; k += 2) (cols[k] >= cs && cols[k] < ce) ? dnz[i - rs]++ : onz[i - rs]++;
    PetscCall(MatRestoreRow(A, i, &nc, &cols, NULL));
    if (outside) dnz[i - rs]++, onz[i - rs]++;
  }
  PetscCall(MatCreate(PetscObjectComm((PetscObject)A), &X));
  PetscCall(MatSetSizes(X, m, n, M, N));
  PetscCall(MatSetType(X, type));
  PetscCall(MatXAIJSetPreallocation(X, 1, dnz, onz, NULL, NULL));
  for (PetscInt i = rs; i < re; i++) {
    PetscInt        nc;
    const PetscInt *cols;
    PetscCall(MatGetRow(A, i, &nc, &cols, NULL));
    for (PetscInt k = (i + step) % 2; k < nc; k += 2) PetscCall(MatSetValue(X, i, cols[k], 0.25 + (PetscScalar)((i + k + step) % 5), INSERT_VALUES));
    PetscCall(MatRestoreRow(A, i, &nc, &cols, NULL));
  }
  if (outside)
    for (PetscInt i = rs; i < re; i += 9) PetscCall(MatSetValue(X, i, (i * 37 + 5 + step) % N, 0.5, INSERT_VALUES));
  PetscCall(MatAssemblyBegin(X, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(X, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAXPY(A, 0.5 + step, X, SUBSET_NONZERO_PATTERN));
  PetscCall(MatDestroy(&X));
  PetscCall(PetscFree2(dnz, onz));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The matrix preallocated anew (MatXAIJSetPreallocation: new blocks on every rank) with its
   entries but those where row + column + step = 0 (mod 4), then assembled: fewer ghost columns,
   and on several ranks the same nonzero state as after the last preallocation, since MPIAIJ's is
   the sum of its new blocks' */
static PetscErrorCode Repreallocate(Mat A, PetscInt step)
{
  PetscInt     rs, re, cs, ce, m, total = 0, *dnz, *onz, *ia, *ja;
  PetscScalar *va;

  PetscFunctionBeginUser;
  PetscCall(MatGetOwnershipRange(A, &rs, &re));
  PetscCall(MatGetOwnershipRangeColumn(A, &cs, &ce));
  m = re - rs;
  for (PetscInt i = rs; i < re; i++) {
    PetscInt nc;
    PetscCall(MatGetRow(A, i, &nc, NULL, NULL));
    total += nc;
    PetscCall(MatRestoreRow(A, i, &nc, NULL, NULL));
  }
  PetscCall(PetscCalloc2(m + 1, &dnz, m + 1, &onz));
  PetscCall(PetscMalloc3(m + 1, &ia, total + 1, &ja, total + 1, &va));
  ia[0] = 0;
  for (PetscInt i = rs; i < re; i++) {
    PetscInt           nc, k = ia[i - rs];
    const PetscInt    *cols;
    const PetscScalar *vals;
    PetscCall(MatGetRow(A, i, &nc, &cols, &vals));
    for (PetscInt c = 0; c < nc; c++) {
      if ((i + cols[c] + step) % 4 == 0) continue;
      ja[k] = cols[c], va[k] = vals[c], k++;
      (cols[c] >= cs && cols[c] < ce) ? dnz[i - rs]++ : onz[i - rs]++;
    }
    PetscCall(MatRestoreRow(A, i, &nc, &cols, &vals));
    ia[i - rs + 1] = k;
  }
  PetscCall(MatXAIJSetPreallocation(A, 1, dnz, onz, NULL, NULL));
  PetscCall(MatSetOption(A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE)); /* as the test matrices are made (later changes add entries) */
  for (PetscInt i = rs; i < re; i++) PetscCall(MatSetValues(A, 1, &i, ia[i - rs + 1] - ia[i - rs], ja + ia[i - rs], va + ia[i - rs], INSERT_VALUES));
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(PetscFree3(ia, ja, va));
  PetscCall(PetscFree2(dnz, onz));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode AxpySubset(Mat A, PetscInt step) { return AxpyWith(A, step, PETSC_FALSE); }
static PetscErrorCode AxpyNotSubset(Mat A, PetscInt step) { return AxpyWith(A, step, PETSC_TRUE); }

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

/* This rank's counts of B's copies (MatGpuMatsGetUpdateCounts). */
typedef struct {
  PetscInt64 conversions, values_only;
} Counts;

static PetscErrorCode GetCounts(Mat B, Counts *c)
{
  PetscFunctionBeginUser;
  PetscCall(MatGpuMatsGetUpdateCounts(B, &c->conversions, &c->values_only));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether the change does anything to this matrix (direct array writes are made on one rank only,
   shifts and diagonals on square matrices only) */

/* After the 2nd and 3rd application of a change that keeps the pattern (from `before` to `after`):
   no conversion on any rank and at least one values-only update (on some rank: a rank whose
   blocks the change left alone, such as one without rows under MatAXPY, updates nothing) with
   -mat_gpumats_values_update auto; no values-only update and at least one conversion with rebuild. With -mat_sellp_values dictionary
   (`either`) a host SELL-P copy holds codes into a table of its values, which a same-pattern
   change rebuilds: either path, but one of them; likewise with auto, which gives a dictionary to
   matrices of few distinct values, and for BELLPACK. A GPU copy with a dictionary (the *cuda
   types) takes the values-only path all the same: its new values are gathered and encoded against
   a table of their own (the test matrices hold far fewer than 65536 distinct values). */
static PetscErrorCode CheckPath(Mat B, const Counts *before, const Counts *after, PetscBool rebuild, PetscBool either, const char *name)
{
  const PetscInt64 conv = after->conversions - before->conversions, vals = after->values_only - before->values_only;
  PetscBool        ok;
  char             why[256];

  PetscInt64 some[2] = {conv, vals}; /* over the ranks: a rank whose blocks the change left alone updates nothing */

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, some, 2, MPIU_INT64, MPI_MAX, PetscObjectComm((PetscObject)B)));
  if (either) ok = (some[0] + some[1] > 0) ? PETSC_TRUE : PETSC_FALSE;
  else if (rebuild) ok = (vals == 0 && some[0] > 0) ? PETSC_TRUE : PETSC_FALSE;
  else ok = (conv == 0 && some[1] > 0) ? PETSC_TRUE : PETSC_FALSE;
  PetscCall(PetscSNPrintf(why, sizeof(why), "%s: %" PetscInt64_FMT " full conversions and %" PetscInt64_FMT " values-only updates on a rank",
                          rebuild ? "-mat_gpumats_values_update rebuild" : "same pattern", conv, vals));
  PetscCall(Check(PetscObjectComm((PetscObject)B), ok, name, why));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The columns of row i of the g x g five-point stencil, ascending, in c[0..*n) */
static void StencilRow(PetscInt i, PetscInt g, PetscInt c[5], PetscInt *n)
{
  const PetscInt x = i % g, y = i / g;
  *n = 0;
  if (y > 0) c[(*n)++] = i - g;
  if (x > 0) c[(*n)++] = i - 1;
  c[(*n)++] = i;
  if (x < g - 1) c[(*n)++] = i + 1;
  if (y < g - 1) c[(*n)++] = i + g;
}

/* The g x g 5-point Laplacian (4 on the diagonal, -1 beside it) as an assembled MPIAIJ matrix */
static PetscErrorCode Poisson2d(PetscInt g, Mat *A)
{
  PetscInt rs, re;

  PetscFunctionBeginUser;
  PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, PETSC_DECIDE, PETSC_DECIDE, g * g, g * g, 5, NULL, 2, NULL, A));
  PetscCall(MatGetOwnershipRange(*A, &rs, &re));
  for (PetscInt i = rs; i < re; i++) {
    PetscInt    c[5], n;
    PetscScalar v[5];
    StencilRow(i, g, c, &n);
    for (PetscInt j = 0; j < n; j++) v[j] = c[j] == i ? 4.0 : -1.0;
    PetscCall(MatSetValues(*A, 1, &i, n, c, v, INSERT_VALUES));
  }
  PetscCall(Reassemble(*A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A g x g five-point Laplacian (g = 200, or -many_values_grid; two distinct values: a value
   dictionary where the run allows one) whose values then all become distinct: about 199,000 of
   them at g = 200, 100,000 per rank on two, more than a dictionary holds (65536). A GPU copy with a
   dictionary keeps its layout and takes the new values plain (refill_compressed), so the change is
   still values only; a scaling after it refills the plain array. Products against AIJ after each
   change. With -many_values_expect_dictionary, the copy must hold a dictionary before the change
   and plain values after it (-mat_view ::ascii_info, written to -dir; types with a dictionary
   only, not CMRS): autocuda weighs dictionaries
   in blocks of 2^20 nonzeros or more, so its case needs g >= 460 on one rank. */
static PetscErrorCode ManyValuesAfterFew(const char *type, PetscBool rebuild, PetscBool either)
{
  PetscInt       g = 200;
  PetscBool      expect = PETSC_FALSE, found;
  char           dir[PETSC_MAX_PATH_LEN] = ".";
  Mat            A, B;
  PetscInt       rs, re;
  Counts         c0, c1, c2;
  char           name[256];

  PetscFunctionBeginUser;
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-many_values_grid", &g, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-many_values_expect_dictionary", &expect, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-dir", dir, sizeof(dir), NULL));
  PetscCall(Poisson2d(g, &A));
  PetscCall(MatGetOwnershipRange(A, &rs, &re));
  PetscCall(MatConvert(A, type, MAT_INITIAL_MATRIX, &B));
  PetscCall(MatSetFromOptions(B));
  PetscCall(PetscSNPrintf(name, sizeof(name), "few-values/%s", type));
  PetscCall(Compare(A, B, name));
  if (expect) {
    PetscCall(ViewContains(B, dir, "test_update-view.txt", "codes into a dictionary", &found));
    PetscCall(PetscSNPrintf(name, sizeof(name), "few-values-dictionary/%s", type));
    PetscCall(Check(PETSC_COMM_WORLD, found, name, "-mat_view ::ascii_info names no value dictionary for a matrix of two values"));
  }
  PetscCall(GetCounts(B, &c0));
  for (PetscInt k = 0; k < 2; k++) { /* every entry its own value, on A and on B: the stencil's again */
    Mat M = k ? B : A;
    for (PetscInt i = rs; i < re; i++) {
      PetscInt    c[5], n;
      PetscScalar v[5];
      StencilRow(i, g, c, &n);
      for (PetscInt j = 0; j < n; j++) v[j] = (c[j] == i ? 4.0 : -1.0) * (1.0 + 1e-7 * (PetscReal)(5 * i + j));
      PetscCall(MatSetValues(M, 1, &i, n, c, v, INSERT_VALUES));
    }
    PetscCall(Reassemble(M));
  }
  PetscCall(PetscSNPrintf(name, sizeof(name), "many-values-after-few/%s", type));
  PetscCall(Compare(A, B, name));
  PetscCall(GetCounts(B, &c1));
  PetscCall(PetscSNPrintf(name, sizeof(name), "many-values-after-few-path/%s", type));
  PetscCall(CheckPath(B, &c0, &c1, rebuild, either, name));
  if (expect) {
    /* (on several ranks the off-diagonal blocks, a few thousand values, get a dictionary of their
       own: the diagonal blocks' plain values are the line to find) */
    PetscCall(ViewContains(B, dir, "test_update-view.txt", "values plain (dictionary: more than 65536 distinct values)", &found));
    if (!found) PetscCall(ViewContains(B, dir, "test_update-view.txt", "values plain (auto: more than 65536 distinct values)", &found));
    PetscCall(PetscSNPrintf(name, sizeof(name), "many-values-plain/%s", type));
    PetscCall(Check(PETSC_COMM_WORLD, found, name, "-mat_view ::ascii_info does not say the values went plain for being more than a dictionary holds"));
  }
  PetscCall(MatScale(A, 0.5));
  PetscCall(MatScale(B, 0.5));
  PetscCall(PetscSNPrintf(name, sizeof(name), "many-values-scaled/%s", type));
  PetscCall(Compare(A, B, name));
  PetscCall(GetCounts(B, &c2));
  PetscCall(PetscSNPrintf(name, sizeof(name), "many-values-scaled-path/%s", type));
  PetscCall(CheckPath(B, &c1, &c2, rebuild, either, name));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&B));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* autocuda weighs a format's build against the products each build serves: after rebuilds (a new
   pattern at every assembly, a few products each) -mat_view says how many products a build served
   and what each candidate costs per product with its build; -mat_autocuda_formats restricts the
   candidates (csr alone: the pick is csr). */
static PetscErrorCode AutocudaRebuilds(const char *type)
{
  PetscInt  g = 60;
  Mat       A, B;
  PetscBool found;
  char      dir[PETSC_MAX_PATH_LEN] = ".", name[256];

  PetscFunctionBeginUser;
  PetscCall(PetscOptionsGetString(NULL, NULL, "-dir", dir, sizeof(dir), NULL));
  PetscCall(Poisson2d(g, &A));
  PetscCall(MatSetOption(A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscCall(MatConvert(A, type, MAT_INITIAL_MATRIX, &B));
  PetscCall(MatSetOption(B, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  for (PetscInt step = 0; step < 3; step++) { /* a new pattern, then one comparison (a few products) */
    PetscCall(NewNonzeros(A, 100 + step));
    PetscCall(NewNonzeros(B, 100 + step));
    PetscCall(PetscSNPrintf(name, sizeof(name), "autocuda-rebuilt#%" PetscInt_FMT "/%s", step + 1, type));
    PetscCall(Compare(A, B, name));
  }
  PetscCall(ViewContains(B, dir, "test_update-view.txt", "products per build, so each format's build counts", &found));
  PetscCall(PetscSNPrintf(name, sizeof(name), "autocuda-rebuilt-view/%s", type));
  PetscCall(Check(PETSC_COMM_WORLD, found, name, "-mat_view ::ascii_info does not say how many products a build served after three new patterns"));
  PetscCall(PetscOptionsSetValue(NULL, "-mat_autocuda_formats", "csr"));
  PetscCall(MatSetFromOptions(B));
  PetscCall(PetscOptionsClearValue(NULL, "-mat_autocuda_formats"));
  PetscCall(PetscSNPrintf(name, sizeof(name), "autocuda-formats-csr/%s", type));
  PetscCall(Compare(A, B, name));
  PetscCall(ViewContains(B, dir, "test_update-view.txt", "picked csr", &found));
  PetscCall(PetscSNPrintf(name, sizeof(name), "autocuda-formats-csr-view/%s", type));
  PetscCall(Check(PETSC_COMM_WORLD, found, name, "-mat_autocuda_formats csr did not make csr the pick"));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&B));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  TypeList       types;
  const char    *mats[] = {"poisson2d", "random-empty-rows", "rank-without-rows", "blocks3", "sparse-coupling", "dense-row"};
  const PetscInt repeats = 3;
  struct {
    const char *name;
    Change      change;
    PetscBool   keeps_pattern;     /* from its 2nd application on */
    PetscBool (*applies)(Mat);     /* NULL: to every matrix */
  } changes[] = {
    {"set-values", SetValues, PETSC_TRUE, NULL},
    {"insert-values", InsertValues, PETSC_TRUE, NULL},
    {"add-values", AddValues, PETSC_TRUE, NULL},
    {"new-nonzeros", NewNonzeros, PETSC_FALSE, NULL},
    {"zero-rows", ZeroRows, PETSC_FALSE, NULL},
    {"zero-rows-keep-pattern", ZeroRowsKeep, PETSC_TRUE, NULL},
    {"scale", Scale, PETSC_TRUE, NULL},
    {"shift", Shift, PETSC_TRUE, Square},
    {"diagonal-set", DiagonalSet, PETSC_TRUE, Square},
    {"store-retrieve", StoreRetrieve, PETSC_TRUE, NULL},
    {"write-array", WriteArray, PETSC_TRUE, Sequential},
    {"zero-entries", ZeroEntries, PETSC_TRUE, NULL},
    {"axpy-subset", AxpySubset, PETSC_TRUE, NULL},
    {"axpy-not-a-subset", AxpyNotSubset, PETSC_FALSE, Sequential},
    {"repreallocate", Repreallocate, PETSC_FALSE, NULL},
    {"filter", Filter, PETSC_TRUE, NULL},
  };
  char      mode[64] = "auto", values[64] = "plain";
  PetscBool rebuild, dictionary, many_only = PETSC_FALSE;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGpuMatsInitialize());
  PetscCall(GetTypeList(&types));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-mat_gpumats_values_update", mode, sizeof(mode), NULL));
  /* the GPU types rebuild by default (DefaultValuesUpdate): unless the run chooses, every type is
     asked for the values-only path, which is what this program checks */
  if (!strcmp(mode, "auto")) PetscCall(PetscOptionsSetValue(NULL, "-mat_gpumats_values_update", "auto"));
  PetscCall(PetscStrcmp(mode, "rebuild", &rebuild));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-mat_sellp_values", values, sizeof(values), NULL));
  /* unless the run asks for a value form, SELL-P keeps plain values, whose same-pattern changes
     must take the values-only path (auto would give poisson2d's two values a dictionary) */
  if (!strcmp(values, "plain")) {
    PetscBool autocuda_set;
    PetscCall(PetscOptionsSetValue(NULL, "-mat_sellp_values", "plain"));
    /* autocuda's SELL-P candidate too, unless the run chose (its many-values case weighs them) */
    PetscCall(PetscOptionsHasName(NULL, NULL, "-mat_autocuda_values", &autocuda_set));
    if (!autocuda_set) PetscCall(PetscOptionsSetValue(NULL, "-mat_autocuda_values", "plain"));
  }
  PetscCall(PetscStrcmp(values, "plain", &dictionary));
  dictionary = dictionary ? PETSC_FALSE : PETSC_TRUE; /* dictionary or auto: a copy may hold codes */
  {                                                   /* BELLPACK's value form likewise */
    char      bvalues[64] = "plain";
    PetscBool bplain;
    PetscCall(PetscOptionsGetString(NULL, NULL, "-mat_bellpack_values", bvalues, sizeof(bvalues), NULL));
    PetscCall(PetscStrcmp(bvalues, "plain", &bplain));
    if (!bplain) dictionary = PETSC_TRUE;
  }
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-many_values_only", &many_only, NULL)); /* ManyValuesAfterFew alone */
  for (size_t m = 0; m < (many_only ? 0 : sizeof(mats) / sizeof(mats[0])); m++) {
    for (PetscInt t = 0; t < types.ntypes; t++) {
      Mat       A, B;
      char      name[256];
      PetscBool gpu; /* a *cuda type: dictionary copies too take the values-only path */
      PetscCall(PetscStrendswith(types.types[t], "cuda", &gpu));
      PetscCall(TestMatrix(PETSC_COMM_WORLD, mats[m], &A));
      PetscCall(MatConvert(A, types.types[t], MAT_INITIAL_MATRIX, &B));
      PetscCall(MatSetFromOptions(B)); /* the run's -mat_gpumats_* options, as a user's MatSetFromOptions reads them */
      for (size_t c = 0; c < sizeof(changes) / sizeof(changes[0]); c++) {
        Counts before, after;
        for (PetscInt r = 0; r < repeats; r++) {
          const PetscInt step = 16 * (PetscInt)c + r; /* each application its own values, rows or columns */
          if (r == 1) PetscCall(GetCounts(B, &before));
          PetscCall(changes[c].change(A, step));
          PetscCall(changes[c].change(B, step));
          PetscCall(PetscSNPrintf(name, sizeof(name), "%s#%" PetscInt_FMT "/%s/%s", changes[c].name, r + 1, types.types[t], mats[m]));
          PetscCall(Compare(A, B, name));
        }
        if (!changes[c].keeps_pattern || (changes[c].applies && !changes[c].applies(B))) continue;
        PetscCall(GetCounts(B, &after));
        PetscCall(PetscSNPrintf(name, sizeof(name), "%s-path/%s/%s", changes[c].name, types.types[t], mats[m]));
        PetscCall(CheckPath(B, &before, &after, rebuild, dictionary && !gpu ? PETSC_TRUE : PETSC_FALSE, name));
      }
      { /* an assembly of zeros (DMCreateMatrix's, before the values) builds no copy; the values
           that follow are built, at their assembly or at the first product, and are right */
        Counts c0, c1, c2;
        char   why[128];
        PetscCall(GetCounts(B, &c0));
        PetscCall(MatZeroEntries(B));
        PetscCall(Reassemble(B));
        PetscCall(GetCounts(B, &c1));
        PetscCall(PetscSNPrintf(name, sizeof(name), "zero-assembly-builds-nothing/%s/%s", types.types[t], mats[m]));
        PetscCall(PetscSNPrintf(why, sizeof(why), "%" PetscInt64_FMT " conversions and %" PetscInt64_FMT " values-only updates at an assembly of zeros",
                                c1.conversions - c0.conversions, c1.values_only - c0.values_only));
        PetscCall(Check(PETSC_COMM_WORLD, c1.conversions == c0.conversions && c1.values_only == c0.values_only ? PETSC_TRUE : PETSC_FALSE, name, why));
        PetscCall(MatZeroEntries(A));
        PetscCall(Reassemble(A));
        PetscCall(SetValues(A, 99));
        PetscCall(SetValues(B, 99));
        PetscCall(PetscSNPrintf(name, sizeof(name), "values-after-zero-assembly/%s/%s", types.types[t], mats[m]));
        PetscCall(Compare(A, B, name));
        PetscCall(GetCounts(B, &c2));
        PetscCall(PetscSNPrintf(name, sizeof(name), "values-after-zero-assembly-built/%s/%s", types.types[t], mats[m]));
        PetscCall(Check(PETSC_COMM_WORLD, c2.conversions + c2.values_only > c1.conversions + c1.values_only ? PETSC_TRUE : PETSC_FALSE, name,
                        "no copy built for the values that followed an assembly of zeros"));
      }
      { /* the filter's assemblies, one per row, refill the copies at most once before the product
           that follows (a block of each kind on a rank), not once per row (Residency::built_unread) */
        Counts c0, c1;
        char   why[128];
        PetscCall(GetCounts(B, &c0));
        PetscCall(Filter(B, 0));
        PetscCall(GetCounts(B, &c1));
        PetscCall(PetscSNPrintf(name, sizeof(name), "filter-refills-at-most-once/%s/%s", types.types[t], mats[m]));
        PetscCall(PetscSNPrintf(why, sizeof(why), "%" PetscInt64_FMT " conversions and %" PetscInt64_FMT " values-only updates inside the filter",
                                c1.conversions - c0.conversions, c1.values_only - c0.values_only));
        PetscCall(Check(PETSC_COMM_WORLD, (c1.conversions - c0.conversions) + (c1.values_only - c0.values_only) <= 2 ? PETSC_TRUE : PETSC_FALSE, name, why));
        PetscCall(Filter(A, 0));
        PetscCall(PetscSNPrintf(name, sizeof(name), "filter-product/%s/%s", types.types[t], mats[m]));
        PetscCall(Compare(A, B, name));
      }
      PetscCall(PetscSNPrintf(name, sizeof(name), "unassembled-refused/%s/%s", types.types[t], mats[m]));
      PetscCall(UnassembledRefused(B, name));
      PetscCall(MatDestroy(&A));
      PetscCall(MatDestroy(&B));
    }
  }
  for (PetscInt t = 0; t < types.ntypes; t++) {
    PetscBool gpu;
    PetscCall(PetscStrendswith(types.types[t], "cuda", &gpu));
    PetscCall(ManyValuesAfterFew(types.types[t], rebuild, dictionary && !gpu ? PETSC_TRUE : PETSC_FALSE));
    if (!strcmp(types.types[t], "autocuda")) PetscCall(AutocudaRebuilds(types.types[t]));
  }
  PetscCall(FreeTypeList(&types));
  PetscCall(PetscFinalize());
  return check_failures ? 1 : 0;
}
