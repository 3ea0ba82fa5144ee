/*
   Test matrices for the PETSc-level tests, as MATAIJ on any number of ranks. Patterns and values
   come from a hash of (seed, row, k), so every rank builds its own rows and the matrix is the
   same whatever the number of ranks. The layouts include a rank that owns no rows (the last
   one, when there are several) and rectangular matrices, so diagonal blocks are non-square and
   off-diagonal blocks reach columns owned by a rank without rows. On several ranks, "diagonal"
   has empty off-diagonal blocks, and "sparse-coupling" off-diagonal blocks with entries in a few
   scattered rows only (stored compressed, added through a row map).
*/
#pragma once

#include "check.h"

static inline PetscReal TestHash(PetscInt seed, PetscInt i, PetscInt k)
{
  unsigned long long h = 1469598103934665603ull ^ (unsigned long long)(seed * 1000003 + i);
  h                    = (h ^ (unsigned long long)k) * 1099511628211ull;
  h ^= h >> 29;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 32;
  return (PetscReal)(h % 1000003ull) / 1000003.0; /* [0, 1) */
}

typedef enum { LAYOUT_DECIDE, LAYOUT_LAST_RANK_EMPTY } TestLayout;

static inline PetscErrorCode TestCreate(MPI_Comm comm, PetscInt M, PetscInt N, TestLayout layout, PetscInt bs, Mat *A)
{
  PetscMPIInt size, rank;
  PetscInt    m = PETSC_DECIDE;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (layout == LAYOUT_LAST_RANK_EMPTY && size > 1) {
    PetscInt nb = M / bs, per = nb / (size - 1);
    m = rank == size - 1 ? 0 : (rank < size - 2 ? per : nb - per * (size - 2)) * bs;
  }
  PetscCall(MatCreate(comm, A));
  PetscCall(MatSetSizes(*A, m, PETSC_DECIDE, M, N));
  PetscCall(MatSetType(*A, MATAIJ));
  if (bs > 1) PetscCall(MatSetBlockSize(*A, bs));
  PetscCall(MatSetUp(*A));
  PetscCall(MatSetOption(*A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static inline PetscErrorCode TestAssemble(Mat A)
{
  PetscFunctionBeginUser;
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Builds the named test matrix. Names: poisson2d, random-empty-rows, dense-row, tiny,
   rank-without-rows, blocks3, nan-and-huge, wide, diagonal, sparse-coupling (the list below), and
   scattered (131072 rows, random columns: only where a test asks for it by name) */
static inline PetscErrorCode TestMatrix(MPI_Comm comm, const char *name, Mat *A)
{
  PetscBool is;
  PetscInt  rs, re, M, N;

  PetscFunctionBeginUser;
  PetscCall(PetscStrcmp(name, "poisson2d", &is));
  if (is) {
    const PetscInt g = 23;
    PetscCall(TestCreate(comm, g * g, g * g, LAYOUT_DECIDE, 1, A));
    PetscCall(MatGetOwnershipRange(*A, &rs, &re));
    for (PetscInt i = rs; i < re; i++) {
      PetscInt x = i % g, y = i / g;
      PetscCall(MatSetValue(*A, i, i, 4.0, INSERT_VALUES));
      if (x > 0) PetscCall(MatSetValue(*A, i, i - 1, -1.0, INSERT_VALUES));
      if (x < g - 1) PetscCall(MatSetValue(*A, i, i + 1, -1.0, INSERT_VALUES));
      if (y > 0) PetscCall(MatSetValue(*A, i, i - g, -1.0, INSERT_VALUES));
      if (y < g - 1) PetscCall(MatSetValue(*A, i, i + g, -1.0, INSERT_VALUES));
    }
    PetscCall(TestAssemble(*A));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscStrcmp(name, "diagonal", &is));
  if (is) { /* nothing couples the ranks: every off-diagonal block is empty */
    PetscCall(TestCreate(comm, 211, 211, LAYOUT_DECIDE, 1, A));
    PetscCall(MatGetOwnershipRange(*A, &rs, &re));
    for (PetscInt i = rs; i < re; i++) PetscCall(MatSetValue(*A, i, i, 1.0 + TestHash(9, i, 0), INSERT_VALUES));
    PetscCall(TestAssemble(*A));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscStrcmp(name, "sparse-coupling", &is));
  if (is) { /* a tridiagonal band, and in one row of ten a far column: few, scattered rows reach other ranks */
    const PetscInt n = 401;
    PetscCall(TestCreate(comm, n, n, LAYOUT_DECIDE, 1, A));
    PetscCall(MatGetOwnershipRange(*A, &rs, &re));
    for (PetscInt i = rs; i < re; i++) {
      PetscCall(MatSetValue(*A, i, i, 4.0, INSERT_VALUES));
      if (i > 0) PetscCall(MatSetValue(*A, i, i - 1, -1.0 + TestHash(10, i, 1), INSERT_VALUES));
      if (i < n - 1) PetscCall(MatSetValue(*A, i, i + 1, -1.0 + TestHash(10, i, 2), INSERT_VALUES));
      if (TestHash(10, i, 3) < 0.1) PetscCall(MatSetValue(*A, i, (PetscInt)(TestHash(10, i, 4) * n), TestHash(10, i, 5) - 0.5, INSERT_VALUES));
    }
    PetscCall(TestAssemble(*A));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscStrcmp(name, "scattered", &is));
  if (is) { /* a randomly numbered mesh's pattern: the diagonal and 3 columns anywhere in 2^17, so
               neighbouring rows read unrelated parts of x (gpumats::columns_banded is false) */
    const PetscInt n = 131072;
    PetscCall(TestCreate(comm, n, n, LAYOUT_DECIDE, 1, A));
    PetscCall(MatGetOwnershipRange(*A, &rs, &re));
    for (PetscInt i = rs; i < re; i++) {
      PetscCall(MatSetValue(*A, i, i, 4.0 + TestHash(11, i, 0), INSERT_VALUES));
      for (PetscInt t = 1; t <= 3; t++) PetscCall(MatSetValue(*A, i, (PetscInt)(TestHash(11, i, t) * n), TestHash(11, i, 10 + t) - 0.5, INSERT_VALUES));
    }
    PetscCall(TestAssemble(*A));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscStrcmp(name, "blocks3", &is));
  if (is) { /* 3 dof per node on a chain of 101 nodes: natural 3x3 blocks */
    const PetscInt nodes = 101, d = 3;
    PetscCall(TestCreate(comm, nodes * d, nodes * d, LAYOUT_DECIDE, d, A));
    PetscCall(MatGetOwnershipRange(*A, &rs, &re));
    for (PetscInt i = rs; i < re; i++) {
      PetscInt node = i / d;
      for (PetscInt nb = PetscMax(0, node - 1); nb <= PetscMin(nodes - 1, node + 1); nb++)
        for (PetscInt k = 0; k < d; k++) {
          PetscInt j = nb * d + k;
          PetscCall(MatSetValue(*A, i, j, i == j ? 8.0 : -TestHash(1, i, j), INSERT_VALUES));
        }
    }
    PetscCall(TestAssemble(*A));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  /* the random families */
  {
    PetscInt   maxrow = 8, seed = 2;
    PetscReal  empty  = 0.0;
    TestLayout layout = LAYOUT_DECIDE;
    PetscBool  dense = PETSC_FALSE, nan = PETSC_FALSE;
    M = N = 301;
    PetscCall(PetscStrcmp(name, "random-empty-rows", &is));
    if (is) M = 301, N = 257, empty = 0.3, seed = 3;
    PetscCall(PetscStrcmp(name, "dense-row", &is));
    if (is) dense = PETSC_TRUE, seed = 4;
    PetscCall(PetscStrcmp(name, "tiny", &is));
    if (is) M = N = 3, maxrow = 2, seed = 5;
    PetscCall(PetscStrcmp(name, "rank-without-rows", &is));
    if (is) M = 120, N = 97, layout = LAYOUT_LAST_RANK_EMPTY, seed = 6;
    PetscCall(PetscStrcmp(name, "nan-and-huge", &is));
    if (is) nan = PETSC_TRUE, seed = 7;
    PetscCall(PetscStrcmp(name, "wide", &is));
    if (is) M = 7, N = 5000, maxrow = 40, seed = 8;
    PetscCall(TestCreate(comm, M, N, layout, 1, A));
    PetscCall(MatGetOwnershipRange(*A, &rs, &re));
    for (PetscInt i = rs; i < re; i++) {
      PetscInt k;
      if (TestHash(seed, i, -1) < empty) continue;
      if (i < N) PetscCall(MatSetValue(*A, i, i, 2.0 + TestHash(seed, i, -2), INSERT_VALUES));
      k = 1 + (PetscInt)(TestHash(seed, i, -3) * maxrow);
      for (PetscInt t = 0; t < k; t++) {
        PetscInt    j = (PetscInt)(TestHash(seed, i, t) * N);
        PetscScalar v = TestHash(seed, i, 1000 + t) - 0.5;
        if (nan && t == 0 && i % 17 == 3) v = PETSC_MAX_REAL * 0.25; /* huge but finite products with |x| <= 1 */
        if (nan && t == 0 && i % 23 == 5) v = NAN;
        PetscCall(MatSetValue(*A, i, j, v, INSERT_VALUES));
      }
      if (dense && i == M / 2)
        for (PetscInt j = 0; j < N; j++) PetscCall(MatSetValue(*A, i, j, 0.01 * (j % 7), INSERT_VALUES));
    }
    PetscCall(TestAssemble(*A));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static const char *const test_matrices[] = {"poisson2d", "random-empty-rows", "dense-row", "tiny", "rank-without-rows", "blocks3", "nan-and-huge", "wide", "diagonal", "sparse-coupling"};
#define NTESTMATS ((PetscInt)(sizeof(test_matrices) / sizeof(test_matrices[0])))

/* A deterministic vector in [-1, 1], the same on any number of ranks. */
static inline PetscErrorCode TestVector(Vec v, PetscInt seed)
{
  PetscInt     rs, re;
  PetscScalar *a;

  PetscFunctionBeginUser;
  PetscCall(VecGetOwnershipRange(v, &rs, &re));
  PetscCall(VecGetArray(v, &a));
  for (PetscInt i = rs; i < re; i++) a[i - rs] = 2 * TestHash(seed, i, 77) - 1;
  PetscCall(VecRestoreArray(v, &a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Collective check that B^T x == R^T x (MatMultTranspose) for the test vector of seed (CheckSameAction) */
static inline PetscErrorCode CheckSameTransposeProduct(Mat R, Mat B, PetscInt seed, const char *name)
{
  Vec x;

  PetscFunctionBeginUser;
  PetscCall(MatCreateVecs(B, NULL, &x));
  PetscCall(TestVector(x, seed));
  PetscCall(CheckSameAction(R, B, PETSC_TRUE, x, name));
  PetscCall(VecDestroy(&x));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Sets B's -mat_gpumats_transpose as a user would, through the options database and MatSetFromOptions */
static inline PetscErrorCode SetTransposeMode(Mat B, const char *mode)
{
  PetscFunctionBeginUser;
  PetscCall(PetscOptionsSetValue(NULL, "-mat_gpumats_transpose", mode));
  PetscCall(MatSetFromOptions(B));
  PetscCall(PetscOptionsClearValue(NULL, "-mat_gpumats_transpose"));
  PetscFunctionReturn(PETSC_SUCCESS);
}
