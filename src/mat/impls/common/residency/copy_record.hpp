// What a copy of a matrix's values was made from, and so whether it is current: every such decision
// of the glue (the format copy and the aijcusparse shadow of Residency, the MPI types' block copies,
// block Jacobi's block shadow) is made by a CopyRecord.
#pragma once

#include <petscmat.h>

namespace gpumats {

// A matrix as a copy sees it: its PETSc object id (which matrix), its state (its values) and its
// nonzero state (its pattern, and its arrays: SeqAIJ reallocates them when the pattern moves). The
// parts a record does not compare are -1.
struct MatStamp {
  PetscObjectId    id    = -1;
  PetscObjectState state = -1, nonzero_state = -1;
};

class CopyRecord {
public:
  // The parts compared besides the state: kId where the record may be asked about another matrix
  // (a block replaced by a new one), kPattern where the copy holds or mirrors the matrix's arrays.
  enum Parts : unsigned { kState = 0, kId = 1, kPattern = 2 };
  explicit CopyRecord(unsigned parts) : parts_(parts) {}

  // A as this record compares it now
  PetscErrorCode read(Mat A, MatStamp *now) const
  {
    PetscFunctionBegin;
    *now = MatStamp{};
    if (parts_ & kId) PetscCall(PetscObjectGetId((PetscObject)A, &now->id));
    PetscCall(PetscObjectStateGet((PetscObject)A, &now->state));
    if (parts_ & kPattern) PetscCall(MatGetNonzeroState(A, &now->nonzero_state));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  // The copy was made from `now`. one_raise: it was made inside a call (MatAssemblyEnd, MatConvert)
  // that raises the state once when it returns, so it is current at the next state too, once.
  void made_from(const MatStamp &now, bool one_raise = false)
  {
    made_      = now;
    one_raise_ = one_raise;
  }
  // Whether the copy is current for `now`; a tolerated raise is taken (the state recorded moves on).
  bool current_for(const MatStamp &now)
  {
    if (!same_pattern(now) || !(now.state == made_.state || (one_raise_ && now.state == made_.state + 1))) return false;
    made_.state = now.state;
    one_raise_  = false;
    return true;
  }
  // whether `now` is the matrix and pattern the copy was made from, whatever its values
  bool same_pattern(const MatStamp &now) const { return now.id == made_.id && now.nonzero_state == made_.nonzero_state; }
  // the copy holds now's pattern, its values not yet known (an aijcusparse shadow made by a COO
  // preallocation, before PETSc raises the matrix's nonzero state)
  void pattern_from(const MatStamp &now)
  {
    made_.id            = now.id;
    made_.nonzero_state = now.nonzero_state;
  }
  // the copy and the matrix hold the same values at the matrix's state `state` (a download to the
  // host, no state change)
  void values_agree_at(PetscObjectState state) { made_.state = state; }
  // current for nothing: after changes PETSc does not record in a state, or the copy freed
  void forget()
  {
    made_      = MatStamp{};
    one_raise_ = false;
  }

private:
  unsigned parts_;
  MatStamp made_;
  bool     one_raise_ = false;
};

} // namespace gpumats
