// Format copies of a SeqAIJ block: built from its CSR, or given new values from a device array.
#include "format_operator.hpp"
#include "quiet.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <limits>
#include <utility>

namespace gpumats {

PetscLogEvent values_event = 0; // GpuMatsValues: a values-only refill of a format copy

// The RCM order of a square block from PETSc's MatGetOrdering (new position -> original row),
// computed on a SeqAIJ that wraps the block's own CSR arrays (MatCreateSeqAIJWithArrays: no copy,
// assembled by construction, out of sight of -mat_view). The block itself cannot be asked: it is converted from inside its
// own MatAssemblyEnd, before PETSc marks it assembled, and MatGetOrdering takes assembled
// matrices only. The wrapper is ordered row by row, as the copy stores the rows: its inodes (found
// when it was assembled) are switched off, and a second assembly drops them, as PETSc lets a user
// change MAT_USE_INODES between assemblies.
static PetscErrorCode RcmOrder(PetscInt m, const PetscInt *ia, const PetscInt *ja, const PetscScalar *aa, std::vector<std::int32_t> &order)
{
  Mat             graph;
  IS              rperm, cperm;
  const PetscInt *p;

  PetscFunctionBegin;
  // the wrapper takes non-const arrays; it neither frees them nor changes their values
  PetscCall(WithoutOptionViewers([&]() {
    PetscFunctionBegin;
    PetscCall(MatCreateSeqAIJWithArrays(PETSC_COMM_SELF, m, m, const_cast<PetscInt *>(ia), const_cast<PetscInt *>(ja), const_cast<PetscScalar *>(aa), &graph));
    PetscCall(MatSetOption(graph, MAT_USE_INODES, PETSC_FALSE));
    PetscCall(MatAssemblyBegin(graph, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(graph, MAT_FINAL_ASSEMBLY));
    PetscFunctionReturn(PETSC_SUCCESS);
  }));
  PetscCall(MatGetOrdering(graph, MATORDERINGRCM, &rperm, &cperm));
  PetscCall(ISGetIndices(rperm, &p));
  order.assign(p, p + m);
  PetscCall(ISRestoreIndices(rperm, &p));
  PetscCall(ISDestroy(&rperm));
  PetscCall(ISDestroy(&cperm));
  PetscCall(MatDestroy(&graph));
  PetscFunctionReturn(PETSC_SUCCESS);
}

namespace {
// The record of what op would be built from now (see BlockPattern)
PetscErrorCode PatternOf(Mat block, PetscInt m, PetscInt n, const PetscInt *ia, const PetscInt *ja, PetscInt block_size, bool diagonal, BlockPattern *p)
{
  PetscFunctionBegin;
  p->valid = true;
  PetscCall(PetscObjectGetId((PetscObject)block, &p->block));
  PetscCall(MatGetNonzeroState(block, &p->nonzero_state));
  p->row_ptr = ia, p->col_ind = ja;
  p->rows = m, p->cols = n, p->nnz = m ? ia[m] - ia[0] : 0, p->block_size = block_size;
  p->diagonal = diagonal;
  PetscFunctionReturn(PETSC_SUCCESS);
}
} // namespace

PetscErrorCode BuildFromSeqAIJ(Mat block, const FormatInfo &f, FormatOperator &op, const BlockBuild &how)
{
  const bool device = how.device, diagonal = how.diagonal, transposed = how.transposed, host_stale = how.host_stale;
  const PetscInt     block_size = how.block_size;
  const ValuesUpdate values     = how.values;
  UpdateCounts      *counts     = how.counts;
  const DeviceCsrIn *on_device  = how.on_device;
  const PetscInt           *ia, *ja;
  const PetscScalar        *aa;
  PetscInt                  m, n;
  PetscBool                 done;
  std::vector<std::int32_t> order; // the RCM order of a renumbered copy
  BlockPattern              now;
  const char               *full = nullptr; // why the copy is converted in full
  void                     *stream = nullptr;

  PetscFunctionBegin;
  PetscCall(MatGetSize(block, &m, &n));
  const bool reorder = op.reorder_rcm && diagonal && !transposed && m == n && m > 0;
  PetscCheck(!reorder || m <= (PetscInt)std::numeric_limits<std::int32_t>::max(), PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE,
             "-mat_gpumats_reorder rcm: a block of %" PetscInt_FMT " rows exceeds the 32-bit row order; use more MPI ranks or no reordering", m);
  PetscCall(MatGetRowIJ(block, 0, PETSC_FALSE, PETSC_FALSE, &m, &ia, &ja, &done));
  PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MatGetRowIJ did not return the CSR of a SeqAIJ block");
  if (!device || transposed || reorder) on_device = nullptr; // (a transposed or renumbered block is made on the host)
  // long rows may be split in diagonal blocks only; build_copy decides from the longest row
  const SplitRule split = diagonal ? SplitRule{op.long_rows, !f.split_long_rows} : SplitRule{};
  // A GPU build from on_device reads the host's structure only, unless it splits long rows or
  // keeps an off-diagonal block's rows with entries only, which cut from the host CSR: stale host
  // values (a product's, whose first use this often is, inside the solve for a coarse operator)
  // are then left where they are
  bool read_values = !host_stale || !on_device || op.build_on_host || !diagonal;
  if (!read_values) {
    const CsrIn S{m, n, ia, ja, nullptr};
    read_values = choose_split(split.long_rows, m, n, S.nnz(), split.only_when_told, [&] { return longest_row(S); }) != 0;
  }
  aa = nullptr;
  if (read_values) PetscCall(MatSeqAIJGetArrayRead(block, &aa));
  PetscCheck(!read_values || aa || ia[m] == ia[0], PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE,
             "%s: the matrix holds a nonzero pattern without values (MAT_STRUCTURE_ONLY), of which no format copy can be made; set its values, or multiply it as MATAIJ",
             f.title);
  const CsrIn A{m, n, ia, ja, aa};
  PetscCall(PatternOf(block, m, n, ia, ja, block_size, diagonal, &now));
  if (transposed) full = "a transposed copy";
  else if (values == ValuesUpdate::kRebuild) full = "-mat_gpumats_values_update rebuild";
  else if (!op.pattern.valid) full = "no copy of this block with these parameters yet";
  else if (!op.pattern.same(now)) full = "the nonzero pattern changed";
  if (device) PetscCall(CurrentStream(&stream));

  PetscErrorCode err = PETSC_SUCCESS;
  if (!full) { // the copy's structure is right: only the values move
    bool              exact = true;
    const std::size_t had   = op.slot_bytes();
    PetscCall(PetscLogEventBegin(values_event, block, 0, 0, 0));
    err = guarded(PETSC_COMM_SELF, device ? "updating the values of the GPU format" : "updating the values of the host format",
                  [&] { exact = on_device ? op.update_values(CsrIn{m, n, ia, ja, on_device->val}, block_size, device, stream, true)
                                          : op.update_values(A, block_size, device, stream); });
    if (!err && exact && device && !on_device) err = PetscLogCpuToGpu((PetscLogDouble)(A.nnz() * sizeof(PetscScalar)));
    PetscCall(PetscLogEventEnd(values_event, block, 0, 0, 0));
    if (err) op.forget_pattern(); // its values may be half refilled: the next change converts in full
    else if (exact) {
      if (counts) counts->values_only++;
      PetscCall(PetscInfo(block, "%s copy: values only, the nonzero pattern being unchanged since it was built: %" PetscInt64_FMT " CSR values gathered%s\n", f.title,
                          (PetscInt64)A.nnz(), had ? "" : " (slot maps made now)"));
    } else
      full = "the copy holds its values compressed (a value dictionary on the host), or its slot map would not be exact in this scalar type";
  }
  if (full && !err) {
    PetscCall(PetscLogEventBegin(f.convert_event, block, 0, 0, 0));
    err = reorder ? RcmOrder(m, ia, ja, aa, order) : PETSC_SUCCESS;
    if (!err) err = guarded(PETSC_COMM_SELF, device ? "converting to the GPU format" : "converting to the host format", [&] {
      Csr<PetscScalar, PetscInt> T; // the copy for products with A^T holds A^T's rows (A's columns)
      CsrIn                      B = A;
      if (transposed) {
        T = transpose<PetscInt>(A);
        B = T.view();
      }
      // an off-diagonal block keeps its rows with entries only where most rows have none
      const bool compress = !diagonal && !transposed && worth_compressing_rows(B);
      op.build_copy(B, order, split, block_size, device, compress, stream, on_device);
    });
    if (!err) {
      if (!transposed) op.pattern = now; // (a transposed copy is never refilled: it goes when the matrix changes)
      if (counts) counts->conversions++;
      if (device && !on_device) err = PetscLogCpuToGpu((PetscLogDouble)(A.nnz() * (sizeof(PetscScalar) + sizeof(PetscInt)) + (m + 1) * sizeof(PetscInt)));
    }
    PetscCall(PetscLogEventEnd(f.convert_event, block, 0, 0, 0));
    if (!err)
      PetscCall(PetscInfo(block, "%s copy of %" PetscInt_FMT " x %" PetscInt_FMT " (%" PetscInt64_FMT " nonzeros): converted in full: %s\n", f.title, m, n,
                          (PetscInt64)A.nnz(), full));
  }
  if (read_values) PetscCall(MatSeqAIJRestoreArrayRead(block, &aa));
  PetscCall(MatRestoreRowIJ(block, 0, PETSC_FALSE, PETSC_FALSE, &m, &ia, &ja, &done));
  PetscCall(err);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode UpdateValuesFromDevice(Mat block, const FormatInfo &f, FormatOperator &op, const PetscScalar *device_values, const BlockBuild &how, PetscBool *done)
{
  const PetscInt     block_size = how.block_size;
  const DeviceCsrIn *structure  = how.on_device;
  const PetscInt *ia, *ja;
  PetscInt        m, n;
  PetscBool       got;
  BlockPattern    now;
  bool            exact = false;
  void           *stream = nullptr;

  PetscFunctionBegin;
  *done = PETSC_FALSE;
#if GPUMATS_HAVE_CUDA
  PetscCall(MatGetSize(block, &m, &n));
  PetscCall(MatGetRowIJ(block, 0, PETSC_FALSE, PETSC_FALSE, &m, &ia, &ja, &got));
  PetscCheck(got, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MatGetRowIJ did not return the CSR of a SeqAIJ block");
  PetscCall(PatternOf(block, m, n, ia, ja, block_size, how.diagonal, &now));
  // the structure is read on the host, the values never: val is the device array
  const CsrIn A{m, n, ia, ja, device_values};
  PetscErrorCode err = PETSC_SUCCESS;
  if (op.pattern.valid && op.pattern.same(now)) {
    PetscCall(CurrentStream(&stream));
    PetscCall(PetscLogEventBegin(values_event, block, 0, 0, 0));
    err = guarded(PETSC_COMM_SELF, "updating the values of the GPU format from device values",
                  [&] { exact = op.update_values(A, block_size, true, stream, true, structure); });
    PetscCall(PetscLogEventEnd(values_event, block, 0, 0, 0));
    if (err) op.forget_pattern(); // half refilled: the caller's full conversion follows
    else if (exact) {
      if (how.counts) how.counts->values_only++;
      *done = PETSC_TRUE;
      PetscCall(PetscInfo(block, "%s copy: values only, from %" PetscInt64_FMT " device values (no host round trip)\n", f.title, (PetscInt64)A.nnz()));
    }
  }
  PetscCall(MatRestoreRowIJ(block, 0, PETSC_FALSE, PETSC_FALSE, &m, &ia, &ja, &got));
  PetscCall(err);
#else
  (void)block, (void)f, (void)op, (void)device_values, (void)structure, (void)block_size, (void)ia, (void)ja, (void)m, (void)n, (void)got, (void)now, (void)exact,
    (void)stream;
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace gpumats
