// What every format's GPU half shares, so that a format's cuda.cu holds only its own kernels, its
// build from an upload and its download: the host-CSR entry point of the build, the grid of a
// launch of one thread per item, and the explicit instantiations of the interface every format's
// device.hpp declares. Names no CUDA type (the build and the upload it calls are compiled in the
// .cu files), so the glue and the tests may include it.
#pragma once

#include "csr.hpp"

#include <cstdint>
#include <memory>
#include <vector>

namespace gpumats {
namespace cuda {

// A format's build from a host CSR: the parameters checked, the CSR uploaded on the default
// stream, then the format's build_on_device(const DeviceCsr &, const Params &, BuildLog *) (found
// in the namespace of Params). The tests' entry point; a format's device.hpp brings it in with
// `using cuda::build_on_device;`.
template <class V, class I, class Params>
std::unique_ptr<Operator<V>> build_on_device(const CsrView<V, I, I> &A, const Params &p)
{
  check_params(p);
  const DeviceCsr<V, I> up(A, nullptr);
  return build_on_device(up, p);
}

// The start of a format's download: a host matrix with its device copy's parameters and sizes.
template <class Matrix, class Device>
Matrix host_shell(const Device &D)
{
  Matrix M;
  M.params = D.params;
  M.nrows  = D.nrows;
  M.ncols  = D.ncols;
  return M;
}

// v resized to n elements and filled from the device array src (nothing copied when n is 0).
template <class T>
void download_into(std::vector<T> &v, const void *src, std::int64_t n)
{
  v.resize(std::size_t(n));
  if (n) copy_to_host_sync(v.data(), src, std::size_t(n) * sizeof(T), nullptr);
}

// Blocks of 256 threads covering n items, one thread each.
inline unsigned blocks_for(std::int64_t n) { return unsigned((n + 255) / 256); }

} // namespace cuda
} // namespace gpumats

// The device interface every format declares inside its namespace, in its device.hpp, and
// instantiates with GPUMATS_FORMAT_DEVICE_INSTANTIATE:
//   to_device(M)             copies a host-built matrix (from_csr) to the current GPU;
//   build_on_device(A, p, l) converts a CSR on the GPU from its upload (common/cuda/csr.hpp),
//                            array for array identical to to_device(from_csr(A, p)); `l` (may be
//                            null) is told when the scatter starts;
//   build_on_device(A, p)    the same from a host CSR, uploaded first (cuda::build_on_device above);
//   download(op)             brings a device copy back into host form (tests compare it with from_csr).
#define GPUMATS_FORMAT_DEVICE_INTERFACE                                                                                                      \
  template <class V>                                                                                                                        \
  std::unique_ptr<cuda::Operator<V>> to_device(const Matrix<V> &M);                                                                         \
  template <class V, class I>                                                                                                               \
  std::unique_ptr<cuda::Operator<V>> build_on_device(const cuda::DeviceCsr<V, I> &A, const Params &p, cuda::BuildLog *log = nullptr);        \
  using cuda::build_on_device;                                                                                                              \
  template <class V>                                                                                                                        \
  Matrix<V> download(const cuda::Operator<V> &op)

// The explicit instantiations of a format's device interface (to_device, build_on_device from an
// upload, download) for the value and index types the glue uses, written inside the format's
// namespace at the end of its cuda.cu. EXTRA_V(V) and EXTRA_VI(V, I) instantiate what the format
// declares beyond that (GPUMATS_NO_EXTRA_V / GPUMATS_NO_EXTRA_VI when nothing).
#define GPUMATS_NO_EXTRA_V(V)
#define GPUMATS_NO_EXTRA_VI(V, I)
#define GPUMATS_FORMAT_DEVICE_INSTANTIATE_V(V, EXTRA_V)                                                                                      \
  template std::unique_ptr<cuda::Operator<V>> to_device<V>(const Matrix<V> &);                                                               \
  template Matrix<V>                          download<V>(const cuda::Operator<V> &);                                                        \
  EXTRA_V(V)
#define GPUMATS_FORMAT_DEVICE_INSTANTIATE_VI(V, I, EXTRA_VI)                                                                                 \
  template std::unique_ptr<cuda::Operator<V>> build_on_device<V, I>(const cuda::DeviceCsr<V, I> &, const Params &, cuda::BuildLog *);         \
  EXTRA_VI(V, I)
#define GPUMATS_FORMAT_DEVICE_INSTANTIATE(EXTRA_V, EXTRA_VI)                                                                                 \
  GPUMATS_FORMAT_DEVICE_INSTANTIATE_V(float, EXTRA_V)                                                                                        \
  GPUMATS_FORMAT_DEVICE_INSTANTIATE_V(double, EXTRA_V)                                                                                       \
  GPUMATS_FORMAT_DEVICE_INSTANTIATE_VI(float, std::int32_t, EXTRA_VI)                                                                        \
  GPUMATS_FORMAT_DEVICE_INSTANTIATE_VI(float, std::int64_t, EXTRA_VI)                                                                        \
  GPUMATS_FORMAT_DEVICE_INSTANTIATE_VI(double, std::int32_t, EXTRA_VI)                                                                       \
  GPUMATS_FORMAT_DEVICE_INSTANTIATE_VI(double, std::int64_t, EXTRA_VI)
