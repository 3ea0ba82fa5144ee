// Page-locking of host memory that another library copies to the GPU. PETSc's aijcusparse uploads
// the CSR of the shadows that products and factorizations run on (cusparse.cxx) with cudaMemcpy from
// the pageable host arrays: 6.4-6.8 GB/s on the H200 machine. Registered for the copy, the same
// 630 MB go up at 51 GB/s, and registering plus unregistering them costs 0.043 s, against 0.10 s for
// the pageable copy (.carry probe reg.cu, 64-630 MB). Names no CUDA type, like device.hpp.
#pragma once

#include <cstddef>

namespace gpumats {
namespace cuda {

// Registers [p, p + bytes) with the CUDA driver while it lives, when the range is large enough for
// the registration to pay for itself (kMinPinBytes). A range the driver refuses (already registered,
// or no GPU) stays pageable: the copy is slower, not wrong.
class HostPin {
public:
  static constexpr std::size_t kMinPinBytes = std::size_t(32) << 20; // at 64 MB: 8 ms registered, 13 ms pageable

  HostPin(const void *p, std::size_t bytes);
  ~HostPin();
  HostPin(const HostPin &)            = delete;
  HostPin &operator=(const HostPin &) = delete;
  bool pinned() const { return ptr_ != nullptr; }

private:
  void *ptr_ = nullptr;
};

} // namespace cuda
} // namespace gpumats
