// Type installation and conversion plumbing shared by the Seq and MPI types (type_data.hpp).
#include "type_data.hpp"

#include <tuple>
#include <utility>

namespace gpumats {

namespace {

// The specific message of the last error (PetscErrorMessage's last argument is char ** before
// PETSc 3.19 and const char ** since, its first int before 3.19 and PetscErrorCode since)
template <class E, class S>
const char *SpecificMessage(PetscErrorCode (*message)(E, const char *[], S **), PetscErrorCode err)
{
  S *specific = nullptr;
  if (message(static_cast<E>(err), nullptr, &specific)) return nullptr;
  return specific;
}

} // namespace

PetscErrorCode BuildInAssembly(Mat A, PetscErrorCode (*build)(Mat, bool))
{
  PetscErrorCode err;

  PetscFunctionBegin;
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, nullptr));
  err = build(A, true);
  PetscCall(PetscPopErrorHandler());
  if (!err) PetscFunctionReturn(PETSC_SUCCESS);
  const char *msg = SpecificMessage(PetscErrorMessage, err);
  if (err == PETSC_ERR_MEM) {
    PetscCall(PetscInfo(A, "%s; the format copy is built at the first use instead\n", msg ? msg : "out of memory"));
    Data(A)->invalidate();
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  SETERRQ(PETSC_COMM_SELF, err, "%s", msg ? msg : "building the format copy failed");
}

// (by the values SeqAIJ hands out, not its structure_only flag, which PETSc's own products leave
// set on matrices whose values they then fill)
PetscErrorCode StructureOnly(Mat A, bool *only)
{
  const PetscScalar *aa;
  MatInfo            info;
  Mat                block = A;

  PetscFunctionBegin;
  if (std::string(((PetscObject)A)->type_name).compare(0, 3, "mpi") == 0) PetscCall(MatMPIAIJGetSeqAIJ(A, &block, nullptr, nullptr)); // (its diagonal block)
  PetscCall(MatGetInfo(block, MAT_LOCAL, &info));
  PetscCall(MatSeqAIJGetArrayRead(block, &aa));
  *only = info.nz_used > 0 && !aa;
  PetscCall(MatSeqAIJRestoreArrayRead(block, &aa));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode BuildAtThisAssembly(Mat A, const Mat *blocks, int nblocks, PetscBool *build)
{
  PetscBool   unread = Data(A)->where.built_unread() ? PETSC_TRUE : PETSC_FALSE;
  PetscBool   zero   = Data(A)->where.host_stale() || unread ? PETSC_FALSE : PETSC_TRUE; // (unread: no build, nothing to sample)
  PetscMPIInt size;

  PetscFunctionBegin;
  for (int b = 0; b < nblocks && zero; ++b) {
    const PetscInt    *ia, *ja;
    const PetscScalar *aa;
    PetscInt           m;
    PetscBool          done;
    PetscCall(MatGetRowIJ(blocks[b], 0, PETSC_FALSE, PETSC_FALSE, &m, &ia, &ja, &done));
    PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MatGetRowIJ did not return the CSR of a SeqAIJ block");
    PetscInt nnz = m ? ia[m] - ia[0] : 0;
    PetscCall(MatSeqAIJGetArrayRead(blocks[b], &aa));
    if (nnz && !aa) nnz = 0; // (MAT_STRUCTURE_ONLY: no values, nothing to build a copy from yet)
    // 1024 evenly spaced values and the last: O(1), and a real matrix's first sample is nonzero
    const PetscInt step = nnz > 1024 ? nnz / 1024 : 1;
    for (PetscInt k = 0; k < nnz && zero; k += step) zero = PetscAbsScalar(aa[k]) == 0 ? PETSC_TRUE : PETSC_FALSE;
    if (nnz && zero) zero = PetscAbsScalar(aa[nnz - 1]) == 0 ? PETSC_TRUE : PETSC_FALSE;
    PetscCall(MatSeqAIJRestoreArrayRead(blocks[b], &aa));
    PetscCall(MatRestoreRowIJ(blocks[b], 0, PETSC_FALSE, PETSC_FALSE, &m, &ia, &ja, &done));
  }
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
  if (size > 1) { // one decision for all ranks, the build being collective: zero on all, unread on any
    int all[2] = {zero ? 1 : 0, unread ? 0 : 1};
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, all, 2, MPI_INT, MPI_MIN, PetscObjectComm((PetscObject)A)));
    zero   = all[0] ? PETSC_TRUE : PETSC_FALSE;
    unread = all[1] ? PETSC_FALSE : PETSC_TRUE;
  }
  if (zero) PetscCall(PetscInfo(A, "values all zero (sampled), as DMCreateMatrix assembles them: the format copy is built at the next assembly or the first use\n"));
  else if (unread)
    PetscCall(PetscInfo(A, "assembled again with the copy built at the last assembly not yet used: the format copy is built at the first use\n"));
  *build = zero || unread ? PETSC_FALSE : PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode StripToAIJ(Mat A, MatType base)
{
  TypeData *d = Data(A);
  PetscBool plain;

  PetscFunctionBegin;
  if (d) PetscCall(d->to_aij(A, false));
  PetscCall(PetscObjectTypeCompare((PetscObject)A, base, &plain));
  if (!plain) PetscCall(MatConvert(A, base, MAT_INPLACE_MATRIX, &A)); // e.g. from aijcusparse
  PetscFunctionReturn(PETSC_SUCCESS);
}

