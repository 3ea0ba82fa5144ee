// Unit tests of autocuda's calibrations (src/mat/impls/auto/calibration.hpp, model.hpp):
//   - a GPU model with a calibration gets its own, with no note; any other name (a prefix of a
//     known one included: the match is exact) gets the first, with a note naming the GPU and the
//     command that measures one;
//   - every calibration is one GPU model's, with all four kernels and plausible figures;
//   - the prediction is the streaming time where the bytes dominate and the longest work item's
//     where the steps do, with the calibration's own figures;
//   - build costs: never negative, CSR's 0; a matrix not known to be rebuilt pays the product
//     alone, one rebuilt after N products the build over N more per product.
// and of CMRS's kernel sweeps (src/mat/impls/cmrs/tuning.hpp, tuned.hpp):
//   - a swept GPU model gets its own sweep, any other name none (the rule stands);
//   - a block takes the choice of the family nearest its mean row length in ratio, none without
//     rows; every sweep's choices are valid CMRS parameters, segmented with no lanes.
#include "../../src/mat/impls/auto/calibration.hpp"
#include "../../src/mat/impls/cmrs/tuning.hpp"
#include "../common/check.hpp"

#include <set>

using namespace gpumats::autosel;

int main()
{
  const Calibration &first = kCalibrations[0];
  const std::size_t  n     = sizeof(kCalibrations) / sizeof(kCalibrations[0]);

  for (const Calibration &c : kCalibrations) {
    const CalibrationChoice ch = calibration_for(c.gpu);
    check::record(ch.entry == &c && ch.note.empty(), std::string("own calibration for ") + c.gpu, ch.note);
  }
  {
    const CalibrationChoice ch = calibration_for("NVIDIA A100-SXM4-80GB");
    check::record(ch.entry == &first, "an unknown GPU model gets the first calibration");
    check::record(ch.note.find("NVIDIA A100-SXM4-80GB") != std::string::npos && ch.note.find(first.gpu) != std::string::npos &&
                    ch.note.find("make tune") != std::string::npos,
                  "the note names the GPU, the calibration used and make tune", ch.note);
  }
  {
    const std::string prefix = std::string(first.gpu).substr(0, std::string(first.gpu).size() - 1);
    const CalibrationChoice ch = calibration_for(prefix);
    check::record(!ch.note.empty(), "a prefix of a known name is another GPU model", prefix);
  }
  check::record(calibration_for("").note.find("this GPU") != std::string::npos, "no name: the note says this GPU", calibration_for("").note);

  std::set<std::string> names;
  for (const Calibration &c : kCalibrations) {
    const std::string g = c.gpu;
    names.insert(g);
    check::record(c.copy_gbs > 100 && c.copy_gbs < 100000, g + ": copy bandwidth in GB/s", std::to_string(c.copy_gbs));
    check::record(std::string(c.date).size() == 10, g + ": the date of its measurement", c.date);
    std::set<std::string> formats;
    for (const KernelModel &k : c.kernels) {
      formats.insert(k.format);
      const bool ok = k.banded > 0.05 && k.banded <= 1.5 && k.scattered > 0.05 && k.scattered <= 1.5 && k.us_per_step >= 0;
      check::record(ok, g + " " + k.format + ": efficiencies in (0.05, 1.5], step time >= 0");
      check::record(k.build_ns_per_nnz >= 0 && k.build_ns_per_nnz < 1000 && (std::string(k.format) != "csr" || k.build_ns_per_nnz == 0),
                    g + " " + k.format + ": build cost per nonzero in [0, 1000) ns, CSR's 0", std::to_string(k.build_ns_per_nnz));
    }
    check::record(formats == std::set<std::string>{"csr", "cmrs", "sellp", "bellpack"}, g + ": the four kernels");
  }
  check::record(names.size() == n, "one calibration per GPU model");

  // bytes-bound and step-bound predictions
  for (const Calibration &c : kCalibrations) {
    const KernelModel &s     = kernel_of(c, "sellp");
    const double       bytes = 1e9;
    const double       t     = predict_us(c, "sellp", bytes, 1, true);
    const double       want  = bytes / (s.banded * c.copy_gbs * 1e3);
    check::record(std::fabs(t - want) <= 1e-9 * want, std::string(c.gpu) + ": a large block's time is its bytes over the banded bandwidth");
    const double ts = predict_us(c, "cmrs", 1, 1e6, false);
    check::record(std::fabs(ts - kernel_of(c, "cmrs").us_per_step * 1e6) <= 1e-9 * ts, std::string(c.gpu) + ": a long row's time is its steps");
  }
  // the build spread over the products a build serves
  {
    constexpr Calibration c = {"test GPU", "2026-01-01", 1000.0,
                               {{"csr", 0.5, 0.5, 0.0, 0.0}, {"cmrs", 0.5, 0.5, 1.0, 2.0}, {"sellp", 0.5, 0.5, 1.0, 4.0}, {"bellpack", 0.5, 0.5, 1.0, 0.0}}};
    check::record(amortized_us(c, "sellp", 10.0, 1e6, 0) == 10.0, "not known to be rebuilt: the product alone");
    check::record(std::fabs(amortized_us(c, "sellp", 10.0, 1e6, 1) - 4010.0) < 1e-9, "rebuilt after every product: the whole build per product");
    check::record(std::fabs(amortized_us(c, "cmrs", 10.0, 1e6, 100) - 30.0) < 1e-9, "rebuilt after 100 products: a hundredth of the build per product");
    check::record(amortized_us(c, "csr", 12.0, 1e6, 1) == 12.0, "CSR's build costs nothing extra");
    // a format 20% faster per product loses to CSR when the matrix is rebuilt after each product and wins when it serves many
    const double fast = 10.0, csr = 12.0;
    check::record(amortized_us(c, "sellp", fast, 1e6, 1) > amortized_us(c, "csr", csr, 1e6, 1), "rebuilt after each product: CSR is cheaper");
    check::record(amortized_us(c, "sellp", fast, 1e6, 1e4) < amortized_us(c, "csr", csr, 1e6, 1e4), "serving 10^4 products per build: the faster format is cheaper");
  }

  // CMRS's sweeps
  for (int i = 0; i < gpumats::cmrs::kTunedCount; ++i) {
    const gpumats::cmrs::TunedGpu &g = gpumats::cmrs::kTuned[i];
    check::record(gpumats::cmrs::tuned_gpu(g.gpu) == &g, std::string("own CMRS sweep for ") + g.gpu);
    check::record(g.count >= 1 && g.count <= 8, std::string(g.gpu) + ": 1 to 8 swept families");
    for (int k = 0; k < g.count; ++k) {
      const gpumats::cmrs::TunedKernel &t = g.even[k];
      const bool lanes_ok = t.kernel == gpumats::cmrs::Kernel::kSubwarp ? (t.lanes == 8 || t.lanes == 16) : t.lanes == 0;
      check::record(t.mu > 0 && t.height >= 1 && t.height <= gpumats::cmrs::kMaxHeight && t.kernel != gpumats::cmrs::Kernel::kAuto && lanes_ok,
                    std::string(g.gpu) + ": a valid choice for mu " + std::to_string(t.mu));
    }
  }
  check::record(gpumats::cmrs::tuned_gpu("NVIDIA A100-SXM4-80GB") == nullptr, "no CMRS sweep for an unswept GPU model");
  check::record(gpumats::cmrs::tuned_gpu("") == nullptr, "no CMRS sweep without a GPU");
  {
    using gpumats::cmrs::Kernel;
    constexpr gpumats::cmrs::TunedGpu g = {"test GPU", "2026-01-01", 3, {{7.0, Kernel::kSegmented, 16, 0}, {27.0, Kernel::kSubwarp, 8, 16}, {78.0, Kernel::kShared, 8, 0}}};
    check::record(gpumats::cmrs::tuned_kernel(g, 7.0) == &g.even[0], "CMRS sweep: a swept mean row length takes its own choice");
    check::record(gpumats::cmrs::tuned_kernel(g, 3.0) == &g.even[0], "CMRS sweep: shorter rows than any swept take the shortest's");
    check::record(gpumats::cmrs::tuned_kernel(g, 13.0) == &g.even[0] && gpumats::cmrs::tuned_kernel(g, 15.0) == &g.even[1],
                  "CMRS sweep: nearest in ratio (13 nearer 7, 15 nearer 27)");
    check::record(gpumats::cmrs::tuned_kernel(g, 500.0) == &g.even[2], "CMRS sweep: longer rows than any swept take the longest's");
    check::record(gpumats::cmrs::tuned_kernel(g, 0.0) == nullptr, "CMRS sweep: no rows, no choice");
  }
  return check::finish();
}
