// Turns CUDA error codes into DeviceError exceptions that name the call and, for allocations,
// the size asked for. nvcc-only.
#pragma once

#include "device.hpp"

#include <cuda_runtime.h>
#include <string>

namespace gpumats {
namespace cuda {

inline void check(cudaError_t err, const char *what, std::size_t bytes = 0)
{
  if (err == cudaSuccess) return;
  cudaGetLastError(); // a failed call leaves a non-sticky error behind; clear it
  std::string msg = std::string(what) + " failed: " + cudaGetErrorString(err);
  const bool  oom = err == cudaErrorMemoryAllocation;
  if (oom) msg += " (asked for " + std::to_string(bytes) + " bytes of GPU memory; free GPU memory or use more GPUs/ranks)";
  throw DeviceError(msg, oom);
}

// After a kernel launch: reports launch-configuration errors at once (execution errors surface at
// the next synchronising call).
inline void check_launch(const char *kernel) { check(cudaGetLastError(), kernel); }

} // namespace cuda
} // namespace gpumats
