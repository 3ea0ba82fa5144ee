// The PETSc glue shared by all formats (layer 3). A format plugs in with a traits struct (see
// cmrs/cmrs.cxx) giving its parameters, options, host build, device build and description; the Seq
// and MPI Mat types, conversions, vector access, logging and viewers are written once, here and
// in seq.cxx / mpi.cxx.
#pragma once

#include <petscgpumats.h>
#include <petsc/private/matimpl.h>

#include "core/csr.hpp"
#include "core/transform.hpp"
#include "registry.hpp"
#if GPUMATS_HAVE_CUDA
  #include "cuda/device.hpp"
#endif

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

// PETSc before 3.19 returned a plain 0 for success
#if PETSC_VERSION_LT(3, 19, 0)
  #define PETSC_SUCCESS 0
#endif

#if defined(PETSC_USE_COMPLEX)
  #define GPUMATS_SUPPORTED_SCALAR 0
#else
  #define GPUMATS_SUPPORTED_SCALAR 1
#endif

namespace gpumats {

using Scalar = PetscScalar;
using CsrIn  = CsrView<PetscScalar, PetscInt, PetscInt>;
// PetscOptionItems became an opaque pointer typedef in recent PETSc; setfromoptions took a pointer before.
using OptionItems = std::conditional_t<std::is_pointer<PetscOptionItems>::value, PetscOptionItems, PetscOptionItems *>;

// One format copy of one CSR block (the whole matrix for Seq types, the diagonal or the
// off-diagonal block for MPI types), on the host or on the GPU, with its parameters.
class FormatOperator {
public:
  // the ELLPACK paper's cache-differentiated loads: matrix arrays evict-first so the caches keep x
  bool stream_loads = true;
  // -mat_gpumats_reorder rcm: the copy holds the block with rows and columns in reverse
  // Cuthill-McKee order (the ELLPACK paper's bandwidth reduction), so neighbouring rows share x
  bool reorder_rcm = false;
  // Set by BuildFromSeqAIJ when the copy is reordered (empty otherwise): order[i] is the original
  // row (and column: the order is symmetric) at position i, inverse[r] the position of row r.
  // ApplyOperator gathers x into the copy's order and the copy's product back into the user's.
  std::vector<std::int32_t>   order, inverse;
  mutable std::vector<Scalar> host_x, host_y;
#if GPUMATS_HAVE_CUDA
  cuda::Buffer         dev_order, dev_inverse;
  mutable cuda::Buffer dev_x, dev_y;
#endif
  // -mat_gpumats_long_rows: rows longer than split_at keep their first split_at entries in the
  // format and the rest in a tail (a CSR of those rows only, one warp per row), so that a few very
  // long rows do not serialise a thread or a warp of the format. -1: chosen per matrix; 0: never.
  PetscInt long_rows = -1;
  struct Tail : RowTail<Scalar> { // the core's split (core/transform.hpp) and its device copy
#if GPUMATS_HAVE_CUDA
    cuda::Buffer dev_rows, dev_ptr, dev_col, dev_val;
#endif
  } tail;
  // what the glue adds to the format (RCM order, long-row tail), for parameters()
  std::string glue_notes() const;
  // the format's footprint plus the tail's
  Footprint total_footprint() const;


