// autocuda: picks, at assembly, the format for each matrix block among SELL-P, CMRS, BELLPACK (with
// the matrix block size, when it has one) and plain cuSPARSE CSR, by the execution-time model of
// model.hpp, optionally confirmed by timing the two best candidates (-mat_autocuda_trial). It says
// what it picked and why in -mat_view ::ascii_info.
#include "../common/operator/format_operator.hpp"
#include "../common/runtime/gpu_model.hpp"
#if GPUMATS_HAVE_CUDA
  #include "device.hpp"
#endif
#include "calibration.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

namespace gpumats {
#if GPUMATS_SUPPORTED_SCALAR
namespace {

// plain CSR through cuSPARSE, on the GPU only
class CsrOperator final : public FormatOperator {
public:
  std::unique_ptr<FormatOperator> clone_parameters() const override { return std::make_unique<CsrOperator>(); }
  PetscErrorCode                  set_from_options(OptionItems, MPI_Comm, PetscBool *changed) override
  {
    *changed = PETSC_FALSE;
    return PETSC_SUCCESS;
  }
  void build(const BlockSource &A, PetscInt, bool device) override
  {
    if (!device) throw FormatError("cuSPARSE CSR is a GPU format");
#if GPUMATS_HAVE_CUDA
    cuda::enter_step(A.log, cuda::BuildStep::kScatter, A.stream());
    dev_ = A.device ? autosel::csr_from_device(*A.device) : autosel::csr_to_device(A.host);
#endif
  }
  std::unique_ptr<FormatOperator> build_like(const BlockSource &B, PetscInt bs, bool device) const override
  {
    auto o = std::make_unique<CsrOperator>();
    o->build(B, bs, device);
    return o;
  }
  Scalar *values(std::int64_t *count) override
  {
    *count = 0;
#if GPUMATS_HAVE_CUDA
    if (dev_) return dev_->values(count);
#endif
    return nullptr;
  }
  void clear() override
  {
#if GPUMATS_HAVE_CUDA
    dev_.reset();
#endif
  }
  void mult_host(const Scalar *, const Epilogue<Scalar> &) const override { throw FormatError("cuSPARSE CSR is a GPU format"); }
  void mult_transpose_host(const Scalar *, const Epilogue<Scalar> &) const override { throw FormatError("cuSPARSE CSR is a GPU format"); }
#if GPUMATS_HAVE_CUDA
  void mult_device(const Scalar *x, const Epilogue<Scalar> &ep, void *stream) const override { dev_->spmv(x, ep, stream); }
  void mult_transpose_device(const Scalar *x, const Epilogue<Scalar> &ep, void *stream) const override { dev_->spmv_transpose(x, ep, stream); }
  void diagonal_device(Scalar *d, void *stream) const override { dev_->diagonal(d, stream); }
#endif
  Estimate estimate(const BlockSource &A, PetscInt) const override // (no steps: cuSPARSE balances long rows)
  {
    return {double(A.nnz()) * (sizeof(Scalar) + 4) + 4.0 * double(A.nrows() + 1) + double(sizeof(Scalar)) * double(A.nrows() + A.ncols()), 0};
  }
  Footprint footprint() const override
  {
#if GPUMATS_HAVE_CUDA
    if (dev_) return dev_->footprint;
#endif
    return Footprint{};
  }
  std::string parameters() const override { return "cusparseSpMV, CSR ALG1"; }
  std::size_t device_bytes() const override
  {
#if GPUMATS_HAVE_CUDA
    return dev_ ? dev_->bytes() : 0;
#else
    return 0;
#endif
  }

private:
#if GPUMATS_HAVE_CUDA
  std::unique_ptr<cuda::Operator<Scalar>> dev_;
#endif
};

struct Candidate {
  const char                     *name;
  std::unique_ptr<FormatOperator> op;
  double                          bytes = 0, steps = 0, predicted_us = 0, measured_us = -1;
  double                          cost_us = 0; // predicted_us with its build spread over the products of a build (rebuilt matrices)
};

// the formats autocuda may pick, for -mat_autocuda_formats
constexpr unsigned    kSellp = 1, kCmrs = 2, kBellpack = 4, kCsr = 8, kAllFormats = 15, kNumFormats = 4;
constexpr const char *kFormatNames[kNumFormats] = {"sellp", "cmrs", "bellpack", "csr"};

// The calibration of the model for the GPU at hand, chosen once per process (every rank's GPU is
// one model on the machines we know; a rank that differs still reads its own)
const autosel::CalibrationChoice &calibration()
{
  static const autosel::CalibrationChoice choice = [] {
    autosel::CalibrationChoice c = autosel::calibration_for(process_gpu_name());
    (void)PetscInfo(nullptr, "autocuda's model: the calibration of %s, %s%s%s\n", c.entry->gpu, c.entry->date, c.note.empty() ? "" : "; ", c.note.c_str());
    return c;
  }();
  return choice;
}

// The value dictionary is weighed for blocks of this many nonzeros or more. It saves at most the
// value bytes less the codes' (6-7 bytes per stored entry) per product: below a million nonzeros
// that is about a microsecond at an H200's bandwidth, inside a kernel launch's own cost, while
// weighing it (counting the distinct values, the stored entries of the sorted layout) costs
// milliseconds per block, as on snes ex19's interpolations.
constexpr std::int64_t kDictionaryMinNonzeros = std::int64_t(1) << 20;

class AutoOperator final : public FormatOperator {
public:
  bool trial = false;
  // -mat_autocuda_values: whether the SELL-P and BELLPACK candidates may hold their values in a dictionary
  bool values_auto = true;
  // -mat_autocuda_formats: the candidates (bits of kFormatNames), all by default
  unsigned formats = kAllFormats;

