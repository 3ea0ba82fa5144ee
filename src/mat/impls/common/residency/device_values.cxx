// Changes to the values of a GPU Seq matrix whose newest values are on the GPU only
// (Residency::newest_in_shadow): a product's result (cusparse_bridge.cxx) or a matrix filled by MatSetValuesCOO
// with device values (coo.cxx). MatScale, MatDiagonalScale and MatAXPY with X's nonzeros among Y's
// change the values of its aijcusparse shadow where they are, instead of downloading them into the
// host CSR (SeqAIJ's operations read through MatSeqAIJGetArray, which brings the host up to date),
// changing them there and uploading them again at the next product. This is GAMG's prolongator
// smoothing, P = A P_t scaled by D^-1, then MatAYPX(., a, P_t, SUBSET_NONZERO_PATTERN): aijcusparse
// itself takes A P_t down and up once for MatDiagonalScale, which it does on the host.
//
// Matrices whose host values are current keep AIJ's operations (their values are on the host; the
// format copy follows at the next use, by its values only). The format copy of a matrix changed
// here is refilled from the shadow's device values (seq.cxx, UpdateValuesFromDevice).
#include "../types/seq_mpi.hpp"

#if PetscDefined(HAVE_CUDA)
  #include <petscdevice.h>
  #include "../cuda/csr.hpp"
#endif

namespace gpumats {

#if PetscDefined(HAVE_CUDA)

namespace {

using ScaleFn         = PetscErrorCode (*)(Mat, PetscScalar);
using DiagonalScaleFn = PetscErrorCode (*)(Mat, Vec, Vec);

// whether A is one of our GPU Seq types with its newest values in its shadow only, and cuSPARSE's
// 32-bit indices are PetscInt (the kernels below read the shadow's CSR as it is); not while A is
// bound to the CPU (bind.cxx): AIJ's operations then, which bring the values to the host first
bool ValuesOnDevice(Mat A)
{
  if (sizeof(PetscInt) != sizeof(int) || !OurDeviceSeq(A)) return false;
  const TypeData *d = Data(A);
  return d && d->where.newest_in_shadow() && !d->bound;
}

PetscLogDouble Nonzeros(Mat A)
{
  MatInfo info;
  return MatGetInfo(A, MAT_LOCAL, &info) ? 0 : info.nz_used;
}

// The shadow's CSR on the GPU, with its values writable (aijcusparse then holds them as current
// on the GPU: MatSeqAIJCUSPARSEGetArray), or read only
struct ShadowCsr {
  Mat                S = nullptr;
  const int         *i = nullptr, *j = nullptr;
  PetscScalar       *v  = nullptr;
  const PetscScalar *rv = nullptr;

