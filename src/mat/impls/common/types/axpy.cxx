// MatAXPY with SUBSET_NONZERO_PATTERN (Y += a X, X's nonzeros among Y's) on the Seq and MPI types:
// GAMG smooths each prolongator with MatAYPX(A P, a, P, SUBSET_NONZERO_PATTERN). SeqAIJ and MPIAIJ
// hand that case to MatAXPY_Basic, one MatSetValues per row with a search per entry, an order of
// magnitude slower than aijcusparse's on the GPU for GAMG's four.
// Both CSRs have sorted rows, so one merge per row finds each entry of X its slot in Y; every slot
// is found before any value changes, and an X that is not a subset after all goes to AIJ's code
// (which inserts its entries). Other structures are AIJ's: SAME_NONZERO_PATTERN is one BLAS axpy
// per block there already.
#include "seq_mpi.hpp"

#include <algorithm>
#include <vector>

namespace gpumats {

namespace {

// slot[e]: where entry e of the SeqAIJ block X sits in the SeqAIJ block Y (same rows), columns
// compared through the maps (an MPI off-diagonal block's garray; null: the indices themselves).
// *subset: whether every entry of X has one.
PetscErrorCode SubsetSlots(Mat Y, Mat X, const PetscInt *ymap, const PetscInt *xmap, std::vector<PetscInt> &slot, bool *subset)
{
  const PetscInt *yi, *yj, *xi, *xj;
  PetscInt        m, mx;
  PetscBool       done_y, done_x;

  PetscFunctionBegin;
  PetscCall(MatGetRowIJ(Y, 0, PETSC_FALSE, PETSC_FALSE, &m, &yi, &yj, &done_y));
  PetscCall(MatGetRowIJ(X, 0, PETSC_FALSE, PETSC_FALSE, &mx, &xi, &xj, &done_x));
  *subset = done_y && done_x && m == mx;
  if (*subset) {
    auto col = [](const PetscInt *map, PetscInt c) { return map ? map[c] : c; };
    slot.assign(std::size_t(xi[m] - xi[0]), 0);
    for (PetscInt r = 0; r < m && *subset; ++r) {
      PetscInt k = yi[r];
      for (PetscInt e = xi[r]; e < xi[r + 1]; ++e) {
        const PetscInt c = col(xmap, xj[e]);
        while (k < yi[r + 1] && col(ymap, yj[k]) < c) ++k;
        if (k == yi[r + 1] || col(ymap, yj[k]) != c) {
          *subset = false;
          break;
        }
        slot[std::size_t(e - xi[0])] = k - yi[0];
      }
    }
  }
  if (done_x) PetscCall(MatRestoreRowIJ(X, 0, PETSC_FALSE, PETSC_FALSE, &mx, &xi, &xj, &done_x));
  if (done_y) PetscCall(MatRestoreRowIJ(Y, 0, PETSC_FALSE, PETSC_FALSE, &m, &yi, &yj, &done_y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

// Y[slot[e]] += a X[e] (SeqAIJ blocks; raises Y's state, so its copy follows at the next use)
PetscErrorCode AddAtSlots(Mat Y, PetscScalar a, Mat X, const std::vector<PetscInt> &slot)
{
  const PetscScalar *xa;
  PetscScalar       *ya;

  PetscFunctionBegin;
  if (slot.empty()) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatSeqAIJGetArrayRead(X, &xa));
  PetscCall(MatSeqAIJGetArray(Y, &ya));
  for (std::size_t e = 0; e < slot.size(); ++e) ya[slot[e]] += a * xa[e];
  PetscCall(MatSeqAIJRestoreArray(Y, &ya));
  PetscCall(MatSeqAIJRestoreArrayRead(X, &xa));
  PetscCall(PetscLogFlops(2.0 * double(slot.size())));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode NotSubset(Mat Y)
{
  return PetscInfo(Y, "MatAXPY with SUBSET_NONZERO_PATTERN: X's nonzeros are not a subset of Y's; AIJ's MatAXPY inserts them\n");
}

using AxpyFn = PetscErrorCode (*)(Mat, PetscScalar, Mat, MatStructure);

} // namespace

PetscErrorCode SeqAXPY(Mat Y, PetscScalar a, Mat X, MatStructure str)
{
  PetscBool             same_type;
  bool                  subset = false;
  std::vector<PetscInt> slot;

  bool                  done = false;

  PetscFunctionBegin;
  PetscCall(DeviceAXPY(Y, a, X, str, &done)); // Y's values on the GPU only: added there (device_values.cxx)
  if (done) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscObjectTypeCompareAny((PetscObject)X, &same_type, MATSEQAIJ, ((PetscObject)Y)->type_name, ""));
  if (str == SUBSET_NONZERO_PATTERN && X != Y && same_type) {
    PetscCall(SubsetSlots(Y, X, nullptr, nullptr, slot, &subset));
    if (subset) {
      PetscCall(AddAtSlots(Y, a, X, slot));
      PetscFunctionReturn(PETSC_SUCCESS);
    }
    PetscCall(NotSubset(Y));
  }
  PetscCall(Data(Y)->call<AxpyFn>(kAXPY, Y, a, X, str));
  PetscFunctionReturn(PETSC_SUCCESS);
}

// the diagonal blocks compare local columns (the same column layout is required), the
// off-diagonal blocks global ones through their garrays
PetscErrorCode MpiAXPY(Mat Y, PetscScalar a, Mat X, MatStructure str)
{
  PetscBool             same_type;
  bool                  subset = false, subset_o = false;
  std::vector<PetscInt> slot_d, slot_o;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompareAny((PetscObject)X, &same_type, MATMPIAIJ, ((PetscObject)Y)->type_name, ""));
  if (str == SUBSET_NONZERO_PATTERN && X != Y && same_type) { // (the same on every rank)
    Mat             Yd, Yo, Xd, Xo;
    const PetscInt *yg, *xg;
    PetscCall(MatMPIAIJGetSeqAIJ(Y, &Yd, &Yo, &yg));
    PetscCall(MatMPIAIJGetSeqAIJ(X, &Xd, &Xo, &xg));
    if (X->rmap->n == Y->rmap->n && X->cmap->rstart == Y->cmap->rstart && X->cmap->n == Y->cmap->n) PetscCall(SubsetSlots(Yd, Xd, nullptr, nullptr, slot_d, &subset));
    if (subset) PetscCall(SubsetSlots(Yo, Xo, yg, xg, slot_o, &subset_o));
    // (AIJ's path is collective: every rank takes the same one)
    int all = subset && subset_o && (yg || !Yo->cmap->n) && (xg || !Xo->cmap->n) ? 1 : 0;
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &all, 1, MPI_INT, MPI_LAND, PetscObjectComm((PetscObject)Y)));
    if (all) {
      PetscCall(AddAtSlots(Yd, a, Xd, slot_d));
      PetscCall(AddAtSlots(Yo, a, Xo, slot_o));
      PetscCall(PetscObjectStateIncrease((PetscObject)Y));
      PetscFunctionReturn(PETSC_SUCCESS);
    }
    PetscCall(NotSubset(Y));
  }
  PetscCall(Data(Y)->call<AxpyFn>(kAXPY, Y, a, X, str));
  // MPIAIJ's SAME_NONZERO_PATTERN path adds into the blocks and leaves Y's own state as it was
  // (PETSc 3.18), while our copies are current for an (id, state) of Y: without this the next
  // product used the old values (mat/tests ex132 on 2 ranks)
  PetscCall(PetscObjectStateIncrease((PetscObject)Y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

// MatAXPYGetPreallocation_C of our types: PETSc's MatAXPY of two matrices of different types with a
// new pattern (MatCopy from an AIJ into ours, DIFFERENT_NONZERO_PATTERN) builds the result with
// this where Y provides it, else with a preallocator that counts whole blocks of Y's block size
// (mat ex37 with -mat_block_size 2: 52 entries allocated where AIJ's own MatAXPY allocates the 28
// of the union). Here: each row's union of X's and Y's columns, split into the diagonal and
// off-diagonal blocks, for a B of Y's type and layout.
PetscErrorCode AXPYPreallocation(Mat Y, Mat X, Mat *B)
{
  PetscInt              rstart, rend, cstart, cend;
  std::vector<PetscInt> dnz, onz, cols;

  PetscFunctionBegin;
  PetscCall(MatGetOwnershipRange(Y, &rstart, &rend));
  PetscCall(MatGetOwnershipRangeColumn(Y, &cstart, &cend));
  dnz.assign(std::size_t(rend - rstart), 0);
  onz.assign(std::size_t(rend - rstart), 0);
  PetscCall(MatGetRowUpperTriangular(Y));
  PetscCall(MatGetRowUpperTriangular(X));
  for (PetscInt r = rstart; r < rend; ++r) {
    cols.clear();
    for (Mat M : {Y, X}) {
      PetscInt        n;
      const PetscInt *c;
      PetscCall(MatGetRow(M, r, &n, &c, nullptr));
      cols.insert(cols.end(), c, c + n);
      PetscCall(MatRestoreRow(M, r, &n, &c, nullptr));
    }
    std::sort(cols.begin(), cols.end());
    cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
    for (PetscInt c : cols) ++(c >= cstart && c < cend ? dnz : onz)[std::size_t(r - rstart)];
  }
  PetscCall(MatRestoreRowUpperTriangular(X));
  PetscCall(MatRestoreRowUpperTriangular(Y));
  PetscCall(MatCreate(PetscObjectComm((PetscObject)Y), B));
  PetscCall(MatSetType(*B, ((PetscObject)Y)->type_name));
  PetscCall(MatSetLayouts(*B, Y->rmap, Y->cmap));
  PetscCall(MatSeqAIJSetPreallocation(*B, 0, dnz.data()));
  PetscCall(MatMPIAIJSetPreallocation(*B, 0, dnz.data(), 0, onz.data()));
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace gpumats
