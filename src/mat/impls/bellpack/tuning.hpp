// BELLPACK's partition size R chosen by the paper's execution-time model (Choi, Singh and Vuduc,
// section 6), instantiated with the offline measurements of model.hpp. PETSc-free.
//
// The GPU runs L partitions (CUDA blocks of R threads) in I = ceil(L / (T M)) iterations of up to
// T partitions per multiprocessor (eq. 1); an iteration costs sigma + alpha (k - 1) for k
// partitions per multiprocessor (eq. 3); with N blocks per thread, sigma1 = sigma1,o + gamma N,
// sigma = gamma' N and alpha(N) = alpha N (eqs. 13, 14, 17), and
//   t = tau1 + (I - 2) tau + tauI                                                 (eqs. 18-21).
#pragma once

#include "../common/core/gpu_table.hpp"
#include "model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <string>

namespace gpumats {
namespace bellpack {

using ModelChoice = GpuChoice<Model>;

// The model benchmarked on this GPU model (T, the start-up costs and the per-block rates differ
// between models), else the default GPU model's, and the note says so; without a GPU (the host
// type) the default's, silently.
inline ModelChoice model_for(const std::string &gpu)
{
  return choose_for_gpu(kModels, int(std::size(kModels)), gpu, {"no benchmarks of", "make tune measures them", false});
}

// Predicted SpMV time in microseconds of L partitions whose threads hold N blocks each, on M
// multiprocessors.
inline double model_time(const ModelEntry &e, double N, std::int64_t L, int M)
{
  if (L <= 0) return 0;
  const std::int64_t wave  = std::int64_t(e.T) * M;
  const std::int64_t I     = (L + wave - 1) / wave;
  const double       alpha = e.alpha * N;
  const double       tau1  = e.sigma1o + e.gamma * N + alpha * (e.T - 1);
  const double       tau   = e.gammap * N + alpha * (e.T - 1);
  if (I == 1) return e.sigma1o + e.gamma * N + alpha * double((L + M - 1) / M - 1); // one partial iteration
  const std::int64_t rest = L - (I - 1) * wave;                                     // partitions of the last iteration, 1..T M
  const double       tauI = e.gammap * N + alpha * double((rest + M - 1) / M - 1);
  return tau1 + double(I - 2) * tau + tauI;
}

// The model's entry for block size r x c and partition size R, or null.
inline const ModelEntry *model_entry(const Model &m, int r, int c, int R)
{
  for (int i = 0; i < m.count; ++i)
    if (m.entries[i].r == r && m.entries[i].c == c && m.entries[i].R == R) return &m.entries[i];
  return nullptr;
}

// R (a power of two, 32..1024) with the least predicted time for block_rows block rows holding
// `blocks` blocks in all; 128 when the model has no entry for r x c. *predicted_us gets its time.
inline int choose_partition_rows(const Model &m, int r, int c, std::int64_t block_rows, double blocks, double *predicted_us = nullptr)
{
  int    best = 128;
  double t    = -1;
  for (int R = 32; R <= 1024; R *= 2) {
    const ModelEntry *e = model_entry(m, r, c, R);
    if (!e) continue;
    const double N  = block_rows ? blocks / double(block_rows) : 0;
    const double tr = model_time(*e, N, (block_rows + R - 1) / R, m.sms);
    if (t < 0 || tr < t) t = tr, best = R;
  }
  if (predicted_us) *predicted_us = t;
  return best;
}

} // namespace bellpack
} // namespace gpumats
