/*
   Helpers shared by the PETSc-level tests: collective checks that print "ok <name>" or
   "not ok <name>: <why>" once (rank 0), the type list under test, test matrices, and the
   comparison of a product against AIJ's within the rounding bound of any summation order.
*/
#pragma once

#include <petscgpumats.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#if PETSC_VERSION_LT(3, 19, 0)
  #define PETSC_SUCCESS 0
#endif

static int check_failures = 0;

/* Collective: the check passes only if it passed on every rank. */
static inline PetscErrorCode Check(MPI_Comm comm, PetscBool ok, const char *name, const char *why)
{
  int mine = ok ? 1 : 0, all;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, comm));
  if (all) PetscCall(PetscPrintf(comm, "ok %s\n", name));
  else {
    PetscCall(PetscPrintf(comm, "not ok %s: %s\n", name, why ? why : "failed"));
    check_failures++;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether B's -mat_view ::ascii_info text contains `needle` (collective: the text goes to the file
   dir/file, which rank 0 reads; our types print to ASCII viewers only). */
static inline PetscErrorCode ViewContains(Mat B, const char *dir, const char *file, const char *needle, PetscBool *found)
{
  MPI_Comm    comm = PetscObjectComm((PetscObject)B);
  PetscMPIInt rank;
  PetscViewer v;
  char        path[PETSC_MAX_PATH_LEN];
  int         hit = 0;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(PetscSNPrintf(path, sizeof(path), "%s/%s", dir, file));
  PetscCall(PetscViewerASCIIOpen(comm, path, &v));
  PetscCall(PetscViewerPushFormat(v, PETSC_VIEWER_ASCII_INFO));
  PetscCall(MatView(B, v));
  PetscCall(PetscViewerPopFormat(v));
  PetscCall(PetscViewerDestroy(&v));
  if (rank == 0) {
    FILE *fp = fopen(path, "r");
    char  line[4096];
    PetscCheck(fp, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot read back %s", path);
    while (!hit && fgets(line, sizeof(line), fp)) hit = strstr(line, needle) != NULL;
    fclose(fp);
  }
  PetscCallMPI(MPI_Bcast(&hit, 1, MPI_INT, 0, comm));
  *found = hit ? PETSC_TRUE : PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The concrete type MatSetType makes of a root name on a communicator of `size` ranks: ours from
   the library's registry (seqaijcmrs, mpiaijpadsellcuda, ...), PETSc's by its seq/mpi prefix. */
static inline PetscErrorCode ConcreteName(const char *root, PetscMPIInt size, char *buf, size_t len)
{
  PetscInt           n;
  const char *const *roots, *const *seq, *const *mpi;
  PetscBool          eq;

  PetscFunctionBeginUser;
  PetscCall(PetscGpuMatsGetTypes(&n, &roots, &seq, &mpi));
  for (PetscInt i = 0; i < n; i++) {
    PetscCall(PetscStrcmp(root, roots[i], &eq));
    if (eq) {
      PetscCall(PetscStrncpy(buf, size > 1 ? mpi[i] : seq[i], len));
      PetscFunctionReturn(PETSC_SUCCESS);
    }
  }
  PetscCall(PetscSNPrintf(buf, len, "%s%s", size > 1 ? "mpi" : "seq", root));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The types under test: -types a,b,c (default: the host types of the registry) and the reference type
   they are compared with: -ref (default aij). The GPU suite passes the *cuda types and aijcusparse. */
#define MAX_TYPES 16
typedef struct {
  char    *types[MAX_TYPES];
  PetscInt ntypes;
  char     ref[64];
  char     vectype[64];
} TypeList;

/* The root names of the registry's host types (at most MAX_TYPES): the names that do not end in "cuda". */
static inline PetscErrorCode HostTypes(const char *host[MAX_TYPES], PetscInt *nhost)
{
  PetscInt           n;
  const char *const *roots;

  PetscFunctionBeginUser;
  PetscCall(PetscGpuMatsGetTypes(&n, &roots, NULL, NULL));
  *nhost = 0;
  for (PetscInt i = 0; i < n && *nhost < MAX_TYPES; i++) {
    PetscBool gpu;
    PetscCall(PetscStrendswith(roots[i], "cuda", &gpu));
    if (!gpu) host[(*nhost)++] = roots[i];
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static inline PetscErrorCode GetTypeList(TypeList *t)
{
  PetscBool set;

  PetscFunctionBeginUser;
  t->ntypes = MAX_TYPES;
  PetscCall(PetscOptionsGetStringArray(NULL, NULL, "-types", t->types, &t->ntypes, &set));
  if (!set) { /* every host type of the library's registry */
    const char *host[MAX_TYPES];
    PetscCall(HostTypes(host, &t->ntypes));
    for (PetscInt i = 0; i < t->ntypes; i++) PetscCall(PetscStrallocpy(host[i], &t->types[i]));
  }
  PetscCall(PetscStrncpy(t->ref, MATAIJ, sizeof(t->ref)));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-ref", t->ref, sizeof(t->ref), NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static inline PetscErrorCode FreeTypeList(TypeList *t)
{
  PetscFunctionBeginUser;
  for (PetscInt i = 0; i < t->ntypes; i++) PetscCall(PetscFree(t->types[i]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* |y - yref| <= tol * (|A| |x| + |yin|) row by row, with |A||x| computed by the caller into mag;
   NaN must match NaN and Inf must match Inf of the same sign. */
static inline PetscErrorCode CompareVecs(Vec y, Vec yref, Vec mag, PetscReal tol, PetscBool *ok, char *why, size_t len)
{
  const PetscScalar *a, *b, *m;
  PetscInt           n;

  PetscFunctionBeginUser;
  *ok = PETSC_TRUE;
  PetscCall(VecGetLocalSize(y, &n));
  PetscCall(VecGetArrayRead(y, &a));
  PetscCall(VecGetArrayRead(yref, &b));
  PetscCall(VecGetArrayRead(mag, &m));
  for (PetscInt i = 0; i < n && *ok; i++) {
    PetscReal u = PetscRealPart(a[i]), v = PetscRealPart(b[i]);
    if (PetscIsNanReal(u) || PetscIsNanReal(v)) *ok = (PetscIsNanReal(u) && PetscIsNanReal(v)) ? PETSC_TRUE : PETSC_FALSE;
    else if (PetscIsInfReal(u) || PetscIsInfReal(v)) *ok = (u == v) ? PETSC_TRUE : PETSC_FALSE;
    else *ok = (PetscAbsReal(u - v) <= tol * PetscRealPart(m[i]) + 1e-300) ? PETSC_TRUE : PETSC_FALSE;
    if (!*ok) PetscCall(PetscSNPrintf(why, len, "local row %" PetscInt_FMT ": got %g, expected %g", i, (double)u, (double)v));
  }
  PetscCall(VecRestoreArrayRead(y, &a));
  PetscCall(VecRestoreArrayRead(yref, &b));
  PetscCall(VecRestoreArrayRead(mag, &m));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* mag = |A| |x| (+ |yin|): the scale of the rounding error of A x in any summation order. */
static inline PetscErrorCode Magnitude(Mat Aaij, Vec x, Vec yin, Vec mag)
{
  Mat Aabs;
  Vec xabs;

  PetscFunctionBeginUser;
  PetscCall(MatDuplicate(Aaij, MAT_COPY_VALUES, &Aabs));
  {
    PetscInt           rs, re;
    PetscCall(MatGetOwnershipRange(Aabs, &rs, &re));
    for (PetscInt i = rs; i < re; i++) {
      PetscInt           nc;
      const PetscInt    *cols;
      const PetscScalar *vals;
      PetscScalar       *abs;
      PetscCall(MatGetRow(Aaij, i, &nc, &cols, &vals));
      PetscCall(PetscMalloc1(nc, &abs));
      for (PetscInt k = 0; k < nc; k++) abs[k] = PetscIsNanReal(PetscRealPart(vals[k])) ? 0 : PetscAbsScalar(vals[k]);
      PetscCall(MatSetValues(Aabs, 1, &i, nc, cols, abs, INSERT_VALUES));
      PetscCall(PetscFree(abs));
      PetscCall(MatRestoreRow(Aaij, i, &nc, &cols, &vals));
    }
  }
  PetscCall(MatAssemblyBegin(Aabs, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(Aabs, MAT_FINAL_ASSEMBLY));
  PetscCall(VecDuplicate(x, &xabs));
  PetscCall(VecCopy(x, xabs));
  PetscCall(VecAbs(xabs));
  PetscCall(MatMult(Aabs, xabs, mag));
  if (yin) {
    Vec t;
    PetscCall(VecDuplicate(yin, &t));
    PetscCall(VecCopy(yin, t));
    PetscCall(VecAbs(t));
    PetscCall(VecAXPY(mag, 1.0, t));
    PetscCall(VecDestroy(&t));
  }
  PetscCall(VecDestroy(&xabs));
  PetscCall(MatDestroy(&Aabs));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Collective check that op(B) x == op(R) x, op the matrix or (transpose) its transpose, for x given
   (R: the reference, AIJ or of the reference type), within the rounding bound of any summation
   order; |op(R)| supplies the bound. */
static inline PetscErrorCode CheckSameAction(Mat R, Mat B, PetscBool transpose, Vec x, const char *name)
{
  Mat       Rop = R;
  Vec       y, yref, mag;
  PetscBool ok;
  char      why[256] = "";

  PetscFunctionBeginUser;
  if (transpose) {
    PetscCall(MatCreateVecs(B, &y, NULL));
    PetscCall(MatTranspose(R, MAT_INITIAL_MATRIX, &Rop));
  } else PetscCall(MatCreateVecs(B, NULL, &y));
  PetscCall(VecDuplicate(y, &yref));
  PetscCall(VecDuplicate(y, &mag));
  PetscCall(transpose ? MatMultTranspose(B, x, y) : MatMult(B, x, y));
  PetscCall(transpose ? MatMultTranspose(R, x, yref) : MatMult(R, x, yref));
  PetscCall(Magnitude(Rop, x, NULL, mag));
  PetscCall(CompareVecs(y, yref, mag, 1e3 * PETSC_MACHINE_EPSILON, &ok, why, sizeof(why)));
  PetscCall(Check(PetscObjectComm((PetscObject)B), ok, name, why));
  if (transpose) PetscCall(MatDestroy(&Rop));
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&yref));
  PetscCall(VecDestroy(&mag));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Collective check that B x == R x for a deterministic x (CheckSameAction) */
static inline PetscErrorCode CheckSameProduct(Mat R, Mat B, PetscInt seed, const char *name)
{
  Vec          x;
  PetscInt     rs, re;
  PetscScalar *a;

  PetscFunctionBeginUser;
  PetscCall(MatCreateVecs(B, &x, NULL));
  PetscCall(VecGetOwnershipRange(x, &rs, &re));
  PetscCall(VecGetArray(x, &a));
  for (PetscInt i = rs; i < re; i++) a[i - rs] = PetscSinReal((PetscReal)(seed * 131 + i)); /* deterministic, in [-1, 1] */
  PetscCall(VecRestoreArray(x, &a));
  PetscCall(CheckSameAction(R, B, PETSC_FALSE, x, name));
  PetscCall(VecDestroy(&x));
  PetscFunctionReturn(PETSC_SUCCESS);
}
