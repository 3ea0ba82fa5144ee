static char help[] = "Matrix products (AB, AtB, PtAP; with dense matrices too) of the types under test against AIJ's, and their reuse.\n"
                     "  -types a,b,c : types under test (default: the registry's host types)\n"
                     "  -ref t       : reference type (default aij)\n";

/*
   GAMG smooths its prolongators with MatMatMult (A P), and builds coarse operators with MatPtAP
   and MatTransposeMatMult; PCMG -pc_mg_galerkin uses MatPtAP. For each type under test: the
   products of A and a rectangular P in that type equal AIJ's (checked through the products'
   action on a vector, within the rounding bound), on one rank the result is of A's type (*cuda
   types: computed by cuSPARSE on the GPU, with a CUDA PETSc), and a product computed again with
   MAT_REUSE_MATRIX after A's values changed, or with another A of the same pattern, equals AIJ's
   again, and so do their products with the transpose (*cuda types: by cuSPARSE's transpose,
   -mat_gpumats_transpose cusparse). GAMG's smoothing of a product
   (row scaling, MatAYPX with SUBSET_NONZERO_PATTERN, column scaling, MatScale, MatAXPY) gives
   AIJ's results. Products with a dense matrix (a block of right-hand sides) equal AIJ's.
*/
#include "testmats.h"

/* P: M x N, 0 to 3 entries a row (empty rows included), the same on any number of ranks */
static PetscErrorCode Prolongator(MPI_Comm comm, PetscInt M, PetscInt N, Mat *P)
{
  PetscInt rs, re;

  PetscFunctionBeginUser;
  PetscCall(TestCreate(comm, M, N, LAYOUT_DECIDE, 1, P));
  PetscCall(MatGetOwnershipRange(*P, &rs, &re));
  for (PetscInt i = rs; i < re; i++) {
    PetscInt k = (PetscInt)(TestHash(11, i, -1) * 4);
    for (PetscInt t = 0; t < k; t++) PetscCall(MatSetValue(*P, i, (PetscInt)(TestHash(11, i, t) * N), TestHash(11, i, 100 + t) + 0.1, INSERT_VALUES));
  }
  PetscCall(TestAssemble(*P));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The result C of a product of our type must be of type `want`: on one rank always; on several
   where the product ran on the GPU (`device`: *cuda types with a CUDA PETSc of 3.23 or later,
   through mpiaijcusparse's back-end), since MPIAIJ's host products build MPIAIJ */
static PetscErrorCode CheckType(Mat C, const char *want, PetscBool device, const char *name)
{
  PetscMPIInt size;
  PetscBool   same;
  MatType     got;
  char        why[256];

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)C), &size));
  if (size > 1 && !device) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscObjectTypeCompare((PetscObject)C, want, &same));
  PetscCall(MatGetType(C, &got));
  PetscCall(PetscSNPrintf(why, sizeof(why), "result is %s, expected %s", got, want));
  PetscCall(Check(PetscObjectComm((PetscObject)C), same, name, why));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* v[i] = 1 / (1 + (i + shift) % 7) over the owned range */
