// Where the newest values of one of our Seq matrices (or of an MPI matrix's format copies) live,
// kept in one place as PETSc's A->offloadmask is for aijcusparse. A block can hold up to four
// copies: the host CSR of the AIJ matrix underneath, the format copy (host or GPU), the aijcusparse
// shadow on which cuSPARSE products and factorizations run (GPU Seq types with a CUDA PETSc), and
// COO maps on that shadow. The host CSR holds the newest values unless they arrived on the GPU
// (MatSetValuesCOO with device values, a cuSPARSE product, MatScale of such values): then the shadow
// holds them and the host values are stale until something reads them there.
//
// Residency is the only writer of that record; every operation asks it to make the side it needs
// current (make_host_current, shadow_for, format_current) or tells it which side it wrote.
#pragma once

#include "../operator/format_operator.hpp"
#include "copy_record.hpp"

namespace gpumats {

class Residency {
public:
  Residency() = default;
  Residency(const Residency &) = delete;
  Residency &operator=(const Residency &) = delete;
  ~Residency() { drop_shadow(); }

  // ---- the format copy ----
  // The copy is current while the matrix keeps the (id, state) it was built from. A copy built
  // inside MatAssemblyEnd (or MatConvert) sees the state go up by one when that call returns,
  // which is tolerated once.
  PetscErrorCode format_current(Mat A, PetscBool *current);
  PetscErrorCode format_built(Mat A, bool in_assembly);
  // build(A) where the copy is not current: what every operation that reads the copy calls first
  template <class Build>
  PetscErrorCode make_format_current(Mat A, Build build)
  {
    PetscBool current;

    PetscFunctionBegin;
    PetscCall(format_current(A, &current));
    if (!current) PetscCall(build(A));
    built_unread_ = false; // (a read, whether or not it built)
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  // for changes PETSc does not record in a state (MatRetrieveValues, new parameters, new blocks)
  void format_stale() { format_.forget(); }
  // Whether the last copy was built inside an assembly (or a MatConvert) and nothing has read it
  // since: a matrix assembled again before any use is being filled on the host (MatFilter
  // assembles once per row it filters), so its next assemblies leave the copy to the first use
  // (BuildAtThisAssembly) rather than refill it at each, which costs O(nnz) per assembly.
  bool built_unread() const { return built_unread_; }

  // ---- the host CSR ----
  bool host_stale() const { return host_stale_; }
  // the host values were overwritten whole (MatSeqAIJGetArrayWrite), or will never be read again
  // (the matrix is being destroyed): nothing to bring down from the GPU
  void host_written() { host_stale_ = false; }
  // brings the host values down from the shadow where the newest are there only; otherwise nothing
  PetscErrorCode make_host_current(Mat A);

  // ---- the aijcusparse shadow ----
  Mat  shadow() const { return shadow_; }
  bool newest_in_shadow() const { return shadow_ && host_stale_; }
  // the shadow was preallocated with A's COO maps (its MatSetValuesCOO scatters on the GPU)
  bool coo_in_shadow() const { return shadow_ && shadow_coo_; }
  // (callers bring the host up to date first where the shadow holds the newest values)
  void drop_shadow();
#if PetscDefined(HAVE_CUDA)
  // A's shadow, current with A's values: made over A's host arrays at the first call, refilled
  // from the host when A changed there, never refilled while it holds A's newest values
  PetscErrorCode shadow_for(Mat A, Mat *S);
  // where A has a shadow: its CSR on the GPU, current with A (as shadow_for makes it), so that A's
  // format copy is built from it without an upload of its own; *have false where A has no shadow
  // or cuSPARSE's indices are not PetscInt. The arrays stay valid while the shadow and A do not change.
  PetscErrorCode shadow_csr_on_device(Mat A, DeviceCsrIn *csr, PetscBool *have);
  // S, made by A's COO preallocation with A's COO maps (on A's own host arrays where shares_host),
  // becomes A's shadow. It takes A's nonzero state at its next use: PETSc raises that state after
  // the preallocation returns.
  void adopt_coo_shadow(Mat S, bool shares_host);
  // MatSetValuesCOO wrote A's newest values into the shadow
  void values_written_in_shadow() { host_stale_ = true; }
  // inner (aijcusparse, a cuSPARSE product with C's pattern and values) becomes C's shadow and
  // holds C's newest values; raised_on_return: the caller's caller raises C's state once after
  // this returns (MatProductNumeric), and the shadow is current for that state
  PetscErrorCode adopt_product_values(Mat C, Mat inner, bool raised_on_return);
#endif

private:
  // the format copy: current for the (id, state) it was built from
  CopyRecord format_{CopyRecord::kId};
  // the shadow: current with the (state, nonzero state) of A it holds
  Mat        shadow_ = nullptr;
  CopyRecord shadow_made_{CopyRecord::kPattern};
  // the shadow holds A's own host arrays rather than arrays of its own (a product's result keeps the
  // product's aijcusparse matrix; PETSc before 3.25 gives a COO shadow its own)
  bool shadow_shares_ = false;
  // shadow_coo_: preallocated with A's COO maps; coo_pending_ until it takes A's nonzero state
  bool shadow_coo_ = false, coo_pending_ = false;
  // A's newest values are the shadow's only
  bool host_stale_ = false;
  // built_unread()
  bool built_unread_ = false;
};

} // namespace gpumats
