// The GPU model of this process, what the per-GPU tables (common/core/gpu_table.hpp) are looked up
// by: "" in a build without CUDA, as on a machine without a GPU.
#pragma once

#include <string>
#if GPUMATS_HAVE_CUDA
  #include "../cuda/device.hpp"
#endif

namespace gpumats {

inline const std::string &process_gpu_name()
{
#if GPUMATS_HAVE_CUDA
  return cuda::process_gpu_model();
#else
  static const std::string none;
  return none;
#endif
}

} // namespace gpumats
