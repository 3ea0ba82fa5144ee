// The tables measured per GPU model (autocuda's calibrations, BELLPACK's execution-time models,
// CMRS's kernel sweeps), looked up by the name CUDA gives the GPU model, exactly as the measurement
// recorded it. PETSc-free (tests/core/test_calibration.cpp).
#pragma once

#include <string>

namespace gpumats {

// The entry of table[0..count) measured on GPU model `gpu`, or null. Entry has a `gpu` name.
template <class Entry>
const Entry *measured_on(const Entry *table, int count, const std::string &gpu)
{
  for (int i = 0; i < count; ++i)
    if (gpu == table[i].gpu) return &table[i];
  return nullptr;
}

// How a table's fallback is said: "<missing> <gpu>, so <first>'s (<remedy>)".
struct FallbackNote {
  const char *missing;     // "no calibration for"
  const char *remedy;      // "make tune measures one"
  bool        without_gpu; // whether a process without a GPU ("this GPU") is told too
};

template <class Entry>
struct GpuChoice {
  const Entry *entry;
  std::string  note; // empty where the GPU model has its own entry; else which one is used instead, and why
};

// The entry measured on `gpu`, else the table's first with a note saying so. The figures differ
// between GPU models (memory system, clocks, cache sizes), so another model's are used only where
// none exists; the first is that of config/tuning/default-gpu (config/tuning/gpus.py writes it first).
template <class Entry>
GpuChoice<Entry> choose_for_gpu(const Entry *table, int count, const std::string &gpu, const FallbackNote &say)
{
  if (const Entry *e = measured_on(table, count, gpu)) return {e, ""};
  if (gpu.empty() && !say.without_gpu) return {&table[0], ""};
  return {&table[0], std::string(say.missing) + " " + (gpu.empty() ? std::string("this GPU") : gpu) + ", so " + table[0].gpu + "'s (" + say.remedy + ")"};
}

} // namespace gpumats
