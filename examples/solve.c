/*
   solve - petsc-gpumats example driver: one matrix, every Mat type, one table.

   Synopsis:
     build/bin/solve [-problem poisson3d|poisson2d] [-n <int>]
                     [-f <file> [-f_name <name>]]
                     [-types <type,type,...>|all] [-mult_reps <int>] [-csv <file>]
                     [KSP and PC options, e.g. -ksp_type gmres -ksp_rtol 1e-10 -pc_type none]
     mpiexec -n <ranks> build/bin/solve ...

   Builds one assembled MATAIJ matrix A on PETSC_COMM_WORLD, then for each requested type:
   converts A with MatConvert() (timed together with a first MatMult()), solves B x = b with
   b = B u for a known u, and times -mult_reps MatMult() calls. One table row per type; a type that
   cannot be used here (unknown type, no GPU, library built without CUDA, ...) is reported as
   "skipped" and does not stop the run.

   Options:
+  -problem <poisson3d>   - generated matrix: poisson3d (7-point Laplacian on an n^3 grid) or
                            poisson2d (5-point, n^2 grid); Dirichlet-style rows, diagonal 2*dim, off-diagonals -1
.  -n <48>                - grid points per direction
.  -f <file>              - read the matrix from a file instead: *.mtx Matrix Market (coordinate,
                            real/integer/pattern, general/symmetric/skew-symmetric); *.h5, *.hdf5, *.mat
                            HDF5 in PETSc's MATLAB -v7.3 sparse layout; anything else PETSc binary
.  -f_name <A>            - name of the matrix (the HDF5 group) in an HDF5 file
.  -types <list>          - comma-separated Mat types, default aij,cmrs,sellp,bellpack; "all" adds
                            aijcusparse,cmrscuda,sellpcuda,bellpackcuda,autocuda. The first type that runs
                            is the reference of the speedup column
.  -mult_reps <50>        - timed MatMult() calls per type (after 2 untimed ones)
.  -csv <file>            - also write the table as CSV (rank 0 writes)
-  -ksp_rtol <1e-8>       - and every other KSP/PC option; the defaults are KSPCG with PCJACOBI

   Columns: conversion time (MatConvert() + first MatMult(), ms), KSPSolve() time (ms, after
   KSPSetUp()), iterations, relative true residual ||b - B x|| / ||b||, time per MatMult() (us),
   speedup of MatMult() against the reference type. Times are wall-clock (PetscTime() after an
   MPI_Barrier()), the slowest rank's; GPU timings end with a VecNorm() so that the work is complete.
   Each converted matrix is also checked against A: B u must equal A u to roundoff.

   Exit status: 0 when every type that ran converged and multiplied correctly (also when every type
   was skipped, which the output says), 1 otherwise (the failing types are listed). Unreadable or malformed input files give a PETSc error naming the file
   (and the line, for Matrix Market) and a nonzero exit status.

   Examples:
     build/bin/solve                                         (what `make run` does, host types)
     build/bin/solve -types all -ksp_type gmres
     build/bin/solve -f matrix.mtx -csv results.csv
     build/bin/solve -f matrix.h5 -f_name A                  (HDF5 written by MATLAB's save -v7.3)
     mpiexec -n 4 build/bin/solve -problem poisson2d -n 400 -types aij,cmrs,sellp,bellpack
*/

/*TEST

   test:
      suffix: host
      args: -n 16 -types aij,cmrs,sellp,bellpack

   test:
      suffix: mpi
      nsize: 3
      args: -n 20 -types aij,cmrs,sellp,bellpack

   test:
      suffix: gmres2d
      args: -problem poisson2d -n 64 -ksp_type gmres -types all

   test:
      suffix: cuda
      requires: cuda
      args: -n 32 -types aij,aijcusparse,cmrscuda,sellpcuda,bellpackcuda

TEST*/

static char help[] = "petsc-gpumats solve driver: converts one AIJ matrix to each requested Mat type, solves with KSP\n"
                     "and times MatConvert, KSPSolve and MatMult. Options (see also the top of examples/solve.c):\n"
                     "  -problem poisson3d|poisson2d  -n <int>  -f <file.mtx|file.h5|petsc-binary-file>  -f_name <name>\n"
                     "  -types <type,...>|all  -mult_reps <int>  -csv <file>  and any KSP/PC option\n\n";

#include <petscksp.h>
#include <petsctime.h>
#include <petscgpumats.h>
#if defined(PETSC_HAVE_HDF5)
  #include <petscviewerhdf5.h>
#endif

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* PETSc before 3.19 returned a plain 0 for success; PETSC_INT_MAX replaced PETSC_MAX_INT later */
#if PETSC_VERSION_LT(3, 19, 0)
  #define PETSC_SUCCESS 0
#endif
#if !defined(PETSC_INT_MAX)
  #define PETSC_INT_MAX PETSC_MAX_INT
#endif

#include "mmread.h"

#define MAX_TYPES 32
#define MSG_LEN   1024

