static char help[] = "A *cuda type facing exhausted GPU memory: MatConvert (initial and in place) and the first use of a matrix assembled\n"
                     "then fail with PETSC_ERR_MEM, the user's AIJ matrix stays intact and usable, and once memory is back the same matrices work. 1 rank.\n"
                     "  -types a,b,c : types under test (default cmrscuda,sellpcuda,bellpackcuda,autocuda)\n"
                     "  -grid g      : the 5-point Laplacian on a g x g grid (default 1200: 1.44M rows, 7.2M nonzeros)\n"
                     "  -margin_mb m : GPU memory left free by the filler, in MB (default 16): far less than the matrix needs\n";

/*
   The GPU is filled with one cudaMalloc, leaving a small margin, after the CUDA context and the
   library handles exist (so that only the matrix's own storage can be refused). The test then
   expects PETSc errors, never a crash, an abort or a half-converted matrix; the conversions run under
   PetscReturnErrorHandler and the error code is the check. Afterwards no CUDA error may be left as
   the runtime's last error: PETSc's next kernel launch check (cudaGetLastError) would report it.
*/
#include "check.h"
#if defined(PETSC_HAVE_CUDA)
  #include <cuda_runtime.h>
#endif

static int nchecks = 0; /* check.h counts the failures only; the summary needs the passes too */

#if defined(PETSC_HAVE_CUDA)
/* err = the call's error code, returned instead of printed and passed up (PetscReturnErrorHandler) */
#define TRY(err, call) \
  do { \
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL)); \
    err = (call); \
    PetscCall(PetscPopErrorHandler()); \
  } while (0)

static PetscErrorCode CheckN(PetscBool ok, const char *name, const char *why)
{
  nchecks++;
  return Check(PETSC_COMM_SELF, ok, name, why);
}

