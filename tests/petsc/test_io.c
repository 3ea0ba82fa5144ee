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

static PetscErrorCode SaveBinary(Mat A, const char *file)
{
  PetscViewer v;

  PetscFunctionBeginUser;
  PetscCall(PetscViewerBinaryOpen(PetscObjectComm((PetscObject)A), file, FILE_MODE_WRITE, &v));
  PetscCall(MatView(A, v));
  PetscCall(PetscViewerDestroy(&v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

#if defined(PETSC_HAVE_HDF5)
/* PETSc reads the MATLAB -v7.3 sparse layout but cannot write AIJ to HDF5, so the test writes it:
   group /A with jc (column pointers), ir (row indices), data, and attribute MATLAB_sparse (rows).
   MATLAB stores CSC, which is the CSR of the transpose. Rank 0 writes from a sequential copy read
   back from the binary file. */
static PetscErrorCode SaveMatlabHDF5(Mat A, const char *binfile, const char *file)
{
  PetscMPIInt rank;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(PetscObjectComm((PetscObject)A), &rank));
  if (rank == 0) {
    Mat                S, St;
    PetscViewer        v;
    const PetscInt    *ia, *ja;
    const PetscScalar *aa;
    PetscInt           m, M;
    PetscBool          done;
    IS                 jc, ir;
    Vec                data;

    PetscCall(PetscViewerBinaryOpen(PETSC_COMM_SELF, binfile, FILE_MODE_READ, &v));
    PetscCall(MatCreate(PETSC_COMM_SELF, &S));
    PetscCall(MatSetType(S, MATSEQAIJ));
    PetscCall(MatLoad(S, v));
    PetscCall(PetscViewerDestroy(&v));
    PetscCall(MatGetSize(S, &M, NULL));
    PetscCall(MatTranspose(S, MAT_INITIAL_MATRIX, &St));
    PetscCall(MatGetRowIJ(St, 0, PETSC_FALSE, PETSC_FALSE, &m, &ia, &ja, &done));
    PetscCall(MatSeqAIJGetArrayRead(St, &aa));
    PetscCall(PetscViewerHDF5Open(PETSC_COMM_SELF, file, FILE_MODE_WRITE, &v));
    PetscCall(PetscViewerHDF5PushGroup(v, "A"));
    PetscCall(ISCreateGeneral(PETSC_COMM_SELF, m + 1, ia, PETSC_USE_POINTER, &jc));
    PetscCall(PetscObjectSetName((PetscObject)jc, "jc"));
    PetscCall(ISView(jc, v));
    PetscCall(ISCreateGeneral(PETSC_COMM_SELF, ia[m], ja, PETSC_USE_POINTER, &ir));
    PetscCall(PetscObjectSetName((PetscObject)ir, "ir"));
    PetscCall(ISView(ir, v));
    PetscCall(VecCreateSeqWithArray(PETSC_COMM_SELF, 1, ia[m], aa, &data));
    PetscCall(PetscObjectSetName((PetscObject)data, "data"));
    PetscCall(VecView(data, v));
    PetscCall(PetscViewerHDF5WriteAttribute(v, NULL, "MATLAB_sparse", PETSC_INT, &M));
    PetscCall(PetscViewerHDF5PopGroup(v));
    PetscCall(PetscViewerDestroy(&v));
    PetscCall(ISDestroy(&jc));
    PetscCall(ISDestroy(&ir));
    PetscCall(VecDestroy(&data));
    PetscCall(MatSeqAIJRestoreArrayRead(St, &aa));
    PetscCall(MatRestoreRowIJ(St, 0, PETSC_FALSE, PETSC_FALSE, &m, &ia, &ja, &done));
    PetscCall(MatDestroy(&St));
    PetscCall(MatDestroy(&S));
  }
  PetscCallMPI(MPI_Barrier(PetscObjectComm((PetscObject)A)));
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif

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
      char bin[PETSC_MAX_PATH_LEN];
      PetscCall(PetscSNPrintf(bin, sizeof(bin), "%s/io-%s.bin", dir, mats[m]));
      PetscCall(PetscSNPrintf(src, sizeof(src), "%s/io-%s.%s", dir, mats[m], ext));
      if (!formats[f]) PetscCall(SaveBinary(A, src));
#if defined(PETSC_HAVE_HDF5)
      else PetscCall(SaveMatlabHDF5(A, bin, src));
#endif
      for (PetscInt t = 0; t < types.ntypes; t++) {
        Mat       B, C, Baij;
        MatType     got;
        PetscBool   same;
        PetscMPIInt size;
        char        expect[64];
        /* load straight into the type */
        PetscCall(Load(PETSC_COMM_WORLD, src, formats[f], types.types[t], "A", &B));
        PetscCall(MatGetType(B, &got));
        PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
        PetscCall(ConcreteName(types.types[t], size, expect, sizeof(expect)));
        PetscCall(PetscStrcmp(got, expect, &same));
        PetscCall(PetscSNPrintf(name, sizeof(name), "load-%s-type/%s/%s", ext, types.types[t], mats[m]));
        PetscCall(Check(PETSC_COMM_WORLD, same, name, got));
        PetscCall(MatConvert(B, MATAIJ, MAT_INITIAL_MATRIX, &Baij));
        PetscCall(MatEqual(A, Baij, &same));
        PetscCall(PetscSNPrintf(name, sizeof(name), "load-%s-exact/%s/%s", ext, types.types[t], mats[m]));
        PetscCall(Check(PETSC_COMM_WORLD, same, name, "loaded values differ"));
        /* view the typed matrix (binary: PETSc writes no AIJ to HDF5), load it back as AIJ */
        if (!formats[f]) {
          PetscCall(PetscSNPrintf(out, sizeof(out), "%s/io-%s-%s.%s", dir, mats[m], types.types[t], ext));
          PetscCall(SaveBinary(B, out));
          PetscCall(Load(PETSC_COMM_WORLD, out, formats[f], MATAIJ, "A", &C));
          PetscCall(MatEqual(A, C, &same));
          PetscCall(PetscSNPrintf(name, sizeof(name), "view-%s-exact/%s/%s", ext, types.types[t], mats[m]));
          PetscCall(Check(PETSC_COMM_WORLD, same, name, "viewed values differ"));
          PetscCall(MatDestroy(&C));
        }
        PetscCall(MatDestroy(&B));
        PetscCall(MatDestroy(&Baij));
      }
    }
    PetscCall(MatDestroy(&A));
  }
  PetscCall(FreeTypeList(&types));
  PetscCall(PetscFinalize());
  return check_failures ? 1 : 0;
}
