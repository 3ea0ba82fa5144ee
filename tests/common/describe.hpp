// One-line descriptions of format parameters, for the failure messages of the C++ test programs.
#pragma once

#include "../../src/mat/impls/bellpack/core.hpp"
#include "../../src/mat/impls/cmrs/core.hpp"
#include "../../src/mat/impls/sellp/core.hpp"

#include <string>

namespace testmat {

inline std::string describe(const gpumats::cmrs::Params &p)
{
  return "height=" + std::to_string(p.height) + " sort=" + std::to_string(p.sort_columns) + " pad=" + std::to_string(p.pad_multiple) +
         " kernel=" + gpumats::cmrs::kernel_name(p.kernel) + (p.lanes ? " lanes=" + std::to_string(p.lanes) : std::string());
}
inline std::string describe(const gpumats::sellp::Params &p)
{
  return "b=" + std::to_string(p.slice_height) + " t=" + std::to_string(p.threads_per_row) + " sigma=" + std::to_string(p.sigma) +
         " index=" + std::to_string(int(p.index)) + " values=" + std::to_string(int(p.values)) + (p.shared_table ? " shared-table" : "");
}
inline std::string describe(const gpumats::bellpack::Params &p)
{
  return "r=" + std::to_string(p.r) + " c=" + std::to_string(p.c) + " R=" + std::to_string(p.partition_rows) +
         (p.row_threads ? " T=" + std::to_string(p.row_threads) : std::string(" T=auto")) +
         (p.values == gpumats::Values::kPlain ? "" : (p.values == gpumats::Values::kDictionary ? " dictionary" : " values=auto"));
}

} // namespace testmat
