static char help[] = "Type names: every concrete type is an AIJ subclass by PETSc's prefix test and passes no other PETSc type's test;\n"
                     "the header's MAT... macros name the registry's types; root names pick the concrete seq/mpi type;\n"
                     "PETSc's solver registry offers its AIJ factorizations for our types.\n"
                     "  -types a,b,c : types to create (default: the host types; *cuda types need a GPU)\n"
                     "  -list_host_types : only print the registry's host types, one line, and stop (tests/run.sh's default)\n";

#include <petsc/private/matimpl.h> /* MatList: every type name PETSc knows */
#include "check.h"

/* Is `name` one of ours (a concrete name of the registry)? */
static PetscBool Ours(const char *name, PetscInt n, const char *const *seq, const char *const *mpi)
{
  PetscBool eq;
  for (PetscInt i = 0; i < n; i++) {
    PetscStrcmp(name, seq[i], &eq);
    if (eq) return PETSC_TRUE;
    PetscStrcmp(name, mpi[i], &eq);
    if (eq) return PETSC_TRUE;
  }
  return PETSC_FALSE;
}

/* The concrete name must start with base ("seqaij"/"mpiaij") and with no other type PETSc registered:
   PetscObjectBaseTypeCompare(A, X) is exactly "A's type name starts with X". Our own names are
   left out (seqaijcmrscuda starts with seqaijcmrs, as PETSc's seqsellcuda starts with seqsell). */
