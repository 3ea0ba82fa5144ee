// BlockCopy (block_copy.hpp): a format copy of a SeqAIJ block, rebuilt when the block moves on.
#include "block_copy.hpp"

namespace gpumats {

PetscErrorCode BlockCopy::update(Mat block, const FormatInfo &f, const FormatOperator &proto, const BlockBuild &how)
{
  MatStamp now;

  PetscFunctionBegin;
  PetscCall(made.read(block, &now));
  if (op && made.current_for(now)) PetscFunctionReturn(PETSC_SUCCESS);
  if (!op) op = proto.clone_parameters();
  made.forget(); // (a build that fails leaves no copy that claims to be current)
  PetscCall(BuildFromSeqAIJ(block, f, *op, how));
  made.made_from(now);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode BlockCopy::release_if_stale(Mat block)
{
  MatStamp now;

  PetscFunctionBegin;
  if (!op) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(made.read(block, &now));
  if (!made.current_for(now)) *this = BlockCopy{};
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace gpumats