  virtual ~FormatOperator() = default;
  // same parameters, nothing built
  virtual std::unique_ptr<FormatOperator> clone_parameters() const = 0;
  // reads -mat_<format>_* inside an open options block; returns whether a parameter changed
  virtual PetscErrorCode set_from_options(OptionItems PetscOptionsObject, MPI_Comm comm, PetscBool *changed) = 0;
  // (re)builds from a CSR block; throws FormatError or cuda::DeviceError and then holds nothing
  virtual void build(const CsrIn &A, PetscInt block_size, bool device) = 0;
  virtual void clear()                                                 = 0;
  virtual void mult_host(const Scalar *x, const Epilogue<Scalar> &ep) const = 0;
#if GPUMATS_HAVE_CUDA
  virtual void mult_device(const Scalar *x, const Epilogue<Scalar> &ep, void *stream) const = 0;
#endif
  // bytes one product would move with this format and these parameters, from the CSR's structure
  // (exact where cheap, sampled otherwise): the input of autocuda's model
  virtual double      predicted_bytes(const CsrIn &A, PetscInt block_size) const = 0;
  // dependent steps of the longest work item (a thread's row in SELL-P, a warp's strip in CMRS, a
  // thread's block row in BELLPACK): what bounds the time when one row is far longer than the rest
  virtual double      critical_steps(const CsrIn &A, PetscInt block_size) const = 0;
  virtual Footprint   footprint() const  = 0;
  virtual std::string parameters() const = 0; // the chosen parameters, for -mat_view and benchmarks
  virtual std::size_t device_bytes() const = 0;
};

// Runs `body` and turns the format core's and the CUDA layer's exceptions into PETSc errors.
template <class F>
PetscErrorCode guarded(MPI_Comm comm, const char *context, F &&body)
{
  PetscFunctionBegin;
  try {
    body();
  } catch (const FormatError &e) {
    SETERRQ(comm, PETSC_ERR_SUP, "%s: %s", context, e.what());
#if GPUMATS_HAVE_CUDA
  } catch (const cuda::DeviceError &e) {
    SETERRQ(comm, e.out_of_memory() ? PETSC_ERR_MEM : PETSC_ERR_GPU, "%s: %s", context, e.what());
#endif
  } catch (const std::bad_alloc &) {
    SETERRQ(comm, PETSC_ERR_MEM, "%s: out of host memory", context);
  } catch (const std::exception &e) {
    SETERRQ(comm, PETSC_ERR_LIB, "%s: %s", context, e.what());
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

// ---- shared pieces of the Seq and MPI types (seq.cxx, mpi.cxx, common.cxx) ----------------------

// Checks that this build of the plug-in can run `device` types of format f; a clear error otherwise.
PetscErrorCode CheckSupported(Mat A, const FormatInfo &f, bool device);
// Makes the GPU of this rank current (rank-local index modulo the GPUs of the node), once.
PetscErrorCode SelectDevice(MPI_Comm comm);
// The CUDA stream PETSc's vector operations use, so kernels are ordered with them.
PetscErrorCode CurrentStream(void **stream);
// Reads the format's options for A (from SetFromOptions and from conversions).
PetscErrorCode ReadFormatOptions(Mat A, const FormatInfo &f, bool device, FormatOperator &op, OptionItems PetscOptionsObject, PetscBool *changed);
// Builds op from a SeqAIJ block, logging the conversion and the upload; the block stays untouched.
// diagonal: the block is a diagonal block (its columns are the rows' own unknowns), so
// -mat_gpumats_reorder may renumber both, and -mat_gpumats_long_rows may split its rows.
PetscErrorCode BuildFromSeqAIJ(Mat block, const FormatInfo &f, FormatOperator &op, bool device, PetscInt block_size, bool diagonal);
// Prints the -mat_view ::ascii_info lines of one format copy.
PetscErrorCode ViewOperator(PetscViewer viewer, const FormatInfo &f, const char *what, const FormatOperator &op, bool device);

// Where a kernel reads or writes a Vec: host arrays for host types; device arrays for *cuda types
// (a VECCUDA array directly, any other Vec staged through a device buffer owned by the Mat).
struct Staging {
#if GPUMATS_HAVE_CUDA
  cuda::Buffer slot[3]; // x, y/in, out
#endif
};
class VecArray {
public:
  enum Mode { kRead, kWrite, kReadWrite };
  PetscErrorCode get(Vec v, Mode mode, bool device, Staging *stage, int slot, void *stream);
  PetscErrorCode restore();
  Scalar        *ptr() const { return ptr_; }

private:
  Vec         vec_ = nullptr;
  Mode        mode_ = kRead;
  Scalar     *host_ = nullptr, *ptr_ = nullptr;
  PetscInt    n_ = 0;
  bool        device_ = false, staged_ = false;
  void       *stream_ = nullptr;
};

// out = alpha*A*x + beta*in through op, on the host or the device, with logging. in may be null
// (beta = 0) and may be the same Vec as out.
PetscErrorCode ApplyOperator(const FormatInfo &f, const FormatOperator &op, bool device, const Scalar *x, Scalar alpha, Scalar beta, const Scalar *in,
                             Scalar *out, void *stream);

} // namespace gpumats
