static char help[] = "MatBindToCPU on every type under test: while bound, products in AIJ's host code and no format copy kept current; after, the format again and never a stale copy.\n"
                     "  -types a,b,c : types under test (default: the host types)\n"
                     "  -dir path    : where to write the -mat_view text the checks read (default .)\n";

/*
   For each test matrix and type, compared with a plain AIJ that goes through the same changes:
     1. unbound: MatMult, MatMultAdd (into another vector and in place), MatResidual, MatMultTranspose,
        MatMultTransposeAdd and MatGetDiagonal equal AIJ's and ran in the format (its SpMV event, on
        every rank; GPU flops for the *cuda types);
     2. bound: MatBoundToCPU says so (a PETSc with devices), -mat_view ::ascii_info says so, the same
        operations equal AIJ's, and so after new values (MatSetValues and assembly) and MatScale;
        meanwhile the format's SpMV event counted nothing, no format copy was converted or updated
        (MatGpuMatsGetUpdateCounts), and no GPU flops were logged (a PETSc with devices). A product
        of the bound matrix with itself (MatMatMult) equals AIJ's and logs no GPU flops either;
     A duplicate of the bound matrix is not bound (as aijcusparse's duplicates are not).
     3. unbound again: every operation equals AIJ's with the values changed while bound (a copy kept
        from 1. would give the old ones), in the format again, its copy converted anew;
     4. bound again, a new nonzero while bound (a new pattern), unbound: the same checks;
     5. a new matrix of the type bound before it is assembled (as DMDA's -dm_bind_below binds, and
        after MatSetUp: PETSc's hash assembly), then filled: AIJ's code, no copy, until unbound.
   And the newest values on the GPU only (a product's result on the GPU, *cuda types with a CUDA
   PETSc): binding brings them to the host, where AIJ's product reads them.

   The matrices include a rank with no rows (rank-without-rows, the last rank: on 4 ranks too) and
   rectangular ones. A PETSc without devices (Debian's, the CI's) makes MatBindToCPU a no-op, every
   matrix counting as bound: there the type's operation is called as MatBindToCPU calls it with a
   device, so that the binding itself is tested where no GPU is.
*/
#include "testmats.h"

#include <ctype.h>

static char view_dir[PETSC_MAX_PATH_LEN] = ".";