typedef struct {
  char               type[64];
  PetscBool          skipped;
  char               why[MSG_LEN]; /* first line of the error that made the type unusable */
  double             convert_ms, solve_ms, mult_us, rel_res, mult_diff;
  PetscInt           its;
  KSPConvergedReason reason;
} TypeResult;

/* ----------------------------------------------------------------------------------------------
   Errors
   ---------------------------------------------------------------------------------------------- */

/* First line of the message of the error most recently raised (code is what the call returned). */
static PetscErrorCode LastErrorFirstLine(PetscErrorCode code, char *buf, size_t len)
{
  const char *text     = NULL;
  char       *specific = NULL; /* const char * since PETSc 3.19: passed through void * so that both compile */
  char       *nl;

  PetscFunctionBeginUser;
  PetscCall(PetscErrorMessage(code, &text, (void *)&specific));
  PetscCall(PetscStrncpy(buf, specific && specific[0] ? specific : (text ? text : "unknown error"), len));
  if ((nl = strchr(buf, '\n'))) *nl = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Runs fn(ctx) on rank 0 of comm only; if it fails there, every rank raises the same error (code and
   message), so that a bad input file stops all ranks instead of leaving them waiting for rank 0. */
static PetscErrorCode RunOnRankZero(MPI_Comm comm, PetscErrorCode (*fn)(void *), void *ctx)
{
  PetscMPIInt rank;
  int         code = 0;
  char        msg[MSG_LEN] = "";

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (rank == 0) {
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    code = (int)fn(ctx);
    PetscCall(PetscPopErrorHandler());
    if (code) PetscCall(LastErrorFirstLine((PetscErrorCode)code, msg, sizeof(msg)));
  }
  PetscCallMPI(MPI_Bcast(&code, 1, MPI_INT, 0, comm));
  if (code) PetscCallMPI(MPI_Bcast(msg, MSG_LEN, MPI_CHAR, 0, comm));
  PetscCheck(!code, comm, (PetscErrorCode)code, "%s", msg);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ----------------------------------------------------------------------------------------------
   The generated problems
   ---------------------------------------------------------------------------------------------- */

/* 5-point (dim 2) or 7-point (dim 3) Laplacian on an n^dim grid, rows distributed by PETSc */
static PetscErrorCode CreatePoisson(MPI_Comm comm, PetscInt dim, PetscInt n, Mat *A)
{
  const double rows = dim == 3 ? (double)n * n * n : (double)n * n;
  PetscInt     N, rstart, rend, row;

  PetscFunctionBeginUser;
  PetscCheck(rows * (2 * dim + 1) <= (double)PETSC_INT_MAX, comm, PETSC_ERR_ARG_OUTOFRANGE, "-n %" PetscInt_FMT " is too large for %d-bit PetscInt", n, (int)(8 * sizeof(PetscInt)));
  N = (PetscInt)rows;
  PetscCall(MatCreate(comm, A));
  PetscCall(MatSetSizes(*A, PETSC_DECIDE, PETSC_DECIDE, N, N));
  PetscCall(MatSetType(*A, MATAIJ));
  PetscCall(MatSeqAIJSetPreallocation(*A, 2 * dim + 1, NULL));
  PetscCall(MatMPIAIJSetPreallocation(*A, 2 * dim + 1, NULL, 2 * dim, NULL));
  PetscCall(MatGetOwnershipRange(*A, &rstart, &rend));
  for (row = rstart; row < rend; row++) {
    const PetscInt i = row % n, j = (row / n) % n, k = row / (n * n); /* k is 0 in 2D */
    PetscInt       cols[7], nc = 0;
    PetscScalar    vals[7];

    /* neighbours in ascending column order; those outside the grid are dropped (Dirichlet) */
    if (dim == 3 && k > 0) cols[nc] = row - n * n, vals[nc++] = -1.0;
    if (j > 0) cols[nc] = row - n, vals[nc++] = -1.0;
    if (i > 0) cols[nc] = row - 1, vals[nc++] = -1.0;
    cols[nc] = row, vals[nc++] = 2.0 * dim;
    if (i < n - 1) cols[nc] = row + 1, vals[nc++] = -1.0;
    if (j < n - 1) cols[nc] = row + n, vals[nc++] = -1.0;
    if (dim == 3 && k < n - 1) cols[nc] = row + n * n, vals[nc++] = -1.0;
    PetscCall(MatSetValues(*A, 1, &row, nc, cols, vals, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ----------------------------------------------------------------------------------------------
   Matrix Market: rank 0 reads and checks the whole file into COO arrays (0-based, symmetric and
   skew-symmetric storage expanded), then MatSetPreallocationCOO/MatSetValuesCOO distribute it.
   ---------------------------------------------------------------------------------------------- */

static PetscErrorCode MMReadCtx(void *ctx)
{
  PetscFunctionBeginUser;
  PetscCall(MMRead((MMData *)ctx));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode LoadMatrixMarket(MPI_Comm comm, const char *file, Mat *A)
{
  MMData      mm = {file, 0, 0, 0, NULL, NULL, NULL};
  PetscInt    sizes[2];
  PetscMPIInt rank;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(RunOnRankZero(comm, MMReadCtx, &mm)); /* the reader: examples/mmread.h */
  sizes[0] = mm.M, sizes[1] = mm.N;
  PetscCallMPI(MPI_Bcast(sizes, 2, MPIU_INT, 0, comm));
  PetscCall(MatCreate(comm, A));
  PetscCall(MatSetSizes(*A, PETSC_DECIDE, PETSC_DECIDE, sizes[0], sizes[1]));
  PetscCall(MatSetType(*A, MATAIJ));
  /* rank 0 holds every entry; the COO assembly sends each to its owner and sums duplicates */
  PetscCall(MatSetPreallocationCOO(*A, rank ? 0 : mm.n, mm.i, mm.j));
  PetscCall(MatSetValuesCOO(*A, mm.v, INSERT_VALUES));
  PetscCall(MMFree(&mm));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ----------------------------------------------------------------------------------------------
   PETSc binary and HDF5: rank 0 checks the file first (it opens, it is what it claims to be, it is
   long enough), so that MatLoad() never runs into the end of a file on one rank only.
   ---------------------------------------------------------------------------------------------- */

/* Size of an open file in bytes, -1 if unknown */
static long FileSize(FILE *fp)
{
  long size = -1;

  if (!fseek(fp, 0, SEEK_END)) size = ftell(fp);
  rewind(fp);
  return size;
}

/* Reads count big-endian integers of sizeof(PetscInt) bytes (PETSc's binary format); returns how many were read */
static size_t ReadBigEndianInts(FILE *fp, PetscInt64 *v, size_t count)
{
  const size_t  w = sizeof(PetscInt);
  unsigned char b[8];
  size_t        k, q;

  for (k = 0; k < count; k++) {
    PetscInt64 x = 0;

    if (fread(b, 1, w, fp) != w) break;
    for (q = 0; q < w; q++) x = (PetscInt64)(((unsigned long long)x << 8) | b[q]);
    v[k] = w == 4 ? (PetscInt64)(int)(unsigned int)x : x;
  }
  return k;
}

static PetscErrorCode CheckPetscBinary(void *ctx)
{
  const char  *file = (const char *)ctx;
  const size_t w    = sizeof(PetscInt);
  FILE        *fp;
  long         size;
  PetscInt64   hdr[4], ints[512], sum = 0, done = 0, need; /* ints: row lengths, then column indices */

  PetscFunctionBeginUser;
  fp = fopen(file, "rb");
  PetscCheck(fp, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "Cannot open PETSc binary matrix file %s: %s", file, strerror(errno));
  size = FileSize(fp);
  errno = 0;
  if (ReadBigEndianInts(fp, hdr, 4) < 4) {
    PetscCheck(!ferror(fp), PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "Cannot read PETSc binary matrix file %s: %s", file, strerror(errno));
    PetscCheck(size != 0, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "PETSc binary matrix file %s is empty", file);
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "PETSc binary matrix file %s is too short (%ld bytes) to hold a matrix header (%d bytes)", file, size, (int)(4 * w));
  }
  PetscCheck(hdr[0] == MAT_FILE_CLASSID, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED,
             "%s is not a PETSc binary matrix file (its first integer is %" PetscInt64_FMT ", not the Mat class id %d); the driver reads *.mtx as Matrix Market, *.h5 as HDF5, anything else as PETSc binary", file, hdr[0], MAT_FILE_CLASSID);
  PetscCheck(hdr[3] != MATRIX_BINARY_FORMAT_DENSE, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "PETSc binary matrix file %s holds a dense matrix; the driver reads sparse (AIJ) matrices", file);
  PetscCheck(hdr[1] >= 0 && hdr[2] >= 0 && hdr[3] >= 0, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "PETSc binary matrix file %s: corrupt header (%" PetscInt64_FMT " x %" PetscInt64_FMT ", %" PetscInt64_FMT " nonzeros)", file, hdr[1], hdr[2], hdr[3]);
  /* row lengths: each within 0..N, adding up to the header's nonzero count */
  while (done < hdr[1]) {
    const size_t want = (size_t)PetscMin(hdr[1] - done, 512);
    size_t       got, q;

    errno = 0;
    got   = ReadBigEndianInts(fp, ints, want);
    PetscCheck(!ferror(fp), PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "Cannot read PETSc binary matrix file %s: %s", file, strerror(errno));
    PetscCheck(got == want, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "PETSc binary matrix file %s is truncated: it ends within the row lengths (row %" PetscInt64_FMT " of %" PetscInt64_FMT ")", file, done + (PetscInt64)got, hdr[1]);
    for (q = 0; q < got; q++) {
      PetscCheck(ints[q] >= 0 && ints[q] <= hdr[2], PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "PETSc binary matrix file %s: row %" PetscInt64_FMT " has length %" PetscInt64_FMT ", outside 0..%" PetscInt64_FMT, file, done + (PetscInt64)q, ints[q], hdr[2]);
      sum += ints[q];
    }
    done += (PetscInt64)got;
  }
  PetscCheck(sum == hdr[3], PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "PETSc binary matrix file %s: the row lengths add up to %" PetscInt64_FMT " nonzeros, the header says %" PetscInt64_FMT, file, sum, hdr[3]);
  need = (PetscInt64)((4 + hdr[1] + hdr[3]) * w + hdr[3] * sizeof(PetscScalar));
  PetscCheck(size < 0 || size >= need, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED,
             "PETSc binary matrix file %s is truncated: a %" PetscInt64_FMT " x %" PetscInt64_FMT " matrix with %" PetscInt64_FMT " nonzeros needs %" PetscInt64_FMT " bytes, the file has %ld", file, hdr[1], hdr[2], hdr[3], need, size);
  /* column indices within 0..N-1 (a PETSc built without debugging loads others unchecked) */
  for (done = 0; done < hdr[3];) {
    const size_t want = (size_t)PetscMin(hdr[3] - done, 512);
    size_t       got, q;

    errno = 0;
    got   = ReadBigEndianInts(fp, ints, want);
    PetscCheck(got == want, PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "Cannot read PETSc binary matrix file %s: %s", file, ferror(fp) ? strerror(errno) : "unexpected end of file");
    for (q = 0; q < got; q++)
      PetscCheck(ints[q] >= 0 && ints[q] < hdr[2], PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "PETSc binary matrix file %s: nonzero %" PetscInt64_FMT " has column index %" PetscInt64_FMT ", outside 0..%" PetscInt64_FMT, file, done + (PetscInt64)q, ints[q], hdr[2] - 1);
    done += (PetscInt64)got;
  }
  PetscCheck(!fclose(fp), PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "PETSc binary matrix file %s: error closing: %s", file, strerror(errno));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CheckHDF5(void *ctx)
{
  static const unsigned char signature[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
  const char                *file         = (const char *)ctx;
  unsigned char              b[8];
  FILE                      *fp;
  long                       size, off;
  PetscBool                  found = PETSC_FALSE;

  PetscFunctionBeginUser;
  fp = fopen(file, "rb");
  PetscCheck(fp, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "Cannot open HDF5 file %s: %s", file, strerror(errno));
  size = FileSize(fp);
  errno = 0;
  PetscCheck(fread(b, 1, 1, fp) == 1 || !ferror(fp), PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "Cannot read HDF5 file %s: %s", file, strerror(errno));
  PetscCheck(size != 0, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "HDF5 file %s is empty", file);
  /* the superblock signature is at offset 0, 512, 1024, 2048, ... (MATLAB -v7.3 files put it at 512) */
  for (off = 0; !found && off + 8 <= size; off = off ? 2 * off : 512) {
    if (fseek(fp, off, SEEK_SET) || fread(b, 1, 8, fp) != 8) break;
    found = memcmp(b, signature, 8) ? PETSC_FALSE : PETSC_TRUE;
  }
  PetscCheck(found, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s is not an HDF5 file (no HDF5 signature); the driver reads *.h5, *.hdf5 and *.mat files with PETSc's HDF5 viewer", file);
  PetscCheck(!fclose(fp), PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "HDF5 file %s: error closing: %s", file, strerror(errno));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Opens the viewer and runs MatLoad(); kind is "binary" or "hdf5" */
static PetscErrorCode ViewerLoad(MPI_Comm comm, const char *file, const char *kind, const char *name, Mat *A)
{
  PetscViewer viewer;

  PetscFunctionBeginUser;
  PetscCall(MatCreate(comm, A));
  PetscCall(MatSetType(*A, MATAIJ));
  if (!strcmp(kind, "hdf5")) {
#if defined(PETSC_HAVE_HDF5)
    PetscCall(PetscObjectSetName((PetscObject)*A, name)); /* MatLoad reads the group of that name */
    PetscCall(PetscViewerHDF5Open(comm, file, FILE_MODE_READ, &viewer));
    PetscCall(PetscViewerPushFormat(viewer, PETSC_VIEWER_HDF5_MAT)); /* MATLAB orientation (no transpose) */
#else
    SETERRQ(comm, PETSC_ERR_SUP, "this PETSc is built without HDF5");
#endif
  } else PetscCall(PetscViewerBinaryOpen(comm, file, FILE_MODE_READ, &viewer));
  PetscCall(MatLoad(*A, viewer));
  PetscCall(PetscViewerDestroy(&viewer));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Reads the matrix of -f: the file name's extension picks the format */
static PetscErrorCode LoadMatrix(MPI_Comm comm, const char *file, const char *name, Mat *A)
{
  const char    *dot = strrchr(file, '.');
  char           ext[16] = "", msg[MSG_LEN];
  const char    *kind;
  PetscErrorCode code;

  PetscFunctionBeginUser;
  if (dot && !strchr(dot, '/') && strlen(dot) < sizeof(ext)) {
    PetscCall(PetscStrncpy(ext, dot, sizeof(ext)));
    PetscCall(PetscStrtolower(ext));
  }
  if (!strcmp(ext, ".mtx")) {
    PetscCall(LoadMatrixMarket(comm, file, A));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  kind = (!strcmp(ext, ".h5") || !strcmp(ext, ".hdf5") || !strcmp(ext, ".mat")) ? "hdf5" : "binary";
  PetscCall(RunOnRankZero(comm, !strcmp(kind, "hdf5") ? CheckHDF5 : CheckPetscBinary, (void *)file));
  /* the file looks right; what MatLoad still finds wrong is reported with the file's name */
  *A = NULL;
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  code = ViewerLoad(comm, file, kind, name, A);
  PetscCall(PetscPopErrorHandler());
  if (code) {
    PetscCall(LastErrorFirstLine(code, msg, sizeof(msg)));
    if (!strcmp(kind, "hdf5")) SETERRQ(comm, PETSC_ERR_FILE_UNEXPECTED, "Cannot load matrix \"%s\" (-f_name) from HDF5 file %s: %s", name, file, msg);
    SETERRQ(comm, PETSC_ERR_FILE_UNEXPECTED, "Cannot load a matrix from PETSc binary file %s: %s", file, msg);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ----------------------------------------------------------------------------------------------
   One type: convert, check, solve, time MatMult
   ---------------------------------------------------------------------------------------------- */

/* The known solution: smooth, deterministic, independent of the number of ranks, away from zero */
static PetscErrorCode FillExact(Vec u)
{
  PetscInt     lo, hi, k, N;
  PetscScalar *a;

  PetscFunctionBeginUser;
  PetscCall(VecGetSize(u, &N));
  PetscCall(VecGetOwnershipRange(u, &lo, &hi));
  PetscCall(VecGetArrayWrite(u, &a));
  for (k = lo; k < hi; k++) a[k - lo] = 1.0 + 0.5 * PetscSinReal(2.0 * PETSC_PI * (PetscReal)k / (PetscReal)N);
  PetscCall(VecRestoreArrayWrite(u, &a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* KSP on B with the driver's defaults (CG, Jacobi, rtol 1e-8), then the user's options */
static PetscErrorCode CreateSolver(Mat B, KSP *ksp)
{
  PC pc;

  PetscFunctionBeginUser;
  PetscCall(KSPCreate(PetscObjectComm((PetscObject)B), ksp));
  PetscCall(KSPSetOperators(*ksp, B, B));
  PetscCall(KSPSetType(*ksp, KSPCG));
  PetscCall(KSPGetPC(*ksp, &pc));
  PetscCall(PCSetType(pc, PCJACOBI));
  PetscCall(KSPSetTolerances(*ksp, 1e-8, PETSC_DEFAULT, PETSC_DEFAULT, PETSC_DEFAULT));
  PetscCall(KSPSetFromOptions(*ksp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MaxOverRanks(MPI_Comm comm, double *t)
{
  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, t, 1, MPI_DOUBLE, MPI_MAX, comm));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* max |y - ref| / max |ref| over all ranks (reads y on the host, whatever its type) */
static PetscErrorCode RelativeDifference(Vec y, Vec ref, double *d)
{
  const PetscScalar *a, *b;
  PetscInt           n, k;
  PetscReal          m[2] = {0, 0};

  PetscFunctionBeginUser;
  PetscCall(VecGetLocalSize(ref, &n));
  PetscCall(VecGetArrayRead(y, &a));
  PetscCall(VecGetArrayRead(ref, &b));
  for (k = 0; k < n; k++) {
    m[0] = PetscMax(m[0], PetscAbsScalar(a[k] - b[k]));
    m[1] = PetscMax(m[1], PetscAbsScalar(b[k]));
  }
  PetscCall(VecRestoreArrayRead(ref, &b));
  PetscCall(VecRestoreArrayRead(y, &a));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, m, 2, MPIU_REAL, MPIU_MAX, PetscObjectComm((PetscObject)y)));
  *d = (double)(m[1] > 0 ? m[0] / m[1] : m[0]);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The conversion phase, run under PetscReturnErrorHandler: MatConvert() and a first b = B u (timed
   together), with vectors of B's own type (CUDA vectors for CUDA types). Whatever it created is in
   *B, *u, *b even when it fails. */
static PetscErrorCode Convert(Mat A, const char *type, Mat *B, Vec *u, Vec *b, double *ms)
{
  MPI_Comm       comm = PetscObjectComm((PetscObject)A);
  PetscLogDouble t0, t1, t2, t3;
  PetscReal      nrm;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Barrier(comm));
  PetscCall(PetscTime(&t0));
  PetscCall(MatConvert(A, type, MAT_INITIAL_MATRIX, B));
  PetscCall(MatSetFromOptions(*B)); /* the type's own options: -mat_cmrs_height, -mat_sellp_slice_height, ... */
  PetscCall(PetscTime(&t1));
  PetscCall(MatCreateVecs(*B, u, b));
  PetscCall(FillExact(*u));
  PetscCallMPI(MPI_Barrier(comm));
  PetscCall(PetscTime(&t2));
  PetscCall(MatMult(*B, *u, *b));
  PetscCall(VecNorm(*b, NORM_INFINITY, &nrm)); /* completes the product on a GPU */
  PetscCall(PetscTime(&t3));
  *ms = 1e3 * ((t1 - t0) + (t3 - t2));
  PetscCall(MaxOverRanks(comm, ms));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode RunType(Mat A, Vec bA, const char *type, PetscInt reps, TypeResult *r)
{
  MPI_Comm       comm = PetscObjectComm((PetscObject)A);
  Mat            B = NULL;
  Vec            u = NULL, b = NULL, x, y;
  KSP            ksp;
  PetscErrorCode code;
  PetscLogDouble t0, t1;
  PetscReal      bnorm, rnorm, nrm;
  PetscBool      device;
  PetscInt       k;

  PetscFunctionBeginUser;
  PetscCall(PetscMemzero(r, sizeof(*r)));
  PetscCall(PetscStrncpy(r->type, type, sizeof(r->type)));
  device = (strstr(type, "cuda") || strstr(type, "cusparse") || strstr(type, "hip") || strstr(type, "kokkos")) ? PETSC_TRUE : PETSC_FALSE;

  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  code = Convert(A, type, &B, &u, &b, &r->convert_ms);
  PetscCall(PetscPopErrorHandler());
  if (code) {
    r->skipped = PETSC_TRUE;
    PetscCall(LastErrorFirstLine(code, r->why, sizeof(r->why)));
    PetscCall(VecDestroy(&u));
    PetscCall(VecDestroy(&b));
    PetscCall(MatDestroy(&B));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(RelativeDifference(b, bA, &r->mult_diff)); /* B u against A u */
  PetscCall(VecDuplicate(b, &x));
  PetscCall(VecDuplicate(b, &y));

  /* the solve */
  PetscCall(CreateSolver(B, &ksp));
  PetscCall(KSPSetUp(ksp));
  PetscCall(VecSet(x, 0.0));
  PetscCallMPI(MPI_Barrier(comm));
  PetscCall(PetscTime(&t0));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(PetscTime(&t1));
  r->solve_ms = 1e3 * (t1 - t0);
  PetscCall(MaxOverRanks(comm, &r->solve_ms));
  PetscCall(KSPGetIterationNumber(ksp, &r->its));
  PetscCall(KSPGetConvergedReason(ksp, &r->reason));
  PetscCall(MatMult(B, x, y));
  PetscCall(VecAYPX(y, -1.0, b));
  PetscCall(VecNorm(y, NORM_2, &rnorm));
  PetscCall(VecNorm(b, NORM_2, &bnorm));
  r->rel_res = (double)(bnorm > 0 ? rnorm / bnorm : rnorm);
  PetscCall(KSPDestroy(&ksp));

  /* MatMult: 2 untimed, then reps timed */
  PetscCall(MatMult(B, u, y));
  PetscCall(MatMult(B, u, y));
  if (device) PetscCall(VecNorm(y, NORM_INFINITY, &nrm));
  PetscCallMPI(MPI_Barrier(comm));
  PetscCall(PetscTime(&t0));
  for (k = 0; k < reps; k++) PetscCall(MatMult(B, u, y));
  if (device) PetscCall(VecNorm(y, NORM_INFINITY, &nrm)); /* waits for the last kernel */
  PetscCall(PetscTime(&t1));
  r->mult_us = 1e6 * (t1 - t0) / (double)reps;
  PetscCall(MaxOverRanks(comm, &r->mult_us));

  PetscCall(VecDestroy(&u));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(MatDestroy(&B));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ----------------------------------------------------------------------------------------------
   Output
   ---------------------------------------------------------------------------------------------- */

#define MULT_DIFF_TOL 1e-10 /* B u may differ from A u by roundoff only */

static PetscBool Failed(const TypeResult *r)
{
  return (!r->skipped && (r->reason < 0 || r->mult_diff > MULT_DIFF_TOL)) ? PETSC_TRUE : PETSC_FALSE;
}

static PetscErrorCode PrintRow(MPI_Comm comm, const TypeResult *r, double ref_us)
{
  PetscFunctionBeginUser;
  if (r->skipped) {
    PetscCall(PetscPrintf(comm, "%-14s  skipped: %s\n", r->type, r->why));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscPrintf(comm, "%-14s  %11.2f  %12.2f  %6" PetscInt_FMT "  %12.3e  %11.2f  %7.2f", r->type, r->convert_ms, r->solve_ms, r->its, r->rel_res, r->mult_us, ref_us / r->mult_us));
  if (r->reason < 0) PetscCall(PetscPrintf(comm, "  <- KSP %s", KSPConvergedReasons[r->reason]));
  if (r->mult_diff > MULT_DIFF_TOL) PetscCall(PetscPrintf(comm, "  <- B*u differs from aij's A*u by %.2e (relative)", r->mult_diff));
  PetscCall(PetscPrintf(comm, "\n"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* s as one CSV field: in double quotes, with " doubled */
static const char *CsvField(const char *s, char *buf, size_t len)
{
  char *o = buf;

  *o++ = '"';
  for (; *s && o < buf + len - 4; s++) {
    if (*s == '"') *o++ = '"';
    *o++ = *s;
  }
  *o++ = '"';
  *o   = 0;
  return buf;
}

static PetscErrorCode WriteCSV(MPI_Comm comm, const char *path, const char *problem, PetscInt nr, const TypeResult *res, double ref_us)
{
  FILE    *fp;
  PetscInt t;
  char     pq[2 * PETSC_MAX_PATH_LEN + 200], wq[2 * MSG_LEN + 4];

  PetscFunctionBeginUser;
  PetscCall(PetscFOpen(comm, path, "w", &fp));
  PetscCall(PetscFPrintf(comm, fp, "problem,type,status,convert_ms,solve_ms,iterations,rel_residual,matmult_us,speedup,reason,matmult_rel_diff\n"));
  for (t = 0; t < nr; t++) {
    const TypeResult *r = &res[t];

    if (r->skipped) PetscCall(PetscFPrintf(comm, fp, "%s,%s,skipped,,,,,,,%s,\n", CsvField(problem, pq, sizeof(pq)), r->type, CsvField(r->why, wq, sizeof(wq))));
    else
      PetscCall(PetscFPrintf(comm, fp, "%s,%s,%s,%.4f,%.4f,%" PetscInt_FMT ",%.6e,%.4f,%.4f,%s,%.3e\n", CsvField(problem, pq, sizeof(pq)), r->type, Failed(r) ? "failed" : "ok", r->convert_ms, r->solve_ms, r->its, r->rel_res, r->mult_us,
                             ref_us / r->mult_us, KSPConvergedReasons[r->reason], r->mult_diff));
  }
  PetscCall(PetscFClose(comm, fp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------------------------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
  static const char *const problems[] = {"poisson3d", "poisson2d"};
  const char              *all_types[MAX_TYPES];
  PetscInt                 nall = 0, ndefault = 0; /* the host types come first */
  const char *const       *ours;
  PetscInt                 nours;
  MPI_Comm                 comm;
  char                     file[PETSC_MAX_PATH_LEN] = "", name[256] = "A", csv[PETSC_MAX_PATH_LEN] = "", label[PETSC_MAX_PATH_LEN + 64];
  char                    *types[MAX_TYPES];
  PetscInt                 iproblem = 0, n = 48, reps = 50, ntypes = MAX_TYPES, t, M, N, its, nfailed = 0, nrun = 0;
  PetscBool                load = PETSC_FALSE, types_set = PETSC_FALSE;
  PetscMPIInt              size;
  Mat                      A;
  Vec                      uA, bA;
  MatInfo                  info;
  KSP                      ksp;
  KSPType                  ksptype;
  PCType                   pctype;
  PC                       pc;
  PetscReal                rtol;
  TypeResult              *res;
  double                   ref_us = 0;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGpuMatsInitialize());
  comm = PETSC_COMM_WORLD;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  /* aij, our host types, aijcusparse, our GPU types: from the library's registry */
  PetscCall(PetscGpuMatsGetTypes(&nours, &ours, NULL, NULL));
  PetscCheck(nours + 2 <= MAX_TYPES, comm, PETSC_ERR_PLIB, "more types than the driver holds");
  all_types[nall++] = MATAIJ;
  for (t = 0; t < nours; t++) {
    PetscBool gpu;
    PetscCall(PetscStrendswith(ours[t], "cuda", &gpu));
    if (!gpu) all_types[nall++] = ours[t];
  }
  ndefault              = nall;
  all_types[nall++] = "aijcusparse";
  for (t = 0; t < nours; t++) {
    PetscBool gpu;
    PetscCall(PetscStrendswith(ours[t], "cuda", &gpu));
    if (gpu) all_types[nall++] = ours[t];
  }

  PetscOptionsBegin(comm, NULL, "petsc-gpumats solve driver", NULL);
  PetscCall(PetscOptionsEList("-problem", "Generated matrix", "solve.c", problems, 2, problems[iproblem], &iproblem, NULL));
  PetscCall(PetscOptionsBoundedInt("-n", "Grid points per direction of the generated problem", "solve.c", n, &n, NULL, 1));
  PetscCall(PetscOptionsString("-f", "Read the matrix from this file: *.mtx Matrix Market, *.h5 HDF5 (MATLAB -v7.3 layout), else PETSc binary", "solve.c", file, file, sizeof(file), &load));
  PetscCall(PetscOptionsString("-f_name", "Name of the matrix in an HDF5 file", "solve.c", name, name, sizeof(name), NULL));
  PetscCall(PetscOptionsStringArray("-types", "Comma-separated Mat types to compare (default aij,cmrs,sellp,bellpack), or all", "solve.c", types, &ntypes, &types_set));
  PetscCall(PetscOptionsBoundedInt("-mult_reps", "Timed MatMult calls per type", "solve.c", reps, &reps, NULL, 1));
  PetscCall(PetscOptionsString("-csv", "Also write the results as CSV to this file", "solve.c", csv, csv, sizeof(csv), NULL));
  PetscOptionsEnd();

  {
    PetscBool mat_type;
    PetscCall(PetscOptionsHasName(NULL, NULL, "-mat_type", &mat_type));
    PetscCheck(!mat_type, comm, PETSC_ERR_ARG_WRONG, "solve compares the types of -types; -mat_type would retype the converted matrices, drop it");
  }
  /* the list of types: default, as given, or "all" */
  if (!types_set) ntypes = 0;
  PetscCheck(!types_set || ntypes > 0, comm, PETSC_ERR_ARG_WRONG, "-types needs a comma-separated list of Mat types, or all");
  if (ntypes == 1) {
    PetscBool all;

    PetscCall(PetscStrcasecmp(types[0], "all", &all));
    if (all) {
      PetscCall(PetscFree(types[0]));
      ntypes = 0;
      for (t = 0; t < nall; t++) PetscCall(PetscStrallocpy(all_types[t], &types[ntypes++]));
    }
  }
  if (!ntypes)
    for (t = 0; t < ndefault; t++) PetscCall(PetscStrallocpy(all_types[t], &types[ntypes++]));

  /* the source matrix A */
  if (load) {
    PetscCall(LoadMatrix(comm, file, name, &A));
    PetscCall(MatGetSize(A, &M, &N));
    PetscCheck(M == N, comm, PETSC_ERR_ARG_SIZ, "The matrix in %s is %" PetscInt_FMT " x %" PetscInt_FMT "; the driver solves A x = b and needs a square matrix", file, M, N);
    PetscCall(PetscSNPrintf(label, sizeof(label), "%s", file));
  } else {
    PetscCall(CreatePoisson(comm, iproblem == 0 ? 3 : 2, n, &A));
    PetscCall(PetscSNPrintf(label, sizeof(label), "%s n=%" PetscInt_FMT, problems[iproblem], n));
  }
  PetscCall(MatGetSize(A, &M, &N));
  PetscCall(MatGetInfo(A, MAT_GLOBAL_SUM, &info));
  PetscCall(MatCreateVecs(A, &uA, &bA));
  PetscCall(FillExact(uA));
  PetscCall(MatMult(A, uA, bA)); /* the reference product every type is checked against */

  /* the solver as configured by the options, for the header */
  PetscCall(CreateSolver(A, &ksp));
  PetscCall(KSPGetType(ksp, &ksptype));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCGetType(pc, &pctype));
  PetscCall(KSPGetTolerances(ksp, &rtol, NULL, NULL, &its));
  PetscCall(PetscPrintf(comm, "petsc-gpumats solve: %s: %" PetscInt_FMT " rows, %.0f nonzeros, %d MPI rank%s\n", label, M, (double)info.nz_used, (int)size, size > 1 ? "s" : ""));
  PetscCall(PetscPrintf(comm, "KSP %s, PC %s, rtol %g, max %" PetscInt_FMT " iterations; MatMult timed over %" PetscInt_FMT " calls; times: slowest rank\n\n", ksptype, pctype ? pctype : "none", (double)rtol, its, reps));
  PetscCall(KSPDestroy(&ksp));
  PetscCall(PetscPrintf(comm, "%-14s  %11s  %12s  %6s  %12s  %11s  %7s\n", "type", "convert(ms)", "KSPSolve(ms)", "its", "rel.residual", "MatMult(us)", "speedup"));
  PetscCall(PetscPrintf(comm, "--------------  -----------  ------------  ------  ------------  -----------  -------\n"));

  /* every type; the first one that runs is the speedup reference */
  PetscCall(PetscCalloc1(ntypes, &res));
  for (t = 0; t < ntypes; t++) {
    PetscCall(RunType(A, bA, types[t], reps, &res[t]));
    if (!res[t].skipped && !nrun++) ref_us = res[t].mult_us;
    PetscCall(PrintRow(comm, &res[t], ref_us));
    if (Failed(&res[t])) nfailed++;
  }
  PetscCall(PetscPrintf(comm, "\n"));
  for (t = 0; t < ntypes; t++) {
    if (!Failed(&res[t])) continue;
    if (res[t].reason < 0) PetscCall(PetscPrintf(comm, "FAILED: %s did not converge: %s after %" PetscInt_FMT " iterations\n", res[t].type, KSPConvergedReasons[res[t].reason], res[t].its));
    if (res[t].mult_diff > MULT_DIFF_TOL) PetscCall(PetscPrintf(comm, "FAILED: %s: MatMult differs from aij's by %.2e (relative)\n", res[t].type, res[t].mult_diff));
  }
  if (!nfailed) PetscCall(PetscPrintf(comm, "%s\n", nrun ? "All types that ran converged." : "Every requested type was skipped."));
  if (csv[0]) PetscCall(WriteCSV(comm, csv, label, ntypes, res, ref_us));

  PetscCall(PetscFree(res));
  for (t = 0; t < ntypes; t++) PetscCall(PetscFree(types[t]));
  PetscCall(VecDestroy(&uA));
  PetscCall(VecDestroy(&bA));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscFinalize());
  return nfailed ? 1 : 0;
}
