static char help[] = "MatMult, MatMultAdd, MatMultTranspose(Add) and MatGetDiagonal of every type under test against the reference type.\n"
                     "  -types a,b,c : types under test (default cmrs,sellp,bellpack)\n"
                     "  -ref t       : reference type (default aij)\n"
                     "  -dir path    : where to write the -mat_view text the transpose checks read (default .)\n";

/*
   For each test matrix (testmats.h) and each type: y = A x with y prefilled with NaN (a product
   must never read y), z = y + A x into another vector and in place, r = b - A x (MatResidual) and the diagonal, all compared
   with the reference type within the rounding bound of any summation order; MatMult and
   MatMultAdd must run in the format (its SpMV event counts them, on every rank: on the GPU for the
   *cuda types), rectangular matrices included.

   Then, once per way of multiplying by the transpose (-mat_gpumats_transpose explicit, implicit
   and cusparse; auto with and without MAT_FORM_EXPLICIT_TRANSPOSE set), on a fresh conversion:
   y = A^T x, z = y + A^T x into another vector and in place, and A^T x after a change of values.
   The path is asserted, not assumed: the explicit one builds a transposed copy at the first
   product with A^T (the format's Convert event) and no more at the second, and -mat_view
   ::ascii_info reports it held; the implicit one builds nothing and holds no copy, also right
   after another path held one; cuSPARSE's (GPU types) holds no copy in the format, runs no
   format SpMV and uploads nothing at the second product.
*/
#include "testmats.h"

#include <ctype.h>
#include <string.h>

static char view_dir[PETSC_MAX_PATH_LEN] = ".";

/* host-to-GPU copies logged so far on this rank (-log_view's CpuToGpu count); 0 without devices */
static PetscLogDouble HostToGpuCopies(void)
{
#if defined(PETSC_HAVE_DEVICE)
  return petsc_ctog_ct;
#else
  return 0;
#endif
}

/* The registry's name of the format a type belongs to ("cmrs" for cmrscuda and seqaijcmrscuda), or
   PETSC_FALSE for types that are not ours (the reference). */
