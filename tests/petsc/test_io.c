static char help[] = "MatLoad into every type under test (PETSc binary and HDF5), MatView round trips, -mat_view info.\n"
                     "  -types a,b,c : types under test (default cmrs,sellp,bellpack)\n"
                     "  -dir path    : where to write the files (default .)\n";

/*
   A matrix written by MatView in PETSc binary (and HDF5, when PETSc has it) and loaded with
   MatLoad into a matrix of each type keeps that type and equals the source exactly; a matrix of
   each type viewed to a file and loaded back as AIJ equals the source too.
*/
#include "testmats.h"
#if defined(PETSC_HAVE_HDF5)
  #include <petscviewerhdf5.h>
#endif

static PetscErrorCode Save(Mat A, const char *file, PetscBool hdf5)
{
  PetscViewer v;

  PetscFunctionBeginUser;
#if defined(PETSC_HAVE_HDF5)
  if (hdf5) {
    PetscCall(PetscViewerHDF5Open(PetscObjectComm((PetscObject)A), file, FILE_MODE_WRITE, &v));
    PetscCall(PetscViewerPushFormat(v, PETSC_VIEWER_HDF5_MAT));
    PetscCall(MatView(A, v));
    PetscCall(PetscViewerPopFormat(v));
    PetscCall(PetscViewerDestroy(&v));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
#endif
  PetscCall(PetscViewerBinaryOpen(PetscObjectComm((PetscObject)A), file, FILE_MODE_WRITE, &v));
  PetscCall(MatView(A, v));
  PetscCall(PetscViewerDestroy(&v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Load(MPI_Comm comm, const char *file, PetscBool hdf5, const char *type, const char *objname, Mat *B)
{
  PetscViewer v;

  PetscFunctionBeginUser;
  PetscCall(MatCreate(comm, B));
  PetscCall(MatSetType(*B, type));
  PetscCall(PetscObjectSetName((PetscObject)*B, objname));
#if defined(PETSC_HAVE_HDF5)
  if (hdf5) {
    PetscCall(PetscViewerHDF5Open(comm, file, FILE_MODE_READ, &v));
    PetscCall(PetscViewerPushFormat(v, PETSC_VIEWER_HDF5_MAT));
    PetscCall(MatLoad(*B, v));
    PetscCall(PetscViewerPopFormat(v));
    PetscCall(PetscViewerDestroy(&v));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
#endif
  PetscCall(PetscViewerBinaryOpen(comm, file, FILE_MODE_READ, &v));
  PetscCall(MatLoad(*B, v));
  PetscCall(PetscViewerDestroy(&v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  TypeList  types;
  char      dir[PETSC_MAX_PATH_LEN] = ".";
  PetscBool formats[2]              = {PETSC_FALSE, PETSC_TRUE};
  int       nformats                = 1;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGpuMatsInitialize());
  PetscCall(GetTypeList(&types));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-dir", dir, sizeof(dir), NULL));
#if defined(PETSC_HAVE_HDF5)
  nformats = 2;
#endif
  for (PetscInt m = 0; m < 3; m++) {
    const char *mats[] = {"poisson2d", "random-empty-rows", "nan-and-huge"};
    Mat         A;
    PetscCall(TestMatrix(PETSC_COMM_WORLD, mats[m], &A));
    PetscCall(PetscObjectSetName((PetscObject)A, "A"));
    for (int f = 0; f < nformats; f++) {
      const char *ext = formats[f] ? "h5" : "bin";
      char        src[PETSC_MAX_PATH_LEN], out[PETSC_MAX_PATH_LEN], name[256];
      PetscCall(PetscSNPrintf(src, sizeof(src), "%s/io-%s.%s", dir, mats[m], ext));
      PetscCall(Save(A, src, formats[f]));
      for (PetscInt t = 0; t < types.ntypes; t++) {
        Mat       B, C, Baij;
        MatType   got;
        PetscBool same;
        /* load straight into the type */
        PetscCall(Load(PETSC_COMM_WORLD, src, formats[f], types.types[t], "A", &B));
        PetscCall(MatGetType(B, &got));
        PetscCall(PetscStrendswith(got, types.types[t], &same));
        PetscCall(PetscSNPrintf(name, sizeof(name), "load-%s-type/%s/%s", ext, types.types[t], mats[m]));
        PetscCall(Check(PETSC_COMM_WORLD, same, name, got));
        PetscCall(MatConvert(B, MATAIJ, MAT_INITIAL_MATRIX, &Baij));
        PetscCall(MatEqual(A, Baij, &same));
        PetscCall(PetscSNPrintf(name, sizeof(name), "load-%s-exact/%s/%s", ext, types.types[t], mats[m]));
        PetscCall(Check(PETSC_COMM_WORLD, same, name, "loaded values differ"));
        /* view the typed matrix, load it back as AIJ */
        PetscCall(PetscSNPrintf(out, sizeof(out), "%s/io-%s-%s.%s", dir, mats[m], types.types[t], ext));
        PetscCall(PetscObjectSetName((PetscObject)B, "A"));
        PetscCall(Save(B, out, formats[f]));
        PetscCall(Load(PETSC_COMM_WORLD, out, formats[f], MATAIJ, "A", &C));
        PetscCall(MatEqual(A, C, &same));
        PetscCall(PetscSNPrintf(name, sizeof(name), "view-%s-exact/%s/%s", ext, types.types[t], mats[m]));
        PetscCall(Check(PETSC_COMM_WORLD, same, name, "viewed values differ"));
        PetscCall(MatDestroy(&B));
        PetscCall(MatDestroy(&Baij));
        PetscCall(MatDestroy(&C));
      }
    }
    PetscCall(MatDestroy(&A));
  }
  PetscCall(FreeTypeList(&types));
  PetscCall(PetscFinalize());
  return check_failures ? 1 : 0;
}
