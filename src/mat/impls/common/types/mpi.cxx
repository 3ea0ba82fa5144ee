// The parallel types mpi<format>[cuda]: an MPIAIJ (its diagonal and off-diagonal SeqAIJ blocks stay
// authoritative) plus a format copy of each block and our own ghost exchange. MatMult runs the
// diagonal block while the ghost values of x travel, then adds the off-diagonal block, whose copy
// holds its rows with entries only where most rows have none (a stencil's off-diagonal block).
//
// Two exchanges (-mat_gpumats_exchange): PETSc's VecScatter, or ours (exchange.hpp), the default
// for GPU types when MPI is not CUDA-aware. The order of a product (-mat_gpumats_overlap, default
// on), on PETSc's stream S:
//   ours:  diagonal SpMV launched on S; pack and device-to-host copy on our high-priority stream,
//          messages posted, waited for, host-to-device copy; S waits for that copy; off-diagonal.
//          (Host types post the messages before their diagonal product instead.)
//   PETSc: VecScatterBegin (packs on S, synchronises S, posts); diagonal SpMV on S; VecScatterEnd
//          (waits, then unpacks on S after the SpMV); off-diagonal. With a CUDA-aware MPI the
//          messages leave from device buffers and nothing after Begin waits on the host. (Launching
//          the SpMV before Begin would make Begin's synchronisation wait for it.)
// With -mat_gpumats_overlap 0 the exchange completes before the diagonal SpMV starts: the
// baseline the overlap is measured against. Events of -log_view: GpuMatsHaloBegin/End (host time
// to start and to complete the exchange), GpuMatsDiagMult, GpuMatsOffdMult (host time to launch a
// product). With -log_view_gpu_time PETSc's GPU timer synchronises the stream at the end of each
// timed product, so the products' events then carry their kernels' time; the diagonal product is
// timed so only with -mat_gpumats_overlap 0, since its timer would make the exchange wait for it.
#include "exchange.hpp"
#include "seq_mpi.hpp"
#include "../runtime/events.hpp"

#include <array>
#include <petscviewer.h>

namespace gpumats {

namespace {

PetscLogEvent halo_begin_event, halo_end_event, diag_event, offd_event;

enum ExchangeChoice { kExchangeAuto, kExchangePetsc, kExchangeStaged, kExchangeIpc };
const char *const exchange_names[] = {"auto", "petsc", "staged", "ipc"};

struct MpiData final : TypeData {
  std::unique_ptr<FormatOperator> proto; // parameters shared by both blocks
  BlockCopy                       diag, offd;
  // copies of the blocks' transposes for MatMultTranspose(Add) on the explicit path, built at its
  // first use and freed when their block changes or a product takes the implicit path (see seq.cxx)
  BlockCopy diag_t, offd_t;
  // Which blocks A's ghost exchange and GPU product stand-in were made for: A's nonzero state and
  // `pattern`, a count of the times A got new blocks. The nonzero state alone does not tell:
  // MPIAIJ's is the sum of its blocks', and blocks made anew (MatMPIAIJSetPreallocation, COO
  // preallocation) start from the same states each time. `pattern` moves only in collective calls
  // (NoteNewBlocks), so every rank rebuilds, collectively, at the same call.
  std::uint64_t                   pattern = 0;
  PetscObjectId                   seen_blocks[2]{-1, -1}; // the blocks at the last assembly
  std::uint64_t                   scatter_pattern = 0, halo_pattern = 0;
  PetscObjectState                scatter_nz = -1; // nonzero state of A the scatter was built for
  Vec                             ghosts     = nullptr;
  VecScatter                      scatter    = nullptr; // PETSc's exchange, and the reverse one of transposes
  bool                            overlap    = true;    // -mat_gpumats_overlap
  PetscInt                        exchange   = kExchangeAuto; // -mat_gpumats_exchange
  bool                            staged     = false;   // ours in use (exchange resolved at Build)
  GhostExchange                   halo;
  PetscObjectState                halo_nz = -1; // nonzero state of A the exchange was set up for
  bool                            halo_want_ipc = false; // and whether -mat_gpumats_exchange asked for ipc
#if PetscDefined(HAVE_CUDA)
  BlockShadow                     diag_shadow; // the diagonal block as block Jacobi's sub-solver sees it
  MpiStandIn                      standin;     // the matrix as the GPU products see it (mpi_products.cxx)
#endif

  std::array<BlockCopy *, 4> copies() { return {&diag, &offd, &diag_t, &offd_t}; }