static PetscErrorCode FillScaling(Vec v, PetscInt shift)
{
  PetscInt rs, re;

  PetscFunctionBeginUser;
  PetscCall(VecGetOwnershipRange(v, &rs, &re));
  for (PetscInt i = rs; i < re; i++) PetscCall(VecSetValue(v, i, 1.0 / (1 + (i + shift) % 7), INSERT_VALUES));
  PetscCall(VecAssemblyBegin(v));
  PetscCall(VecAssemblyEnd(v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* GAMG's prolongator smoothing on a product's result, C = A P, then D^-1 C and C = alpha C + P
   (MatAYPX with SUBSET_NONZERO_PATTERN: MatScale, then MatAXPY), then a column scaling and
   MatAXPY with SAME_NONZERO_PATTERN: for *cuda types on one rank C's values are on the GPU only
   and these change them there (device_values.cxx); the results must equal AIJ's after each step */
static PetscErrorCode Smoothing(Mat A, Mat P, Mat At, Mat Pt, const char *type)
{
  Mat          R, C, R2, C2;
  Vec          lr, rr, lc, rc;
  char         name[256];
  PetscMPIInt  size;
  MatStructure str;

  PetscFunctionBeginUser;
  PetscCall(MatMatMult(A, P, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &R));
  PetscCall(MatMatMult(At, Pt, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &C));
  PetscCall(MatCreateVecs(P, &rr, &lr));
  PetscCall(MatCreateVecs(Pt, &rc, &lc));
  PetscCall(FillScaling(lr, 0));
  PetscCall(FillScaling(lc, 0));
  PetscCall(FillScaling(rr, 3));
  PetscCall(FillScaling(rc, 3));
  PetscCall(MatDiagonalScale(R, lr, NULL));
  PetscCall(MatDiagonalScale(C, lc, NULL));
  PetscCall(PetscSNPrintf(name, sizeof(name), "%s A P scaled by rows (MatDiagonalScale)", type));
  PetscCall(CheckSameProduct(R, C, 41, name));
  PetscCall(MatAYPX(R, -0.7, P, SUBSET_NONZERO_PATTERN));
  PetscCall(MatAYPX(C, -0.7, Pt, SUBSET_NONZERO_PATTERN));
  PetscCall(PetscSNPrintf(name, sizeof(name), "%s smoothed prolongator (MatAYPX, SUBSET_NONZERO_PATTERN)", type));
  PetscCall(CheckSameProduct(R, C, 42, name));
  /* a second product: its own values on the GPU, then columns scaled and added to C (same pattern) */
  PetscCall(MatMatMult(A, P, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &R2));
  PetscCall(MatMatMult(At, Pt, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &C2));
  PetscCall(MatDiagonalScale(R2, lr, rr));
  PetscCall(MatDiagonalScale(C2, lc, rc));
  PetscCall(MatScale(R2, 3.0));
  PetscCall(MatScale(C2, 3.0));
  PetscCall(PetscSNPrintf(name, sizeof(name), "%s A P scaled by rows and columns, then MatScale", type));
  PetscCall(CheckSameProduct(R2, C2, 43, name));
  /* (on more ranks two products need not share their off-diagonal column maps, which MPIAIJ's
     SAME_NONZERO_PATTERN assumes: the pattern is said to differ there) */
  PetscCall(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
  str = size == 1 ? SAME_NONZERO_PATTERN : DIFFERENT_NONZERO_PATTERN;
  PetscCall(MatAXPY(R2, 0.25, R, str));
  PetscCall(MatAXPY(C2, 0.25, C, str));
  PetscCall(PetscSNPrintf(name, sizeof(name), "%s MatAXPY of two products (%s)", type, MatStructures[str]));
  PetscCall(CheckSameProduct(R2, C2, 44, name));
  PetscCall(VecDestroy(&lr));
  PetscCall(VecDestroy(&rr));
  PetscCall(VecDestroy(&lc));
  PetscCall(VecDestroy(&rc));
  PetscCall(MatDestroy(&R));
  PetscCall(MatDestroy(&C));
  PetscCall(MatDestroy(&R2));
  PetscCall(MatDestroy(&C2));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* How many times the library's cuSPARSE products ran (its log event GpuMatsSpGEMM) */
static PetscErrorCode SpGEMMCount(PetscInt *n)
{
  PetscLogEvent      e;
  PetscEventPerfInfo info;

  PetscFunctionBeginUser;
  PetscCall(PetscLogEventGetId("GpuMatsSpGEMM", &e));
  PetscCall(PetscLogEventGetPerfInfo(PETSC_DETERMINE, e, &info));
  *n = info.count;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* PETSc's options for a product's host code (-matmatmult_backend_cpu, read by aijcusparse) keep a
   product of GPU types on the host; without them it runs on the GPU */
static PetscErrorCode BackendCpu(Mat A, Mat P, Mat AP, const char *type)
{
  PetscInt n0, n1, n2;
  Mat      Cg, Cc;
  char     name[256], why[128];
  MPI_Comm comm = PetscObjectComm((PetscObject)A);

  PetscFunctionBeginUser;
  PetscCall(SpGEMMCount(&n0));
  PetscCall(MatMatMult(A, P, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &Cg));
  PetscCall(SpGEMMCount(&n1));
  PetscCall(PetscOptionsSetValue(NULL, "-matmatmult_backend_cpu", "1"));
  PetscCall(MatMatMult(A, P, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &Cc));
  PetscCall(PetscOptionsClearValue(NULL, "-matmatmult_backend_cpu"));
  PetscCall(SpGEMMCount(&n2));
  PetscCall(PetscSNPrintf(why, sizeof(why), "cuSPARSE products: %" PetscInt_FMT " before, %" PetscInt_FMT " after, %" PetscInt_FMT " after the host one", n0, n1, n2));
  PetscCall(PetscSNPrintf(name, sizeof(name), "%s AB on the GPU by default", type));
  PetscCall(Check(comm, (PetscBool)(n1 > n0), name, why));
  PetscCall(PetscSNPrintf(name, sizeof(name), "%s AB on the host with -matmatmult_backend_cpu", type));
  PetscCall(Check(comm, (PetscBool)(n2 == n1), name, why));
  PetscCall(PetscSNPrintf(name, sizeof(name), "%s AB with -matmatmult_backend_cpu", type));
  PetscCall(CheckSameProduct(AP, Cc, 24, name));
  PetscCall(MatDestroy(&Cg));
  PetscCall(MatDestroy(&Cc));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* X: dense, M x N (a block of right-hand sides) */
static PetscErrorCode DenseBlock(MPI_Comm comm, PetscInt M, PetscInt N, PetscInt seed, Mat *X)
{
  PetscInt     rs, re;
  PetscScalar *x;

  PetscFunctionBeginUser;
  PetscCall(MatCreateDense(comm, PETSC_DECIDE, PETSC_DECIDE, M, N, NULL, X));
  PetscCall(MatGetOwnershipRange(*X, &rs, &re));
  PetscCall(MatDenseGetArrayWrite(*X, &x));
  for (PetscInt j = 0; j < N; j++)
    for (PetscInt i = rs; i < re; i++) x[j * (re - rs) + i - rs] = TestHash(seed, i, j) - 0.5;
  PetscCall(MatDenseRestoreArrayWrite(*X, &x));
  PetscCall(MatAssemblyBegin(*X, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*X, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Products of A (the type under test) with a dense matrix, as applications form a block of
   right-hand sides (MatMatMult(A, X) before MatMatSolve): AB and AtB, and on one rank ABt, PtAP
   and RARt, equal AIJ's; computed again after A's values changed; and, for products on the GPU,
   again after the result was converted in place between host and GPU dense types (a cuSPARSE
   factor's MatMatSolve turns its right-hand side into seqdensecuda; a *cuda type's product gives
   seqdensecuda) */
static PetscErrorCode DenseOperand(Mat A, Mat At, const char *type, PetscBool gpu_products)
{
  MPI_Comm             comm = PetscObjectComm((PetscObject)A);
  PetscMPIInt          size;
  Mat                  X, Xt;
  PetscInt             n;
  const MatProductType pt[5] = {MATPRODUCT_AB, MATPRODUCT_AtB, MATPRODUCT_ABt, MATPRODUCT_PtAP, MATPRODUCT_RARt};
  char                 name[256];

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(MatGetSize(A, NULL, &n));
  PetscCall(DenseBlock(comm, n, 3, 51, &X));
  PetscCall(DenseBlock(comm, 3, n, 52, &Xt));
  for (int k = 0; k < (size == 1 ? 5 : 2); k++) {
    Mat  B = (pt[k] == MATPRODUCT_ABt || pt[k] == MATPRODUCT_RARt) ? Xt : X, R, C;
    Mat *mats[2] = {&R, &C}, ops[2] = {A, At};
    for (int w = 0; w < 2; w++) {
      PetscCall(MatProductCreate(ops[w], B, NULL, mats[w]));
      PetscCall(MatProductSetType(*mats[w], pt[k]));
      PetscCall(MatProductSetFromOptions(*mats[w]));
      PetscCall(MatProductSymbolic(*mats[w]));
      PetscCall(MatProductNumeric(*mats[w]));
    }
    PetscCall(PetscSNPrintf(name, sizeof(name), "%s %s with a dense matrix", type, MatProductTypes[pt[k]]));
    PetscCall(CheckSameProduct(R, C, 31 + k, name));
    if (gpu_products && size == 1) { /* cuSPARSE's SpMM, as for aijcusparse, gives a GPU dense result */
      PetscBool cuda;
      MatType   got;
      PetscCall(PetscObjectTypeCompare((PetscObject)C, MATSEQDENSECUDA, &cuda));
      PetscCall(MatGetType(C, &got));
      PetscCall(PetscSNPrintf(name, sizeof(name), "%s %s with a dense matrix on the GPU", type, MatProductTypes[pt[k]]));
      PetscCall(Check(comm, cuda, name, got));
    }
    PetscCall(MatScale(A, 2.0));
    PetscCall(MatScale(At, 2.0));
    PetscCall(MatProductNumeric(R));
    PetscCall(MatProductNumeric(C));
    PetscCall(PetscSNPrintf(name, sizeof(name), "%s %s with a dense matrix, reused after MatScale", type, MatProductTypes[pt[k]]));
    PetscCall(CheckSameProduct(R, C, 36 + k, name));
    PetscCall(MatScale(A, 0.5));
    PetscCall(MatScale(At, 0.5));
#if PetscDefined(HAVE_CUDA)
    /* (on the GPU route only: SeqAIJ's host product keeps its numeric phase in C's matmultnumeric,
       which an in-place conversion of C replaces, for AIJ too) */
    if (gpu_products) {
      const MatType to[2] = {MATDENSE, MATDENSECUDA};
      for (int c = 0; c < 2; c++) {
        PetscCall(MatConvert(C, to[c], MAT_INPLACE_MATRIX, &C));
        PetscCall(MatScale(A, 1.5 + c));
        PetscCall(MatScale(At, 1.5 + c));
        PetscCall(MatProductNumeric(R));
        PetscCall(MatProductNumeric(C));
        PetscCall(PetscSNPrintf(name, sizeof(name), "%s %s with a dense matrix, reused after its result became %s", type, MatProductTypes[pt[k]], to[c]));
        PetscCall(CheckSameProduct(R, C, 46 + k, name));
        PetscCall(MatScale(A, 1.0 / (1.5 + c)));
        PetscCall(MatScale(At, 1.0 / (1.5 + c)));
      }
    }
#endif
    PetscCall(MatDestroy(&R));
    PetscCall(MatDestroy(&C));
  }
  PetscCall(MatDestroy(&X));
  PetscCall(MatDestroy(&Xt));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  TypeList    tl;
  MPI_Comm    comm;
  PetscMPIInt size;
  Mat         A, P, AP, PtAP, PtA;
  char        name[256], concrete[64];
  PetscBool   host_products = PETSC_FALSE;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  comm = PETSC_COMM_WORLD;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(PetscGpuMatsInitialize());
  PetscCall(GetTypeList(&tl));
  PetscCall(PetscLogDefaultBegin()); /* (the count of the library's cuSPARSE products) */
  {
    char mode[16] = "";
    PetscCall(PetscOptionsGetString(NULL, NULL, "-mat_gpumats_products", mode, sizeof(mode), NULL));
    PetscCall(PetscStrcmp(mode, "host", &host_products));
  }
  PetscCall(TestMatrix(comm, "poisson2d", &A)); /* 529 x 529 */
  PetscCall(Prolongator(comm, 529, 61, &P));
  PetscCall(MatMatMult(A, P, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &AP));
  PetscCall(MatPtAP(A, P, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &PtAP));
  PetscCall(MatTransposeMatMult(P, A, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &PtA));
  for (PetscInt t = 0; t < tl.ntypes; t++) {
    Mat At, Pt, C[3];

    PetscCall(ConcreteName(tl.types[t], size, concrete, sizeof(concrete)));
    PetscCall(MatConvert(A, tl.types[t], MAT_INITIAL_MATRIX, &At));
    PetscCall(MatConvert(P, tl.types[t], MAT_INITIAL_MATRIX, &Pt));
    PetscCall(MatMatMult(At, Pt, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &C[0]));
    PetscCall(MatPtAP(At, Pt, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &C[1]));
    PetscCall(MatTransposeMatMult(Pt, At, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &C[2]));
    for (int round = 0; round < 2; round++) {
      const char *what[3] = {"AB", "PtAP", "AtB"};
      Mat         ref[3]  = {AP, PtAP, PtA};
      for (int k = 0; k < 3; k++) {
        PetscInt64 conv0 = 0, vals0 = 0, conv1 = 0, vals1 = 0, conv2 = 0, vals2 = 0;
        PetscBool  ours, gpu;
        PetscCall(PetscObjectTypeCompare((PetscObject)C[k], concrete, &ours));
        PetscCall(PetscStrendswith(concrete, "cuda", &gpu));
        /* (host types, and GPU types with -mat_gpumats_products host: SeqAIJ's products, whose
           numeric phase leaves an update of the copy for the first use) */
        ours = (PetscBool)(ours && gpu && !host_products);
        if (ours && size == 1) PetscCall(MatGpuMatsGetUpdateCounts(C[k], &conv0, &vals0));
        PetscCall(PetscSNPrintf(name, sizeof(name), "%s %s%s", tl.types[t], what[k], round ? " (reused after MatScale)" : ""));
        PetscCall(CheckSameProduct(ref[k], C[k], 3 + k, name));
        /* a GPU product (cuSPARSE) leaves its result's format copy to its first use, which builds
           it once (from the product's CSR on the GPU): the numeric phase builds nothing, since
           GAMG changes or never multiplies most of its products; the next use builds nothing more */
        if (ours && size == 1) {
          char why[160];
          PetscCall(MatGpuMatsGetUpdateCounts(C[k], &conv1, &vals1));
          PetscCall(CheckSameProduct(ref[k], C[k], 13 + k, name));
          PetscCall(MatGpuMatsGetUpdateCounts(C[k], &conv2, &vals2));
          PetscCall(PetscSNPrintf(why, sizeof(why), "%" PetscInt64_FMT " conversions and %" PetscInt64_FMT " values-only updates at its first use, %" PetscInt64_FMT " at its second",
                                  conv1 - conv0, vals1 - vals0, conv2 - conv1 + vals2 - vals1));
          PetscCall(PetscSNPrintf(name, sizeof(name), "%s %s%s copy built once, at the first use", tl.types[t], what[k], round ? " (reused)" : ""));
          PetscCall(Check(comm, (PetscBool)((conv1 - conv0) + (vals1 - vals0) == 1 && conv2 == conv1 && vals2 == vals1), name, why));
        }
        /* products with C^T, as GAMG restricts with its prolongators, by cuSPARSE's transpose of
           C's shadow (-mat_gpumats_transpose cusparse; the host types: the implicit product),
           which the reused product's numeric phase rewrites on the GPU: the transpose must follow */
        PetscCall(PetscObjectTypeCompare((PetscObject)C[k], concrete, &ours));
        if (ours) PetscCall(SetTransposeMode(C[k], "cusparse"));
        PetscCall(PetscSNPrintf(name, sizeof(name), "%s %s%s transposed (-mat_gpumats_transpose cusparse)", tl.types[t], what[k], round ? " (reused after MatScale)" : ""));
        PetscCall(CheckSameTransposeProduct(ref[k], C[k], 23 + k, name));
        PetscCall(PetscSNPrintf(name, sizeof(name), "%s %s%s result type", tl.types[t], what[k], round ? " (reused)" : ""));
        PetscCall(CheckType(C[k], concrete, (PetscBool)(gpu && !host_products && PetscDefined(HAVE_CUDA) && PETSC_VERSION_GE(3, 23, 0)), name));
      }
      if (round) break;
      /* new values, same pattern: the numeric phase alone must follow them */
      PetscCall(MatScale(At, 2.0));
      PetscCall(MatScale(A, 2.0));
      PetscCall(MatShift(Pt, 0.0)); /* a state change of P without a change of values */
      PetscCall(MatMatMult(A, P, MAT_REUSE_MATRIX, PETSC_DEFAULT, &AP));
      PetscCall(MatPtAP(A, P, MAT_REUSE_MATRIX, PETSC_DEFAULT, &PtAP));
      PetscCall(MatTransposeMatMult(P, A, MAT_REUSE_MATRIX, PETSC_DEFAULT, &PtA));
      PetscCall(MatMatMult(At, Pt, MAT_REUSE_MATRIX, PETSC_DEFAULT, &C[0]));
      PetscCall(MatPtAP(At, Pt, MAT_REUSE_MATRIX, PETSC_DEFAULT, &C[1]));
      PetscCall(MatTransposeMatMult(Pt, At, MAT_REUSE_MATRIX, PETSC_DEFAULT, &C[2]));
    }
    {
      /* another A of the same pattern in the reused product (MatProductReplaceMats, as PETSc's
         mat ex250 does with MatMatMult(B, A, MAT_REUSE_MATRIX, &C) after MatMatMult(A, B, ...)) */
      Mat A3, At3, A3P;
      PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &A3));
      PetscCall(MatScale(A3, 3.0));
      PetscCall(MatConvert(A3, tl.types[t], MAT_INITIAL_MATRIX, &At3));
      PetscCall(MatMatMult(A3, P, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &A3P));
      PetscCall(MatMatMult(At3, Pt, MAT_REUSE_MATRIX, PETSC_DEFAULT, &C[0]));
      PetscCall(PetscSNPrintf(name, sizeof(name), "%s AB reused with another A of the same pattern", tl.types[t]));
      PetscCall(CheckSameProduct(A3P, C[0], 21, name));
      PetscCall(MatDestroy(&A3P));
      PetscCall(MatDestroy(&At3));
      PetscCall(MatDestroy(&A3));
    }
    {
      /* ours with PETSc's own type of the same kind (aijcusparse for GPU types, AIJ for host
         ones): PCMG's GDSW coarse space is an aijcusparse matrix that -pc_mg_galerkin multiplies
         with the operator, a product PETSc looks up by the two type names */
      Mat       Pc, D[2];
      PetscBool gpu;
      PetscCall(PetscStrendswith(concrete, "cuda", &gpu));
      {
        PetscCall(MatConvert(P, gpu ? MATAIJCUSPARSE : MATAIJ, MAT_INITIAL_MATRIX, &Pc));
        PetscCall(MatMatMult(At, Pc, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &D[0]));
        PetscCall(MatPtAP(At, Pc, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &D[1]));
        for (int k = 0; k < 2; k++) {
          PetscCall(PetscSNPrintf(name, sizeof(name), "%s %s with P of PETSc's own type", tl.types[t], k ? "PtAP" : "AB"));
          PetscCall(CheckSameProduct(k ? PtAP : AP, D[k], 31 + k, name));
          PetscCall(PetscStrlcat(name, ": result type", sizeof(name)));
          PetscCall(CheckType(D[k], concrete, (PetscBool)(gpu && !host_products && PetscDefined(HAVE_CUDA) && PETSC_VERSION_GE(3, 23, 0)), name));
          PetscCall(MatDestroy(&D[k]));
        }
        PetscCall(MatDestroy(&Pc));
      }
    }
    PetscCall(Smoothing(A, P, At, Pt, tl.types[t]));
    {
      PetscBool gpu;
      PetscCall(PetscStrendswith(concrete, "cuda", &gpu));
      gpu = (PetscBool)(gpu && !host_products && PetscDefined(HAVE_CUDA));
      PetscCall(DenseOperand(A, At, tl.types[t], gpu));
      if (gpu && size == 1) PetscCall(BackendCpu(At, Pt, AP, tl.types[t]));
    }
    PetscCall(MatScale(A, 0.5)); /* back to the original for the next type */
    PetscCall(MatMatMult(A, P, MAT_REUSE_MATRIX, PETSC_DEFAULT, &AP));
    PetscCall(MatPtAP(A, P, MAT_REUSE_MATRIX, PETSC_DEFAULT, &PtAP));
    PetscCall(MatTransposeMatMult(P, A, MAT_REUSE_MATRIX, PETSC_DEFAULT, &PtA));
    for (int k = 0; k < 3; k++) PetscCall(MatDestroy(&C[k]));
    PetscCall(MatDestroy(&At));
    PetscCall(MatDestroy(&Pt));
  }
  PetscCall(MatDestroy(&AP));
  PetscCall(MatDestroy(&PtAP));
  PetscCall(MatDestroy(&PtA));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&P));
  PetscCall(FreeTypeList(&tl));
  PetscCall(PetscFinalize());
  return check_failures ? 1 : 0;
}
