// A product of a format copy on a PETSc Vec: the vector's array where the copy needs it (staged
// through the GPU for host vectors of the *cuda types), the product, and its -log_view event.
#include "format_operator.hpp"

#if PetscDefined(HAVE_CUDA)
  #include <petscdevice.h>
#endif

namespace gpumats {

PetscErrorCode VecArray::get(Vec v, Mode mode, bool device, Staging *stage, int slot, void *stream)
{
  PetscFunctionBegin;
  vec_ = v, mode_ = mode, device_ = device, staged_ = false, stream_ = stream;
  PetscCall(VecGetLocalSize(v, &n_));
  if (!device) {
    if (mode == kRead) PetscCall(VecGetArrayRead(v, (const PetscScalar **)&host_));
    else if (mode == kWrite) PetscCall(VecGetArrayWrite(v, &host_));
    else PetscCall(VecGetArray(v, &host_));
    ptr_ = host_;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
#if GPUMATS_HAVE_CUDA
  PetscMemType mtype;
  if (mode == kRead) PetscCall(VecGetArrayReadAndMemType(v, (const PetscScalar **)&host_, &mtype));
  else if (mode == kWrite) PetscCall(VecGetArrayWriteAndMemType(v, &host_, &mtype));
  else PetscCall(VecGetArrayAndMemType(v, &host_, &mtype));
  if (PetscMemTypeDevice(mtype)) {
    ptr_ = host_; // a VECCUDA array: the kernel works on it in place
  } else {
    // a host vector (a PETSc without CUDA, or a non-CUDA Vec type): stage it through the GPU
    staged_ = true;
    PetscCall(guarded(PETSC_COMM_SELF, "staging a vector on the GPU", [&] {
      stage->slot[slot].resize(std::size_t(n_) * sizeof(PetscScalar));
      if (mode != kWrite && n_) cuda::copy_to_device(stage->slot[slot].get(), host_, std::size_t(n_) * sizeof(PetscScalar), stream);
    }));
    if (mode != kWrite && n_) PetscCall(PetscLogCpuToGpu((PetscLogDouble)n_ * sizeof(PetscScalar)));
    PetscCall(PetscInfo(v, "staging a host vector (%s) of %" PetscInt_FMT " entries on the GPU\n", ((PetscObject)v)->type_name, n_));
    ptr_ = stage->slot[slot].as<PetscScalar>();
  }
#else
  (void)stage, (void)slot;
  SETERRQ(PETSC_COMM_SELF, PETSC_ERR_PLIB, "device access without CUDA");
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode VecArray::restore()
{
  PetscFunctionBegin;
  if (!vec_) PetscFunctionReturn(PETSC_SUCCESS);
  if (device_) {
#if GPUMATS_HAVE_CUDA
    if (staged_ && mode_ != kRead && n_) {
      PetscCall(guarded(PETSC_COMM_SELF, "copying a staged vector back from the GPU",
                        [&] { cuda::copy_to_host_sync(host_, ptr_, std::size_t(n_) * sizeof(PetscScalar), stream_); }));
      PetscCall(PetscLogGpuToCpu((PetscLogDouble)n_ * sizeof(PetscScalar)));
    }
    if (mode_ == kRead) PetscCall(VecRestoreArrayReadAndMemType(vec_, (const PetscScalar **)&host_));
    else if (mode_ == kWrite) PetscCall(VecRestoreArrayWriteAndMemType(vec_, &host_));
    else PetscCall(VecRestoreArrayAndMemType(vec_, &host_));
#endif
  } else {
    if (mode_ == kRead) PetscCall(VecRestoreArrayRead(vec_, (const PetscScalar **)&host_));
    else if (mode_ == kWrite) PetscCall(VecRestoreArrayWrite(vec_, &host_));
    else PetscCall(VecRestoreArray(vec_, &host_));
  }
  vec_ = nullptr;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DiagonalOnDevice(FormatOperator &op, Vec v, PetscBool *done)
{
  PetscFunctionBegin;
  *done = PETSC_FALSE;
#if GPUMATS_HAVE_CUDA
  PetscScalar *a;
  PetscMemType mtype;
  PetscInt     n;
  void        *stream = nullptr;
  PetscCall(VecGetLocalSize(v, &n));
  PetscCall(VecGetArrayWriteAndMemType(v, &a, &mtype));
  if (PetscMemTypeDevice(mtype)) {
    PetscCall(CurrentStream(&stream));
    PetscErrorCode err = guarded(PETSC_COMM_SELF, "reading the diagonal of the GPU format", [&] { op.diagonal(a, n, stream); });
    PetscCall(VecRestoreArrayWriteAndMemType(v, &a));
    PetscCall(err);
    *done = PETSC_TRUE;
  } else PetscCall(VecRestoreArrayWriteAndMemType(v, &a));
#else
  (void)op, (void)v;
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode ApplyOperator(const FormatInfo &f, FormatOperator &op, bool device, const Scalar *x, Scalar alpha, Scalar beta, const Scalar *in, Scalar *out,
                             void *stream, bool transpose, bool gpu_timer)
{
  const PetscLogDouble flops = 2.0 * (PetscLogDouble)op.total_footprint().nnz;

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(f.spmv_event, 0, 0, 0, 0));
  if (device) {
#if GPUMATS_HAVE_CUDA
    if (gpu_timer) PetscCall(PetscLogGpuTimeBegin());
    PetscCall(guarded(PETSC_COMM_SELF, transpose ? "running the transposed SpMV kernel" : "running the SpMV kernel", [&] {
      const Epilogue<Scalar> ep{alpha, beta, in, out};
      transpose ? op.apply_transpose(x, ep, true, stream) : op.apply(x, ep, true, stream);
    }));
    if (gpu_timer) PetscCall(PetscLogGpuTimeEnd());
    PetscCall(PetscLogGpuFlops(flops));
#endif
  } else {
    PetscCall(guarded(PETSC_COMM_SELF, transpose ? "host transposed SpMV" : "host SpMV", [&] {
      const Epilogue<Scalar> ep{alpha, beta, in, out};
      transpose ? op.apply_transpose(x, ep, false, stream) : op.apply(x, ep, false, stream);
    }));
    PetscCall(PetscLogFlops(flops));
  }
  PetscCall(PetscLogEventEnd(f.spmv_event, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace gpumats
