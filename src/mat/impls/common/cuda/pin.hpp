// Page-locking of host memory that another library copies to the GPU. PETSc's aijcusparse uploads
// the CSR of the shadows that products and factorizations run on (cusparse_bridge.cxx) with cudaMemcpy from
// the pageable host arrays, several times slower than from page-locked memory; registering a large
// array for the copy and unregistering it costs less than the difference (figures:
// docs/results/ex56-gamg-setup-h200-2026-11-24.txt). Names no CUDA type, like device.hpp.
#pragma once

#include <cstddef>

namespace gpumats {
namespace cuda {

// Registers [p, p + bytes) with the CUDA driver while it lives, when the range is large enough for
// the registration to pay for itself (kMinPinBytes). A range the driver refuses (already registered,
// or no GPU) stays pageable: the copy is slower, not wrong.
class HostPin {
public:
  static constexpr std::size_t kMinPinBytes = std::size_t(32) << 20; // below this the registration costs about what it saves

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