static PetscErrorCode FormatOf(const char *type, char *format, size_t len, PetscBool *ours)
{
  PetscInt           n;
  const char *const *roots, *const *seq, *const *mpi;
  PetscBool          eq, gpu;

  PetscFunctionBeginUser;
  *ours = PETSC_FALSE;
  PetscCall(PetscGpuMatsGetTypes(&n, &roots, &seq, &mpi));
  for (PetscInt i = 0; i < n && !*ours; i++) {
    PetscCall(PetscStrcmp(type, roots[i], &eq));
    *ours = eq;
    PetscCall(PetscStrcmp(type, seq[i], &eq));
    *ours = (PetscBool)(*ours || eq);
    PetscCall(PetscStrcmp(type, mpi[i], &eq));
    *ours = (PetscBool)(*ours || eq);
    if (*ours) {
      PetscCall(PetscStrncpy(format, roots[i], len));
      PetscCall(PetscStrendswith(format, "cuda", &gpu));
      if (gpu) format[strlen(format) - 4] = 0;
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* How often this rank has logged the format's event <FORMAT><what> ("SpMV": products in the format;
   "Convert": format copies built), and its GPU flops (0 without a device-enabled PETSc). */
static PetscErrorCode EventCount(const char *format, const char *what, PetscInt *count, PetscLogDouble *gpu_flops)
{
  char               name[64];
  PetscLogEvent      event;
  PetscEventPerfInfo info;

  PetscFunctionBeginUser;
  PetscCall(PetscStrncpy(name, format, sizeof(name)));
  for (char *c = name; *c; c++) *c = (char)toupper((unsigned char)*c);
  PetscCall(PetscStrlcat(name, what, sizeof(name)));
  PetscCall(PetscLogEventGetId(name, &event));
  PetscCall(PetscLogEventGetPerfInfo(PETSC_DETERMINE, event, &info));
  *count = info.count;
  *gpu_flops = 0;
#if defined(PETSC_HAVE_DEVICE)
  *gpu_flops = info.GpuFlops;
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The product just made ran in the format, on every rank (each rank multiplies its own blocks,
   even empty ones): its SpMV event counted it; for the *cuda types, some rank logged GPU flops
   (every test matrix has nonzeros). */
static PetscErrorCode CheckRanInFormat(Mat B, const char *format, PetscBool gpu, PetscInt count0, PetscLogDouble gflops0, const char *name)
{
  MPI_Comm       comm = PetscObjectComm((PetscObject)B);
  PetscInt       count;
  PetscLogDouble gflops, mine, all;
  char           why[256];

  PetscFunctionBeginUser;
  PetscCall(EventCount(format, "SpMV", &count, &gflops));
  PetscCall(PetscSNPrintf(why, sizeof(why), "the format's SpMV event counted %" PetscInt_FMT " products on this rank", count - count0));
  PetscCall(Check(comm, count > count0 ? PETSC_TRUE : PETSC_FALSE, name, why));
#if defined(PETSC_HAVE_DEVICE)
  if (gpu) {
    char gname[300];
    mine = gflops - gflops0;
    PetscCallMPI(MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_SUM, comm)); /* PetscLogDouble is a double */
    PetscCall(PetscSNPrintf(gname, sizeof(gname), "%s-on-gpu", name));
    PetscCall(Check(comm, all > 0 ? PETSC_TRUE : PETSC_FALSE, gname, "no GPU flops logged by the format's SpMV event"));
  }
#else
  (void)gpu, (void)gflops0, (void)mine, (void)all;
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* z = y + op(B) x by madd (MatMultAdd or MatMultTransposeAdd), into z prefilled with NaN and then
   in place (z = y first), each compared with zref within tol of the magnitude bound mag */
static PetscErrorCode CheckAdd(PetscErrorCode (*madd)(Mat, Vec, Vec, Vec), Mat B, Vec x, Vec y, Vec z, Vec zref, Vec mag, PetscReal tol, const char *what,
                               const char *type, const char *mname)
{
  MPI_Comm  comm = PetscObjectComm((PetscObject)B);
  PetscBool ok;
  char      why[256] = "", name[256];

  PetscFunctionBeginUser;
  PetscCall(VecSet(z, NAN));
  PetscCall(madd(B, x, y, z));
  PetscCall(CompareVecs(z, zref, mag, tol, &ok, why, sizeof(why)));
  PetscCall(PetscSNPrintf(name, sizeof(name), "%s/%s/%s", what, type, mname));
  PetscCall(Check(comm, ok, name, why));
  PetscCall(VecCopy(y, z));
  PetscCall(madd(B, x, z, z));
  PetscCall(CompareVecs(z, zref, mag, tol, &ok, why, sizeof(why)));
  PetscCall(PetscSNPrintf(name, sizeof(name), "%s-in-place/%s/%s", what, type, mname));
  PetscCall(Check(comm, ok, name, why));
  PetscFunctionReturn(PETSC_SUCCESS);
}

typedef enum { EXPECT_EXPLICIT, EXPECT_IMPLICIT, EXPECT_CUSPARSE, EXPECT_REPORTED } Expect;

/* The products with A^T of a fresh conversion of Aaij with one way of multiplying by the transpose
   (mode, and hint: MAT_FORM_EXPLICIT_TRANSPOSE), against A^T of the reference, on the path `expect`.
   yt_ref = A^T xt and zt_ref = A^T xt + yint come from the reference; magt, magzt bound their rounding. */
static PetscErrorCode CheckTransposeMode(Mat Aaij, const char *type, const char *mname, const char *mode, PetscBool hint, Expect expect, Vec xt, Vec yint,
                                         Vec yt_ref, Vec zt_ref, Vec magt, Vec magzt)
{
  MPI_Comm       comm = PetscObjectComm((PetscObject)Aaij);
  Mat            B;
  Vec            x, y, yt, zt, ref, mag;
  PetscBool      ok, ours, gpu, explicit_path, cusparse_path, held, none_held;
  PetscInt       c0 = 0, c1 = 0, c2 = 0, s0 = 0, s2 = 0;
  PetscLogDouble g0 = 0, unused, h1 = 0, h2 = 0;
  char           why[256] = "", name[256], label[64], format[64] = "";
  PetscReal      tol = 1e3 * PETSC_MACHINE_EPSILON;

  PetscFunctionBeginUser;
  PetscCall(PetscSNPrintf(label, sizeof(label), "%s%s", mode, hint ? "+form-explicit-transpose" : ""));
  PetscCall(FormatOf(type, format, sizeof(format), &ours));
  PetscCall(PetscStrendswith(type, "cuda", &gpu));
  PetscCall(MatConvert(Aaij, type, MAT_INITIAL_MATRIX, &B));
  if (ours) PetscCall(SetTransposeMode(B, mode));
  if (hint) PetscCall(MatSetOption(B, MAT_FORM_EXPLICIT_TRANSPOSE, PETSC_TRUE));
  PetscCall(MatCreateVecs(B, &x, &y));
  PetscCall(VecDuplicate(yt_ref, &yt));
  PetscCall(VecDuplicate(yt_ref, &zt));
  PetscCall(VecDuplicate(yt_ref, &ref));
  PetscCall(VecDuplicate(yt_ref, &mag));
  /* the copy of A current (MatSetFromOptions may have asked for new parameters), so that the
     products with A^T below build nothing but what their path needs */
  PetscCall(TestVector(x, 1));
  PetscCall(MatMult(B, x, y));

  /* y = A^T x, y full of NaN before, twice */
  if (ours) PetscCall(EventCount(format, "Convert", &c0, &unused));
  if (ours) PetscCall(EventCount(format, "SpMV", &s0, &g0));
  PetscCall(VecSet(yt, NAN));
  PetscCall(MatMultTranspose(B, xt, yt));
  if (ours) PetscCall(EventCount(format, "Convert", &c1, &unused));
  PetscCall(CompareVecs(yt, yt_ref, magt, tol, &ok, why, sizeof(why)));
  PetscCall(PetscSNPrintf(name, sizeof(name), "multtranspose/%s/%s/%s", label, type, mname));
  PetscCall(Check(comm, ok, name, why));
  if (ours && expect != EXPECT_CUSPARSE) {
    PetscCall(PetscSNPrintf(name, sizeof(name), "multtranspose-in-format/%s/%s/%s", label, type, mname));
    PetscCall(CheckRanInFormat(B, format, gpu, s0, g0, name));
  }
  PetscCall(VecSet(yt, NAN));
  h1 = HostToGpuCopies();
  PetscCall(MatMultTranspose(B, xt, yt));
  h2 = HostToGpuCopies();
  if (ours) PetscCall(EventCount(format, "Convert", &c2, &unused));
  if (ours) PetscCall(EventCount(format, "SpMV", &s2, &unused));
  PetscCall(CompareVecs(yt, yt_ref, magt, tol, &ok, why, sizeof(why)));
  PetscCall(PetscSNPrintf(name, sizeof(name), "multtranspose-again/%s/%s/%s", label, type, mname));
  PetscCall(Check(comm, ok, name, why));

  /* the path: what -mat_view reports, the copies built, the copy held */
  if (ours) {
    PetscCall(ViewContains(B, view_dir, "test_mult-view.txt", "transpose products: explicit", &explicit_path));
    PetscCall(ViewContains(B, view_dir, "test_mult-view.txt", "transposed copy held:", &held));
    PetscCall(ViewContains(B, view_dir, "test_mult-view.txt", "no transposed copy held", &none_held));
    PetscCall(ViewContains(B, view_dir, "test_mult-view.txt", "transpose products: cusparse", &cusparse_path));
    if (expect == EXPECT_REPORTED) expect = explicit_path ? EXPECT_EXPLICIT : cusparse_path ? EXPECT_CUSPARSE : EXPECT_IMPLICIT;
    PetscCall(PetscSNPrintf(name, sizeof(name), "transpose-path/%s/%s/%s", label, type, mname));
    if (expect == EXPECT_CUSPARSE) {
      /* cuSPARSE's transposed CSR of the shadow (stand-in), built on the GPU by the first product:
         no copy in the format, the format's SpMV not run, and (one rank: without CUDA-aware MPI the
         ghost exchange of several stages through the host) nothing uploaded by the second product */
      PetscMPIInt size;
      PetscBool   uploads_ok;
      PetscCallMPI(MPI_Comm_size(comm, &size));
      uploads_ok = (PetscBool)(size > 1 || h2 == h1);
      PetscCall(PetscSNPrintf(why, sizeof(why),
                              "expected cuSPARSE's transpose: -mat_view reports %s, %s; %" PetscInt_FMT " copies built, %" PetscInt_FMT " format SpMVs, %g uploads by the second product",
                              cusparse_path ? "cusparse" : explicit_path ? "explicit" : "implicit", none_held ? "no copy held" : "a copy held", c2 - c0, s2 - s0, h2 - h1));
      PetscCall(Check(comm, cusparse_path && none_held && c2 == c0 && s2 == s0 && uploads_ok ? PETSC_TRUE : PETSC_FALSE, name, why));
    } else if (expect == EXPECT_EXPLICIT) {
      PetscCall(PetscSNPrintf(why, sizeof(why), "expected the explicit path: -mat_view reports %s, %s; %" PetscInt_FMT " copies built at the first product with A^T, %" PetscInt_FMT " at the second",
                              explicit_path ? "explicit" : "implicit", held ? "a copy held" : "no copy held", c1 - c0, c2 - c1));
      PetscCall(Check(comm, explicit_path && held && c1 > c0 && c2 == c1 ? PETSC_TRUE : PETSC_FALSE, name, why));
    } else {
      PetscCall(PetscSNPrintf(why, sizeof(why), "expected the implicit path: -mat_view reports %s, %s; %" PetscInt_FMT " copies built by two products with A^T",
                              explicit_path ? "explicit" : "implicit", none_held ? "no copy held" : "a copy held", c2 - c0));
      PetscCall(Check(comm, !explicit_path && !cusparse_path && none_held && c2 == c0 ? PETSC_TRUE : PETSC_FALSE, name, why));
    }
  }

  /* z = y + A^T x, z != y, and in place */
  PetscCall(PetscSNPrintf(name, sizeof(name), "%s/%s", label, type));
  PetscCall(CheckAdd(MatMultTransposeAdd, B, xt, yint, zt, zt_ref, magzt, tol, "multtransposeadd", name, mname));

  /* a change of values after a product with A^T: neither copy may be used stale */
  PetscCall(MatScale(B, -3.0));
  PetscCall(MatMultTranspose(B, xt, yt));
  PetscCall(VecCopy(yt_ref, ref));
  PetscCall(VecScale(ref, -3.0));
  PetscCall(VecCopy(magt, mag));
  PetscCall(VecScale(mag, 3.0));
  PetscCall(CompareVecs(yt, ref, mag, tol, &ok, why, sizeof(why)));
  PetscCall(PetscSNPrintf(name, sizeof(name), "multtranspose-after-scale/%s/%s/%s", label, type, mname));
  PetscCall(Check(comm, ok, name, why));

  /* from the explicit (or cuSPARSE's) path to the implicit one on the same matrix: the copy goes */
  if (ours && (expect == EXPECT_EXPLICIT || expect == EXPECT_CUSPARSE)) {
    if (hint) PetscCall(MatSetOption(B, MAT_FORM_EXPLICIT_TRANSPOSE, PETSC_FALSE));
    PetscCall(SetTransposeMode(B, "implicit"));
    PetscCall(MatMultTranspose(B, xt, yt));
    PetscCall(CompareVecs(yt, ref, mag, tol, &ok, why, sizeof(why)));
    PetscCall(PetscSNPrintf(name, sizeof(name), "multtranspose-switched-to-implicit/%s/%s/%s", label, type, mname));
    PetscCall(Check(comm, ok, name, why));
    PetscCall(ViewContains(B, view_dir, "test_mult-view.txt", "no transposed copy held", &none_held));
    PetscCall(PetscSNPrintf(name, sizeof(name), "transposed-copy-freed-on-implicit/%s/%s/%s", label, type, mname));
    PetscCall(Check(comm, none_held, name, "-mat_view still reports a transposed copy held after a product on the implicit path"));
  }
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&yt));
  PetscCall(VecDestroy(&zt));
  PetscCall(VecDestroy(&ref));
  PetscCall(VecDestroy(&mag));
  PetscCall(MatDestroy(&B));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CheckOne(Mat Aaij, const char *mname, const char *type, const char *ref)
{
  MPI_Comm       comm = PetscObjectComm((PetscObject)Aaij);
  Mat            B, R, At;
  Vec            x, y, z, yin, yref, zref, mag, xt, yt_ref, magt, yint, zt_ref, magzt, d, dref;
  PetscBool      ok, ours, gpu;
  PetscInt       s0 = 0;
  PetscLogDouble g0 = 0;
  char           why[256] = "", name[256], format[64] = "";
  PetscReal      tol = 1e3 * PETSC_MACHINE_EPSILON;

  PetscFunctionBeginUser;
  PetscCall(FormatOf(type, format, sizeof(format), &ours));
  PetscCall(PetscStrendswith(type, "cuda", &gpu));
  PetscCall(MatConvert(Aaij, type, MAT_INITIAL_MATRIX, &B));
  PetscCall(MatSetFromOptions(B)); /* the options of the run (-mat_gpumats_reorder, ...), as a user's MatSetFromOptions reads them */
  PetscCall(MatConvert(Aaij, ref, MAT_INITIAL_MATRIX, &R));
  PetscCall(MatCreateVecs(B, &x, &y));
  PetscCall(VecDuplicate(y, &z));
  PetscCall(VecDuplicate(y, &yin));
  PetscCall(VecDuplicate(y, &yref));
  PetscCall(VecDuplicate(y, &zref));
  PetscCall(VecDuplicate(y, &mag));
  PetscCall(TestVector(x, 1));
  PetscCall(TestVector(yin, 2));

  /* y = A x, y full of NaN before */
  PetscCall(VecSet(y, NAN));
  PetscCall(MatMult(B, x, y));
  PetscCall(MatMult(R, x, yref));
  PetscCall(Magnitude(Aaij, x, NULL, mag));
  PetscCall(CompareVecs(y, yref, mag, tol, &ok, why, sizeof(why)));
  PetscCall(PetscSNPrintf(name, sizeof(name), "mult/%s/%s", type, mname));
  PetscCall(Check(comm, ok, name, why));

  /* CMRS's default kernel choice (-mat_cmrs_spmv auto) on one rank, where the run sets no CMRS
     option (nor -mat_gpumats_long_rows): segmented (strips of 16 rows, row order) where one row is
     far longer than the mean and where columns are scattered, never from a GPU model's kernel
     sweep (which is for even rows); for the 5-point Laplacian, subwarp with 8 lanes on strips of
     8 rows by the built-in rule, or the kernel sweep's choice on a GPU model make tune has swept */
  if (ours && !strcmp(format, "cmrs")) {
    PetscMPIInt size;
    PetscBool   set_spmv, set_sort, set_h, set_split, dense, lap, scattered, found = PETSC_TRUE;
    PetscCallMPI(MPI_Comm_size(comm, &size));
    PetscCall(PetscOptionsHasName(NULL, NULL, "-mat_cmrs_spmv", &set_spmv));
    PetscCall(PetscOptionsHasName(NULL, NULL, "-mat_cmrs_sort", &set_sort));
    PetscCall(PetscOptionsHasName(NULL, NULL, "-mat_cmrs_height", &set_h));
    PetscCall(PetscOptionsHasName(NULL, NULL, "-mat_gpumats_long_rows", &set_split)); /* a split leaves the format even rows */
    PetscCall(PetscStrcmp(mname, "dense-row", &dense));
    PetscCall(PetscStrcmp(mname, "poisson2d", &lap));
    PetscCall(PetscStrcmp(mname, "scattered", &scattered));
    if (size == 1 && !set_spmv && !set_sort && !set_h && !set_split && (dense || lap || scattered)) {
      const char *want = dense || scattered ? "strip height 16, entries in row order, basic layout (no padding), GPU kernel segmented"
                               : "strip height 8, entries sorted by column, basic layout (no padding), GPU kernel subwarp (8 lanes per strip)";
      const char *sweep = "kernel and height from the kernel sweep of";
      PetscBool   swept = PETSC_FALSE;
      PetscCall(ViewContains(B, view_dir, "test_mult-view.txt", sweep, &swept));
      if (!(lap && swept)) PetscCall(ViewContains(B, view_dir, "test_mult-view.txt", want, &found));
      if (!lap && swept) found = PETSC_FALSE;
      PetscCall(PetscSNPrintf(name, sizeof(name), "cmrs-auto-kernel/%s/%s", type, mname));
      PetscCall(PetscSNPrintf(why, sizeof(why), "-mat_view does not say \"%s\"%s", want, !lap && swept ? " (it names a kernel sweep, which is for even rows only)" : ""));
      PetscCall(Check(comm, found, name, why));
    }
  }

  /* z = y + A x, z != y, and in place; in the format (on the GPU for *cuda types), also for the
     rectangular matrices, whose x and y differ in size */
  PetscCall(MatMultAdd(R, x, yin, zref));
  PetscCall(Magnitude(Aaij, x, yin, mag));
  if (ours) PetscCall(EventCount(format, "SpMV", &s0, &g0));
  PetscCall(CheckAdd(MatMultAdd, B, x, yin, z, zref, mag, tol, "multadd", type, mname));
  if (ours) {
    PetscCall(PetscSNPrintf(name, sizeof(name), "multadd-in-format/%s/%s", type, mname));
    PetscCall(CheckRanInFormat(B, format, gpu, s0, g0, name));
  }

  /* r = b - A x (MatResidual: PCMG's residual), r full of NaN before, in the format (one pass on
     the GPU for *cuda types); the reference's is its MatMult and VecAYPX, and the magnitude bound
     that of z above */
  {
    Vec r, rref;
    PetscCall(VecDuplicate(y, &r));
    PetscCall(VecDuplicate(y, &rref));
    PetscCall(MatResidual(R, yin, x, rref));
    PetscLogEvent      mult;
    PetscEventPerfInfo m0, m1;
    PetscCall(PetscLogEventGetId("MatMult", &mult));
    PetscCall(VecSet(r, NAN));
    if (ours) PetscCall(EventCount(format, "SpMV", &s0, &g0));
    PetscCall(PetscLogEventGetPerfInfo(PETSC_DETERMINE, mult, &m0));
    PetscCall(MatResidual(B, yin, x, r));
    PetscCall(PetscLogEventGetPerfInfo(PETSC_DETERMINE, mult, &m1));
    PetscCall(CompareVecs(r, rref, mag, tol, &ok, why, sizeof(why)));
    PetscCall(PetscSNPrintf(name, sizeof(name), "residual/%s/%s", type, mname));
    PetscCall(Check(comm, ok, name, why));
    if (ours) {
      PetscCall(PetscSNPrintf(name, sizeof(name), "residual-in-format/%s/%s", type, mname));
      PetscCall(CheckRanInFormat(B, format, gpu, s0, g0, name));
      /* our own residual, not PETSc's fallback (MatMult, then VecAYPX) */
      PetscCall(PetscSNPrintf(name, sizeof(name), "residual-one-pass/%s/%s", type, mname));
      PetscCall(PetscSNPrintf(why, sizeof(why), "MatResidual went through MatMult (%d calls)", m1.count - m0.count));
      PetscCall(Check(comm, m1.count == m0.count ? PETSC_TRUE : PETSC_FALSE, name, why));
    }
    PetscCall(VecDestroy(&r));
    PetscCall(VecDestroy(&rref));
  }

  /* the diagonal (Jacobi) */
  {
    PetscInt M, N;
    PetscCall(MatGetSize(B, &M, &N));
    if (M == N) {
      const PetscScalar *da;
      PetscMemType       mtype;
      PetscLogDouble     up0;
      PetscCall(VecDuplicate(y, &d));
      PetscCall(VecDuplicate(y, &dref));
      up0 = HostToGpuCopies(); /* (B's copy is current: the products above used it) */
      PetscCall(MatGetDiagonal(B, d));
      /* a *cuda type gives the diagonal of a CUDA vector on the GPU, as aijcusparse does: reading it
         there copies nothing up (a host result would cost PCJacobi a copy per set-up) */
      PetscCall(VecGetArrayReadAndMemType(d, &da, &mtype));
      PetscCall(VecRestoreArrayReadAndMemType(d, &da));
      if (ours && gpu && PetscMemTypeDevice(mtype)) {
        PetscCall(PetscSNPrintf(name, sizeof(name), "getdiagonal-on-gpu/%s/%s", type, mname));
        PetscCall(PetscSNPrintf(why, sizeof(why), "%g host-to-GPU copies to read it on the GPU", (double)(HostToGpuCopies() - up0)));
        PetscCall(Check(comm, HostToGpuCopies() == up0 ? PETSC_TRUE : PETSC_FALSE, name, why));
      }
      PetscCall(MatGetDiagonal(R, dref));
      PetscCall(VecSet(mag, 0.0));
      PetscCall(CompareVecs(d, dref, mag, 0.0, &ok, why, sizeof(why)));
      PetscCall(PetscSNPrintf(name, sizeof(name), "getdiagonal/%s/%s", type, mname));
      PetscCall(Check(comm, ok, name, why));
      PetscCall(VecDestroy(&d));
      PetscCall(VecDestroy(&dref));
    }
  }

  /* products with A^T, every way: the reference's A^T x and A^T x + y (aijcusparse's
     MatMultTransposeAdd (PETSc 3.25) adds into the old contents of z when z != y, which are not y,
     so the reference is A^T x, then + y), and the magnitude bounds |A^T| |x| (+ |y|) */
  PetscCall(MatCreateVecs(B, &yt_ref, &xt));
  PetscCall(VecDuplicate(yt_ref, &magt));
  PetscCall(VecDuplicate(yt_ref, &yint));
  PetscCall(VecDuplicate(yt_ref, &zt_ref));
  PetscCall(VecDuplicate(yt_ref, &magzt));
  PetscCall(TestVector(xt, 3));
  PetscCall(TestVector(yint, 4));
  PetscCall(MatMultTranspose(R, xt, yt_ref));
  PetscCall(VecWAXPY(zt_ref, 1.0, yt_ref, yint));
  PetscCall(MatTranspose(Aaij, MAT_INITIAL_MATRIX, &At));
  PetscCall(Magnitude(At, xt, NULL, magt));
  PetscCall(Magnitude(At, xt, yint, magzt));
  PetscCall(MatDestroy(&At));
  if (ours) {
    /* cuSPARSE's transpose: the GPU types of a CUDA PETSc (MPI ones: through mpiaijcusparse's
       back-end, PETSc 3.23 on); the host types take the implicit path */
    PetscMPIInt size;
    PetscBool   cusparse = PETSC_FALSE;
    PetscCallMPI(MPI_Comm_size(comm, &size));
#if defined(PETSC_HAVE_CUDA)
    PetscCall(PetscStrendswith(type, "cuda", &cusparse));
    if (size > 1 && PETSC_VERSION_LT(3, 23, 0)) cusparse = PETSC_FALSE;
#endif
    PetscCall(CheckTransposeMode(Aaij, type, mname, "explicit", PETSC_FALSE, EXPECT_EXPLICIT, xt, yint, yt_ref, zt_ref, magt, magzt));
    PetscCall(CheckTransposeMode(Aaij, type, mname, "implicit", PETSC_FALSE, EXPECT_IMPLICIT, xt, yint, yt_ref, zt_ref, magt, magzt));
    PetscCall(CheckTransposeMode(Aaij, type, mname, "cusparse", PETSC_FALSE, cusparse ? EXPECT_CUSPARSE : EXPECT_IMPLICIT, xt, yint, yt_ref, zt_ref, magt, magzt));
    /* auto: the implicit product, with or without MAT_FORM_EXPLICIT_TRANSPOSE (GAMG sets it on its
       prolongators), as measured (format_operator.hpp) */
    PetscCall(CheckTransposeMode(Aaij, type, mname, "auto", PETSC_TRUE, EXPECT_IMPLICIT, xt, yint, yt_ref, zt_ref, magt, magzt));
    PetscCall(CheckTransposeMode(Aaij, type, mname, "auto", PETSC_FALSE, EXPECT_IMPLICIT, xt, yint, yt_ref, zt_ref, magt, magzt));
  } else { /* a type of PETSc's, compared with the reference as it comes */
    PetscCall(CheckTransposeMode(Aaij, type, mname, "default", PETSC_FALSE, EXPECT_REPORTED, xt, yint, yt_ref, zt_ref, magt, magzt));
  }

  PetscCall(VecDestroy(&xt));
  PetscCall(VecDestroy(&yt_ref));
  PetscCall(VecDestroy(&magt));
  PetscCall(VecDestroy(&yint));
  PetscCall(VecDestroy(&zt_ref));
  PetscCall(VecDestroy(&magzt));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&z));
  PetscCall(VecDestroy(&yin));
  PetscCall(VecDestroy(&yref));
  PetscCall(VecDestroy(&zref));
  PetscCall(VecDestroy(&mag));
  PetscCall(MatDestroy(&B));
  PetscCall(MatDestroy(&R));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  TypeList types;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGpuMatsInitialize());
  /* the event counts that tell which path a product took */
  PetscCall(PetscLogDefaultBegin());
  PetscCall(PetscOptionsGetString(NULL, NULL, "-dir", view_dir, sizeof(view_dir), NULL));
  PetscCall(GetTypeList(&types));
  for (PetscInt m = 0; m < NTESTMATS; m++) {
    Mat A;
    PetscCall(TestMatrix(PETSC_COMM_WORLD, test_matrices[m], &A));
    for (PetscInt t = 0; t < types.ntypes; t++) PetscCall(CheckOne(A, test_matrices[m], types.types[t], types.ref));
    PetscCall(MatDestroy(&A));
  }
  { /* scattered columns (131072 rows, random columns), every type once: the formats' choices that
       depend on column locality (CMRS's kernel, autocuda's model) take their other branch there */
    Mat A;
    PetscCall(TestMatrix(PETSC_COMM_WORLD, "scattered", &A));
    for (PetscInt t = 0; t < types.ntypes; t++) PetscCall(CheckOne(A, "scattered", types.types[t], types.ref));
    PetscCall(MatDestroy(&A));
  }
  PetscCall(FreeTypeList(&types));
  PetscCall(PetscFinalize());
  return check_failures ? 1 : 0;
}
