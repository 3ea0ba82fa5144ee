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

/* CMRS: compressed multi-row storage (Koza et al.) */
#define MATCMRS         "cmrs"
#define MATSEQCMRS      "seqcmrs"
#define MATMPICMRS      "mpicmrs"
#define MATCMRSCUDA     "cmrscuda"
#define MATSEQCMRSCUDA  "seqcmrscuda"
#define MATMPICMRSCUDA  "mpicmrscuda"

/* SELL-P: padded sliced ELLPACK (Anzt, Tomov, Dongarra) */
#define MATSELLP        "sellp"
#define MATSEQSELLP     "seqsellp"
#define MATMPISELLP     "mpisellp"
#define MATSELLPCUDA    "sellpcuda"
#define MATSEQSELLPCUDA "seqsellpcuda"
#define MATMPISELLPCUDA "mpisellpcuda"

/* BELLPACK: blocked ELLPACK (Choi, Singh, Vuduc) */
#define MATBELLPACK        "bellpack"
#define MATSEQBELLPACK     "seqbellpack"
#define MATMPIBELLPACK     "mpibellpack"
#define MATBELLPACKCUDA    "bellpackcuda"
#define MATSEQBELLPACKCUDA "seqbellpackcuda"
#define MATMPIBELLPACKCUDA "mpibellpackcuda"

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

.seealso: MATCMRS, MATSELLP, MATBELLPACK, MATCMRSCUDA, MATSELLPCUDA, MATBELLPACKCUDA
@*/
PETSC_EXTERN PetscErrorCode PetscGpuMatsInitialize(void);

/* Called by PETSc when the library is loaded as a dynamic library (-dll_append). */
PETSC_EXTERN PetscErrorCode PetscDLLibraryRegister_petscgpumats(void);

#if defined(__cplusplus)
}
#endif

#endif
