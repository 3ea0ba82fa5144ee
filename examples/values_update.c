/*
   values_update - petsc-gpumats example: new values in the same nonzero pattern, as a Newton or time
   step assembles them, timed against the matrix type's first build.

   Synopsis:
     build/bin/values_update -dll_append lib/libpetscgpumats.so [-n <int>] [-updates <int>] [-mat_type <type>]
                             [-mat_gpumats_values_update auto|rebuild] [-log_view -log_view_gpu_time]

   The 7-point Laplacian of an n^3 grid (the matrix of ksp ex45, n = 200: 8M rows, 56M nonzeros),
   assembled once with MatSetValues and multiplied once (the first build: petsc-gpumats' types
   convert inside MatAssemblyEnd, aijcusparse copies the whole CSR at that product), then `updates`
   times: every row's values set again with MatSetValues (the same pattern, values scaled), a final
   assembly, and one MatMult (aijcusparse copies the values at that product; our types update their
   format inside the assembly). Plain PETSc: the library's types come in through -dll_append and
   -mat_type.

   -log_view stages: "First build" (the first assembly and product) and "Updates" (the updates'
   assemblies and products). The events to read there: MatAssemblyEnd and, inside it, our types'
   GpuMatsValues (values-only updates, -mat_gpumats_values_update auto) or <FORMAT>Convert (full
   conversions, rebuild); aijcusparse's MatCUSPARSCopyTo. The setting of the values (MatSetValues,
   on the host) is the same for every type and outside the events compared (event VuSetValues).

   Prints the size, the type, and after the updates ||y|| of the last product, which is the same for
   every type (the check of tests/gpu/build_check.sh). Exit status 0 on success.

   Example:
     build/bin/values_update -dll_append lib/libpetscgpumats.so -n 200 -mat_type sellpcuda -mat_gpumats_values_update auto -log_view -log_view_gpu_time
*/
#include <petscmat.h>

#if PETSC_VERSION_LT(3, 19, 0) /* PETSc before 3.19 returned a plain 0 for success */
  #define PETSC_SUCCESS 0
#endif

/* Sets every row of the n^3 Laplacian with its values times s (s = 1: the usual stencil) */
static PetscErrorCode SetLaplacian(Mat A, PetscInt n, PetscScalar s)
{
  PetscInt rstart, rend;

  PetscFunctionBeginUser;
  PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
  for (PetscInt row = rstart; row < rend; ++row) {
    const PetscInt i = row % n, j = (row / n) % n, k = row / (n * n);
    PetscInt       cols[7], nc = 0;
    PetscScalar    vals[7];
    /* ascending columns: SeqAIJ's MatSetValues finds them fastest so */
    if (k > 0) cols[nc] = row - n * n, vals[nc++] = -s;
    if (j > 0) cols[nc] = row - n, vals[nc++] = -s;
    if (i > 0) cols[nc] = row - 1, vals[nc++] = -s;
    cols[nc] = row, vals[nc++] = 6.0 * s;
    if (i < n - 1) cols[nc] = row + 1, vals[nc++] = -s;
    if (j < n - 1) cols[nc] = row + n, vals[nc++] = -s;
    if (k < n - 1) cols[nc] = row + n * n, vals[nc++] = -s;
    PetscCall(MatSetValues(A, 1, &row, nc, cols, vals, INSERT_VALUES));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  Mat           A;
  Vec           x, y;
  PetscInt      n = 200, updates = 3, N;
  PetscReal     norm;
  MatType       type;
  PetscLogStage first, later;
  PetscLogEvent set_event;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "values_update options", "");
  PetscCall(PetscOptionsInt("-n", "grid points a side (n^3 rows)", "values_update.c", n, &n, NULL));
  PetscCall(PetscOptionsInt("-updates", "updates of the values after the first build", "values_update.c", updates, &updates, NULL));
  PetscOptionsEnd();
  PetscCheck(n >= 2 && updates >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-n must be at least 2 and -updates at least 1");
  N = n * n * n;
  PetscCall(PetscLogStageRegister("First build", &first));
  PetscCall(PetscLogStageRegister("Updates", &later));
  PetscCall(PetscLogEventRegister("VuSetValues", MAT_CLASSID, &set_event));

  PetscCall(MatCreate(PETSC_COMM_WORLD, &A));
  PetscCall(MatSetSizes(A, PETSC_DECIDE, PETSC_DECIDE, N, N));
  PetscCall(MatSetType(A, MATAIJ));
  PetscCall(MatSetFromOptions(A));
  PetscCall(MatSeqAIJSetPreallocation(A, 7, NULL));
  PetscCall(MatMPIAIJSetPreallocation(A, 7, NULL, 3, NULL));
  PetscCall(MatGetType(A, &type));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "values_update: %" PetscInt_FMT "^3 Laplacian (%" PetscInt_FMT " rows), -mat_type %s, %" PetscInt_FMT " updates\n", n, N, type, updates));
  PetscCall(MatCreateVecs(A, &x, &y));
  PetscCall(VecSet(x, 1.0));

  PetscCall(PetscLogStagePush(first));
  PetscCall(PetscLogEventBegin(set_event, 0, 0, 0, 0));
  PetscCall(SetLaplacian(A, n, 1.0));
  PetscCall(PetscLogEventEnd(set_event, 0, 0, 0, 0));
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatSetOption(A, MAT_NEW_NONZERO_LOCATION_ERR, PETSC_TRUE)); /* the pattern stays */
  PetscCall(MatMult(A, x, y));
  PetscCall(PetscLogStagePop());

  PetscCall(PetscLogStagePush(later));
  for (PetscInt u = 1; u <= updates; ++u) {
    PetscCall(PetscLogEventBegin(set_event, 0, 0, 0, 0));
    PetscCall(SetLaplacian(A, n, 1.0 + 0.5 * (PetscReal)u));
    PetscCall(PetscLogEventEnd(set_event, 0, 0, 0, 0));
    PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatMult(A, x, y));
  }
  PetscCall(PetscLogStagePop());

  /* y = A 1: the boundary rows' sums, times the last scale */
  PetscCall(VecNorm(y, NORM_2, &norm));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "||A 1|| after the last update: %.10e\n", (double)norm));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscFinalize());
  return 0;
}
