static char help[] = "MatSetPreallocationCOO/MatSetValuesCOO on every type under test give the products of the reference type built the\n"
                     "same way, after every change of the values (COO insert and add, MatSetValues, MatScale) and a new COO pattern.\n"
                     "  -types a,b,c : types under test (default: the host types)\n"
                     "  -ref t       : reference type (default aij)\n"
                     "  -coo_device  : pass the values as a device array (VECCUDA's) where PETSc has CUDA (default: host array)\n";

/*
   Every rank makes its COO triplets from a hash of (seed, rank, k), so the matrices differ with the
   number of ranks, but reference and matrix under test always get the same triplets. The patterns:
     poisson2d      5-point stencil on a 24x24 grid, every diagonal value given as 4 contributions
                    (summed), rows near another rank's set partly by the rank above (remote rows),
                    and a few entries with a negative row or column (ignored by PETSc)
     rect-random    40 x 57, random entries with repeats, some in any rank's rows
     offdiag-only   (i, N-1-i): on several ranks mostly in the off-diagonal block
     rank-no-entries  like rect-random, but the last rank passes no entries at all (its rows are
                    set by the others)
   After MatSetPreallocationCOO, each step below is applied to both matrices and MatMult and
   MatMultTranspose are compared (and, once per step, the product of a MatConvert to AIJ, which
   reads the host CSR values: after device values it must not be stale):
     first          MatSetValuesCOO(INSERT_VALUES)
     insert2/3      new values, INSERT_VALUES (the format copy must never keep the old ones); with
                    -coo_device a sequential GPU type must refill its copy from the device values
                    (values-only, no conversion: MatGpuMatsGetUpdateCounts)
     add            ADD_VALUES on top
     setvalues      MatSetValues(ADD_VALUES) on existing entries + assembly
     insert-after   MatSetValuesCOO(INSERT_VALUES) after that
     scale          MatScale
     add-after      MatSetValuesCOO(ADD_VALUES) after the scale
     repattern      MatSetPreallocationCOO again with another pattern, then INSERT_VALUES
     repattern-thinned  the first pattern without its entries in columns j = 1 (mod 3): fewer ghost
                    columns, the same nonzero state of the matrix as the last preallocation's
     repattern-back the first pattern again (the same nonzero state again)
   Each step also compares B B^T with R R^T (the products of the MPI GPU types see the blocks
   through a stand-in that must follow every new pattern).
*/
#include "testmats.h"

typedef struct {
  PetscCount n;
  PetscInt  *i, *j;
} Triplets;

static PetscErrorCode TripletsFree(Triplets *t)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFree2(t->i, t->j));
  t->n = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Sizes (M x N, PETSC_DECIDE local rows) and this rank's triplets of the named pattern. */