namespace {

PetscErrorCode RetrieveValues(Mat A)
{
  TypeData *d = Data(A);

  PetscFunctionBegin;
  PetscCheck(d && d->retrieve, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MatRetrieveValues wrapper without the AIJ implementation");
  PetscCall(d->retrieve(A));
  d->invalidate(); // values came back from the stored copy without a state change, here or in MPI blocks
  PetscFunctionReturn(PETSC_SUCCESS);
}

// MatGpuMatsGetUpdateCounts' implementation, composed on every matrix of our types
PetscErrorCode GetUpdateCounts(Mat A, PetscInt64 *conversions, PetscInt64 *values_only)
{
  PetscFunctionBegin;
  if (conversions) *conversions = Data(A)->updates.conversions;
  if (values_only) *values_only = Data(A)->updates.values_only;
  PetscFunctionReturn(PETSC_SUCCESS);
}
constexpr const char kUpdateCounts[] = "MatGpuMatsGetUpdateCounts_C";
// MatAXPY of two different types with a new pattern sizes its result with this (axpy.cxx)
constexpr const char kAXPYPreallocation[] = "MatAXPYGetPreallocation_C";

// One of our GPU matrices with PETSc's own AIJ (cuSPARSE or host) of the same layout: PETSc finds
// products by type names only, and the AIJ names the lookup below tries would run the product on
// the host. PCMG's GDSW coarse space, for one, is mpiaijcusparse, and -pc_mg_galerkin multiplies it
// with the operator. Our GPU types' products take both operands (a seqaijcusparse or mpiaijcusparse
// one as it is, a host AIJ one through its upload); `taken` says whether they did.
#if PetscDefined(HAVE_CUDA)
static PetscErrorCode TakeMixedProduct(Mat C, bool *taken)
{
  Mat_Product *p     = C->product;
  Mat          op[3] = {p->A, p->B, p->type == MATPRODUCT_ABC ? p->C : nullptr};
  int          ours_seq = 0, ours_mpi = 0, aij_seq = 0, aij_mpi = 0, n = 0;

  PetscFunctionBegin;
  *taken = false;
  for (Mat X : op) {
    PetscBool seq, mpi;
    if (!X) continue;
    ++n;
    if (OurDeviceSeq(X)) ++ours_seq;
    else if (OurDeviceMpi(X)) ++ours_mpi;
    else {
      PetscCall(PetscObjectTypeCompareAny((PetscObject)X, &seq, MATSEQAIJCUSPARSE, MATSEQAIJ, ""));
      PetscCall(PetscObjectTypeCompareAny((PetscObject)X, &mpi, MATMPIAIJCUSPARSE, MATMPIAIJ, ""));
      aij_seq += seq;
      aij_mpi += mpi;
    }
  }
  OpFn fn = nullptr;
  if (ours_seq && ours_seq + aij_seq == n) fn = CusparseProductSetFromOptions();
  else if (ours_mpi && ours_mpi + aij_mpi == n && p->type != MATPRODUCT_ABC) fn = MpiProductSetFromOptions();
  if (!fn) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(reinterpret_cast<PetscErrorCode (*)(Mat)>(fn)(C));
  *taken = C->ops->productsymbolic != nullptr;
  PetscFunctionReturn(PETSC_SUCCESS);
}
#else // (a PETSc without CUDA: no GPU products to take it)
static PetscErrorCode TakeMixedProduct(Mat, bool *taken)
{
  *taken = false;
  return PETSC_SUCCESS;
}
#endif

// PETSc finds the product of two matrices of different types by the name
// MatProductSetFromOptions_<A's type>_<B's type>[_<C's type>]_C composed on one of them: MAIJ (DMDA's
// interpolations, ksp ex4 and ex43), dense and others register theirs under AIJ's names
// (mpiaij_mpimaij), which our names never match, and the product stopped with "Unspecified
// symbolic phase". This, PETSc's last resort (MatProductSetFromOptions_anytype_C), looks the name up
// again with each of our operands answering to the AIJ name it is underneath: the product is then
// the one PETSc has for AIJ, on the SeqAIJ/MPIAIJ data our types keep.
constexpr const char kAnyType[] = "MatProductSetFromOptions_anytype_C";

PetscErrorCode ProductAsAIJ(Mat P)
{
  Mat_Product *product = P->product;
  Mat          ops[3]  = {product->A, product->B, product->type == MATPRODUCT_ABC ? product->C : nullptr};
  std::string  names[3];
  PetscErrorCode (*f)(Mat) = nullptr;

  PetscFunctionBegin;
  bool taken;
  PetscCall(TakeDenseProduct(P, &taken)); // (one of our GPU Seq matrices times a dense one: cuSPARSE)
  if (taken) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(TakeMixedProduct(P, &taken));
  if (taken) PetscFunctionReturn(PETSC_SUCCESS);
  std::string want = "MatProductSetFromOptions";
  for (int i = 0; i < 3; ++i) {
    if (!ops[i]) continue;
    names[i] = ((PetscObject)ops[i])->type_name;
    const FormatInfo *info = nullptr;
    bool              device;
    if (Data(ops[i]) && (info = find_type(names[i].c_str(), &device))) want += names[i].compare(0, 3, "seq") == 0 ? "_seqaij" : "_mpiaij";
    else want += "_" + names[i];
  }
  want += "_C";
  for (Mat M : ops)
    if (M && !f) PetscCall(PetscObjectQueryFunction((PetscObject)M, want.c_str(), &f));
  if (!f) PetscFunctionReturn(PETSC_SUCCESS); // (PETSc then tries what it has left: dense, basic)
  PetscCall(PetscInfo(P, "product of petsc-gpumats operands by %s\n", want.c_str()));
  PetscCall((*f)(P));
  PetscFunctionReturn(PETSC_SUCCESS);
}

std::string convert_name(const std::string &from, const std::string &to) { return "MatConvert_" + from + "_" + to + "_C"; }

// The names under which PETSc's MatConvert looks for a converter from `from` into the type
// (format f, form device): it appends "_<seq|mpi><requested name>_C", and the requested name may
// be the root name or the concrete one.
std::vector<std::string> into_names(const std::string &from, const char *prefix, const FormatInfo &f, bool device)
{
  return {convert_name(from, concrete_name(f, prefix, device)), convert_name(from, prefix + root_name(f, device))};
}

// The types a conversion into one of ours may start from: AIJ, its CUDA subclass, and ours.
std::vector<std::string> convert_sources(const char *prefix)
{
  std::vector<std::string> v{std::string(prefix) + "aij", std::string(prefix) + "aijcusparse"};
  for (const TypeForm &t : type_forms()) v.push_back(concrete_name(*t.format, prefix, t.device));
  return v;
}

// The types a conversion out of ours may go to directly: AIJ and PETSc's CUDA subclass of it.
std::vector<std::string> convert_targets(const char *prefix) { return {std::string(prefix) + "aij", std::string(prefix) + "aijcusparse"}; }

// MatConvert into a type that AIJ has a converter of its own for (MATIS, BAIJ, SBAIJ, dense, ...).
// MatConvert looks on A for MatConvert_<A's type>_<"seq", "mpi", "" in turn><requested name>_C, and
// AIJ composes its converters under its own type name (MatConvert_seqaij_is_C), which ours never
// match: our types fell to PETSc's generic row-by-row conversion, which does not set a MATIS up (ksp
// ex56 and ex71, snes ex17 and ex56 with -pc_mg_adapt_interp_coarse_space gdsw crashed in it).
// ComposeConverters composes this under our name for each of AIJ's targets; it resolves the
// requested name as MatConvert would for AIJ (a request for "dense" is AIJ's seqdense converter)
// and runs AIJ's converter on the SeqAIJ/MPIAIJ our type is. In place, or where AIJ has no
// converter for the name, A is handed to MatConvert as a plain AIJ (a copy, unless in place).
PetscErrorCode ConvertAsAIJ(Mat A, MatType newtype, MatReuse reuse, Mat *B)
{
  const bool        seq = std::string(((PetscObject)A)->type_name).compare(0, 3, "seq") == 0;
  const std::string aij = seq ? MATSEQAIJ : MATMPIAIJ;
  ConvertFn         f   = nullptr;

  PetscFunctionBegin;
  for (const char *p : {"seq", "mpi", ""})
    if (!f) PetscCall(PetscObjectQueryFunction((PetscObject)A, convert_name(aij, p + std::string(newtype)).c_str(), &f));
  if (reuse == MAT_INPLACE_MATRIX) {
    PetscCall(StripToAIJ(A, aij.c_str()));
    PetscCall(MatConvert(A, newtype, MAT_INPLACE_MATRIX, B));
  } else if (f) {
    PetscCall(PetscInfo(A, "MatConvert of %s into %s by AIJ's converter\n", ((PetscObject)A)->type_name, newtype));
    if (seq) PetscCall(SyncHostValues(A)); // AIJ's converter reads the host CSR
    PetscCall(f(A, newtype, reuse, B));
  } else {
    Mat C;
    PetscCall(MatConvert(A, aij.c_str(), MAT_INITIAL_MATRIX, &C));
    PetscCall(MatConvert(C, newtype, reuse, B));
    PetscCall(MatDestroy(&C));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

// The names of the functions composed on A that begin with lead
PetscErrorCode ComposedNames(Mat A, const std::string &lead, std::vector<std::string> *found)
{
  const char **names = nullptr;
  int          n     = 0;

  PetscFunctionBegin;
  PetscCall(PetscFunctionListGet(((PetscObject)A)->qlist, &names, &n));
  for (int i = 0; i < n; ++i) // (PETSc 3.18 lists removed entries as null names)
    if (names[i] && std::string(names[i]).compare(0, lead.size(), lead) == 0) found->push_back(names[i]);
  PetscCall(PetscFree(names));
  PetscFunctionReturn(PETSC_SUCCESS);
}

// The targets of AIJ's converters composed on A outside AIJ's own family (ConvertAsAIJ): the <X> of
// its MatConvert_<prefix>aij_<X>_C other than AIJ, its subclasses (aijcusparse, ...) and our types.
PetscErrorCode AIJConvertTargets(Mat A, const char *prefix, std::vector<std::string> *targets)
{
  const std::string        lead = "MatConvert_" + std::string(prefix) + "aij_";
  std::vector<std::string> composed;

  PetscFunctionBegin;
  PetscCall(ComposedNames(A, lead, &composed));
  for (const std::string &s : composed) {
    if (s.size() < lead.size() + 3 || s.compare(s.size() - 2, 2, "_C") != 0) continue;
    const std::string dst = s.substr(lead.size(), s.size() - lead.size() - 2);
    bool              device;
    // (ours under any name: into_names composes MatConvert_seqaij_seqcmrscuda_C too)
    const bool ours = find_type(dst.c_str(), &device) || ((dst.compare(0, 3, "seq") == 0 || dst.compare(0, 3, "mpi") == 0) && find_type(dst.c_str() + 3, &device));
    if (dst.compare(0, 3, "aij") == 0 || dst.compare(0, 6, "seqaij") == 0 || dst.compare(0, 6, "mpiaij") == 0 || ours) continue;
    targets->push_back(dst);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

// Composes (fn non-null) or removes (fn null) the converters of A's type.
PetscErrorCode ComposeConverters(Mat A, const char *prefix, const FormatInfo &f, bool device, ConvertFn into, ConvertFn back)
{
  const std::string        name = concrete_name(f, prefix, device);
  std::vector<std::string> others;

  PetscFunctionBegin;
  for (const std::string &src : convert_sources(prefix))
    if (src != name)
      for (const std::string &n : into_names(src, prefix, f, device)) PetscCall(PetscObjectComposeFunction((PetscObject)A, n.c_str(), into));
  for (const std::string &dst : convert_targets(prefix)) PetscCall(PetscObjectComposeFunction((PetscObject)A, convert_name(name, dst).c_str(), back));
  if (back) {
    PetscCall(AIJConvertTargets(A, prefix, &others));
    for (const std::string &dst : others) PetscCall(PetscObjectComposeFunction((PetscObject)A, convert_name(name, dst).c_str(), ConvertAsAIJ));
  } else {
    // every converter out of this type, whatever the targets were when it was composed: an object
    // must carry none of ours once it is AIJ again (PETSc's -checkfunctionlist lists what is left
    // at its destruction)
    PetscCall(ComposedNames(A, "MatConvert_" + name + "_", &others));
    for (const std::string &c : others) PetscCall(PetscObjectComposeFunction((PetscObject)A, c.c_str(), (ConvertFn) nullptr));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

// GAMG's graph of A (MatCreateGraph), a plain AIJ, not ours: AIJ's builds it by MatDuplicate of A,
// which keeps our type, and PETSc 3.18's HEM coarsening tests the graph for exactly MATMPIAIJ and
// reads any other as a SeqAIJ (ksp ex54f_hem on 4 ranks crashed). The graph is only read by the
// coarsening and aggregation, so a format copy of it would be built for nothing anyway. Host types
// only: the GPU types run on PETSc 3.25, whose HEM has no such test, and were not measured without.
// (written for the signature of this PETSc's MatCreateGraph, which gained arguments after 3.18)
template <class Fn>
struct GraphAsAIJ;
template <class... Args>
struct GraphAsAIJ<PetscErrorCode (*)(Mat, Args...)> {
  static PetscErrorCode create(Mat A, Args... args)
  {
    Mat *G = std::get<sizeof...(Args) - 1>(std::forward_as_tuple(args...)); // (the last: the graph made)
    bool device;

    PetscFunctionBegin;
    PetscCall(reinterpret_cast<PetscErrorCode (*)(Mat, Args...)>(Data(A)->creategraph)(A, args...));
    if (find_type(((PetscObject)*G)->type_name, &device)) {
      const bool seq = std::string(((PetscObject)*G)->type_name).compare(0, 3, "seq") == 0;
      PetscCall(MatConvert(*G, seq ? MATSEQAIJ : MATMPIAIJ, MAT_INPLACE_MATRIX, G));
    }
    PetscFunctionReturn(PETSC_SUCCESS);
  }
};
using CreateGraphFn = decltype(std::declval<_MatOps>().creategraph);

} // namespace

PetscErrorCode InstallType(Mat A, TypeData *d, const char *prefix, const OpFn ours[kNumOps], ConvertFn into, ConvertFn back)
{
  const std::string name = concrete_name(*d->info, prefix, d->device);

  PetscFunctionBegin;
  PetscCheck(!A->spptr, PETSC_COMM_SELF, PETSC_ERR_PLIB, "matrix already carries another implementation's data");
  for (int i = 0; i < kNumOps; ++i) {
    PetscCall(MatGetOperation(A, kOverridden[i], &d->saved[i]));
    if (ours[i]) PetscCall(MatSetOperation(A, kOverridden[i], ours[i]));
  }
  PetscCall(PetscObjectQueryFunction((PetscObject)A, "MatRetrieveValues_C", &d->retrieve));
  if (d->retrieve) PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatRetrieveValues_C", RetrieveValues));
  d->creategraph = reinterpret_cast<OpFn>(A->ops->creategraph);
  if (d->creategraph && !d->device) A->ops->creategraph = GraphAsAIJ<CreateGraphFn>::create; // (the GPU types, on PETSc 3.25: unchanged)
  A->spptr = d;
  PetscCall(PetscObjectChangeTypeName((PetscObject)A, name.c_str()));
  PetscCall(ComposeConverters(A, prefix, *d->info, d->device, into, back));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, kUpdateCounts, GetUpdateCounts));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, kAnyType, ProductAsAIJ));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, kAXPYPreallocation, AXPYPreallocation));
#if PetscDefined(HAVE_CUDA)
  // PETSc creates every matrix bound to the CPU and unbinds the device types (aijcusparse,
  // mpiaijcusparse) when they take over. Code that picks a device path reads this flag: MatGetFactor
  // with MATSOLVERCUSPARSE; GAMG, which binds its prolongators and every vector made from them to
  // the CPU when the operator is bound (a host round trip per level and cycle); MatBindToCPU itself,
  // which reaches the type only where the flag differs from the request (-dm_bind_below, GAMG's
  // pinned coarse grids).
  if (d->device) {
    PetscCall(MatSetVecType(A, VECCUDA));
    A->boundtocpu = PETSC_FALSE;
  }
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode ForgetTypeFunctions(Mat M, const char *prefix, const FormatInfo &f, bool device)
{
  PetscFunctionBegin;
  PetscCall(ComposeConverters(M, prefix, f, device, nullptr, nullptr));
  PetscCall(PetscObjectComposeFunction((PetscObject)M, kUpdateCounts, (PetscErrorCode(*)(Mat, PetscInt64 *, PetscInt64 *))nullptr));
  PetscCall(PetscObjectComposeFunction((PetscObject)M, kAnyType, (PetscErrorCode(*)(Mat))nullptr));
  PetscCall(PetscObjectComposeFunction((PetscObject)M, kAXPYPreallocation, (PetscErrorCode(*)(Mat, Mat, Mat *))nullptr));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode UninstallType(Mat A, const char *prefix, const char *base, bool destroying)
{
  TypeData *d = Data(A);

  PetscFunctionBegin;
  for (int i = 0; i < kNumOps; ++i) PetscCall(MatSetOperation(A, kOverridden[i], d->saved[i]));
  if (d->creategraph) A->ops->creategraph = reinterpret_cast<CreateGraphFn>(d->creategraph);
  if (d->retrieve) PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatRetrieveValues_C", destroying ? nullptr : d->retrieve));
  PetscCall(ForgetTypeFunctions(A, prefix, *d->info, d->device));
#if PetscDefined(HAVE_CUDA)
  if (d->device) A->boundtocpu = PETSC_TRUE; // a plain AIJ again
#endif
  A->spptr = nullptr;
  delete d;
  PetscCall(PetscObjectChangeTypeName((PetscObject)A, base));
  PetscCall(MatSetVecType(A, VECSTANDARD));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SetFromOptionsCommon(Mat A, OptionItems PetscOptionsObject, FormatOperator &proto, PetscBool *changed)
{
  TypeData *d = Data(A);

  PetscFunctionBegin;
  if (d->saved[kSetFromOptions]) PetscCall(d->call<PetscErrorCode (*)(Mat, OptionItems)>(kSetFromOptions, A, PetscOptionsObject));
  PetscCall(ReadFormatOptions(A, *d->info, d->device, proto, &d->transpose, &d->values_update, &d->build_at, PetscOptionsObject, changed));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode TransposePathOf(Mat A, Vec x, Vec in, Vec out, TransposePath *path)
{
  const TypeData *d  = Data(A);
  bool            ok = false;

  PetscFunctionBegin;
  const char *why = "a host type";
#if PetscDefined(HAVE_CUDA)
  // (every rank decides alike for an MPI matrix, whose cuSPARSE path is collective: the same
  // options, binding and vector type everywhere)
  ok  = d->device && !Bound(A) && (OurDeviceSeq(A) || MpiStandInAvailable());
  why = !d->device ? why : Bound(A) ? "bound to the CPU" : "an MPI type without mpiaijcusparse's product back-end (PETSc 3.23 on)";
  for (Vec v : {x, in, out}) {
    PetscBool cuda = PETSC_TRUE;
    if (ok && v) PetscCall(PetscObjectTypeCompareAny((PetscObject)v, &cuda, VECSEQCUDA, VECMPICUDA, ""));
    if (ok && !cuda) why = "a vector of the product is not a CUDA vector";
    ok = ok && cuda;
  }
#endif
  *path = ChooseTransposePath(d->transpose, ok);
  if (x && !ok && d->transpose == TransposeMode::kCusparse) PetscCall(PetscInfo(A, "product with A^T: the implicit one rather than cuSPARSE's transpose: %s\n", why));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode CheckResidualArgs(Mat A, Vec b, Vec x, Vec r)
{
  MPI_Comm comm = PetscObjectComm((PetscObject)A);
  PetscInt xn, bn, rn;

  PetscFunctionBegin;
  PetscCheck(x != r, comm, PETSC_ERR_ARG_IDN, "MatResidual: x and r must be different vectors (r = b - A x is written while x is read)");
  PetscCall(VecGetLocalSize(x, &xn));
  PetscCall(VecGetLocalSize(b, &bn));
  PetscCall(VecGetLocalSize(r, &rn));
  PetscCheck(xn == A->cmap->n, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "MatResidual: x has %" PetscInt_FMT " local entries, the matrix %" PetscInt_FMT " local columns", xn, A->cmap->n);
  PetscCheck(bn == A->rmap->n && rn == A->rmap->n, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ,
             "MatResidual: b and r have %" PetscInt_FMT " and %" PetscInt_FMT " local entries, the matrix %" PetscInt_FMT " local rows", bn, rn, A->rmap->n);
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace gpumats

using namespace gpumats;

PetscErrorCode MatGpuMatsGetUpdateCounts(Mat A, PetscInt64 *conversions, PetscInt64 *values_only)
{
  PetscErrorCode (*f)(Mat, PetscInt64 *, PetscInt64 *) = nullptr;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscCall(PetscObjectQueryFunction((PetscObject)A, kUpdateCounts, &f));
  PetscCheck(f, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONG, "MatGpuMatsGetUpdateCounts: matrix type %s is not a petsc-gpumats type",
             ((PetscObject)A)->type_name ? ((PetscObject)A)->type_name : "(not set)");
  PetscCall((*f)(A, conversions, values_only));
  PetscFunctionReturn(PETSC_SUCCESS);
}
