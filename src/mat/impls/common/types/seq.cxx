// The sequential types seq<format>[cuda]: a SeqAIJ whose CSR stays authoritative, plus one format
// copy (host or GPU) brought up to date at final assembly and whenever the matrix changed since
// (state key): its values only while the nonzero pattern is the one it was built from
// (-mat_gpumats_values_update auto), else converted in full.
// MatMult, MatMultAdd and their transposes run in the format; everything else is SeqAIJ's, which sees an AIJ subclass
// (the concrete name starts with "seqaij") and builds its results in our type where it builds
// them in A's type (MatTranspose, MatDuplicate).
#include "seq_mpi.hpp"

namespace gpumats {

namespace {

struct SeqData final : TypeData {
  std::unique_ptr<FormatOperator> op;
  // The copy of A^T for MatMultTranspose(Add) on the explicit path (-mat_gpumats_transpose
  // explicit), in the same format and parameters: built at the first product with A^T after a
  // change (most matrices never get one), kept while the matrix keeps the (id, state) it was built
  // from, freed when the matrix changes or a product takes the implicit path. The host AIJ is not
  // involved.
  BlockCopy transposed;

  void invalidate() override
  {
    where.format_stale();
    transposed = BlockCopy{}; // also after new parameters: rebuilt from op's
  }
  void release_copies() override
  {
    invalidate();
    op = op->clone_parameters(); // (op also holds the parameters the next copy is made with)
  }
};

SeqData *Seq(Mat A) { return static_cast<SeqData *>(Data(A)); }

PetscErrorCode Build(Mat A, bool in_assembly)
{
  SeqData *d = Seq(A);
  PetscInt bs;

  PetscFunctionBegin;
  d->where.format_stale();
  PetscCall(MatGetBlockSize(A, &bs));
  // A changed (or was assembled, after which its state moves on): a transposed copy is stale and
  // would only be rebuilt at the next product with A^T, so its memory goes now
  d->transposed = BlockCopy{};
#if PetscDefined(HAVE_CUDA)
  if (d->where.newest_in_shadow()) {
    // A's newest values are on the GPU only (MatSetValuesCOO with device values, coo.cxx; a
    // product's result, cusparse_bridge.cxx): the copy's values are refilled from the shadow's device
    // values where the copy has this pattern; otherwise it is converted in full below
    const PetscScalar *dv;
    PetscBool          done, have;
    DeviceCsrIn        csr;
    PetscCall(d->where.shadow_csr_on_device(A, &csr, &have)); // the structure too, for the first update's slot build
    PetscCall(MatSeqAIJCUSPARSEGetArrayRead(d->where.shadow(), &dv));
    BlockBuild refill;
    refill.device = true, refill.block_size = bs, refill.diagonal = true, refill.counts = &d->updates, refill.on_device = have ? &csr : nullptr;
    PetscCall(UpdateValuesFromDevice(A, *d->info, *d->op, dv, refill, &done));
    PetscCall(MatSeqAIJCUSPARSERestoreArrayRead(d->where.shadow(), &dv));
    if (done) {
      PetscCall(d->where.format_built(A, in_assembly));
      PetscFunctionReturn(PETSC_SUCCESS);
    }
  }
#endif
  DeviceCsrIn on_device;
  PetscBool   have = PETSC_FALSE;
#if PetscDefined(HAVE_CUDA)
  // a matrix that is an operand or a result of products on the GPU holds its CSR there already,
  // in its shadow: the copy is built from that rather than from an upload of its own
  if (d->device) PetscCall(d->where.shadow_csr_on_device(A, &on_device, &have));
#endif
  // (with A's newest values on the GPU only, converted from the shadow's CSR there: the host values
  // come down only if the build needs them, BuildFromSeqAIJ)
  BlockBuild how;
  how.device = d->device, how.block_size = bs, how.diagonal = true, how.values = d->values_update, how.counts = &d->updates;
  how.on_device = have ? &on_device : nullptr, how.host_stale = d->where.host_stale();
  PetscCall(BuildFromSeqAIJ(A, *d->info, *d->op, how));
  PetscCall(d->where.format_built(A, in_assembly));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode EnsureCurrent(Mat A)
{
  return Seq(A)->where.make_format_current(A, [](Mat M) { return Build(M, false); });
}

PetscErrorCode EnsureTransposeCurrent(Mat A)
{
  SeqData *d = Seq(A);
  PetscInt bs;

  PetscFunctionBegin;
  PetscCall(MatGetBlockSize(A, &bs));
  BlockBuild how; // (a transposed copy is converted in full, and not counted)
  how.device = d->device, how.block_size = bs, how.diagonal = true, how.transposed = true;
  PetscCall(d->transposed.update(A, *d->info, *d->op, how));
  PetscFunctionReturn(PETSC_SUCCESS);
}

// out = alpha op(A) x + (in ? in : 0), op(A) = A or A^T, with in == out allowed. A^T multiplies the
// transposed copy on the explicit path, and the copy of A itself, transposed on the fly, otherwise.
PetscErrorCode Apply(Mat A, Vec x, Vec in, Vec out, bool transpose = false, Scalar alpha = 1)
{
  SeqData      *d      = Seq(A);
  void         *stream = nullptr;
  TransposePath path   = TransposePath::kImplicit;
  VecArray      xa, ia, oa;

  PetscFunctionBegin;
  if (transpose) PetscCall(TransposePathOf(A, x, in, out, &path));
#if PetscDefined(HAVE_CUDA)
  if (transpose && path == TransposePath::kCusparse) { // (alpha is 1 for the transposes)
    Mat S;
    d->transposed = BlockCopy{}; // a transposed copy in the format from before the mode changed
    PetscCall(ShadowOf(A, &S));
    PetscCall(CusparseTranspose(A, S, x, in, out));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
#endif
  const bool use_copy = transpose && path == TransposePath::kFormatCopy;
  if (use_copy) PetscCall(EnsureTransposeCurrent(A));
  else {
    PetscCall(EnsureCurrent(A));
    // the implicit path holds no transposed copy (one may remain from before the mode changed)
    if (transpose) d->transposed = BlockCopy{};
  }
  FormatOperator &op = use_copy ? *d->transposed.op : *d->op;
  if (d->device) PetscCall(CurrentStream(&stream));
  PetscCall(xa.get(x, VecArray::kRead, d->device, &d->stage, 0, stream));
  if (in && in != out) PetscCall(ia.get(in, VecArray::kRead, d->device, &d->stage, 1, stream));
  PetscCall(oa.get(out, in == out ? VecArray::kReadWrite : VecArray::kWrite, d->device, &d->stage, 2, stream));
  PetscCall(ApplyOperator(*d->info, op, d->device, xa.ptr(), alpha, in ? 1 : 0, in == out ? oa.ptr() : (in ? ia.ptr() : nullptr), oa.ptr(), stream,
                          transpose && !use_copy));
  PetscCall(oa.restore());
  PetscCall(ia.restore());
  PetscCall(xa.restore());
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode Mult(Mat A, Vec x, Vec y) { return Apply(A, x, nullptr, y); }
PetscErrorCode MultAdd(Mat A, Vec x, Vec y, Vec z) { return Apply(A, x, y, z); }
PetscErrorCode MultTranspose(Mat A, Vec x, Vec y) { return Apply(A, x, nullptr, y, true); }
PetscErrorCode MultTransposeAdd(Mat A, Vec x, Vec y, Vec z) { return Apply(A, x, y, z, true); }

// r = b - A x (MatResidual: PCMG's and GAMG's residual on every level) in one pass over the
// format, b read in the product's epilogue, where MatMult and VecAYPX would write r and read it again
PetscErrorCode Residual(Mat A, Vec b, Vec x, Vec r)
{
  PetscFunctionBegin;
  PetscCall(CheckResidualArgs(A, b, x, r));
  PetscCall(Apply(A, x, b, r, false, -1));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode AssemblyEnd(Mat A, MatAssemblyType mode)
{
  PetscFunctionBegin;
  // AIJ's inode detection is an O(nnz) pass per assembly for its own MatMult, which ours replaces,
  // and for its factorizations: the GPU types factor in cuSPARSE and turn it off (as aijcusparse
  // does; bound, AIJ's inode product would also read values the GPU may hold newer); the host types
  // keep it, since their factorizations and SOR are AIJ's, as fast as aij's and viewed alike
  if (Seq(A)->device) PetscCall(MatSetOption(A, MAT_USE_INODES, PETSC_FALSE));
  PetscCall(Seq(A)->call<PetscErrorCode (*)(Mat, MatAssemblyType)>(kAssemblyEnd, A, mode));
  PetscCall(KeepBinding(A)); // (bound: AIJ's operations, whatever the assembly put back)
  if (mode == MAT_FINAL_ASSEMBLY) {
    // at assembly, or at the first use (-mat_gpumats_build_at); either way a transposed copy is
    // stale now and its memory goes
    PetscBool now = Seq(A)->build_at == BuildAt::kAssembly && !Bound(A) ? PETSC_TRUE : PETSC_FALSE; // (bound: none until unbound)
    if (now) PetscCall(BuildAtThisAssembly(A, &A, 1, &now));
    if (now) PetscCall(BuildInAssembly(A, Build));
    else Seq(A)->invalidate();
    PetscCall(AdoptDM(A));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

// A use of the matrix, after which its copy is current: solvers read the diagonal as they set up
// (PCJacobi, Chebyshev's estimates, GAMG), so the copy is built there rather than in the first
// product of the solve, where aijcusparse's copy is made too. A GPU copy gives the diagonal into a
// VECCUDA on the GPU, as aijcusparse does; otherwise AIJ's, from the host CSR.
PetscErrorCode GetDiagonal(Mat A, Vec v)
{
  PetscBool done = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCall(EnsureCurrent(A));
  if (Seq(A)->device) PetscCall(DiagonalOnDevice(*Seq(A)->op, v, &done));
  if (!done) PetscCall(Seq(A)->call<PetscErrorCode (*)(Mat, Vec)>(kGetDiagonal, A, v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

// In-place factorizations (MatLUFactor, MatILUFactor): SeqAIJ's put the factor's data in place of
// the matrix's but keep the matrix's operations (MatHeaderMerge), which would leave ours with none
// of their data behind them (the next MatDestroy crashed: PETSc's mat ex15, ex68, ex129). A
// factored matrix is no longer ours to multiply: it becomes the plain SeqAIJ it is underneath
// first, and SeqAIJ's code factors it. (SeqAIJ has no in-place Cholesky.)
template <OpIndex op>
PetscErrorCode InPlaceFactor(Mat A, IS row, IS col, const MatFactorInfo *info)
{
  using Fn = PetscErrorCode (*)(Mat, IS, IS, const MatFactorInfo *);
  Fn aij   = reinterpret_cast<Fn>(Seq(A)->saved[op]);

  PetscFunctionBegin;
  PetscCheck(aij, PETSC_COMM_SELF, PETSC_ERR_SUP, "%s: no in-place factorization of this kind (SeqAIJ has none)", ((PetscObject)A)->type_name);
  PetscCall(MatConvert(A, MATSEQAIJ, MAT_INPLACE_MATRIX, &A));
  PetscCall(aij(A, row, col, info));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode Destroy(Mat A)
{
  auto destroy = reinterpret_cast<PetscErrorCode (*)(Mat)>(Seq(A)->saved[kDestroy]);

  PetscFunctionBegin;
  Seq(A)->where.host_written(); // going: no download of values nobody will read
  PetscCall(SeqKind::ToAIJ(A, true)); // frees the format copy (and its GPU memory) and restores AIJ's operations
  PetscCall(destroy(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode Duplicate(Mat A, MatDuplicateOption op, Mat *B)
{
  PetscFunctionBegin;
  // SeqAIJ's duplicate creates B with our type name, so B runs our constructor; give it our parameters.
  // It copies A's host values directly: current first (values that came on the device, coo.cxx)
  PetscCall(SyncHostValues(A));
  PetscCall(Seq(A)->call<PetscErrorCode (*)(Mat, MatDuplicateOption, Mat *)>(kDuplicate, A, op, B));
  Seq(*B)->op        = Seq(A)->op->clone_parameters();
  Seq(*B)->transpose = Seq(A)->transpose;
  Seq(*B)->values_update = Seq(A)->values_update;
  Seq(*B)->build_at      = Seq(A)->build_at;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode View(Mat A, PetscViewer viewer)
{
  SeqData          *d = Seq(A);
  PetscBool         ascii;
  PetscViewerFormat format;

  PetscFunctionBegin;
  PetscCall(SyncHostValues(A)); // SeqAIJ's viewers read the host values directly (coo.cxx)
  PetscCall(d->call<PetscErrorCode (*)(Mat, PetscViewer)>(kView, A, viewer));
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &ascii));
  if (!ascii) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscViewerGetFormat(viewer, &format));
  if (format != PETSC_VIEWER_ASCII_INFO && format != PETSC_VIEWER_ASCII_INFO_DETAIL) PetscFunctionReturn(PETSC_SUCCESS);
  PetscBool bound;
  PetscCall(ViewBound(A, viewer, &bound));
  if (bound) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(EnsureCurrent(A));
  PetscCall(ViewOperator(viewer, *d->info, "format", *d->op, d->device));
  if (d->device) {
    std::string where;
    PetscCall(DeviceDescription(&where));
    PetscCall(PetscViewerASCIIPrintf(viewer, "  on %s\n", where.c_str()));
  }
  {
    const BlockCopy &t  = d->transposed;
    const Footprint  fp = t.held() ? t.op->total_footprint() : Footprint{};
    TransposePath    path;
    PetscCall(TransposePathOf(A, nullptr, nullptr, nullptr, &path));
    PetscCall(ViewTranspose(viewer, d->transpose, path, t.held() ? 1 : 0, fp.stored, double(fp.total_bytes())));
  }
  PetscCall(ViewUpdates(viewer, d->values_update, d->updates, double(d->op->slot_bytes())));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SetFromOptions(Mat A, OptionItems PetscOptionsObject)
{
  PetscBool changed = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCall(SetFromOptionsCommon(A, PetscOptionsObject, *Seq(A)->op, &changed));
  if (changed) Seq(A)->invalidate(); // rebuilt with the new parameters before the next use
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace

PetscErrorCode SeqEnsureCurrent(Mat A) { return Bound(A) ? PETSC_SUCCESS : EnsureCurrent(A); } // (bound: no copy to make)

PetscErrorCode SeqKind::FromAIJ(Mat A, const FormatInfo &f, bool device)
{
  const OpFn ours[kNumOps] = {(OpFn)Mult,           (OpFn)MultAdd, (OpFn)MultTranspose, (OpFn)MultTransposeAdd,
                              (OpFn)AssemblyEnd,    (OpFn)Destroy, (OpFn)Duplicate,     (OpFn)View,
                              (OpFn)SetFromOptions, device ? BindAwareProductSetFromOptions() : nullptr, (OpFn)GetDiagonal, (OpFn)SeqAXPY,
                              device ? DeviceScaleOp() : nullptr, device ? DeviceDiagonalScaleOp() : nullptr, (OpFn)Residual,
                              (OpFn)BindToCPU,      nullptr, nullptr,
                              (OpFn)InPlaceFactor<kLUFactor>, (OpFn)InPlaceFactor<kILUFactor>};

  PetscFunctionBegin;
  PetscCall(CheckSupported(A, f, device));
  auto *d   = new SeqData;
  d->info   = &f;
  d->device = device;
  d->to_aij = ToAIJ;
  d->values_update = kDefaultValuesUpdate;
  d->op     = f.make();
  PetscCall(InstallType(A, d, prefix, ours, ConvertInto<SeqKind>, ConvertBack<SeqKind>));
  PetscCall(InstallCOO(A, false)); // device values for the GPU types (coo.cxx)
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

PetscErrorCode SeqKind::ToAIJ(Mat A, bool destroying)
{
  PetscFunctionBegin;
  PetscCall(UninstallCOO(A, false, destroying)); // (first: brings the host values up to date)
  PetscCall(UninstallType(A, prefix, base, destroying));
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace gpumats