  PetscErrorCode get(Mat s, bool write)
  {
    PetscFunctionBegin;
    S = s;
    PetscCall(MatSeqAIJCUSPARSEGetIJ(S, PETSC_FALSE, &i, &j));
    if (write) PetscCall(MatSeqAIJCUSPARSEGetArray(S, &v));
    else PetscCall(MatSeqAIJCUSPARSEGetArrayRead(S, &rv));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscErrorCode restore()
  {
    PetscFunctionBegin;
    if (v) PetscCall(MatSeqAIJCUSPARSERestoreArray(S, &v));
    if (rv) PetscCall(MatSeqAIJCUSPARSERestoreArrayRead(S, &rv));
    PetscCall(MatSeqAIJCUSPARSERestoreIJ(S, PETSC_FALSE, &i, &j));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  const PetscInt *row_ptr() const { return reinterpret_cast<const PetscInt *>(i); }
  const PetscInt *col_ind() const { return reinterpret_cast<const PetscInt *>(j); }
};

PetscErrorCode Scale(Mat A, PetscScalar a)
{
  Mat S;

  PetscFunctionBegin;
  if (!ValuesOnDevice(A)) {
    PetscCall(Data(A)->call<ScaleFn>(kScale, A, a));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(ShadowOf(A, &S));
  PetscCall(MatScale(S, a)); // aijcusparse's, on the GPU; the shadow keeps A's newest values
  PetscFunctionReturn(PETSC_SUCCESS);
}

// A vector's entries on the GPU: its own array when it is a device vector, else an upload
struct DeviceEntries {
  Vec                x = nullptr;
  const PetscScalar *p = nullptr, *host = nullptr;
  cuda::Buffer       copy;

  PetscErrorCode get(Vec v)
  {
    PetscMemType mt;

    PetscFunctionBegin;
    if (!v) PetscFunctionReturn(PETSC_SUCCESS);
    x = v;
    PetscCall(VecGetArrayReadAndMemType(v, &p, &mt));
    if (PetscMemTypeHost(mt)) {
      PetscInt n;
      PetscCall(VecGetLocalSize(v, &n));
      host = p;
      PetscCall(guarded(PETSC_COMM_SELF, "uploading the scaling vector", [&] { copy = cuda::upload(host, std::size_t(n)); }));
      p = copy.as<PetscScalar>();
    }
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscErrorCode restore()
  {
    PetscFunctionBegin;
    if (x) PetscCall(VecRestoreArrayReadAndMemType(x, host ? &host : &p));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
};

PetscErrorCode DiagonalScale(Mat A, Vec l, Vec r)
{
  Mat           S;
  ShadowCsr     csr;
  DeviceEntries dl, dr;
  void         *stream = nullptr;

  PetscFunctionBegin;
  if (!ValuesOnDevice(A)) {
    PetscCall(Data(A)->call<DiagonalScaleFn>(kDiagonalScale, A, l, r));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(ShadowOf(A, &S));
  PetscCall(dl.get(l));
  PetscCall(dr.get(r));
  PetscCall(csr.get(S, true));
  PetscCall(CurrentStream(&stream));
  PetscCall(PetscLogGpuTimeBegin());
  PetscErrorCode err = guarded(PETSC_COMM_SELF, "scaling the values on the GPU", [&] {
    cuda::csr_diagonal_scale<PetscScalar, PetscInt>(A->rmap->n, csr.row_ptr(), csr.col_ind(), csr.v, dl.p, dr.p, stream);
    cuda::synchronize(stream); // (the vectors' uploads are freed on return)
  });
  PetscCall(PetscLogGpuTimeEnd());
  PetscCall(csr.restore());
  PetscCall(dr.restore());
  PetscCall(dl.restore());
  PetscCall(err);
  PetscCall(PetscLogGpuFlops(Nonzeros(A) * ((l ? 1 : 0) + (r ? 1 : 0))));
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace

OpFn DeviceScaleOp() { return (OpFn)Scale; }
OpFn DeviceDiagonalScaleOp() { return (OpFn)DiagonalScale; }

PetscErrorCode DeviceAXPY(Mat Y, PetscScalar a, Mat X, MatStructure str, bool *done)
{
  Mat       SY, SX;
  ShadowCsr y, x;
  PetscBool cusparse;
  void     *stream = nullptr;

  PetscFunctionBegin;
  *done = false;
  if ((str != SUBSET_NONZERO_PATTERN && str != SAME_NONZERO_PATTERN) || X == Y || !ValuesOnDevice(Y)) PetscFunctionReturn(PETSC_SUCCESS);
  if (Y->rmap->n != X->rmap->n || Y->cmap->n != X->cmap->n) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscObjectTypeCompare((PetscObject)X, MATSEQAIJCUSPARSE, &cusparse));
  if (!cusparse && !OurDeviceSeq(X)) PetscFunctionReturn(PETSC_SUCCESS); // X on the host
  if (cusparse) SX = X;
  else PetscCall(ShadowOf(X, &SX)); // (uploads X's values unless its shadow holds them)
  PetscCall(ShadowOf(Y, &SY));
  PetscCall(x.get(SX, false));
  PetscCall(y.get(SY, false)); // read only while X's entries are looked up: Y's values stay where they are
  PetscCall(CurrentStream(&stream));
  std::int64_t   missing = 0;
  PetscErrorCode err     = guarded(PETSC_COMM_SELF, "finding X's nonzeros among Y's on the GPU", [&] {
    missing = cuda::csr_subset_axpy<PetscScalar, PetscInt>(Y->rmap->n, a, x.row_ptr(), x.col_ind(), x.rv, y.row_ptr(), y.col_ind(), nullptr, false, stream);
  });
  PetscCall(y.restore());
  if (!err && !missing) {
    PetscCall(y.get(SY, true));
    PetscCall(PetscLogGpuTimeBegin());
    err = guarded(PETSC_COMM_SELF, "adding X into Y on the GPU", [&] {
      (void)cuda::csr_subset_axpy<PetscScalar, PetscInt>(Y->rmap->n, a, x.row_ptr(), x.col_ind(), x.rv, y.row_ptr(), y.col_ind(), y.v, true, stream);
    });
    PetscCall(PetscLogGpuTimeEnd());
    PetscCall(y.restore());
  }
  PetscCall(x.restore());
  PetscCall(err);
  if (missing) {
    PetscCall(PetscInfo(Y, "MatAXPY: %" PetscInt64_FMT " of X's nonzeros are not among Y's: through the host\n", (PetscInt64)missing));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscLogGpuFlops(2 * Nonzeros(X)));
  // (MatAXPY leaves the state to the type, unlike MatScale and MatDiagonalScale: Y's format copy
  // follows its values only once Y's state moves)
  PetscCall(PetscObjectStateIncrease((PetscObject)Y));
  *done = true;
  PetscFunctionReturn(PETSC_SUCCESS);
}

#else // without a CUDA PETSc no values live on the GPU

OpFn           DeviceScaleOp() { return nullptr; }
OpFn           DeviceDiagonalScaleOp() { return nullptr; }
PetscErrorCode DeviceAXPY(Mat, PetscScalar, Mat, MatStructure, bool *done)
{
  *done = false;
  return PETSC_SUCCESS;
}

#endif

} // namespace gpumats