/* B bound to the CPU (flg) or not, as PETSc's MatBindToCPU does with a device */
static PetscErrorCode Bind(Mat B, PetscBool flg)
{
  PetscFunctionBeginUser;
#if defined(PETSC_HAVE_DEVICE)
  PetscCall(MatBindToCPU(B, flg));
#else
  {
    PetscErrorCode (*f)(Mat, PetscBool) = NULL;
    MatType type;
    PetscCall(MatGetType(B, &type));
    PetscCall(MatGetOperation(B, MATOP_BIND_TO_CPU, (void (**)(void))&f));
    PetscCheck(f, PetscObjectComm((PetscObject)B), PETSC_ERR_SUP, "%s has no MatBindToCPU operation", type);
    PetscCall((*f)(B, flg));
  }
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* GPU flops logged so far on this rank (0 without devices) */
static PetscLogDouble GpuFlops(void)
{
#if defined(PETSC_HAVE_DEVICE)
  return petsc_gflops;
#else
  return 0;
#endif
}

/* What tells where a matrix computed, on this rank: its format's SpMV event count, the update
   counts of its copies, the GPU flops */
typedef struct {
  PetscInt       spmv;
  PetscInt64     conversions, values_only;
  PetscLogDouble gflops;
} Counters;

static PetscErrorCode Snap(Mat B, const char *format, Counters *c)
{
  char               name[64];
  PetscLogEvent      event;
  PetscEventPerfInfo info;

  PetscFunctionBeginUser;
  PetscCall(PetscStrncpy(name, format, sizeof(name)));
  for (char *p = name; *p; p++) *p = (char)toupper((unsigned char)*p);
  PetscCall(PetscStrlcat(name, "SpMV", sizeof(name)));
  PetscCall(PetscLogEventGetId(name, &event));
  PetscCall(PetscLogEventGetPerfInfo(PETSC_DETERMINE, event, &info));
  c->spmv = info.count;
  PetscCall(MatGpuMatsGetUpdateCounts(B, &c->conversions, &c->values_only));
  c->gflops = GpuFlops();
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The registry's format of a type of ours ("sellp" for sellpcuda) */
static PetscErrorCode FormatOf(const char *type, char *format, size_t len)
{
  PetscInt           n;
  const char *const *roots;
  PetscBool          eq, gpu;

  PetscFunctionBeginUser;
  format[0] = 0;
  PetscCall(PetscGpuMatsGetTypes(&n, &roots, NULL, NULL));
  for (PetscInt i = 0; i < n && !format[0]; i++) {
    PetscCall(PetscStrcmp(type, roots[i], &eq));
    if (!eq) continue;
    PetscCall(PetscStrncpy(format, roots[i], len));
    PetscCall(PetscStrendswith(format, "cuda", &gpu));
    if (gpu) format[strlen(format) - 4] = 0;
  }
  PetscCheck(format[0], PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "test_bind tests the library's types, given by their root names: %s is not one", type);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether A is of one of the library's types (a product's result may be plain AIJ) */
static PetscErrorCode IsOurs(Mat A, PetscBool *ours)
{
  PetscInt           n;
  const char *const *seq, *const *mpi;
  PetscBool          eq;

  PetscFunctionBeginUser;
  *ours = PETSC_FALSE;
  PetscCall(PetscGpuMatsGetTypes(&n, NULL, &seq, &mpi));
  for (PetscInt i = 0; i < n && !*ours; i++) {
    PetscCall(PetscObjectTypeCompareAny((PetscObject)A, &eq, seq[i], mpi[i], ""));
    *ours = eq;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

typedef struct {
  Vec x, y, yin, xt, yint; /* x, yin: inputs of A x (+ yin); xt, yint: of A^T xt (+ yint) */
  Vec out, outt, ref, reft;
  Vec mag[2], magt[2]; /* the rounding bounds |A| |x| (+ |yin|: [1]) and |A^T| |xt| (+ |yint|: [1]) */
} Operands;

/* the rounding bounds of the products with the reference R as it is now */
static PetscErrorCode Bounds(Mat R, Operands *v)
{
  Mat Rt;

  PetscFunctionBeginUser;
  PetscCall(MatTranspose(R, MAT_INITIAL_MATRIX, &Rt));
  for (int add = 0; add < 2; add++) {
    PetscCall(Magnitude(R, v->x, add ? v->yin : NULL, v->mag[add]));
    PetscCall(Magnitude(Rt, v->xt, add ? v->yint : NULL, v->magt[add]));
  }
  PetscCall(MatDestroy(&Rt));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* One operation of B against R's: y = op(B) (into out, or outt for transposes), compared */
typedef enum { OP_MULT, OP_MULTADD, OP_MULTADD_IN_PLACE, OP_RESIDUAL, OP_MULTTRANSPOSE, OP_MULTTRANSPOSEADD, OP_DIAGONAL, NOPS } Op;
static const char *const op_names[] = {"mult", "multadd", "multadd-in-place", "residual", "multtranspose", "multtransposeadd", "getdiagonal"};

/* (gflops, if given, adds the GPU flops of the matrix's operation, but for MatResidual: PETSc's
   residual of a bound matrix, AIJ's MatMult then VecAYPX, runs that vector operation on the GPU
   where the vectors are CUDA vectors; and for the transposed products on several ranks: MPIAIJ's
   adds the off-diagonal block's contributions into their owners' entries by a reverse scatter,
   which adds on the GPU where the output is a CUDA vector, one flop per ghost value, as it does for
   a bound mpiaijcusparse) */
static PetscErrorCode Apply(Mat A, Op op, Operands *v, Vec out, PetscLogDouble *gflops)
{
  PetscLogDouble g0;

  PetscFunctionBeginUser;
  PetscCall(VecSet(out, NAN)); /* a product must never read its output */
  if (op == OP_MULTADD_IN_PLACE) PetscCall(VecCopy(v->yin, out));
  g0 = GpuFlops();
  switch (op) {
  case OP_MULT:
    PetscCall(MatMult(A, v->x, out));
    break;
  case OP_MULTADD:
    PetscCall(MatMultAdd(A, v->x, v->yin, out));
    break;
  case OP_MULTADD_IN_PLACE:
    PetscCall(MatMultAdd(A, v->x, out, out));
    break;
  case OP_RESIDUAL:
    PetscCall(MatResidual(A, v->yin, v->x, out));
    break;
  case OP_MULTTRANSPOSE:
    PetscCall(MatMultTranspose(A, v->xt, out));
    break;
  case OP_MULTTRANSPOSEADD:
    PetscCall(MatMultTransposeAdd(A, v->xt, v->yint, out));
    break;
  case OP_DIAGONAL:
    PetscCall(MatGetDiagonal(A, out));
    break;
  default:
    break;
  }
  if (gflops && op != OP_RESIDUAL) {
    PetscMPIInt size;
    PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
    if (size == 1 || (op != OP_MULTTRANSPOSE && op != OP_MULTTRANSPOSEADD)) *gflops += GpuFlops() - g0;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Every operation of B compared with R's; the counters around B's operations only (the
   references and the bounds run AIJ's code, and on CUDA vectors GPU vector operations): the SpMV
   event and the copies' updates from before the first to after the last, the GPU flops of B's
   operations themselves (Apply) */
static PetscErrorCode CheckAll(Mat B, Mat R, const char *format, Operands *v, const char *stage, const char *type, const char *mname, Counters *before, Counters *after)
{
  MPI_Comm  comm = PetscObjectComm((PetscObject)B);
  PetscInt  M, N;
  PetscBool ok;
  char      why[256] = "", name[256];
  Vec       got[NOPS];

  PetscFunctionBeginUser;
  PetscCall(MatGetSize(B, &M, &N));
  for (int op = 0; op < NOPS; op++) {
    const PetscBool transposed = op == OP_MULTTRANSPOSE || op == OP_MULTTRANSPOSEADD;
    got[op]                    = NULL;
    if (op == OP_DIAGONAL && M != N) continue;
    PetscCall(VecDuplicate(transposed ? v->outt : v->out, &got[op]));
  }
  PetscCall(Snap(B, format, before));
  before->gflops = after->gflops = 0;
  for (int op = 0; op < NOPS; op++)
    if (got[op]) PetscCall(Apply(B, (Op)op, v, got[op], &after->gflops));
  {
    PetscLogDouble g = after->gflops;
    PetscCall(Snap(B, format, after));
    after->gflops = g;
  }
  PetscCall(Bounds(R, v));
  for (int op = 0; op < NOPS; op++) {
    const PetscBool transposed = op == OP_MULTTRANSPOSE || op == OP_MULTTRANSPOSEADD, add = op != OP_MULT && op != OP_MULTTRANSPOSE && op != OP_DIAGONAL;
    Vec             ref        = transposed ? v->reft : v->ref;
    if (!got[op]) continue;
    if (op == OP_MULTTRANSPOSEADD) { /* A^T x, then + y (aijcusparse's transposed add reads its output: not a reference here either) */
      PetscCall(MatMultTranspose(R, v->xt, ref));
      PetscCall(VecAXPY(ref, 1.0, v->yint));
    } else PetscCall(Apply(R, (Op)op, v, ref, NULL));
    if (op == OP_DIAGONAL) PetscCall(VecSet(v->mag[0], 0.0)); /* exact */
    PetscCall(CompareVecs(got[op], ref, transposed ? v->magt[add] : v->mag[add], 1e3 * PETSC_MACHINE_EPSILON, &ok, why, sizeof(why)));
    PetscCall(PetscSNPrintf(name, sizeof(name), "%s/%s/%s/%s", op_names[op], stage, type, mname));
    PetscCall(Check(comm, ok, name, why));
    PetscCall(VecDestroy(&got[op]));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Where the operations between `before` and `after` ran: in the format (ran true: on every rank its
   SpMV event; on the GPU for *cuda types, GPU flops on some rank) or in AIJ's host code (ran
   false: no SpMV event and no GPU flops on any rank, and no copy converted or updated) */
static PetscErrorCode CheckWhere(MPI_Comm comm, PetscBool in_format, PetscBool gpu, const Counters *before, const Counters *after, const char *name)
{
  char           why[256], cname[300];
  PetscLogDouble mine = after->gflops - before->gflops, all;
  PetscInt64     updates = (after->conversions - before->conversions) + (after->values_only - before->values_only);

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_SUM, comm));
  if (in_format) {
    PetscCall(PetscSNPrintf(why, sizeof(why), "the format's SpMV event counted %" PetscInt_FMT " products on this rank", after->spmv - before->spmv));
    PetscCall(Check(comm, after->spmv > before->spmv ? PETSC_TRUE : PETSC_FALSE, name, why));
#if defined(PETSC_HAVE_DEVICE)
    if (gpu) {
      PetscCall(PetscSNPrintf(cname, sizeof(cname), "%s-on-gpu", name));
      PetscCall(Check(comm, all > 0 ? PETSC_TRUE : PETSC_FALSE, cname, "no GPU flops logged"));
    }
#endif
  } else {
    PetscCall(PetscSNPrintf(why, sizeof(why), "the format's SpMV event counted %" PetscInt_FMT " products on this rank, %g GPU flops on all ranks, %" PetscInt64_FMT " copy updates on this rank",
                            after->spmv - before->spmv, (double)all, updates));
    PetscCall(Check(comm, after->spmv == before->spmv && all == 0 && updates == 0 ? PETSC_TRUE : PETSC_FALSE, name, why));
  }
  (void)cname;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The same new values in A and in R: every local row's first entry gets `delta` added (the pattern
   stays), by MatSetValues and a final assembly */
static PetscErrorCode AddToRows(Mat Aaij, Mat A, Mat R, PetscReal delta)
{
  PetscInt rs, re;

  PetscFunctionBeginUser;
  PetscCall(MatGetOwnershipRange(Aaij, &rs, &re));
  for (PetscInt i = rs; i < re; i++) {
    PetscInt        nc, j = -1;
    const PetscInt *cols;
    PetscCall(MatGetRow(Aaij, i, &nc, &cols, NULL));
    if (nc) j = cols[0];
    PetscCall(MatRestoreRow(Aaij, i, &nc, &cols, NULL));
    if (j < 0) continue;
    PetscCall(MatSetValue(A, i, j, delta + TestHash(21, i, j), ADD_VALUES));
    PetscCall(MatSetValue(R, i, j, delta + TestHash(21, i, j), ADD_VALUES));
  }
  PetscCall(TestAssemble(A));
  PetscCall(TestAssemble(R));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A new nonzero in each local row that lacks column (i * 7 + 3) mod N (a new pattern), in A and R */
static PetscErrorCode NewNonzeros(Mat Aaij, Mat A, Mat R)
{
  PetscInt rs, re, N;

  PetscFunctionBeginUser;
  PetscCall(MatGetSize(Aaij, NULL, &N));
  PetscCall(MatGetOwnershipRange(Aaij, &rs, &re));
  PetscCall(MatSetOption(A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscCall(MatSetOption(R, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  for (PetscInt i = rs; i < re; i++) {
    PetscInt        nc, j = (i * 7 + 3) % N;
    const PetscInt *cols;
    PetscBool       present = PETSC_FALSE;
    PetscCall(MatGetRow(Aaij, i, &nc, &cols, NULL));
    for (PetscInt k = 0; k < nc; k++) present = (PetscBool)(present || cols[k] == j);
    PetscCall(MatRestoreRow(Aaij, i, &nc, &cols, NULL));
    if (present) continue;
    PetscCall(MatSetValue(A, i, j, 0.25 + TestHash(22, i, j), INSERT_VALUES));
    PetscCall(MatSetValue(R, i, j, 0.25 + TestHash(22, i, j), INSERT_VALUES));
  }
  PetscCall(TestAssemble(A));
  PetscCall(TestAssemble(R));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether B says it is bound, in MatBoundToCPU (a PETSc with devices only: without, every matrix is)
   and in -mat_view ::ascii_info */
static PetscErrorCode CheckSaysBound(Mat B, PetscBool expect, const char *stage, const char *type, const char *mname)
{
  MPI_Comm  comm = PetscObjectComm((PetscObject)B);
  PetscBool says;
  char      name[256], why[256];

  PetscFunctionBeginUser;
#if defined(PETSC_HAVE_DEVICE)
  PetscCall(MatBoundToCPU(B, &says));
  PetscCall(PetscSNPrintf(name, sizeof(name), "bound-flag/%s/%s/%s", stage, type, mname));
  PetscCall(PetscSNPrintf(why, sizeof(why), "MatBoundToCPU says %s", says ? "bound" : "not bound"));
  PetscCall(Check(comm, says == expect ? PETSC_TRUE : PETSC_FALSE, name, why));
#endif
  PetscCall(ViewContains(B, view_dir, "test_bind-view.txt", "bound to the CPU (MatBindToCPU)", &says));
  PetscCall(PetscSNPrintf(name, sizeof(name), "bound-view/%s/%s/%s", stage, type, mname));
  PetscCall(PetscSNPrintf(why, sizeof(why), "-mat_view ::ascii_info %s that the matrix is bound", says ? "says" : "does not say"));
  PetscCall(Check(comm, says == expect ? PETSC_TRUE : PETSC_FALSE, name, why));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A PETSc with devices calls a type's MatBindToCPU only where the matrix's flag differs from the
   request: a matrix that starts with the flag set (host types, MPI *cuda types) is bound only after
   an unbind, done here */
static PetscErrorCode StartUnbound(Mat B, const char *type, const char *mname)
{
  PetscFunctionBeginUser;
#if defined(PETSC_HAVE_DEVICE)
  PetscBool flag;
  PetscCall(MatBoundToCPU(B, &flag));
  if (flag) PetscCall(PetscPrintf(PetscObjectComm((PetscObject)B), "# %s/%s starts with MatBoundToCPU true: unbound first, so that MatBindToCPU(B, PETSC_TRUE) reaches it\n", type, mname));
  PetscCall(MatBindToCPU(B, PETSC_FALSE));
#else
  (void)B, (void)type, (void)mname;
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* C = B B while B is bound: SeqAIJ's/MPIAIJ's host product, no GPU flops; C x equals R (R x) */
static PetscErrorCode CheckBoundProduct(Mat B, Mat R, Operands *v, const char *type, const char *mname)
{
  MPI_Comm       comm = PetscObjectComm((PetscObject)B);
  Mat            C, RR;
  PetscLogDouble g0, mine, all;
  PetscBool      ok;
  char           why[256] = "", name[256];

  PetscFunctionBeginUser;
  g0 = GpuFlops();
  PetscCall(MatMatMult(B, B, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &C));
  mine = GpuFlops() - g0;
  PetscCallMPI(MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_SUM, comm));
  PetscCall(PetscSNPrintf(name, sizeof(name), "matmatmult-on-host/bound/%s/%s", type, mname));
  PetscCall(PetscSNPrintf(why, sizeof(why), "%g GPU flops logged by MatMatMult", (double)all));
  PetscCall(Check(comm, all == 0 ? PETSC_TRUE : PETSC_FALSE, name, why));
  PetscCall(MatMatMult(R, R, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &RR));
  PetscCall(MatMult(C, v->x, v->out));
  PetscCall(MatMult(RR, v->x, v->ref));
  PetscCall(Magnitude(RR, v->x, NULL, v->mag[0]));
  PetscCall(CompareVecs(v->out, v->ref, v->mag[0], 1e4 * PETSC_MACHINE_EPSILON, &ok, why, sizeof(why)));
  PetscCall(PetscSNPrintf(name, sizeof(name), "matmatmult/bound/%s/%s", type, mname));
  PetscCall(Check(comm, ok, name, why));
  PetscCall(MatDestroy(&C));
  PetscCall(MatDestroy(&RR));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* C = B B while B is not bound (for *cuda Seq types with a CUDA PETSc, a product on the GPU whose
   values are on the GPU only), then C bound: its host values are brought up to date, and AIJ's
   product reads them, on the host (where C is of our type: MPIAIJ's products give plain AIJ) */
static PetscErrorCode CheckBindProductResult(Mat B, Mat R, const char *format, Operands *v, PetscBool gpu, const char *type, const char *mname)
{
  MPI_Comm  comm = PetscObjectComm((PetscObject)B);
  Mat       C, RR;
  Counters  c0, c1;
  PetscBool ok;
  char      why[256] = "", name[256];

  PetscFunctionBeginUser;
  PetscCall(MatMatMult(B, B, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &C));
  PetscCall(IsOurs(C, &ok));
  if (!ok) {
    PetscCall(MatDestroy(&C));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(MatMatMult(R, R, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &RR));
  PetscCall(StartUnbound(C, type, "its product"));
  PetscCall(Bind(C, PETSC_TRUE));
  PetscCall(Snap(C, format, &c0));
  PetscCall(MatMult(C, v->x, v->out));
  PetscCall(Snap(C, format, &c1));
  PetscCall(MatMult(RR, v->x, v->ref));
  PetscCall(Magnitude(RR, v->x, NULL, v->mag[0]));
  PetscCall(CompareVecs(v->out, v->ref, v->mag[0], 1e4 * PETSC_MACHINE_EPSILON, &ok, why, sizeof(why)));
  PetscCall(PetscSNPrintf(name, sizeof(name), "mult/bound-product-result/%s/%s", type, mname));
  PetscCall(Check(comm, ok, name, why));
  PetscCall(PetscSNPrintf(name, sizeof(name), "on-host/bound-product-result/%s/%s", type, mname));
  PetscCall(CheckWhere(comm, PETSC_FALSE, gpu, &c0, &c1, name));
  PetscCall(MatDestroy(&C));
  PetscCall(MatDestroy(&RR));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* B made of the type and bound before it holds anything, as DMDA's -dm_bind_below binds (and
   after MatSetUp, which PETSc >= 3.20 answers with its hash assembly, whose end puts back the
   operations it saved), then given Aaij's entries and assembled: AIJ's host code from the start,
   no copy made; the format after the unbind */
static PetscErrorCode CheckBoundBeforeAssembly(Mat Aaij, const char *mname, const char *type, const char *format, PetscBool gpu, Operands *v)
{
  MPI_Comm comm = PetscObjectComm((PetscObject)Aaij);
  Mat      B, R;
  PetscInt m, n, M, N, rs, re;
  Counters c0, c1, u0, u1;
  char     name[256], why[256];

  PetscFunctionBeginUser;
  PetscCall(MatGetLocalSize(Aaij, &m, &n));
  PetscCall(MatGetSize(Aaij, &M, &N));
  PetscCall(MatCreate(comm, &B));
  PetscCall(MatSetSizes(B, m, n, M, N));
  PetscCall(MatSetType(B, type));
  PetscCall(MatSetUp(B));
  PetscCall(MatSetOption(B, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscCall(StartUnbound(B, type, mname));
  PetscCall(Bind(B, PETSC_TRUE));
  PetscCall(Snap(B, format, &u0));
  PetscCall(MatGetOwnershipRange(Aaij, &rs, &re));
  for (PetscInt i = rs; i < re; i++) {
    PetscInt           nc;
    const PetscInt    *cols;
    const PetscScalar *vals;
    PetscCall(MatGetRow(Aaij, i, &nc, &cols, &vals));
    PetscCall(MatSetValues(B, 1, &i, nc, cols, vals, INSERT_VALUES));
    PetscCall(MatRestoreRow(Aaij, i, &nc, &cols, &vals));
  }
  PetscCall(TestAssemble(B));
  PetscCall(MatDuplicate(Aaij, MAT_COPY_VALUES, &R));
  PetscCall(CheckAll(B, R, format, v, "bound-before-assembly", type, mname, &c0, &c1));
  PetscCall(PetscSNPrintf(name, sizeof(name), "on-host/bound-before-assembly/%s/%s", type, mname));
  PetscCall(CheckWhere(comm, PETSC_FALSE, gpu, &c0, &c1, name));
  PetscCall(Snap(B, format, &u1));
  PetscCall(PetscSNPrintf(name, sizeof(name), "no-copy-updates/bound-before-assembly/%s/%s", type, mname));
  PetscCall(PetscSNPrintf(why, sizeof(why), "%" PetscInt64_FMT " conversions and %" PetscInt64_FMT " values-only updates while bound", u1.conversions - u0.conversions,
                          u1.values_only - u0.values_only));
  PetscCall(Check(comm, u1.conversions == u0.conversions && u1.values_only == u0.values_only ? PETSC_TRUE : PETSC_FALSE, name, why));
  PetscCall(Bind(B, PETSC_FALSE));
  PetscCall(CheckAll(B, R, format, v, "unbound-after-assembly", type, mname, &c0, &c1));
  PetscCall(PetscSNPrintf(name, sizeof(name), "in-format/unbound-after-assembly/%s/%s", type, mname));
  PetscCall(CheckWhere(comm, PETSC_TRUE, gpu, &c0, &c1, name));
  PetscCall(MatDestroy(&B));
  PetscCall(MatDestroy(&R));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CheckBind(Mat Aaij, const char *mname, const char *type)
{
  MPI_Comm  comm = PetscObjectComm((PetscObject)Aaij);
  Mat       B, R;
  Operands      v;
  Counters  c0, c1, u0, u1;
  PetscBool gpu;
  PetscInt  M, N;
  char      format[64], name[256], why[256];

  PetscFunctionBeginUser;
  PetscCall(FormatOf(type, format, sizeof(format)));
  PetscCall(PetscStrendswith(type, "cuda", &gpu));
  PetscCall(MatGetSize(Aaij, &M, &N));
  PetscCall(MatDuplicate(Aaij, MAT_COPY_VALUES, &R)); /* plain AIJ, changed alongside B */
  PetscCall(MatConvert(Aaij, type, MAT_INITIAL_MATRIX, &B));
  PetscCall(MatSetFromOptions(B));
  PetscCall(MatCreateVecs(B, &v.x, &v.y));
  PetscCall(MatCreateVecs(B, &v.outt, &v.xt));
  PetscCall(VecDuplicate(v.y, &v.yin));
  PetscCall(VecDuplicate(v.y, &v.out));
  PetscCall(VecDuplicate(v.y, &v.ref));
  PetscCall(VecDuplicate(v.outt, &v.yint));
  PetscCall(VecDuplicate(v.outt, &v.reft));
  for (int k = 0; k < 2; k++) {
    PetscCall(VecDuplicate(v.y, &v.mag[k]));
    PetscCall(VecDuplicate(v.outt, &v.magt[k]));
  }
  PetscCall(TestVector(v.x, 1));
  PetscCall(TestVector(v.yin, 2));
  PetscCall(TestVector(v.xt, 3));
  PetscCall(TestVector(v.yint, 4));
  PetscCall(StartUnbound(B, type, mname));

  /* 1. unbound: in the format */
  PetscCall(CheckAll(B, R, format, &v, "unbound", type, mname, &c0, &c1));
  PetscCall(PetscSNPrintf(name, sizeof(name), "in-format/unbound/%s/%s", type, mname));
  PetscCall(CheckWhere(comm, PETSC_TRUE, gpu, &c0, &c1, name));
  if (M == N) PetscCall(CheckBindProductResult(B, R, format, &v, gpu, type, mname));

  /* 2. bound: AIJ's host code, no copy kept current, also through changes of values */
  PetscCall(Bind(B, PETSC_TRUE));
  PetscCall(CheckSaysBound(B, PETSC_TRUE, "bound", type, mname));
  PetscCall(Snap(B, format, &u0));
  PetscCall(CheckAll(B, R, format, &v, "bound", type, mname, &c0, &c1));
  PetscCall(PetscSNPrintf(name, sizeof(name), "on-host/bound/%s/%s", type, mname));
  PetscCall(CheckWhere(comm, PETSC_FALSE, gpu, &c0, &c1, name));
  PetscCall(AddToRows(Aaij, B, R, 1.0));
  PetscCall(CheckAll(B, R, format, &v, "bound-after-setvalues", type, mname, &c0, &c1));
  PetscCall(PetscSNPrintf(name, sizeof(name), "on-host/bound-after-setvalues/%s/%s", type, mname));
  PetscCall(CheckWhere(comm, PETSC_FALSE, gpu, &c0, &c1, name));
  PetscCall(MatScale(B, -2.0));
  PetscCall(MatScale(R, -2.0));
  PetscCall(CheckAll(B, R, format, &v, "bound-after-scale", type, mname, &c0, &c1));
  PetscCall(PetscSNPrintf(name, sizeof(name), "on-host/bound-after-scale/%s/%s", type, mname));
  PetscCall(CheckWhere(comm, PETSC_FALSE, gpu, &c0, &c1, name));
  if (M == N) PetscCall(CheckBoundProduct(B, R, &v, type, mname));
  { /* a duplicate of a bound matrix is not bound (as aijcusparse's): it multiplies in the format */
    Mat D;
    PetscCall(MatDuplicate(B, MAT_COPY_VALUES, &D));
    PetscCall(Snap(D, format, &c0));
    PetscCall(MatMult(D, v.x, v.out));
    PetscCall(Snap(D, format, &c1));
    PetscCall(PetscSNPrintf(name, sizeof(name), "in-format/duplicate-of-bound/%s/%s", type, mname));
    PetscCall(CheckWhere(comm, PETSC_TRUE, gpu, &c0, &c1, name));
    PetscCall(MatMult(R, v.x, v.ref));
    PetscCall(Bounds(R, &v));
    {
      PetscBool ok;
      PetscCall(CompareVecs(v.out, v.ref, v.mag[0], 1e3 * PETSC_MACHINE_EPSILON, &ok, why, sizeof(why)));
      PetscCall(PetscSNPrintf(name, sizeof(name), "mult/duplicate-of-bound/%s/%s", type, mname));
      PetscCall(Check(comm, ok, name, why));
    }
    PetscCall(MatDestroy(&D));
  }
  PetscCall(Snap(B, format, &u1)); /* the assembly and MatScale included: no copy converted or updated */
  PetscCall(PetscSNPrintf(name, sizeof(name), "no-copy-updates/bound/%s/%s", type, mname));
  PetscCall(PetscSNPrintf(why, sizeof(why), "%" PetscInt64_FMT " conversions and %" PetscInt64_FMT " values-only updates while bound", u1.conversions - u0.conversions,
                          u1.values_only - u0.values_only));
  PetscCall(Check(comm, u1.conversions == u0.conversions && u1.values_only == u0.values_only ? PETSC_TRUE : PETSC_FALSE, name, why));

  /* 3. unbound again: the format, its copy made anew with the values changed while bound */
  PetscCall(Bind(B, PETSC_FALSE));
  PetscCall(CheckAll(B, R, format, &v, "unbound-again", type, mname, &c0, &c1));
  PetscCall(PetscSNPrintf(name, sizeof(name), "in-format/unbound-again/%s/%s", type, mname));
  PetscCall(CheckWhere(comm, PETSC_TRUE, gpu, &c0, &c1, name));
  PetscCall(CheckSaysBound(B, PETSC_FALSE, "unbound-again", type, mname)); /* (the view after the products: it would make the copy) */
  {
    PetscInt64 mine = c1.conversions - u1.conversions, all;
    PetscCallMPI(MPI_Allreduce(&mine, &all, 1, MPIU_INT64, MPI_SUM, comm));
    PetscCall(PetscSNPrintf(name, sizeof(name), "copy-converted-anew/unbound-again/%s/%s", type, mname));
    PetscCall(PetscSNPrintf(why, sizeof(why), "%" PetscInt64_FMT " conversions on all ranks at the first use after unbinding", all));
    PetscCall(Check(comm, all > 0 ? PETSC_TRUE : PETSC_FALSE, name, why));
  }

  /* 4. a new pattern while bound */
  PetscCall(Bind(B, PETSC_TRUE));
  PetscCall(NewNonzeros(Aaij, B, R));
  PetscCall(CheckAll(B, R, format, &v, "bound-new-nonzeros", type, mname, &c0, &c1));
  PetscCall(PetscSNPrintf(name, sizeof(name), "on-host/bound-new-nonzeros/%s/%s", type, mname));
  PetscCall(CheckWhere(comm, PETSC_FALSE, gpu, &c0, &c1, name));
  PetscCall(Bind(B, PETSC_FALSE));
  PetscCall(CheckAll(B, R, format, &v, "unbound-after-new-nonzeros", type, mname, &c0, &c1));
  PetscCall(PetscSNPrintf(name, sizeof(name), "in-format/unbound-after-new-nonzeros/%s/%s", type, mname));
  PetscCall(CheckWhere(comm, PETSC_TRUE, gpu, &c0, &c1, name));

  PetscCall(CheckBoundBeforeAssembly(Aaij, mname, type, format, gpu, &v));

  PetscCall(VecDestroy(&v.x));
  PetscCall(VecDestroy(&v.y));
  PetscCall(VecDestroy(&v.yin));
  PetscCall(VecDestroy(&v.xt));
  PetscCall(VecDestroy(&v.yint));
  PetscCall(VecDestroy(&v.out));
  PetscCall(VecDestroy(&v.outt));
  PetscCall(VecDestroy(&v.ref));
  PetscCall(VecDestroy(&v.reft));
  for (int k = 0; k < 2; k++) {
    PetscCall(VecDestroy(&v.mag[k]));
    PetscCall(VecDestroy(&v.magt[k]));
  }
  PetscCall(MatDestroy(&B));
  PetscCall(MatDestroy(&R));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  TypeList          types;
  const char *const mats[] = {"poisson2d", "rank-without-rows", "sparse-coupling"};

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGpuMatsInitialize());
  PetscCall(PetscLogDefaultBegin()); /* the format's SpMV event counts */
  PetscCall(PetscOptionsGetString(NULL, NULL, "-dir", view_dir, sizeof(view_dir), NULL));
  PetscCall(GetTypeList(&types));
  for (size_t m = 0; m < sizeof(mats) / sizeof(mats[0]); m++) {
    Mat A;
    PetscCall(TestMatrix(PETSC_COMM_WORLD, mats[m], &A));
    for (PetscInt t = 0; t < types.ntypes; t++) PetscCall(CheckBind(A, mats[m], types.types[t]));
    PetscCall(MatDestroy(&A));
  }
  PetscCall(FreeTypeList(&types));
  PetscCall(PetscFinalize());
  return check_failures ? 1 : 0;
}