  std::unique_ptr<FormatOperator> clone_parameters() const override
  {
    auto o   = std::make_unique<AutoOperator>();
    o->trial       = trial;
    o->values_auto = values_auto;
    o->formats     = formats;
    copy_settings_to(*o);
    return o;
  }
  PetscErrorCode set_from_options(OptionItems PetscOptionsObject, MPI_Comm comm, PetscBool *changed) override
  {
    PetscBool   t = trial ? PETSC_TRUE : PETSC_FALSE;
    const char *modes[] = {"plain", "auto"};
    PetscInt    v       = values_auto ? 1 : 0;
    char       *names[kNumFormats]{};
    PetscInt    nnames = kNumFormats;
    PetscBool   fset   = PETSC_FALSE;
    unsigned    f      = formats;

    PetscFunctionBegin;
    PetscCall(PetscOptionsStringArray("-mat_autocuda_formats", "Formats to pick among, comma-separated: sellp, cmrs, bellpack, csr (default all)", "MATAUTOCUDA", names, &nnames, &fset));
    if (fset) {
      f = 0;
      for (PetscInt i = 0; i < nnames; ++i) {
        unsigned bit = 0;
        for (unsigned k = 0; k < kNumFormats; ++k)
          if (!std::strcmp(names[i], kFormatNames[k])) bit = 1u << k;
        const std::string name = names[i];
        PetscCall(PetscFree(names[i]));
        PetscCheck(bit, comm, PETSC_ERR_ARG_OUTOFRANGE, "-mat_autocuda_formats: no format '%s'; name one or more of sellp, cmrs, bellpack, csr", name.c_str());
        f |= bit;
      }
      PetscCheck(f, comm, PETSC_ERR_ARG_OUTOFRANGE, "-mat_autocuda_formats needs at least one of sellp, cmrs, bellpack, csr");
    }
    PetscCall(PetscOptionsBool("-mat_autocuda_trial", "Confirm the model's choice by timing the two best formats on this GPU", "MATAUTOCUDA", t, &t, NULL));
    PetscCall(PetscOptionsEList("-mat_autocuda_values",
                                "Values of the SELL-P and BELLPACK candidates: auto (a value dictionary, 1- or 2-byte codes, where it cuts the bytes of a product by 25%) or plain",
                                "MATAUTOCUDA", modes, 2, modes[v], &v, NULL));
    *changed    = (bool(t) != trial || bool(v) != values_auto || f != formats) ? PETSC_TRUE : PETSC_FALSE;
    trial       = t;
    values_auto = v == 1;
    formats     = f;
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  // The model's inputs come from the block's upload (one reduction per question on the GPU), which
  // the format picked (or the two timed) is then built from.
  void build(const BlockSource &A, PetscInt bs, bool device) override
  {
    clear();
    if (!device) throw FormatError("autocuda picks among GPU formats and has no host form; use -mat_type cmrs, sellp or bellpack on the host");
#if GPUMATS_HAVE_CUDA
    cuda::enter_step(A.log, cuda::BuildStep::kStructure, A.stream()); // the model's queries
#endif
    // the candidates and their predicted times
    // a rebuild: the products the last copy served tell how often this matrix is rebuilt
    if (builds_ > 0) per_build_ = std::max<double>(1, per_build_ > 0 ? 0.5 * (per_build_ + double(products_)) : double(products_));
    products_ = 0;
    ++builds_;
    std::vector<Candidate> c;
    const bool             dictionaries = values_auto && A.nnz() >= kDictionaryMinNonzeros;
    if (formats & kSellp) {
      c.push_back({"sellp", format_named("sellp").make()});
      if (dictionaries) c.back().op->allow_compressed_values(); // (SELL-P counts the distinct values on the GPU)
    }
    if (formats & kCmrs) c.push_back({"cmrs", format_named("cmrs").make()});
    if ((formats & kBellpack) && bs > 1 && bs <= 8) {
      c.push_back({"bellpack", format_named("bellpack").make()});
      if (dictionaries) c.back().op->allow_compressed_values(); // (the distinct values counted once, kept with the upload)
    }
    if (formats & kCsr) c.push_back({"csr", std::make_unique<CsrOperator>()});
    if (c.empty()) throw FormatError("autocuda: no format of -mat_autocuda_formats fits this block (bellpack needs a block size of 2 to 8); add sellp, cmrs or csr");
    const bool banded = A.banded_columns();
    for (Candidate &k : c) {
      k.op->stream_loads  = stream_loads; // -mat_gpumats_loads and -mat_gpumats_build reach the format picked
      k.op->build_on_host = build_on_host;
      const auto e        = k.op->estimate(A, bs);
      k.bytes             = e.bytes;
      k.steps             = e.steps;
      k.predicted_us      = autosel::predict_us(*calibration().entry, k.name, k.bytes, k.steps, banded);
      k.cost_us           = autosel::amortized_us(*calibration().entry, k.name, k.predicted_us, double(A.nnz()), per_build_);
    }
    std::stable_sort(c.begin(), c.end(), [](const Candidate &a, const Candidate &b) { return a.cost_us < b.cost_us; });
    // cuSPARSE CSR stays unless another format promises a clear gain
    auto csr = std::find_if(c.begin(), c.end(), [](const Candidate &k) { return !std::strcmp(k.name, "csr"); });
    if (csr != c.end() && csr != c.begin() && c.front().cost_us * autosel::kPreferCsrUnlessGain > csr->cost_us) std::rotate(c.begin(), csr, csr + 1);

    std::size_t pick = 0;
#if GPUMATS_HAVE_CUDA
    if (trial && c.size() > 1) {
      for (std::size_t i = 0; i < 2; ++i) {
        c[i].op->build(A, bs, true);
        c[i].measured_us = time_spmv(*c[i].op, A.nrows(), A.ncols());
        if (i == 1) c[i].measured_us < c[0].measured_us ? (c[0].op->clear(), pick = 1) : (c[1].op->clear(), pick = 0);
      }
    } else {
      c[0].op->build(A, bs, true);
    }
#endif
    report_ = explain(c, pick, banded);
    chosen_ = std::move(c[pick].op);
    name_   = c[pick].name;
  }
  // the format picked for the copy, with its parameters: nothing is weighed or timed again
  std::unique_ptr<FormatOperator> build_like(const BlockSource &B, PetscInt bs, bool device) const override
  {
    if (!chosen_) throw std::logic_error("autocuda: build_like before a build");
    return chosen_->build_like(B, bs, device);
  }
  Scalar *values(std::int64_t *count) override
  {
    *count = 0;
    return chosen_ ? chosen_->values(count) : nullptr;
  }
  bool refill_compressed(const std::vector<Scalar> &distinct, const std::function<void(Scalar *, std::int64_t)> &gather) override
  {
    return chosen_ && chosen_->refill_compressed(distinct, gather);
  }
  void clear() override
  {
    chosen_.reset();
    report_.clear();
  }
  void mult_host(const Scalar *, const Epilogue<Scalar> &) const override { throw FormatError("autocuda has no host form"); }
  void mult_transpose_host(const Scalar *, const Epilogue<Scalar> &) const override { throw FormatError("autocuda has no host form"); }
#if GPUMATS_HAVE_CUDA
  void mult_device(const Scalar *x, const Epilogue<Scalar> &ep, void *stream) const override
  {
    ++products_;
    chosen_->mult_device(x, ep, stream);
  }
  // the implicit transpose of the format picked for A (its choice was made for products with A)
  void mult_transpose_device(const Scalar *x, const Epilogue<Scalar> &ep, void *stream) const override
  {
    ++products_;
    chosen_->mult_transpose_device(x, ep, stream);
  }
  void diagonal_device(Scalar *d, void *stream) const override { chosen_->diagonal_device(d, stream); }
#endif
  Estimate    estimate(const BlockSource &A, PetscInt bs) const override { return chosen_ ? chosen_->estimate(A, bs) : Estimate{}; }
  Footprint   footprint() const override { return chosen_ ? chosen_->footprint() : Footprint{}; }
  std::string parameters() const override
  {
    // the format picked, with its parameters as they are now (a values-only update may have left
    // a dictionary for plain values), then the model's figures from the choice
    return (chosen_ ? "picked " + name_ + " (" + chosen_->parameters() + "); " + report_ : std::string(trial ? "not built yet; will time the two best formats" : "not built yet")) +
           glue_notes();
  }
  std::size_t device_bytes() const override { return chosen_ ? chosen_->device_bytes() : 0; }

private:
  std::unique_ptr<FormatOperator> chosen_;
  std::string                     report_, name_;
  // how often the matrix is rebuilt: products since the last build, builds so far, and the products
  // a build served on average (0 until the first rebuild): each format's build counts against it
  // spread over that many products (autosel::amortized_us)
  mutable std::int64_t products_ = 0;
  std::int64_t         builds_   = 0;
  double               per_build_ = 0;

#if GPUMATS_HAVE_CUDA
  static double time_spmv(const FormatOperator &op, std::int64_t m, std::int64_t n);
#endif

  std::string explain(const std::vector<Candidate> &c, std::size_t pick, bool banded) const
  {
    char        buf[160];
    const autosel::CalibrationChoice &cal = calibration();
    std::string s = std::string("model [") + cal.entry->gpu + ", " + cal.entry->date + (cal.note.empty() ? "" : "; " + cal.note) + ", " + (banded ? "banded" : "scattered") + " columns]:";
    for (const Candidate &k : c) {
      std::snprintf(buf, sizeof(buf), " %s %.3g MB %.0f us", k.name, k.bytes / 1e6, k.predicted_us);
      s += buf;
      if (k.measured_us >= 0) {
        std::snprintf(buf, sizeof(buf), " (timed %.1f us)", k.measured_us);
        s += buf;
      }
      s += ",";
    }
    s.pop_back();
    if (per_build_ > 0) {
      std::snprintf(buf, sizeof(buf), "; rebuilt after %.0f products per build, so each format's build counts:", per_build_);
      s += buf;
      for (const Candidate &k : c) {
        std::snprintf(buf, sizeof(buf), " %s %.0f us per product,", k.name, k.cost_us);
        s += buf;
      }
      s.pop_back();
    }
    return s;
  }
};

#if GPUMATS_HAVE_CUDA
// Times a built operator: reaches into the CUDA layer through a throwaway product on scratch vectors.
double AutoOperator::time_spmv(const FormatOperator &op, std::int64_t m, std::int64_t n)
{
  struct Adapter final : cuda::Operator<Scalar> {
    const FormatOperator &op;
    explicit Adapter(const FormatOperator &o) : op(o) {}
    void        spmv(const Scalar *x, const Epilogue<Scalar> &ep, void *stream) const override { op.mult_device(x, ep, stream); }
    void        spmv_transpose(const Scalar *x, const Epilogue<Scalar> &ep, void *stream) const override { op.mult_transpose_device(x, ep, stream); }
    void        diagonal(Scalar *d, void *stream) const override { op.diagonal_device(d, stream); }
    std::size_t bytes() const override { return op.device_bytes(); }
    Scalar     *values(std::int64_t *) override { throw std::logic_error("the trial's timing adapter holds no values of its own"); }
  } adapter(op);
  return autosel::time_spmv(adapter, m, n, 3, 10, nullptr);
}
#endif

std::unique_ptr<FormatOperator> make_auto() { return std::make_unique<AutoOperator>(); }

} // namespace

FormatInfo auto_info = {"auto", "auto", "AUTO", false, false, make_auto, 0, 0};
#else
FormatInfo auto_info = {"auto", "auto", "AUTO", false, false, nullptr, 0, 0};
#endif

} // namespace gpumats

/*MC
   MATAUTOCUDA - "autocuda" - a matrix type for NVIDIA GPUs that picks the format per matrix block

   At each block's build, the format of `MATSELLPCUDA`, `MATCMRSCUDA`, `MATBELLPACKCUDA` (with a
   block size) or plain cuSPARSE CSR, by an execution-time model fitted to measurements on each GPU
   model (config/tuning/autocuda-*.csv, `make tune`); `-mat_view ::ascii_info` shows the pick, each
   candidate's predicted bytes and time, and which calibration was used. A matrix rebuilt after few
   products (a new nonzero pattern at every assembly) has each candidate's build, as measured by
   `make tune`, spread over the products a build served counted against it. GPU only: there is no
   host form. Concrete types: `MATSEQAUTOCUDA` ("seqaijautocuda") and `MATMPIAUTOCUDA`
   ("mpiaijautocuda"), whose diagonal and off-diagonal blocks each get a format of their own.

   Options Database Keys:
+  -mat_type autocuda - sets the matrix type to `MATAUTOCUDA` during a call to `MatSetFromOptions()`
.  -mat_autocuda_trial <bool> - confirm the model's choice by timing the two best candidates on this GPU
.  -mat_autocuda_values <auto,plain> - whether its SELL-P and BELLPACK candidates may hold a value dictionary
.  -mat_autocuda_formats <sellp,cmrs,bellpack,csr> - the formats to pick among (default all four)
-  -mat_gpumats_* - see `MATGPUMATS`, the GPU-only ones included

   Level: beginner

.seealso: [](ch_matrices), `MATGPUMATS`, `MATSELLPCUDA`, `MATCMRSCUDA`, `MATBELLPACKCUDA`, `MATAIJCUSPARSE`
M*/