static PetscErrorCode CheckPrefixes(MPI_Comm comm, const char *concrete, const char *base, const char **petsc, int np, PetscInt n, const char *const *seq,
                                    const char *const *mpi)
{
  char      name[256], why[512] = "";
  PetscBool starts, ok = PETSC_TRUE, eq;

  PetscFunctionBeginUser;
  PetscCall(PetscStrbeginswith(concrete, base, &starts));
  PetscCall(PetscSNPrintf(name, sizeof(name), "aij-prefix/%s", concrete));
  PetscCall(Check(comm, starts, name, "does not start with the AIJ base name, so PETSc's AIJ checks (GAMG, MatSolverTypeGet, DMDA) refuse it"));
  for (int k = 0; k < np; k++) {
    if (!petsc[k]) continue;
    PetscCall(PetscStrcmp(petsc[k], base, &eq));
    if (eq || Ours(petsc[k], n, seq, mpi)) continue;
    PetscCall(PetscStrbeginswith(concrete, petsc[k], &starts));
    if (starts) {
      ok = PETSC_FALSE;
      PetscCall(PetscSNPrintf(why, sizeof(why), "passes PETSc's prefix test for %s, a type whose data layout it does not have", petsc[k]));
    }
  }
  PetscCall(PetscSNPrintf(name, sizeof(name), "no-foreign-prefix/%s", concrete));
  PetscCall(Check(comm, ok, name, why));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A matrix made from the root name is the registry's concrete type and AIJ by PETSc's own tests. */
static PetscErrorCode CheckCreated(MPI_Comm comm, const char *root)
{
  Mat         A;
  PetscMPIInt size;
  char        expect[64], name[256];
  MatType     t;
  PetscBool   eq, aij, foreign = PETSC_FALSE, avail;
  const char *others[] = {MATSEQSELL, MATMPISELL, MATSEQBAIJ, MATMPIBAIJ, MATSEQAIJSELL, MATMPIAIJSELL, MATSEQAIJCUSPARSE, MATMPIAIJCUSPARSE, MATSEQDENSE, MATIS};

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(MatCreate(comm, &A));
  PetscCall(MatSetSizes(A, 4, 4, PETSC_DETERMINE, PETSC_DETERMINE));
  PetscCall(MatSetType(A, root));
  PetscCall(MatSetUp(A));
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatGetType(A, &t));
  PetscCall(ConcreteName(root, size, expect, sizeof(expect)));
  PetscCall(PetscStrcmp(t, expect, &eq));
  PetscCall(PetscSNPrintf(name, sizeof(name), "root-picks-concrete/%s", root));
  PetscCall(Check(comm, eq, name, t));
  PetscCall(PetscObjectBaseTypeCompare((PetscObject)A, size > 1 ? MATMPIAIJ : MATSEQAIJ, &aij));
  PetscCall(PetscSNPrintf(name, sizeof(name), "base-type-aij/%s", root));
  PetscCall(Check(comm, aij, name, "PetscObjectBaseTypeCompare with (MPI)AIJ is false"));
  for (size_t k = 0; k < sizeof(others) / sizeof(others[0]); k++) {
    PetscCall(PetscObjectBaseTypeCompare((PetscObject)A, others[k], &eq));
    if (eq) foreign = PETSC_TRUE;
  }
  PetscCall(PetscSNPrintf(name, sizeof(name), "base-type-not-foreign/%s", root));
  PetscCall(Check(comm, (PetscBool)!foreign, name, "PetscObjectBaseTypeCompare claims SELL, BAIJ, AIJSELL, AIJCUSPARSE, dense or IS"));
  if (size == 1) {
    PetscCall(MatGetFactorAvailable(A, MATSOLVERPETSC, MAT_FACTOR_LU, &avail));
    PetscCall(PetscSNPrintf(name, sizeof(name), "factor-petsc-lu/%s", root));
    PetscCall(Check(comm, avail, name, "PETSc's LU is not offered"));
    PetscCall(MatGetFactorAvailable(A, MATSOLVERPETSC, MAT_FACTOR_ICC, &avail));
    PetscCall(PetscSNPrintf(name, sizeof(name), "factor-petsc-icc/%s", root));
    PetscCall(Check(comm, avail, name, "PETSc's ICC is not offered"));
  }
#if defined(PETSC_HAVE_MUMPS)
  PetscCall(MatGetFactorAvailable(A, MATSOLVERMUMPS, MAT_FACTOR_LU, &avail));
  PetscCall(PetscSNPrintf(name, sizeof(name), "factor-mumps-lu/%s", root));
  PetscCall(Check(comm, avail, name, "MUMPS LU is not offered"));
#endif
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  MPI_Comm           comm;
  PetscInt           n;
  const char *const *roots, *const *seq, *const *mpi;
  const char       **petsc;
  int                np;
  TypeList           types;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  comm = PETSC_COMM_WORLD;
  PetscCall(PetscGpuMatsInitialize());
  PetscCall(MatInitializePackage());
  PetscCall(PetscGpuMatsGetTypes(&n, &roots, &seq, &mpi));
  {
    PetscBool list = PETSC_FALSE;
    PetscCall(PetscOptionsGetBool(NULL, NULL, "-list_host_types", &list, NULL));
    if (list) {
      const char *host[MAX_TYPES];
      PetscInt    nhost;
      PetscCall(HostTypes(host, &nhost));
      for (PetscInt i = 0; i < nhost; i++) PetscCall(PetscPrintf(comm, "%s ", host[i]));
      PetscCall(PetscPrintf(comm, "\n"));
      PetscCall(PetscFinalize());
      return 0;
    }
  }
  PetscCall(PetscFunctionListGet(MatList, &petsc, &np));
  PetscCall(Check(comm, (PetscBool)(n >= 7 && np > 2 * n), "registry-and-petsc-type-lists", "too few types listed"));

  for (PetscInt i = 0; i < n; i++) {
    PetscCall(CheckPrefixes(comm, seq[i], MATSEQAIJ, petsc, np, n, seq, mpi));
    PetscCall(CheckPrefixes(comm, mpi[i], MATMPIAIJ, petsc, np, n, seq, mpi));
  }

  /* the public macros name exactly the registry's types, in the registry's order */
  {
    const char *macro[][3] = {
      {MATCMRS,         MATSEQCMRS,         MATMPICMRS        },
      {MATCMRSCUDA,     MATSEQCMRSCUDA,     MATMPICMRSCUDA    },
      {MATSELLP,        MATSEQSELLP,        MATMPISELLP       },
      {MATSELLPCUDA,    MATSEQSELLPCUDA,    MATMPISELLPCUDA   },
      {MATBELLPACK,     MATSEQBELLPACK,     MATMPIBELLPACK    },
      {MATBELLPACKCUDA, MATSEQBELLPACKCUDA, MATMPIBELLPACKCUDA},
      {MATAUTOCUDA,     MATSEQAUTOCUDA,     MATMPIAUTOCUDA    },
    };
    const PetscInt nm = (PetscInt)(sizeof(macro) / sizeof(macro[0]));
    PetscBool      ok = (PetscBool)(nm == n), eq;
    char           why[256] = "the header and the registry list different numbers of types";
    for (PetscInt i = 0; ok && i < n; i++)
      for (int j = 0; j < 3; j++) {
        PetscCall(PetscStrcmp(macro[i][j], j == 0 ? roots[i] : (j == 1 ? seq[i] : mpi[i]), &eq));
        if (!eq) {
          ok = PETSC_FALSE;
          PetscCall(PetscSNPrintf(why, sizeof(why), "header macro %s, registry %s", macro[i][j], j == 0 ? roots[i] : (j == 1 ? seq[i] : mpi[i])));
        }
      }
    PetscCall(Check(comm, ok, "header-macros-match-registry", why));
  }

  PetscCall(GetTypeList(&types));
  for (PetscInt k = 0; k < types.ntypes; k++) PetscCall(CheckCreated(comm, types.types[k]));
  PetscCall(FreeTypeList(&types));
  PetscCall(PetscFree(petsc));
  PetscCall(PetscFinalize());
  return check_failures ? 1 : 0;
}