  void invalidate() override
  {
    where.format_stale();
    for (BlockCopy *c : copies()) c->forget(); // the blocks' own states do not move either
  }
  void release_copies() override
  {
    for (BlockCopy *c : copies()) *c = BlockCopy{};
    invalidate();
  }
  PetscErrorCode blocks_replaced(Mat A) override;
};

MpiData *Mpi(Mat A) { return static_cast<MpiData *>(Data(A)); }

// (a transposed copy is always converted in full, and not counted: see BuildFromSeqAIJ)
PetscErrorCode UpdateBlock(Mat A, Mat block, BlockCopy &copy, bool diagonal, bool transposed = false)
{
  MpiData *d = Mpi(A);
  PetscInt bs;

  PetscFunctionBegin;
  PetscCall(MatGetBlockSize(A, &bs));
  BlockBuild how;
  how.device = d->device, how.block_size = bs, how.diagonal = diagonal, how.transposed = transposed;
  how.values = transposed ? ValuesUpdate::kRebuild : d->values_update, how.counts = transposed ? nullptr : &d->updates;
  PetscCall(copy.update(block, *d->info, *d->proto, how));
  PetscFunctionReturn(PETSC_SUCCESS);
}

// Ghost values of x in the order of the off-diagonal block's compact columns (garray, ascending):
// the same layout as MPIAIJ's own scatter, built from public calls. Collective; the decision to
// rebuild depends on A's nonzero state, which is the same on every rank.
PetscErrorCode UpdateScatter(Mat A, Mat Ao, const PetscInt *garray)
{
  MpiData         *d = Mpi(A);
  PetscObjectState nz;
  PetscInt         nghost;
  IS               from;
  Vec              xtemplate;

  PetscFunctionBegin;
  PetscCall(MatGetNonzeroState(A, &nz));
  if (d->scatter && nz == d->scatter_nz && d->pattern == d->scatter_pattern) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(VecScatterDestroy(&d->scatter));
  PetscCall(VecDestroy(&d->ghosts));
  PetscCall(MatGetLocalSize(Ao, NULL, &nghost));
  PetscCall(VecCreate(PETSC_COMM_SELF, &d->ghosts));
  PetscCall(VecSetSizes(d->ghosts, nghost, nghost));
#if PetscDefined(HAVE_CUDA)
  PetscCall(VecSetType(d->ghosts, d->device ? VECSEQCUDA : VECSEQ));
#else
  PetscCall(VecSetType(d->ghosts, VECSEQ));
#endif
  PetscCall(ISCreateGeneral(PETSC_COMM_SELF, nghost, garray, PETSC_COPY_VALUES, &from));
  PetscCall(MatCreateVecs(A, &xtemplate, NULL));
  PetscCall(VecScatterCreate(xtemplate, from, d->ghosts, NULL, &d->scatter));
  PetscCall(VecDestroy(&xtemplate));
  PetscCall(ISDestroy(&from));
  d->scatter_nz = nz, d->scatter_pattern = d->pattern;
  PetscFunctionReturn(PETSC_SUCCESS);
}

// -mat_gpumats_exchange auto: ours for GPU types whose vectors live on the GPU while MPI is not
// CUDA-aware; PETSc's scatter otherwise (host vectors, or device buffers straight to a CUDA-aware MPI).
bool UseStaged(const MpiData &d)
{
  if (d.exchange != kExchangeAuto) return d.exchange == kExchangeStaged || d.exchange == kExchangeIpc;
#if PetscDefined(HAVE_CUDA)
  return d.device && !use_gpu_aware_mpi;
#else
  return false;
#endif
}

// Collective, like UpdateScatter.
PetscErrorCode UpdateExchange(Mat A, Mat Ao, const PetscInt *garray)
{
  MpiData         *d = Mpi(A);
  PetscObjectState nz;
  PetscInt         nghost;

  PetscFunctionBegin;
  d->staged = UseStaged(*d);
  if (!d->staged) {
    d->halo.clear();
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(MatGetNonzeroState(A, &nz));
  // (set up again for a new pattern, or for the other of our two exchanges chosen since)
  const bool want_ipc = d->exchange == kExchangeIpc;
  if (d->halo.ready() && nz == d->halo_nz && d->pattern == d->halo_pattern && want_ipc == d->halo_want_ipc) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatGetLocalSize(Ao, NULL, &nghost));
  PetscCall(d->halo.setup(A, garray, nghost, d->device, want_ipc));
  d->halo_nz = nz, d->halo_pattern = d->pattern, d->halo_want_ipc = want_ipc;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode Build(Mat A, bool in_assembly)
{
  MpiData        *d = Mpi(A);
  Mat             Ad, Ao;
  const PetscInt *garray;

  PetscFunctionBegin;
  d->where.format_stale();
  PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, &Ao, &garray));
  PetscCall(UpdateScatter(A, Ao, garray));
  PetscCall(UpdateExchange(A, Ao, garray));
  PetscCall(UpdateBlock(A, Ad, d->diag, true));
  PetscCall(UpdateBlock(A, Ao, d->offd, false));
  // transposed copies of blocks that changed would only be rebuilt at the next product with A^T
  PetscCall(d->diag_t.release_if_stale(Ad));
  PetscCall(d->offd_t.release_if_stale(Ao));
  PetscCall(d->where.format_built(A, in_assembly));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode EnsureCurrent(Mat A)
{
  return Mpi(A)->where.make_format_current(A, [](Mat M) { return Build(M, false); });
}

// out = alpha A x + (in ? in : 0): the diagonal block while the ghosts travel, then the
// off-diagonal block (the order is described at the top of this file)
PetscErrorCode Apply(Mat A, Vec x, Vec in, Vec out, Scalar alpha = 1)
{
  MpiData      *d      = Mpi(A);
  void         *stream = nullptr;
  VecArray      xa, ia, oa, ga;
  const Scalar *ghosts = nullptr;

  PetscFunctionBegin;
  PetscCall(EnsureCurrent(A));
  const bool overlap = d->overlap, staged = d->staged, device = d->device;
  if (device) PetscCall(CurrentStream(&stream));
  if (!staged) {
    PetscCall(PetscLogEventBegin(halo_begin_event, A, x, 0, 0));
    PetscCall(VecScatterBegin(d->scatter, x, d->ghosts, INSERT_VALUES, SCATTER_FORWARD));
    PetscCall(PetscLogEventEnd(halo_begin_event, A, x, 0, 0));
    if (!overlap) {
      PetscCall(PetscLogEventBegin(halo_end_event, A, x, 0, 0));
      PetscCall(VecScatterEnd(d->scatter, x, d->ghosts, INSERT_VALUES, SCATTER_FORWARD));
      PetscCall(PetscLogEventEnd(halo_end_event, A, x, 0, 0));
    }
  }
  PetscCall(xa.get(x, VecArray::kRead, device, &d->stage, 0, stream));
  if (in && in != out) PetscCall(ia.get(in, VecArray::kRead, device, &d->stage, 1, stream));
  PetscCall(oa.get(out, in == out ? VecArray::kReadWrite : VecArray::kWrite, device, &d->stage, 2, stream));
  // ours: its packing waits for what produced x on PETSc's stream, not for the diagonal SpMV
  if (staged) PetscCall(d->halo.order_after(stream));
  // (host types: messages posted before the host's own product, which cannot run beside it)
  const bool begin_first = staged && (!overlap || !device), begin_after = staged && overlap && device;
  if (begin_first) {
    PetscCall(PetscLogEventBegin(halo_begin_event, A, x, 0, 0));
    PetscCall(d->halo.begin(xa.ptr()));
    PetscCall(PetscLogEventEnd(halo_begin_event, A, x, 0, 0));
    if (!overlap) {
      PetscCall(PetscLogEventBegin(halo_end_event, A, x, 0, 0));
      PetscCall(d->halo.end(stream));
      PetscCall(PetscLogEventEnd(halo_end_event, A, x, 0, 0));
    }
  }
  PetscCall(PetscLogEventBegin(diag_event, A, x, out, 0));
  // (overlapped: untimed, as the end of PETSc's GPU timer would wait for it before the exchange)
  PetscCall(ApplyOperator(*d->info, *d->diag.op, device, xa.ptr(), alpha, in ? 1 : 0, in == out ? oa.ptr() : (in ? ia.ptr() : nullptr), oa.ptr(), stream, false, !overlap));
  PetscCall(PetscLogEventEnd(diag_event, A, x, out, 0));
  if (begin_after) {
    PetscCall(PetscLogEventBegin(halo_begin_event, A, x, 0, 0));
    PetscCall(d->halo.begin(xa.ptr()));
    PetscCall(PetscLogEventEnd(halo_begin_event, A, x, 0, 0));
  }
  if (overlap) {
    PetscCall(PetscLogEventBegin(halo_end_event, A, x, 0, 0));
    if (staged) PetscCall(d->halo.end(stream));
    else PetscCall(VecScatterEnd(d->scatter, x, d->ghosts, INSERT_VALUES, SCATTER_FORWARD));
    PetscCall(PetscLogEventEnd(halo_end_event, A, x, 0, 0));
  }
  PetscCall(ia.restore());
  PetscCall(xa.restore());
  if (d->offd.op->footprint().nnz) {
    PetscCall(PetscLogEventBegin(offd_event, A, out, 0, 0));
    if (staged) ghosts = d->halo.ghosts();
    else { // slot 0 is free again: the ghost vector is staged there when it lives on the host
      PetscCall(ga.get(d->ghosts, VecArray::kRead, device, &d->stage, 0, stream));
      ghosts = ga.ptr();
    }
    PetscCall(ApplyOperator(*d->info, *d->offd.op, device, ghosts, alpha, 1, oa.ptr(), oa.ptr(), stream));
    PetscCall(ga.restore());
    PetscCall(PetscLogEventEnd(offd_event, A, out, 0, 0));
  }
  PetscCall(oa.restore());
  PetscFunctionReturn(PETSC_SUCCESS);
}

// out = A^T x + (in ? in : 0): each rank multiplies its rows' transposes, A_d^T x into out and
// A_o^T x into the ghost vector (the contributions to other ranks' entries), which the ghost
// scatter then adds into their owners' out in reverse. Each block's product with its transpose
// is the transposed copy's on the explicit path and the block copy's implicit one otherwise.
// The transposed copies brought up to date where A's transpose products take the explicit path
// (*use_copy), freed where they take the implicit one, which holds none
PetscErrorCode UpdateTransposed(Mat A, bool *use_copy)
{
  MpiData        *d = Mpi(A);
  Mat             Ad, Ao;
  const PetscInt *garray;

  PetscFunctionBegin;
  PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, &Ao, &garray));
  *use_copy = UseExplicitTranspose(d->transpose);
  if (*use_copy) {
    PetscCall(UpdateBlock(A, Ad, d->diag_t, true, true));
    PetscCall(UpdateBlock(A, Ao, d->offd_t, false, true));
  } else {
    d->diag_t = BlockCopy{};
    d->offd_t = BlockCopy{};
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode ApplyTranspose(Mat A, Vec x, Vec in, Vec out)
{
  MpiData *d      = Mpi(A);
  void    *stream = nullptr;
  VecArray xa, ia, oa, ga;
  bool     use_copy;

  PetscFunctionBegin;
#if PetscDefined(HAVE_CUDA)
  TransposePath path;
  PetscCall(TransposePathOf(A, x, in, out, &path));
  if (path == TransposePath::kCusparse) { // mpiaijcusparse's product on the stand-in, which has its own scatter
    Mat S;
    d->diag_t = BlockCopy{}; // transposed copies in the format from before the mode changed
    d->offd_t = BlockCopy{};
    PetscCall(MpiStandInOf(A, &S));
    PetscCall(CusparseTranspose(A, S, x, in, out));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
#endif
  PetscCall(EnsureCurrent(A)); // the scatter, and the block copies the implicit path multiplies
  PetscCall(UpdateTransposed(A, &use_copy));
  FormatOperator &opd = use_copy ? *d->diag_t.op : *d->diag.op, &opo = use_copy ? *d->offd_t.op : *d->offd.op;
  if (d->device) PetscCall(CurrentStream(&stream));
  PetscCall(xa.get(x, VecArray::kRead, d->device, &d->stage, 0, stream));
  if (opo.total_footprint().nnz) {
    PetscCall(ga.get(d->ghosts, VecArray::kWrite, d->device, &d->stage, 1, stream));
    PetscCall(ApplyOperator(*d->info, opo, d->device, xa.ptr(), 1, 0, nullptr, ga.ptr(), stream, !use_copy));
    PetscCall(ga.restore());
  } else PetscCall(VecSet(d->ghosts, 0));
  if (in && in != out) PetscCall(ia.get(in, VecArray::kRead, d->device, &d->stage, 1, stream));
  PetscCall(oa.get(out, in == out ? VecArray::kReadWrite : VecArray::kWrite, d->device, &d->stage, 2, stream));
  PetscCall(ApplyOperator(*d->info, opd, d->device, xa.ptr(), 1, in ? 1 : 0, in == out ? oa.ptr() : (in ? ia.ptr() : nullptr), oa.ptr(), stream, !use_copy));
  PetscCall(oa.restore());
  PetscCall(ia.restore());
  PetscCall(xa.restore());
  PetscCall(VecScatterBegin(d->scatter, d->ghosts, out, ADD_VALUES, SCATTER_REVERSE));
  PetscCall(VecScatterEnd(d->scatter, d->ghosts, out, ADD_VALUES, SCATTER_REVERSE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode Mult(Mat A, Vec x, Vec y) { return Apply(A, x, nullptr, y); }
PetscErrorCode MultAdd(Mat A, Vec x, Vec y, Vec z) { return Apply(A, x, y, z); }
PetscErrorCode MultTranspose(Mat A, Vec x, Vec y) { return ApplyTranspose(A, x, nullptr, y); }
PetscErrorCode MultTransposeAdd(Mat A, Vec x, Vec y, Vec z) { return ApplyTranspose(A, x, y, z); }

// r = b - A x in one pass over each block (as the Seq types do, seq.cxx)
PetscErrorCode Residual(Mat A, Vec b, Vec x, Vec r)
{
  PetscFunctionBegin;
  PetscCall(CheckResidualArgs(A, b, x, r));
  PetscCall(Apply(A, x, b, r, -1));
  PetscFunctionReturn(PETSC_SUCCESS);
}

// Collective. Moves A's pattern count where A has new blocks on some rank since the last call
// (known: on every rank, as after a COO preallocation, which needs no message).
PetscErrorCode NoteNewBlocks(Mat A, bool known)
{
  MpiData      *d = Mpi(A);
  Mat           Ad, Ao;
  PetscObjectId ids[2];
  int           changed;

  PetscFunctionBegin;
  PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, &Ao, nullptr));
  PetscCall(PetscObjectGetId((PetscObject)Ad, &ids[0]));
  PetscCall(PetscObjectGetId((PetscObject)Ao, &ids[1]));
  changed = known || ids[0] != d->seen_blocks[0] || ids[1] != d->seen_blocks[1];
  if (!known) PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &changed, 1, MPI_INT, MPI_LOR, PetscObjectComm((PetscObject)A)));
  if (changed) {
    d->pattern++;
#if PetscDefined(HAVE_CUDA)
    d->standin.release(); // (its blocks share the old blocks' arrays)
#endif
  }
  d->seen_blocks[0] = ids[0], d->seen_blocks[1] = ids[1];
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode AssemblyEnd(Mat A, MatAssemblyType mode)
{
  Mat             Ad, Ao;
  const PetscInt *garray;

  PetscFunctionBegin;
  // inode detection in the diagonal block for the host types only (see seq.cxx): block Jacobi and
  // ASM factor it with AIJ's code there, with cuSPARSE for the GPU types
  PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, &Ao, &garray));
  if (Mpi(A)->device) PetscCall(MatSetOption(Ad, MAT_USE_INODES, PETSC_FALSE));
  PetscCall(Mpi(A)->call<PetscErrorCode (*)(Mat, MatAssemblyType)>(kAssemblyEnd, A, mode));
  PetscCall(KeepBinding(A)); // (bound: AIJ's operations, whatever the assembly put back)
  // MPIAIJ's assembly may have made a new off-diagonal block (new nonzeros disassemble it), its
  // preallocation new blocks of both kinds
  PetscCall(NoteNewBlocks(A, false));
  PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, &Ao, &garray));
  if (mode == MAT_FINAL_ASSEMBLY) {
    PetscBool now = Mpi(A)->build_at == BuildAt::kAssembly && !Bound(A) ? PETSC_TRUE : PETSC_FALSE; // (bound: none until unbound)
    if (now) {
      const Mat blocks[2] = {Ad, Ao};
      PetscCall(BuildAtThisAssembly(A, blocks, 2, &now));
    }
    if (now) PetscCall(Build(A, true));
    else { // at the first use (-mat_gpumats_build_at use, or values all zero); stale transposed copies go now
      Mpi(A)->where.format_stale();
      PetscCall(Mpi(A)->diag_t.release_if_stale(Ad));
      PetscCall(Mpi(A)->offd_t.release_if_stale(Ao));
    }
    PetscCall(AdoptDM(A));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

// After bringing the copies up to date: a use of the matrix (see seq.cxx). Collective like the
// build, as PETSc's callers (PCJacobi, Chebyshev, GAMG) are. From the diagonal block's GPU copy
// into a VECCUDA where rows and columns are owned alike (the block's column i is then the global
// column of its row i); otherwise MPIAIJ's, which reads the host blocks (and says what it needs).
PetscErrorCode GetDiagonal(Mat A, Vec v)
{
  MpiData  *d    = Mpi(A);
  PetscBool done = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCall(EnsureCurrent(A));
  const bool square = A->rmap->rstart == A->cmap->rstart && A->rmap->rend == A->cmap->rend;
  if (d->device && square && d->diag.op) PetscCall(DiagonalOnDevice(*d->diag.op, v, &done));
  if (!done) PetscCall(d->call<PetscErrorCode (*)(Mat, Vec)>(kGetDiagonal, A, v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

#if PetscDefined(HAVE_CUDA)
// Block Jacobi (MatGetDiagonalBlock) and ASM (MatCreateSubMatrices) hand their sub-solvers this
// rank's part of the matrix. MPIAIJ's are host SeqAIJ matrices, which would factor and solve on
// the host and move the sub-vectors down and up at every application; mpiaijcusparse's are
// aijcusparse, because its blocks are. Ours keep SeqAIJ blocks (the format copies are built from
// them, and MPIAIJ's code reads them as such), so the sub-solvers get aijcusparse matrices made
// for them: cuSPARSE's ILU/ICC/LU, VECCUDA sub-vectors, and iterates equal to mpiaijcusparse's.
// The sub-solver's own matrix is not ours on purpose: a preonly sub-solve never multiplies by it,
// and a format copy would cost its build and its memory for nothing.
PetscErrorCode GetDiagonalBlock(Mat A, Mat *a)
{
  Mat             Ad, Ao;
  const PetscInt *garray;

  PetscFunctionBegin;
  PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, &Ao, &garray));
  if (Mpi(A)->device && !Bound(A)) PetscCall(Mpi(A)->diag_shadow.of(Ad, a)); // (bound: the host block, as MPIAIJ's)
  else *a = Ad;
  PetscFunctionReturn(PETSC_SUCCESS);
}

// MPIAIJ makes its submatrices in the type of its diagonal block (mpiov.c), so while it runs that
// block answers to aijcusparse's name: PETSc creates aijcusparse submatrices, exactly as for
// mpiaijcusparse, and fills them from the SeqAIJ data it reads directly. Only the name moves; the
// block's data and operations stay SeqAIJ's, and the name is put back whatever happens. A reuse
// refills the submatrices made the first time, already of that type.
PetscErrorCode CreateSubMatrices(Mat A, PetscInt n, const IS irow[], const IS icol[], MatReuse scall, Mat *submat[])
{
  using Fn = PetscErrorCode (*)(Mat, PetscInt, const IS[], const IS[], MatReuse, Mat *[]);
  Mat             Ad, Ao;
  const PetscInt *garray;

  PetscFunctionBegin;
  PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, &Ao, &garray));
  if (!Mpi(A)->device || Bound(A) || scall != MAT_INITIAL_MATRIX) {
    PetscCall(Mpi(A)->call<Fn>(kCreateSubMatrices, A, n, irow, icol, scall, submat));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscObjectChangeTypeName((PetscObject)Ad, MATSEQAIJCUSPARSE));
  PetscErrorCode err = Mpi(A)->call<Fn>(kCreateSubMatrices, A, n, irow, icol, scall, submat);
  PetscCall(PetscObjectChangeTypeName((PetscObject)Ad, MATSEQAIJ));
  PetscCall(err);
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif

// MatCreateSubMatrix (fieldsplit's blocks, GAMG's levels moved to fewer ranks): MPIAIJ makes the
// result of A's type, except where the rows and the columns both keep A's distribution. There it
// joins two SeqAIJ submatrices with MatCreateMPIAIJWithSeqAIJ, which names the result after its
// diagonal block: aijcusparse's blocks make an mpiaijcusparse, ours SeqAIJ ones a plain MPIAIJ,
// which for a GPU type would multiply on the host inside every solve. Such a result becomes A's
// type, in place, so that what MPIAIJ composed on it for a reuse stays; a reuse refills its SeqAIJ
// blocks and assembles it, which brings its copies up to date.
PetscErrorCode CreateSubMatrix(Mat A, IS isrow, IS iscol, MatReuse scall, Mat *B)
{
  using Fn = PetscErrorCode (*)(Mat, IS, IS, MatReuse, Mat *);
  PetscBool plain = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCall(Mpi(A)->call<Fn>(kCreateSubMatrix, A, isrow, iscol, scall, B));
  if (scall == MAT_INITIAL_MATRIX) PetscCall(PetscObjectTypeCompare((PetscObject)*B, MATMPIAIJ, &plain));
  if (plain) PetscCall(MatConvert(*B, ((PetscObject)A)->type_name, MAT_INPLACE_MATRIX, B));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode Destroy(Mat A)
{
  auto destroy = reinterpret_cast<PetscErrorCode (*)(Mat)>(Mpi(A)->saved[kDestroy]);

  PetscFunctionBegin;
  PetscCall(MpiKind::ToAIJ(A, true));
  PetscCall(destroy(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode Duplicate(Mat A, MatDuplicateOption op, Mat *B)
{
  PetscFunctionBegin;
  PetscCall(Mpi(A)->call<PetscErrorCode (*)(Mat, MatDuplicateOption, Mat *)>(kDuplicate, A, op, B));
  Mpi(*B)->proto     = Mpi(A)->proto->clone_parameters();
  Mpi(*B)->transpose = Mpi(A)->transpose;
  Mpi(*B)->values_update = Mpi(A)->values_update;
  Mpi(*B)->build_at      = Mpi(A)->build_at;
  Mpi(*B)->overlap   = Mpi(A)->overlap;
  if (Mpi(*B)->exchange != Mpi(A)->exchange) { // B was set up for the options' exchange, not A's
    Mpi(*B)->exchange = Mpi(A)->exchange;
    Mpi(*B)->where.format_stale();
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

// Global totals of one block kind over the ranks.
PetscErrorCode ViewBlocks(Mat A, PetscViewer viewer, const char *what, const BlockCopy &b)
{
  MpiData      *d  = Mpi(A);
  Footprint     fp = b.op->total_footprint();
  PetscInt64    local[6] = {fp.rows, fp.cols, fp.nnz, fp.stored, fp.index_bytes, fp.value_bytes}, global[6];

  PetscFunctionBegin;
  PetscCallMPI(MPI_Allreduce(local, global, 6, MPIU_INT64, MPI_SUM, PetscObjectComm((PetscObject)A)));
  PetscCall(PetscViewerASCIIPrintf(viewer, "%s%s %s blocks: %s\n", d->info->title, d->device ? " (CUDA)" : " (host)", what, b.op->parameters().c_str()));
  PetscCall(PetscViewerASCIIPrintf(viewer,
                                   "  all ranks: %" PetscInt64_FMT " rows, %" PetscInt64_FMT " nonzeros, %" PetscInt64_FMT
                                   " stored entries (fill ratio %.3f), %.4g MB (CSR: %.4g MB)\n",
                                   global[0], global[2], global[3], global[2] ? (double)global[3] / (double)global[2] : 1.0, (global[4] + global[5]) / 1e6,
                                   csr_bytes(global[0], global[2], sizeof(PetscScalar)) / 1e6));
  PetscFunctionReturn(PETSC_SUCCESS);
}

// How the ghost values travel, and per rank: its GPU, its node-local rank, its messages.
PetscErrorCode ViewExchange(Mat A, PetscViewer viewer)
{
  MpiData    *d    = Mpi(A);
  MPI_Comm    comm = PetscObjectComm((PetscObject)A), shm;
  PetscMPIInt rank, local, nlocal;
  std::string kind, where;

  PetscFunctionBegin;
  if (d->staged && d->halo.ipc()) kind = "GPU to GPU by petsc-gpumats through CUDA IPC on a high-priority stream";
  else if (d->staged) kind = d->device ? "staged by petsc-gpumats through pinned host buffers on a high-priority stream" : "staged by petsc-gpumats";
  else kind = "PETSc's VecScatter";
#if PetscDefined(HAVE_CUDA)
  if (d->device) kind += use_gpu_aware_mpi ? " (MPI CUDA-aware)" : " (MPI not CUDA-aware)";
#endif
  kind += d->overlap ? ", overlapped with the diagonal block" : ", completed before the diagonal block (-mat_gpumats_overlap 0)";
  PetscCall(PetscViewerASCIIPrintf(viewer, "ghost exchange: %s\n", kind.c_str()));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shm));
  PetscCallMPI(MPI_Comm_rank(shm, &local));
  PetscCallMPI(MPI_Comm_size(shm, &nlocal));
  PetscCallMPI(MPI_Comm_free(&shm));
  if (d->device) PetscCall(DeviceDescription(&where));
  else where = "host";
  std::string line = "  rank " + std::to_string(rank) + " (node-local rank " + std::to_string(local) + " of " + std::to_string(nlocal) + "): " + where;
  if (d->staged) line += "; " + d->halo.describe();
  PetscCall(PetscViewerASCIIPushSynchronized(viewer));
  PetscCall(PetscViewerASCIISynchronizedPrintf(viewer, "%s\n", line.c_str()));
  PetscCall(PetscViewerFlush(viewer));
  PetscCall(PetscViewerASCIIPopSynchronized(viewer));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode View(Mat A, PetscViewer viewer)
{
  MpiData          *d = Mpi(A);
  PetscBool         ascii;
  PetscViewerFormat format;

  PetscFunctionBegin;
  PetscCall(d->call<PetscErrorCode (*)(Mat, PetscViewer)>(kView, A, viewer));
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &ascii));
  if (!ascii) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscViewerGetFormat(viewer, &format));
  if (format != PETSC_VIEWER_ASCII_INFO && format != PETSC_VIEWER_ASCII_INFO_DETAIL) PetscFunctionReturn(PETSC_SUCCESS);
  PetscBool bound;
  PetscCall(ViewBound(A, viewer, &bound));
  if (bound) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(EnsureCurrent(A));
  PetscCall(ViewBlocks(A, viewer, "diagonal", d->diag));
  PetscCall(ViewBlocks(A, viewer, "off-diagonal", d->offd));
  { // the transposed copies held on all ranks
    Mat             Ad, Ao;
    const PetscInt *garray;
    PetscInt64      local[3] = {0, 0, 0}, global[3];
    for (const BlockCopy *t : {&d->diag_t, &d->offd_t})
      if (t->held()) {
        const Footprint fp = t->op->total_footprint();
        local[0] += 1, local[1] += fp.stored, local[2] += fp.total_bytes();
      }
    PetscCallMPI(MPI_Allreduce(local, global, 3, MPIU_INT64, MPI_SUM, PetscObjectComm((PetscObject)A)));
    PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, &Ao, &garray));
    TransposePath path;
    PetscCall(TransposePathOf(A, nullptr, nullptr, nullptr, &path));
    PetscCall(ViewTranspose(viewer, d->transpose, path, global[0], global[1], double(global[2])));
  }
  { // the updates of the block copies on all ranks
    PetscInt64 local[3] = {d->updates.conversions, d->updates.values_only, PetscInt64(d->diag.op->slot_bytes() + d->offd.op->slot_bytes())}, global[3];
    PetscCallMPI(MPI_Allreduce(local, global, 3, MPIU_INT64, MPI_SUM, PetscObjectComm((PetscObject)A)));
    PetscCall(ViewUpdates(viewer, d->values_update, UpdateCounts{global[0], global[1]}, double(global[2])));
  }
  PetscCall(ViewExchange(A, viewer));
  PetscFunctionReturn(PETSC_SUCCESS);
}

// -mat_gpumats_overlap and -mat_gpumats_exchange, read when the type is installed (MatConvert
// reads no options) and again by MatSetFromOptions, which lists them in -help.
const char overlap_help[]  = "Run the diagonal block's product while the ghost values of x travel (MPI types)";
const char exchange_help[] = "Ghost exchange of MPI types: auto (staged for GPU types when MPI is not CUDA-aware, else petsc), petsc (VecScatter), "
                             "staged (ours, through pinned host buffers), ipc (ours, GPU to GPU within a node through CUDA IPC; staged where "
                             "a neighbour is on another node)";

PetscErrorCode ReadExchangeOptions(Mat A)
{
  MpiData  *d = Mpi(A);
  PetscBool overlap = d->overlap ? PETSC_TRUE : PETSC_FALSE, set;
  PetscInt  e       = d->exchange;

  PetscFunctionBegin;
  PetscCall(PetscOptionsGetBool(((PetscObject)A)->options, ((PetscObject)A)->prefix, "-mat_gpumats_overlap", &overlap, NULL));
  PetscCall(PetscOptionsGetEList(((PetscObject)A)->options, ((PetscObject)A)->prefix, "-mat_gpumats_exchange", exchange_names, 4, &e, &set));
  d->overlap  = overlap;
  d->exchange = e;
  PetscFunctionReturn(PETSC_SUCCESS);
}

// The -help block of the two (a block of our own, as ReadFormatOptions has, so that -help shows
// them under our heading)
PetscErrorCode ExchangeOptionsBlock(Mat A, PetscBool *overlap, PetscInt *e)
{
  PetscFunctionBegin;
  PetscOptionsBegin(PetscObjectComm((PetscObject)A), ((PetscObject)A)->prefix, "petsc-gpumats options of the MPI types", "Mat");
  PetscCall(PetscOptionsBool("-mat_gpumats_overlap", overlap_help, "MatMult", *overlap, overlap, NULL));
  PetscCall(PetscOptionsEList("-mat_gpumats_exchange", exchange_help, "MatMult", exchange_names, 4, exchange_names[*e], e, NULL));
  PetscOptionsEnd();
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SetFromOptions(Mat A, OptionItems PetscOptionsObject)
{
  MpiData  *d       = Mpi(A);
  PetscBool changed = PETSC_FALSE, overlap = d->overlap ? PETSC_TRUE : PETSC_FALSE;
  PetscInt  e       = d->exchange;

  PetscFunctionBegin;
  PetscCall(SetFromOptionsCommon(A, PetscOptionsObject, *d->proto, &changed));
  PetscCall(ExchangeOptionsBlock(A, &overlap, &e));
  d->overlap = overlap;
  if (e != d->exchange) { // the exchange is set up again at the next use
    d->exchange = e;
    d->where.format_stale();
  }
  if (changed) { // new parameters: every block copy is rebuilt before the next use
    for (BlockCopy *c : d->copies()) *c = BlockCopy{};
    d->invalidate();
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace

#if PetscDefined(HAVE_CUDA)
PetscErrorCode MpiStandInOf(Mat A, Mat *S) { return Mpi(A)->standin.of(A, S); }
#endif

// the block copies and the ghost exchange are made anew at the next use, whatever A's nonzero
// state says (NoteNewBlocks)
PetscErrorCode MpiData::blocks_replaced(Mat A)
{
  PetscFunctionBegin;
  invalidate();
  PetscCall(NoteNewBlocks(A, true));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MpiPrepareTranspose(Mat A)
{
  bool use_copy;

  PetscFunctionBegin;
  if (Bound(A)) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(EnsureCurrent(A));
  PetscCall(UpdateTransposed(A, &use_copy));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MpiKind::FromAIJ(Mat A, const FormatInfo &f, bool device)
{
#if PetscDefined(HAVE_CUDA)
  const OpFn sub_matrices = device ? (OpFn)CreateSubMatrices : nullptr, diagonal_block = device ? (OpFn)GetDiagonalBlock : nullptr;
#else
  const OpFn sub_matrices = nullptr, diagonal_block = nullptr;
#endif
  // products: on the GPU through mpiaijcusparse's back-end (mpi_products.cxx), MPIAIJ's for the host types
  const OpFn products = device ? MpiProductSetFromOptions() : nullptr;
  const OpFn ours[kNumOps] = {(OpFn)Mult,           (OpFn)MultAdd, (OpFn)MultTranspose, (OpFn)MultTransposeAdd,
                              (OpFn)AssemblyEnd,    (OpFn)Destroy, (OpFn)Duplicate,     (OpFn)View,
                              (OpFn)SetFromOptions, products,       (OpFn)GetDiagonal,  (OpFn)MpiAXPY,
                              nullptr,              nullptr,        (OpFn)Residual,
                              (OpFn)BindToCPU,      sub_matrices,   diagonal_block,
                              nullptr,              nullptr,        (OpFn)CreateSubMatrix};

  PetscFunctionBegin;
  PetscCall(CheckSupported(A, f, device));
  auto *d   = new MpiData;
  d->info   = &f;
  d->device = device;
  d->to_aij = ToAIJ;
  d->values_update = kDefaultValuesUpdate;
  d->proto  = f.make();
  PetscCall(InstallType(A, d, prefix, ours, ConvertInto<MpiKind>, ConvertBack<MpiKind>));
  PetscCall(InstallCOO(A, true)); // plain blocks after COO preallocation; device values (coo.cxx)
  PetscCall(ReadExchangeOptions(A));
  bool structure_only = false;
  if (A->assembled) PetscCall(StructureOnly(A, &structure_only));
  if (A->assembled && !structure_only) {
    // (inside MatConvert, which increases A's state once when this returns: tolerated once, as
    // after MatAssemblyEnd, so that the first product does not build the copy again)
    PetscErrorCode err = Build(A, true);
    if (err) PetscCall(ToAIJ(A)); // the conversion is all or nothing: A stays the AIJ it was
    PetscCall(err);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MpiKind::RegisterEvents()
{
  PetscFunctionBegin;
  PetscCall(RegisterRankEvent("GpuMatsHaloBegin", &halo_begin_event));
  PetscCall(RegisterRankEvent("GpuMatsHaloEnd", &halo_end_event));
  PetscCall(RegisterRankEvent("GpuMatsDiagMult", &diag_event));
  PetscCall(RegisterRankEvent("GpuMatsOffdMult", &offd_event));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MpiKind::ToAIJ(Mat A, bool destroying)
{
  MpiData *d = Mpi(A);

  PetscFunctionBegin;
  PetscCall(VecScatterDestroy(&d->scatter));
  PetscCall(VecDestroy(&d->ghosts));
  PetscCall(UninstallCOO(A, true, destroying));
  PetscCall(UninstallType(A, prefix, base, destroying));
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace gpumats
