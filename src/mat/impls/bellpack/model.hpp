// BELLPACK's execution-time model (Choi, Singh and Vuduc, eqs. 13-21): placeholder until
// config/tuning/bellpack_fit.py writes the measured one; with no entry for a block size, R stays 128.
#pragma once

namespace gpumats {
namespace bellpack {

struct ModelEntry {
  int    r, c, R, T;
  double sigma1o, gamma, gammap, alpha;
};

constexpr const char *kModelSource = "none";
constexpr int         kModelSMs    = 132;
constexpr ModelEntry  kModel[]     = {{0, 0, 0, 1, 0, 0, 0, 0}};

} // namespace bellpack
} // namespace gpumats