static PetscErrorCode MakeTriplets(MPI_Comm comm, const char *name, PetscInt seed, PetscInt *M, PetscInt *N, Triplets *t)
{
  PetscMPIInt rank, size;
  PetscInt    rs, re, cap, n = 0;
  PetscBool   is;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(PetscStrcmp(name, "poisson2d", &is));
  if (is) {
    const PetscInt g = 24;
    *M = *N = g * g;
    rs      = (*M * rank) / size;
    re      = (*M * (rank + 1)) / size;
    cap     = 12 * (re - rs + 8) + 16;
    PetscCall(PetscMalloc2(cap, &t->i, cap, &t->j));
    for (PetscInt r = rs; r < re; r++) {
      /* the last 3 rows of a rank are given by the rank above too (remote, summed) */
      const PetscInt copies = (rank + 1 < size && r >= re - 3) ? 2 : 1;
      for (PetscInt c = 0; c < copies; c++) {
        const PetscInt row = (c == 0) ? r : (r + g) % *M; /* the second copy: a row of the next rank */
        const PetscInt x = row % g, y = row / g;
        for (PetscInt k = 0; k < 4; k++) { t->i[n] = row; t->j[n++] = row; } /* 4 contributions */
        if (x > 0) { t->i[n] = row; t->j[n++] = row - 1; }
        if (x < g - 1) { t->i[n] = row; t->j[n++] = row + 1; }
        if (y > 0) { t->i[n] = row; t->j[n++] = row - g; }
        if (y < g - 1) { t->i[n] = row; t->j[n++] = row + g; }
      }
    }
    /* ignored entries */
    t->i[n] = -1; t->j[n++] = rs;
    t->i[n] = rs < re ? rs : 0; t->j[n++] = -3;
    t->i[n] = -2; t->j[n++] = -2;
  } else {
    PetscBool rect, off, none;
    PetscCall(PetscStrcmp(name, "rect-random", &rect));
    PetscCall(PetscStrcmp(name, "offdiag-only", &off));
    PetscCall(PetscStrcmp(name, "rank-no-entries", &none));
    PetscCheck(rect || off || none, comm, PETSC_ERR_ARG_WRONG, "unknown pattern %s", name);
    if (off) {
      *M = *N = 61;
      rs      = (*M * rank) / size;
      re      = (*M * (rank + 1)) / size;
      cap     = 2 * (re - rs) + 2;
      PetscCall(PetscMalloc2(cap, &t->i, cap, &t->j));
      for (PetscInt r = rs; r < re; r++) {
        t->i[n] = r; t->j[n++] = *N - 1 - r;
        if (r % 5 == 0) { t->i[n] = r; t->j[n++] = *N - 1 - r; } /* repeated */
      }
    } else {
      const PetscInt count = (none && rank == size - 1 && size > 1) ? 0 : 300;
      *M                   = 40;
      *N                   = 57;
      cap                  = count + 2;
      PetscCall(PetscMalloc2(cap, &t->i, cap, &t->j));
      for (PetscInt k = 0; k < count; k++) {
        /* rows anywhere (remote entries), with repeats: few distinct (row, column) pairs */
        t->i[n]   = (PetscInt)(TestHash(seed, rank, 2 * k) * *M);
        t->j[n++] = (PetscInt)(TestHash(seed, rank, 2 * k + 1) * 12) * 5 % *N;
      }
      if (count) { t->i[n] = -1; t->j[n++] = 3; } /* ignored */
    }
  }
  t->n = n;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Values(PetscCount n, PetscInt seed, PetscMPIInt rank, PetscScalar *v)
{
  PetscFunctionBeginUser;
  for (PetscCount k = 0; k < n; k++) v[k] = 2 * TestHash(seed, rank, (PetscInt)k + 5) - 1;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* t without its entries in columns j = 1 (mod 3) */
static PetscErrorCode Thinned(const Triplets *t, Triplets *out)
{
  PetscFunctionBeginUser;
  PetscCall(PetscMalloc2(t->n + 1, &out->i, t->n + 1, &out->j));
  out->n = 0;
  for (PetscCount k = 0; k < t->n; k++) {
    if (t->j[k] % 3 == 1) continue;
    out->i[out->n] = t->i[k], out->j[out->n] = t->j[k], out->n++;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Preallocate(Mat A, const Triplets *t)
{
  PetscInt *i, *j; /* MatSetPreallocationCOO may change its arguments */

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc2(t->n + 1, &i, t->n + 1, &j));
  PetscCall(PetscArraycpy(i, t->i, t->n));
  PetscCall(PetscArraycpy(j, t->j, t->n));
  PetscCall(MatSetPreallocationCOO(A, t->n, i, j));
  PetscCall(PetscFree2(i, j));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatSetValuesCOO with this rank's values for `seed`, from a host array or (device) from a
   VECCUDA's device array. */
static PetscErrorCode SetCOO(Mat A, PetscCount n, PetscInt seed, InsertMode mode, PetscBool device)
{
  PetscMPIInt rank;
  Vec         v;
  PetscScalar *a;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(PetscObjectComm((PetscObject)A), &rank));
  PetscCall(VecCreate(PETSC_COMM_SELF, &v));
  PetscCall(VecSetSizes(v, n, n));
  PetscCall(VecSetType(v, VECSTANDARD));
#if PetscDefined(HAVE_CUDA)
  if (device) PetscCall(VecSetType(v, VECCUDA));
#endif
  PetscCall(VecGetArray(v, &a));
  PetscCall(Values(n, seed, rank, a));
  PetscCall(VecRestoreArray(v, &a));
  if (device) {
    const PetscScalar *d;
    PetscMemType       mtype;
    PetscCall(VecGetArrayReadAndMemType(v, &d, &mtype));
    PetscCall(MatSetValuesCOO(A, d, mode));
    PetscCall(VecRestoreArrayReadAndMemType(v, &d));
  } else {
    const PetscScalar *h;
    PetscCall(VecGetArrayRead(v, &h));
    PetscCall(MatSetValuesCOO(A, h, mode));
    PetscCall(VecRestoreArrayRead(v, &h));
  }
  PetscCall(VecDestroy(&v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ADD_VALUES through MatSetValues on a stored column of every 3rd owned row. R decides the
   columns (all read before any value is set) so both matrices get the same entries. */
static PetscErrorCode SetSomeValues(Mat R, Mat B, PetscInt step)
{
  PetscInt rs, re, *col;

  PetscFunctionBeginUser;
  PetscCall(MatGetOwnershipRange(R, &rs, &re));
  PetscCall(PetscMalloc1(re - rs + 1, &col));
  for (PetscInt r = rs; r < re; r += 3) {
    PetscInt        nc;
    const PetscInt *cols;
    PetscCall(MatGetRow(R, r, &nc, &cols, NULL));
    col[r - rs] = nc ? cols[nc / 2] : -1;
    PetscCall(MatRestoreRow(R, r, &nc, &cols, NULL));
  }
  for (PetscInt r = rs; r < re; r += 3) {
    PetscScalar val = 0.125 * (1 + step) + r * 1e-3;
    if (col[r - rs] < 0) continue;
    PetscCall(MatSetValue(R, r, col[r - rs], val, ADD_VALUES));
    PetscCall(MatSetValue(B, r, col[r - rs], val, ADD_VALUES));
  }
  PetscCall(PetscFree(col));
  PetscCall(TestAssemble(R));
  PetscCall(TestAssemble(B));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* An MPI matrix of ours keeps the format copies of its diagonal and off-diagonal blocks itself:
   the blocks stay plain SeqAIJ after MatSetPreallocationCOO too (MPIAIJ's makes them in the
   matrix's root type; blocks of our Seq type would each hold a second copy, and MatConvert to
   mpiaijcusparse would replace them by empty ones). */
static PetscErrorCode CheckPlainBlocks(Mat B, const char *name)
{
  PetscMPIInt size;
  Mat         Ad, Ao;
  PetscBool   da, oa;
  MatType     dt, ot;
  char        why[256] = "";
  void (*ours)(void) = NULL;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)B), &size));
  PetscCall(PetscObjectQueryFunction((PetscObject)B, "MatGpuMatsGetUpdateCounts_C", &ours)); /* one of our types */
  if (size == 1 || !ours) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatMPIAIJGetSeqAIJ(B, &Ad, &Ao, NULL));
  PetscCall(PetscObjectTypeCompare((PetscObject)Ad, MATSEQAIJ, &da));
  PetscCall(PetscObjectTypeCompare((PetscObject)Ao, MATSEQAIJ, &oa));
  PetscCall(MatGetType(Ad, &dt));
  PetscCall(MatGetType(Ao, &ot));
  if (!da || !oa) PetscCall(PetscSNPrintf(why, sizeof(why), "blocks are %s and %s, not seqaij", dt, ot));
  PetscCall(Check(PetscObjectComm((PetscObject)B), (PetscBool)(da && oa), name, why));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CompareAll(Mat R, Mat B, const char *step, const char *type, const char *mat)
{
  char name[256];
  Mat  C;

  PetscFunctionBeginUser;
  PetscCall(PetscSNPrintf(name, sizeof(name), "mult/%s/%s/%s", step, type, mat));
  PetscCall(CheckSameProduct(R, B, 3, name));
  PetscCall(PetscSNPrintf(name, sizeof(name), "multtranspose/%s/%s/%s", step, type, mat));
  PetscCall(CheckSameTransposeProduct(R, B, 4, name));
  {
    Mat Rt, Bt, RRt, BBt;
    PetscCall(MatTranspose(R, MAT_INITIAL_MATRIX, &Rt));
    PetscCall(MatTranspose(B, MAT_INITIAL_MATRIX, &Bt));
    PetscCall(MatMatMult(R, Rt, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &RRt));
    PetscCall(MatMatMult(B, Bt, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &BBt));
    PetscCall(PetscSNPrintf(name, sizeof(name), "product-with-transpose/%s/%s/%s", step, type, mat));
    PetscCall(CheckSameProduct(RRt, BBt, 7, name));
    PetscCall(MatDestroy(&BBt));
    PetscCall(MatDestroy(&RRt));
    PetscCall(MatDestroy(&Bt));
    PetscCall(MatDestroy(&Rt));
  }
  PetscCall(PetscSNPrintf(name, sizeof(name), "plain-blocks/%s/%s/%s", step, type, mat));
  PetscCall(CheckPlainBlocks(B, name));
  /* the host CSR (MatConvert reads it): never stale, also after values that arrived on the device.
     Into the reference's type, whose products take the reference's vectors (aijcusparse: CUDA) */
  {
    MatType rtype;
    PetscCall(MatGetType(R, &rtype));
    PetscBool same;
    PetscCall(MatConvert(B, rtype, MAT_INITIAL_MATRIX, &C));
    PetscCall(PetscObjectTypeCompare((PetscObject)C, rtype, &same));
    PetscCall(PetscSNPrintf(name, sizeof(name), "convert-to-reference-type/%s/%s/%s", step, type, mat));
    PetscCall(Check(PetscObjectComm((PetscObject)B), same, name, "MatConvert did not return the type asked for"));
  }
  PetscCall(PetscSNPrintf(name, sizeof(name), "host-values/%s/%s/%s", step, type, mat));
  PetscCall(CheckSameProduct(R, C, 6, name));
  PetscCall(MatDestroy(&C));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Both matrices preallocated anew with t and given its values for `seed` (INSERT_VALUES), then compared */
static PetscErrorCode Repattern(Mat R, Mat B, const Triplets *t, PetscInt seed, PetscBool device, const char *step, const char *type, const char *mat)
{
  PetscFunctionBeginUser;
  PetscCall(Preallocate(R, t));
  PetscCall(Preallocate(B, t));
  PetscCall(SetCOO(R, t->n, seed, INSERT_VALUES, device));
  PetscCall(SetCOO(B, t->n, seed, INSERT_VALUES, device));
  PetscCall(CompareAll(R, B, step, type, mat));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether MatSetValuesCOO with device values must take the device values-only path on B: the
   sequential GPU types, autocuda and copies with a value dictionary (-mat_sellp_values,
   -mat_bellpack_values) included: a dictionary copy is refilled and encoded anew on the GPU (the
   test matrices hold far fewer than 65536 distinct values). */
static PetscBool DevicePathExpected(Mat B, const char *type)
{
  PetscMPIInt size;
  PetscBool   gpu;

  MPI_Comm_size(PetscObjectComm((PetscObject)B), &size);
  PetscStrendswith(type, "cuda", &gpu);
  return (size == 1 && gpu) ? PETSC_TRUE : PETSC_FALSE;
}

static PetscErrorCode CreateCOOMat(MPI_Comm comm, PetscInt M, PetscInt N, const char *type, Mat *A)
{
  PetscFunctionBeginUser;
  PetscCall(MatCreate(comm, A));
  PetscCall(MatSetSizes(*A, PETSC_DECIDE, PETSC_DECIDE, M, N));
  PetscCall(MatSetType(*A, type));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  TypeList    types;
  const char *mats[] = {"poisson2d", "rect-random", "offdiag-only", "rank-no-entries"};
  PetscBool   device = PETSC_FALSE;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGpuMatsInitialize());
  PetscCall(GetTypeList(&types));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-coo_device", &device, NULL));
#if !PetscDefined(HAVE_CUDA)
  device = PETSC_FALSE; /* no device arrays without a CUDA PETSc */
#endif
  for (size_t m = 0; m < sizeof(mats) / sizeof(mats[0]); m++) {
    Triplets t, t2, t3;
    PetscInt M, N, M2, N2;
    PetscCall(MakeTriplets(PETSC_COMM_WORLD, mats[m], 1, &M, &N, &t));
    PetscCall(MakeTriplets(PETSC_COMM_WORLD, mats[m], 2, &M2, &N2, &t2)); /* same sizes, another pattern where random */
    PetscCall(Thinned(&t, &t3));
    for (PetscInt k = 0; k < types.ntypes; k++) {
      const char *ty = types.types[k];
      Mat         R, B;
      PetscCall(CreateCOOMat(PETSC_COMM_WORLD, M, N, types.ref, &R));
      PetscCall(CreateCOOMat(PETSC_COMM_WORLD, M, N, ty, &B));
      PetscCall(MatSetFromOptions(B));
      PetscCall(Preallocate(R, &t));
      PetscCall(Preallocate(B, &t));
      PetscCall(SetCOO(R, t.n, 10, INSERT_VALUES, device));
      PetscCall(SetCOO(B, t.n, 10, INSERT_VALUES, device));
      PetscCall(CompareAll(R, B, "first", ty, mats[m]));
      for (PetscInt r = 2; r <= 3; r++) {
        char       step[32];
        PetscInt64 conv0, vals0, conv1, vals1;
        PetscCall(MatGpuMatsGetUpdateCounts(B, &conv0, &vals0));
        PetscCall(SetCOO(R, t.n, 10 + r, INSERT_VALUES, device));
        PetscCall(SetCOO(B, t.n, 10 + r, INSERT_VALUES, device));
        PetscCall(PetscSNPrintf(step, sizeof(step), "insert%" PetscInt_FMT, r));
        /* the copy is brought up to date at its first use after the change (the products here) */
        PetscCall(CompareAll(R, B, step, ty, mats[m]));
        PetscCall(MatGpuMatsGetUpdateCounts(B, &conv1, &vals1));
        if (device && DevicePathExpected(B, ty)) {
          /* a sequential GPU type refills its copy from the device values (no conversion, which
             would mean the values went through the host first) */
          char name[256];
          PetscCall(PetscSNPrintf(name, sizeof(name), "device-values-path/%s/%s/%s", step, ty, mats[m]));
          PetscCall(Check(PETSC_COMM_WORLD, (conv1 == conv0 && vals1 > vals0) ? PETSC_TRUE : PETSC_FALSE, name,
                          "the copy was converted in full (or not updated) after device values with the same pattern"));
        }
      }
      PetscCall(SetCOO(R, t.n, 20, ADD_VALUES, device));
      PetscCall(SetCOO(B, t.n, 20, ADD_VALUES, device));
      PetscCall(CompareAll(R, B, "add", ty, mats[m]));
      PetscCall(SetSomeValues(R, B, 1));
      PetscCall(CompareAll(R, B, "setvalues", ty, mats[m]));
      PetscCall(SetCOO(R, t.n, 21, INSERT_VALUES, device));
      PetscCall(SetCOO(B, t.n, 21, INSERT_VALUES, device));
      PetscCall(CompareAll(R, B, "insert-after", ty, mats[m]));
      PetscCall(MatScale(R, -1.5));
      PetscCall(MatScale(B, -1.5));
      PetscCall(CompareAll(R, B, "scale", ty, mats[m]));
      PetscCall(SetCOO(R, t.n, 22, ADD_VALUES, device));
      PetscCall(SetCOO(B, t.n, 22, ADD_VALUES, device));
      PetscCall(CompareAll(R, B, "add-after", ty, mats[m]));
      PetscCall(Repattern(R, B, &t2, 23, device, "repattern", ty, mats[m]));
      /* PETSc's MPIAIJ gives each COO preallocation's new blocks the nonzero state of the last
         one's, so the matrix's nonzero state stays the same from here on: a pattern (ghost
         columns, blocks the products see) keyed on it alone would look unchanged */
      PetscCall(Repattern(R, B, &t3, 24, device, "repattern-thinned", ty, mats[m]));
      PetscCall(Repattern(R, B, &t, 25, device, "repattern-back", ty, mats[m]));
      PetscCall(MatDestroy(&R));
      PetscCall(MatDestroy(&B));
    }
    PetscCall(TripletsFree(&t));
    PetscCall(TripletsFree(&t2));
    PetscCall(TripletsFree(&t3));
  }
  PetscCall(FreeTypeList(&types));
  PetscCall(PetscFinalize());
  return check_failures ? 1 : 0;
}
