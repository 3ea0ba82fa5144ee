// autocuda's execution-time model: t = bytes / (efficiency * copy bandwidth), where bytes come from
// the matrix structure (FormatOperator::predicted_bytes) and efficiency is the fraction of the copy
// bandwidth a kernel streams its own bytes at, for banded matrices (columns of a slice column
// within 2^16) and scattered ones.
//
// Uncalibrated: every kernel is assumed to stream at the copy bandwidth, so the model picks the
// smallest footprint. config/tuning/fit.py replaces this file with measured values.
#pragma once

namespace gpumats {
namespace autosel {

struct KernelEfficiency {
  const char *format; // "csr", "cmrs", "sellp", "bellpack"
  double      banded, scattered;
};

constexpr const char      *kModelSource        = "uncalibrated (bytes only)";
constexpr double           kCopyBandwidthGBs   = 1.0; // irrelevant to the choice while uncalibrated
constexpr KernelEfficiency kEfficiency[]       = {{"csr", 1.0, 1.0}, {"cmrs", 1.0, 1.0}, {"sellp", 1.0, 1.0}, {"bellpack", 1.0, 1.0}};
constexpr double           kPreferCsrUnlessGain = 1.05; // another format must promise 5% over cuSPARSE CSR

} // namespace autosel
} // namespace gpumats
