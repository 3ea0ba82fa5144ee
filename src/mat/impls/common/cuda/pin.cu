// HostPin: see pin.hpp.
#include "pin.hpp"

#include <cuda_runtime.h>

namespace gpumats {
namespace cuda {

HostPin::HostPin(const void *p, std::size_t bytes)
{
  if (!p || bytes < kMinPinBytes) return;
  void *q = const_cast<void *>(p);
  if (cudaHostRegister(q, bytes, cudaHostRegisterDefault) == cudaSuccess) ptr_ = q;
  else (void)cudaGetLastError(); // refused: the copy goes from pageable memory, and the error is not left for others to find
}

HostPin::~HostPin()
{
  if (ptr_ && cudaHostUnregister(ptr_) != cudaSuccess) (void)cudaGetLastError();
}

} // namespace cuda
} // namespace gpumats