/* The 5-point Laplacian on a g x g grid, preallocated, of the given type; values set, not assembled. */
static PetscErrorCode CreateLaplacian(PetscInt g, MatType type, Mat *M)
{
  PetscFunctionBeginUser;
  PetscCall(MatCreate(PETSC_COMM_SELF, M));
  PetscCall(MatSetSizes(*M, g * g, g * g, g * g, g * g));
  PetscCall(MatSetType(*M, type));
  PetscCall(MatSeqAIJSetPreallocation(*M, 5, NULL));
  for (PetscInt i = 0; i < g; i++)
    for (PetscInt j = 0; j < g; j++) {
      PetscInt    row = i * g + j, cols[5], n = 0;
      PetscScalar v[5];
      if (i > 0) cols[n] = row - g, v[n++] = -1.0;
      if (j > 0) cols[n] = row - 1, v[n++] = -1.0;
      cols[n] = row, v[n++] = 4.0;
      if (j < g - 1) cols[n] = row + 1, v[n++] = -1.0;
      if (i < g - 1) cols[n] = row + g, v[n++] = -1.0;
      PetscCall(MatSetValues(*M, 1, &row, n, cols, v, INSERT_VALUES));
    }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The message of the last error raised (PetscErrorMessage's last argument: char ** in older PETSc, const char ** in newer) */
static const char *LastError(PetscErrorCode err)
{
  const char *msg = NULL;
  if (PetscErrorMessage(err, NULL, (void *)&msg) || !msg) return "";
  return msg;
}

/* err must be PETSC_ERR_MEM (or 0 where no error is expected) */
static PetscErrorCode CheckError(PetscErrorCode err, PetscErrorCode expected, const char *what, const char *type)
{
  char name[128], why[64];

  PetscFunctionBeginUser;
  PetscCall(PetscSNPrintf(name, sizeof(name), "%s/%s", what, type));
  PetscCall(PetscSNPrintf(why, sizeof(why), "error code %d, expected %d", (int)err, (int)expected));
  if (err) PetscCall(PetscPrintf(PETSC_COMM_SELF, "# %s: error %d: %s\n", name, (int)err, LastError(err))); /* the user's message */
  PetscCall(CheckN(err == expected ? PETSC_TRUE : PETSC_FALSE, name, why));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A is plain SeqAIJ still and multiplies bit for bit as before the failure: A x == y0 */
static PetscErrorCode CheckIntact(Mat A, Vec x, Vec y0, const char *what, const char *type)
{
  MatType        t;
  PetscBool      aij, eq = PETSC_FALSE;
  PetscErrorCode err;
  Vec            y;
  char           name[128], why[256];

  PetscFunctionBeginUser;
  PetscCall(MatGetType(A, &t));
  PetscCall(PetscStrcmp(t, MATSEQAIJ, &aij));
  PetscCall(VecDuplicate(y0, &y));
  TRY(err, MatMult(A, x, y)); /* a matrix left half converted may fail */
  if (!err) PetscCall(VecEqual(y, y0, &eq));
  PetscCall(PetscSNPrintf(why, sizeof(why), "type %s, MatMult error %d, A x %s y0", t, (int)err, eq ? "equals" : "differs from"));
  PetscCall(PetscSNPrintf(name, sizeof(name), "%s/%s", what, type));
  PetscCall(CheckN(aij && !err && eq ? PETSC_TRUE : PETSC_FALSE, name, why));
  PetscCall(VecDestroy(&y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* M x0 with vectors of M's own type (CUDA vectors for a *cuda type) against y0: relative error in
   the inf norm within 1e-12 (the GPU may sum in another order than AIJ) */
static PetscErrorCode CheckProduct(Mat M, Vec x0, Vec y0, const char *what, const char *type)
{
  Vec                x, y;
  const PetscScalar *a, *b;
  PetscScalar       *c;
  PetscInt           n;
  PetscReal          dmax = 0, ymax = 0;
  PetscErrorCode     err;
  char               name[128], why[1280];

  PetscFunctionBeginUser;
  PetscCall(MatCreateVecs(M, &x, &y));
  PetscCall(VecGetLocalSize(x0, &n));
  PetscCall(VecGetArrayRead(x0, &a));
  PetscCall(VecGetArrayWrite(x, &c));
  PetscCall(PetscArraycpy(c, a, n));
  PetscCall(VecRestoreArrayWrite(x, &c));
  PetscCall(VecRestoreArrayRead(x0, &a));
  TRY(err, MatMult(M, x, y));
  if (!err) {
    PetscCall(VecGetArrayRead(y, &a));
    PetscCall(VecGetArrayRead(y0, &b));
    for (PetscInt i = 0; i < n; i++) {
      PetscReal d = PetscAbsScalar(a[i] - b[i]);
      if (!(d <= dmax)) dmax = PetscIsNanReal(d) ? PETSC_INFINITY : d; /* a NaN fails */
      ymax = PetscMax(ymax, PetscAbsScalar(b[i]));
    }
    PetscCall(VecRestoreArrayRead(y, &a));
    PetscCall(VecRestoreArrayRead(y0, &b));
    PetscCall(PetscSNPrintf(why, sizeof(why), "|y - y0|_inf = %g, |y0|_inf = %g", (double)dmax, (double)ymax));
  } else PetscCall(PetscSNPrintf(why, sizeof(why), "MatMult error %d: %s", (int)err, LastError(err)));
  PetscCall(PetscSNPrintf(name, sizeof(name), "%s/%s", what, type));
  PetscCall(CheckN(!err && dmax <= 1e-12 * ymax ? PETSC_TRUE : PETSC_FALSE, name, why));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* CUDA context, the library's stream and cuSPARSE handle, PETSc's device context and cuBLAS: made
   now with a tiny matrix, so that the filled GPU refuses the big matrix's storage, not them */
static PetscErrorCode InitGPU(MatType type)
{
  Mat       A, B;
  Vec       x, y;
  PetscReal nrm;

  PetscFunctionBeginUser;
  PetscCall(CreateLaplacian(4, MATSEQAIJ, &A));
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatConvert(A, type, MAT_INITIAL_MATRIX, &B));
  PetscCall(MatCreateVecs(B, &x, &y));
  PetscCall(VecSet(x, 1.0));
  PetscCall(MatMult(B, x, y));
  PetscCall(VecNorm(y, NORM_2, &nrm));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(MatDestroy(&B));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Steps 4-7, with the GPU full: its own function so that a hard error returns here and the filler is
   still freed by the caller. *M: the matrix of the type assembled (or not) under pressure. */
static PetscErrorCode UnderPressure(Mat A, Vec x, Vec y0, PetscInt g, const char *type, Mat *M)
{
  Mat            B = NULL, A2;
  PetscErrorCode err;

  PetscFunctionBeginUser;
  TRY(err, MatConvert(A, type, MAT_INITIAL_MATRIX, &B));
  PetscCall(CheckError(err, PETSC_ERR_MEM, "oom-initial-error", type));
  if (!err) PetscCall(MatDestroy(&B));
  PetscCall(CheckIntact(A, x, y0, "aij-intact-after-initial", type));

  PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &A2));
  TRY(err, MatConvert(A2, type, MAT_INPLACE_MATRIX, &A2));
  PetscCall(CheckError(err, PETSC_ERR_MEM, "oom-inplace-error", type));
  PetscCall(CheckIntact(A2, x, y0, "aij-intact-after-inplace", type));
  PetscCall(MatDestroy(&A2));

  /* a copy refused at assembly does not fail the assembly (the AIJ matrix is complete; an error
     would leave it unassembled): it is built at the first use, which fails while memory is short.
     (With -mat_gpumats_build_at use nothing is built at assembly anyway.) Host vectors: CUDA ones
     would need GPU memory of their own */
  PetscCall(CreateLaplacian(g, type, M));
  TRY(err, MatAssemblyBegin(*M, MAT_FINAL_ASSEMBLY));
  if (!err) TRY(err, MatAssemblyEnd(*M, MAT_FINAL_ASSEMBLY));
  PetscCall(CheckError(err, 0, "assembly-succeeds-under-pressure", type));
  if (!err) {
    Vec y;
    PetscCall(VecDuplicate(y0, &y));
    TRY(err, MatMult(*M, x, y));
    PetscCall(CheckError(err, PETSC_ERR_MEM, "oom-first-use-error", type));
    PetscCall(VecDestroy(&y));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TestType(Mat A, Vec x, Vec y0, PetscInt g, size_t margin, const char *type)
{
  Mat            B = NULL, M = NULL;
  void          *filler = NULL;
  size_t         nfree = 0, total = 0, size;
  PetscErrorCode perr, err;
  cudaError_t    cerr;
  char           name[128];

  PetscFunctionBeginUser;
  PetscCall(InitGPU(type));
  PetscCheck(cudaMemGetInfo(&nfree, &total) == cudaSuccess, PETSC_COMM_SELF, PETSC_ERR_GPU, "cudaMemGetInfo failed");
  size = nfree > margin ? nfree - margin : 0;
  for (int k = 0; k < 8 && size > 0; k++) { /* free memory is not all allocatable in one piece */
    if (cudaMalloc(&filler, size) == cudaSuccess) break;
    filler = NULL;
    size   = size > (64u << 20) ? size - (64u << 20) : 0;
  }
  (void)cudaGetLastError(); /* our failed tries: the error left at the end must be the library's */
  if (!filler) size = 0;
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "# %s: filler of %.1f MB, %.1f MB were free of %.1f MB\n", type, size / 1048576.0, nfree / 1048576.0, total / 1048576.0));

  perr = UnderPressure(A, x, y0, g, type, &M); /* no return between the filler's cudaMalloc and its cudaFree */
  if (filler) (void)cudaFree(filler);
  PetscCall(perr);
  cerr = cudaGetLastError();
  PetscCall(PetscSNPrintf(name, sizeof(name), "no-cuda-error-left/%s", type));
  PetscCall(CheckN(cerr == cudaSuccess ? PETSC_TRUE : PETSC_FALSE, name, cudaGetErrorName(cerr)));

  /* memory back: the same conversion succeeds, and the matrix whose build failed builds at its first use */
  TRY(err, MatConvert(A, type, MAT_INITIAL_MATRIX, &B));
  if (err) PetscCall(CheckError(err, 0, "convert-after-memory-back", type));
  else PetscCall(CheckProduct(B, x, y0, "convert-after-memory-back", type));
  PetscCall(CheckProduct(M, x, y0, "assembly-matrix-usable-after-memory-back", type));
  PetscCall(MatDestroy(&B));
  PetscCall(MatDestroy(&M));
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif

int main(int argc, char **argv)
{
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGpuMatsInitialize());
#if !defined(PETSC_HAVE_CUDA)
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "# test_oom: needs a CUDA-enabled PETSc\n"));
#else
  {
    const char *defaults[] = {"cmrscuda", "sellpcuda", "bellpackcuda", "autocuda"};
    TypeList    types;
    PetscBool   set;
    PetscMPIInt size;
    PetscInt    g = 1200, margin_mb = 16;
    Mat         A;
    Vec         x, y0;
    PetscScalar *a;

    PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
    PetscCheck(size == 1, PETSC_COMM_WORLD, PETSC_ERR_WRONG_MPI_SIZE, "test_oom runs on 1 rank (it fills the GPU of its process), not %d", (int)size);
    PetscCall(PetscOptionsGetInt(NULL, NULL, "-grid", &g, NULL));
    PetscCall(PetscOptionsGetInt(NULL, NULL, "-margin_mb", &margin_mb, NULL));
    PetscCall(PetscOptionsHasName(NULL, NULL, "-types", &set));
    if (set) PetscCall(GetTypeList(&types));
    else {
      types.ntypes = 4;
      for (PetscInt t = 0; t < 4; t++) PetscCall(PetscStrallocpy(defaults[t], &types.types[t]));
    }

    PetscCall(CreateLaplacian(g, MATSEQAIJ, &A));
    PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatCreateVecs(A, &x, &y0));
    PetscCall(VecGetArray(x, &a));
    for (PetscInt i = 0; i < g * g; i++) a[i] = PetscSinReal((PetscReal)i); /* deterministic, in [-1, 1] */
    PetscCall(VecRestoreArray(x, &a));
    PetscCall(MatMult(A, x, y0));
    for (PetscInt t = 0; t < types.ntypes; t++) PetscCall(TestType(A, x, y0, g, (size_t)margin_mb << 20, types.types[t]));
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&y0));
    PetscCall(MatDestroy(&A));
    PetscCall(FreeTypeList(&types));
  }
#endif
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "# %d checks passed, %d failed\n", nchecks - check_failures, check_failures));
  PetscCall(PetscFinalize());
  return check_failures ? 1 : 0;
}
