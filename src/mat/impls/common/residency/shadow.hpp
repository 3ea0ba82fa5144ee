// aijcusparse matrices over our matrices' host CSR (GPU types with a CUDA PETSc): the shadow of a
// Seq matrix (kept by its Residency), of an MPI matrix's diagonal block (BlockShadow) and of an MPI
// matrix's blocks (the product stand-in, mpi_products.cxx). cuSPARSE products, factorizations and
// solves run on them through PETSc's own aijcusparse code.
#pragma once

#include "../operator/format_operator.hpp"
#include "copy_record.hpp"

namespace gpumats {

#if PetscDefined(HAVE_CUDA)
// A new aijcusparse matrix on A's own host CSR (ia, ja from MatGetRowIJ, va A's values), which it
// never owns or frees: the shadow as ShadowOf and COO preallocation (coo.cxx) make it
PetscErrorCode SharedShadow(Mat A, const PetscInt *ia, const PetscInt *ja, const PetscScalar *va, Mat *S);
// The same over a SeqAIJ (or SeqAIJ-derived) matrix's own CSR arrays and values
PetscErrorCode ShadowOver(Mat A, Mat *S);
// Sends S's host CSR to the GPU now, from page-locked memory where it is large (its pattern too
// where `pattern`); a small one is left to aijcusparse's own copy at its first use
PetscErrorCode UploadPinned(Mat S, bool pattern);
// The -log_view event of making or refilling a shadow ("GpuMatsShadow")
PetscErrorCode RegisterShadowEvent();
PetscLogEvent  ShadowEvent();
// The diagonal block of an MPI GPU matrix as block Jacobi's sub-solver sees it: an aijcusparse
// matrix over the plain SeqAIJ block's host CSR (SharedShadow), so that ILU/ICC/LU factor and
// solve in cuSPARSE and the sub-vectors stay on the GPU, as with mpiaijcusparse. It is made anew
// when the block's pattern moves (SeqAIJ reallocates its arrays then) and told its host values
// are newer, for aijcusparse to upload again, when only the values move.
class BlockShadow {
public:
  BlockShadow() = default;
  BlockShadow(const BlockShadow &) = delete;
  BlockShadow &operator=(const BlockShadow &) = delete;
  ~BlockShadow() { release(); }
  PetscErrorCode of(Mat block, Mat *S);
  void           release();

private:
  Mat        shadow_ = nullptr;
  CopyRecord made_{CopyRecord::kId | CopyRecord::kPattern}; // of the block
};
#endif

} // namespace gpumats
