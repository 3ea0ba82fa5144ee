/*
   petsc-gpumats: GPU sparse-matrix formats for PETSc as Mat types.

   Load the library into any PETSc application with
       -dll_append /path/to/lib/libpetscgpumats.so
   (or put that in PETSC_OPTIONS) and select a type with -mat_type / -dm_mat_type; or link it and
   call PetscGpuMatsInitialize() after PetscInitialize().
*/
#ifndef PETSCGPUMATS_H
#define PETSCGPUMATS_H

#include <petscmat.h>

/*
   Each format has a host reference type and a GPU type; the root names below are what users type
   (-mat_type, -dm_mat_type, MatSetType), and MatSetType picks the concrete seq or mpi type by the
   communicator's size, as "aij" and "aijcusparse" do. The concrete types are AIJ subclasses, named
   seqaij<stem>/mpiaij<stem> as PETSc's own subclasses are (seqaijcusparse), so every PETSc solver
   path that takes AIJ (GAMG, MG, ILU/ICC, MUMPS, UMFPACK, ML, ...) takes them.
*/

/* CMRS: compressed multi-row storage (Koza et al.) */
#define MATCMRS         "cmrs"
#define MATSEQCMRS      "seqaijcmrs"
#define MATMPICMRS      "mpiaijcmrs"
#define MATCMRSCUDA     "cmrscuda"
#define MATSEQCMRSCUDA  "seqaijcmrscuda"
#define MATMPICMRSCUDA  "mpiaijcmrscuda"

/* SELL-P: padded sliced ELLPACK (Anzt, Tomov, Dongarra). The concrete stem is "padsell": a name
   starting with "seqaijsell" would also pass PETSc's prefix test for its own SELL-shadowed AIJ. */
#define MATSELLP        "sellp"
#define MATSEQSELLP     "seqaijpadsell"
#define MATMPISELLP     "mpiaijpadsell"
#define MATSELLPCUDA    "sellpcuda"
#define MATSEQSELLPCUDA "seqaijpadsellcuda"
#define MATMPISELLPCUDA "mpiaijpadsellcuda"

/* BELLPACK: blocked ELLPACK (Choi, Singh, Vuduc) */
#define MATBELLPACK        "bellpack"
#define MATSEQBELLPACK     "seqaijbellpack"
#define MATMPIBELLPACK     "mpiaijbellpack"
#define MATBELLPACKCUDA    "bellpackcuda"
#define MATSEQBELLPACKCUDA "seqaijbellpackcuda"
#define MATMPIBELLPACKCUDA "mpiaijbellpackcuda"

/* autocuda: picks SELL-P, CMRS, BELLPACK or cuSPARSE CSR per matrix block (GPU only) */
#define MATAUTOCUDA    "autocuda"
#define MATSEQAUTOCUDA "seqaijautocuda"
#define MATMPIAUTOCUDA "mpiaijautocuda"

#if defined(__cplusplus)
extern "C" {
#endif

/*@C
   PetscGpuMatsInitialize - Registers the petsc-gpumats matrix types with PETSc.

   Not Collective

   Notes:
   Call it after PetscInitialize() in applications that link the library. Applications that load
   it with -dll_append need not call it: PETSc calls PetscDLLibraryRegister_petscgpumats() then.
   Calling it more than once is harmless.

.seealso: MATCMRS, MATSELLP, MATBELLPACK, MATCMRSCUDA, MATSELLPCUDA, MATBELLPACKCUDA, MATAUTOCUDA, PetscGpuMatsGetTypes()
@*/
PETSC_EXTERN PetscErrorCode PetscGpuMatsInitialize(void);

/*@C
   PetscGpuMatsGetTypes - The names of every petsc-gpumats type (host and GPU), in the order of the
   format registry: the root names users select (-mat_type cmrscuda) and the concrete sequential
   and parallel types MatSetType makes of them (seqaijcmrscuda, mpiaijcmrscuda).

   Not Collective

   Output Parameters:
+  n     - how many types
.  roots - the root names (or NULL)
.  seq   - the concrete sequential names (or NULL)
-  mpi   - the concrete parallel names (or NULL)

   Notes:
   The arrays belong to the library; do not free them.

.seealso: PetscGpuMatsInitialize()
@*/
PETSC_EXTERN PetscErrorCode PetscGpuMatsGetTypes(PetscInt *n, const char *const **roots, const char *const **seq, const char *const **mpi);

/*@C
   MatGpuMatsGetUpdateCounts - How this rank's format copies of a petsc-gpumats matrix were brought
   up to date after changes: converted in full, or refilled by values only because the change kept
   the nonzero pattern (reassembly, MatScale, MatZeroRows with MAT_KEEP_NONZERO_PATTERN, ...).

   Not Collective

   Input Parameter:
.  A - a matrix of one of the petsc-gpumats types

   Output Parameters:
+  conversions - full conversions since A became this type (or NULL)
-  values_only - values-only updates since then (or NULL)

   Notes:
   Each copy counts: one for a sequential matrix, two (the diagonal and the off-diagonal block) per
   rank for a parallel one, and none for the copies of the transpose that MatMultTranspose may
   make. -mat_gpumats_values_update rebuild turns values-only updates off. -mat_view ::ascii_info
   prints the counts of all ranks; -log_view shows the updates as the event GpuMatsValues and the
   conversions as <FORMAT>Convert; -info says for each which it was and why.

.seealso: MATCMRS, MATSELLP, MATBELLPACK, MATAUTOCUDA
@*/
PETSC_EXTERN PetscErrorCode MatGpuMatsGetUpdateCounts(Mat A, PetscInt64 *conversions, PetscInt64 *values_only);

/* Called by PETSc when the library is loaded as a dynamic library (-dll_append). */
PETSC_EXTERN PetscErrorCode PetscDLLibraryRegister_petscgpumats(void);

#if defined(__cplusplus)
}
#endif

#endif
