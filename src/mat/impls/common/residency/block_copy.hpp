// A format copy of a SeqAIJ block, or of its transpose: the MPI types' diagonal and off-diagonal
// blocks and every transposed copy. Whether it is current is its CopyRecord's to say.
#pragma once

#include "../operator/format_operator.hpp"
#include "copy_record.hpp"

#include <memory>

namespace gpumats {

// Kept while the block keeps the (id, state) it was built from.
struct BlockCopy {
  std::unique_ptr<FormatOperator> op;
  CopyRecord                      made{CopyRecord::kId}; // of the block

  // brings op up to date with `block` unless it is current (BuildFromSeqAIJ with `how`: its values
  // only where its pattern allows); a new op takes proto's parameters
  PetscErrorCode update(Mat block, const FormatInfo &f, const FormatOperator &proto, const BlockBuild &how);
  void           forget() { made.forget(); } // after changes PETSc does not record in a state
  // frees op (and its GPU memory) unless it is current for `block`: a transposed copy, once its
  // block has changed, is only rebuilt at the next product with A^T, which may never come
  PetscErrorCode release_if_stale(Mat block);
  bool           held() const { return op != nullptr; } // a copy is allocated, current or not
};

} // namespace gpumats
