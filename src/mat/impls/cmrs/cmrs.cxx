// CMRS in the PETSc glue: options, defaults and the bridge to the core and the CUDA layer.
#include "../common/operator/make_operator.hpp"
#include "../common/runtime/gpu_model.hpp"
#include "host.hpp"
#include "tuning.hpp"

#include <cmath>
#if GPUMATS_HAVE_CUDA
  #include "device.hpp"
#endif

namespace gpumats {
#if GPUMATS_SUPPORTED_SCALAR
namespace {

// The kernel sweep of this process's GPU model for the rule's even-row class (null: none, the rule
// stands), said once in -info
const cmrs::TunedGpu *process_sweep()
{
  static const cmrs::TunedGpu *sweep = [] {
    const std::string    &gpu = process_gpu_name();
    const cmrs::TunedGpu *g   = cmrs::tuned_gpu(gpu);
    if (!gpu.empty())
      (void)PetscInfo(nullptr, "CMRS: kernels for even rows %s%s%s\n", g ? "from the sweep of " : "by the built-in rule (no sweep of ",
                      gpu.c_str(), g ? "" : "; make tune measures one)");
    return g;
  }();
  return sweep;
}

struct CmrsTraits {
  // the core parameters with 0 for "chosen per matrix": height 0 picks the strip height, and
  // pad_multiple 0 the basic or the modified layout (see resolve); the SpMV kernel as set, auto
  // resolved per matrix by cmrs::resolve_kernel
  struct Params {
    cmrs::Params core{0, true, 0, cmrs::Kernel::kAuto};
    bool         sort_given = false;   // -mat_cmrs_sort was given; else the kernel decides (row order for segmented)
    const char  *swept_on   = nullptr; // the GPU model whose kernel sweep chose the kernel (resolve), for -mat_view
  };
  using Matrix = cmrs::Matrix<Scalar>;

  static PetscErrorCode options(OptionItems PetscOptionsObject, MPI_Comm comm, Params &p, PetscBool *changed)
  {
    const char *kernels[] = {"auto", "basic", "modified"};
    const char *spmvs[cmrs::kKernels];
    for (int i = 0; i < cmrs::kKernels; ++i) spmvs[i] = cmrs::kernel_name(cmrs::Kernel(i));
    PetscInt  h = p.core.height, k = p.core.pad_multiple == 0 ? 0 : (p.core.pad_multiple > 1 ? 2 : 1), spmv = PetscInt(p.core.kernel), lanes = p.core.lanes;
    PetscBool sort = p.core.sort_columns ? PETSC_TRUE : PETSC_FALSE, set_h, set_s, set_k, set_spmv, set_lanes;

    PetscFunctionBegin;
    PetscCall(PetscOptionsInt("-mat_cmrs_height", "Rows per CMRS strip, 1-16 (0: chosen per matrix)", "MATCMRS", h, &h, &set_h));
    PetscCall(PetscOptionsBool("-mat_cmrs_sort", "Order the entries of each strip by column (default: true, false with -mat_cmrs_spmv segmented)", "MATCMRS", sort, &sort, &set_s));
    PetscCall(PetscOptionsEList("-mat_cmrs_kernel", "CMRS layout: auto (chosen per matrix), basic, or modified (strips of 16 rows padded to multiples of 32 entries)",
                                "MATCMRS", kernels, 3, kernels[k], &k, &set_k));
    PetscCall(PetscOptionsEList("-mat_cmrs_spmv",
                                "CMRS SpMV kernel on the GPU: warp (a warp per strip, register accumulators), shared (a warp per strip, per-lane shared-memory "
                                "accumulators, as in the paper), subwarp (8 or 16 lanes per strip), segmented (entries in row order, summed by a segmented "
                                "warp scan), auto (subwarp for short strips, else warp)",
                                "MATCMRS", spmvs, cmrs::kKernels, spmvs[spmv], &spmv, &set_spmv));
    PetscCall(PetscOptionsInt("-mat_cmrs_lanes", "Lanes per strip of -mat_cmrs_spmv subwarp: 8 or 16 (0: chosen from the average strip length)", "MATCMRS", lanes, &lanes,
                              &set_lanes));
    PetscCheck(h >= 0 && h <= cmrs::kMaxHeight, comm, PETSC_ERR_ARG_OUTOFRANGE,
               "-mat_cmrs_height %" PetscInt_FMT " is out of range: a strip holds 1 to 16 rows (the row within the strip is packed into 4 bits); 0 chooses per matrix", h);
    PetscCheck(!(k == 2 && h != 0 && h != cmrs::kMaxHeight), comm, PETSC_ERR_ARG_INCOMP,
               "-mat_cmrs_kernel modified works on strips of 16 rows; drop -mat_cmrs_height %" PetscInt_FMT " or use -mat_cmrs_kernel basic", h);
    PetscCheck(lanes == 0 || lanes == 8 || lanes == 16, comm, PETSC_ERR_ARG_OUTOFRANGE,
               "-mat_cmrs_lanes %" PetscInt_FMT " is out of range: the subwarp kernel gives each strip 8 or 16 lanes; 0 chooses from the average strip length", lanes);
    const cmrs::Kernel kernel = cmrs::Kernel(spmv);
    PetscCheck(!(set_lanes && lanes != 0 && kernel != cmrs::Kernel::kSubwarp && kernel != cmrs::Kernel::kAuto), comm, PETSC_ERR_ARG_INCOMP,
               "-mat_cmrs_lanes sets the lanes per strip of -mat_cmrs_spmv subwarp (or auto), not of -mat_cmrs_spmv %s", spmvs[spmv]);
    const bool sort_given = set_s || p.sort_given;
    PetscCheck(!(kernel == cmrs::Kernel::kSegmented && sort_given && sort), comm, PETSC_ERR_ARG_INCOMP,
               "-mat_cmrs_spmv segmented sums each row's run of entries and needs the entries of a strip in row order; drop -mat_cmrs_sort or set it to false");
    (void)set_h, (void)set_k, (void)set_spmv;
    Params q;
    q.core.height       = k == 2 ? cmrs::kMaxHeight : int(h);
    q.core.sort_columns = sort_given ? bool(sort) : kernel != cmrs::Kernel::kSegmented;
    q.core.pad_multiple = k == 0 ? 0 : (k == 2 ? kModifiedPad : 1);
    q.core.kernel       = kernel;
    q.core.lanes        = int(lanes);
    q.sort_given        = sort_given;
    *changed = (q.core.height != p.core.height || q.core.sort_columns != p.core.sort_columns || q.core.pad_multiple != p.core.pad_multiple ||
                q.core.kernel != p.core.kernel || q.core.lanes != p.core.lanes)
                 ? PETSC_TRUE
                 : PETSC_FALSE;
    p = q;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  static constexpr int kModifiedPad = 32; // the modified layout: strips padded to a warp's worth of entries

  // Fills in what the user left to the matrix, from the mean row length mu.
  // Kernel (auto): in the kernel comparison (examples/cmrs_variants.sh, six families, 15
  // kernel/height variants; docs/results/cmrs-variants-h200-2026-11-23.txt) segmented with strips
  // of 16 rows is the fastest where rows are uneven, and subwarp or shared with strips of 8 rows on
  // every even family (cmrs::resolve_kernel picks between them); so auto takes segmented where the
  // longest row is over kIrregular times the mean (unless -mat_cmrs_sort true asks for column
  // order, which segmented cannot use), the others elsewhere.
  // Scattered columns (BlockSource::banded_columns false: neighbouring rows read unrelated parts
  // of x) take segmented with strips of 16 rows too: sorting a strip's entries by column buys x no
  // locality there, the column-sorted kernels fetch x again from DRAM (Nsight Compute counters,
  // docs/results/profile-h200-2026-11-24.md), and the sweep puts segmented h16 first or within 1%
  // of first on every scattered family (docs/results/cmrs-variants-h200-2026-11-24.txt).
  // Height: 8 for shared and subwarp and 16 for segmented, the best of heights 4, 8 and 16 in that
  // comparison on nearly every family (heights of 16 with the shared accumulators spill); for warp
  // the paper's eq. (5.1), f(h, mu) = 1 + (lambda - b) / (h mu b), asks for long strips and the
  // register accumulators of the warp kernel for short ones: the height sweep
  // (config/tuning/cmrs-h200.csv: heights 1-16, mu from 4 to 78) puts its best height at
  // 16 / sqrt(mu) within 6% on every family.
  // That comparison ran on an H200. Between GPU models the best kernel for even rows moves (on an
  // H100, segmented h16 on poisson7): where make tune has swept this GPU model's kernels
  // (tuned.hpp), an even-row block takes the fastest variant of the swept family nearest its mean
  // row length instead, unless the user set the lanes or the column order.
  // Layout: the modified one (16 rows padded to 32 entries) is never the fastest in the sweep, so
  // auto takes the basic layout; -mat_cmrs_kernel modified still forces it.
  static Params resolve(const Params &p, const BlockSource &A, PetscInt)
  {
    Params       q  = p;
    const double mu = A.nrows() ? double(A.nnz()) / double(A.nrows()) : 0;
    if (!q.core.pad_multiple) q.core.pad_multiple = 1;
    if (q.core.kernel == cmrs::Kernel::kAuto && !q.sort_given && mu > 0 && (double(A.longest_row()) > kIrregular * mu || !A.banded_columns())) {
      q.core.kernel       = cmrs::Kernel::kSegmented;
      q.core.sort_columns = false;
    } else if (q.core.kernel == cmrs::Kernel::kAuto && !q.sort_given && !q.core.lanes && mu > 0) {
      if (const cmrs::TunedGpu *g = process_sweep())
        if (const cmrs::TunedKernel *t = cmrs::tuned_kernel(*g, mu)) {
          q.core.kernel       = t->kernel;
          q.core.lanes        = t->lanes;
          q.core.sort_columns = t->kernel != cmrs::Kernel::kSegmented;
          if (!q.core.height) q.core.height = t->height;
          q.swept_on = g->gpu;
        }
    }
    if (!q.core.height) {
      switch (q.core.kernel) {
      case cmrs::Kernel::kWarp:
        q.core.height = mu > 0 ? int(std::min<double>(cmrs::kMaxHeight, std::max(1.0, std::round(kHeightScale / std::sqrt(mu))))) : 1;
        break;
      case cmrs::Kernel::kSegmented:
        q.core.height = cmrs::kMaxHeight;
        break;
      default:
        q.core.height = kSharedHeight;
      }
    }
    q.core = cmrs::resolve_kernel(q.core, A.nnz(), A.nrows()); // what the conversion will resolve: shown by -mat_view
    return q;
  }
  static constexpr double kHeightScale  = 16.0; // warp: best height = 16 / sqrt(mu) in the height sweep (see above)
  static constexpr int    kSharedHeight = 8;    // shared and subwarp (see above)
  static constexpr double kIrregular    = 4.0;  // auto: segmented where the longest row exceeds this many times the mean

  static Matrix    from_csr(const CsrIn &A, const Params &p) { return cmrs::from_csr(A, p.core); }
  static void      spmv(const Matrix &M, const Scalar *x, const Epilogue<Scalar> &ep) { cmrs::spmv(M, x, ep); }
  static void      spmv_transpose(const Matrix &M, const Scalar *x, const Epilogue<Scalar> &ep) { cmrs::spmv_transpose(M, x, ep); }
  static Footprint footprint(const Matrix &M) { return cmrs::footprint(M); }
#if GPUMATS_HAVE_CUDA
  static std::unique_ptr<cuda::Operator<Scalar>> build_device(const BlockSource &A, const Params &p) { return cmrs::build_on_device(*A.device, p.core, A.log); }
  static std::unique_ptr<cuda::Operator<Scalar>> upload(const Matrix &M) { return cmrs::to_device(M); }
#endif
  // the basic layout stores the nonzeros exactly; the modified one pads every strip
  static double predicted_bytes(const Params &p, const BlockSource &A)
  {
    const std::int64_t h = p.core.height, strips = (A.nrows() + h - 1) / h;
    const std::int64_t stored = p.core.pad_multiple > 1 ? A.groups(h, 1, p.core.pad_multiple).padded_entries : A.nnz();
    return double(stored) * (sizeof(Scalar) + 4) + 4.0 * double(strips + 1);
  }
  // a warp walks its strip in steps of 32 entries (the subwarp kernel: its lanes, in steps of as many)
  static double critical_steps(const Params &p, const BlockSource &A)
  {
    const std::int64_t g = p.core.kernel == cmrs::Kernel::kSubwarp && p.core.lanes ? p.core.lanes : 32;
    return double((A.groups(p.core.height).longest_group + g - 1) / g);
  }
  static std::string describe(const Params &p)
  {
    return "strip height " + (p.core.height ? std::to_string(p.core.height) : std::string("auto")) +
           (p.core.sort_columns ? ", entries sorted by column" : ", entries in row order") +
           (p.core.pad_multiple > 1 ? ", modified layout (strips padded to " + std::to_string(p.core.pad_multiple) + " entries)"
                                    : (p.core.pad_multiple == 1 ? ", basic layout (no padding)" : ", layout auto")) +
           ", GPU kernel " + cmrs::kernel_name(p.core.kernel) +
           (p.core.kernel == cmrs::Kernel::kSubwarp || p.core.kernel == cmrs::Kernel::kAuto
              ? (p.core.lanes ? " (" + std::to_string(p.core.lanes) + " lanes per strip)" : std::string(" (lanes per strip auto)"))
              : std::string()) +
           (p.swept_on ? std::string(", kernel and height from the kernel sweep of ") + p.swept_on : std::string());
  }
};

} // namespace

FormatInfo cmrs_info = {"cmrs", "cmrs", "CMRS", true, true, make_operator<CmrsTraits>, 0, 0};
#else
// complex scalars: the types are registered and refuse to be created (CheckSupported)
FormatInfo cmrs_info = {"cmrs", "cmrs", "CMRS", true, true, nullptr, 0, 0};
#endif

} // namespace gpumats

/*MC
   MATCMRS - "cmrs" - CMRS (compressed multi-row storage) matrix type, computed on the host

   Koza, Matyka, Szkoda and Miroslaw (2014): rows grouped into strips of `height` rows, each entry's
   column index and row-in-strip packed in one 32-bit word, a strip's entries in row order or sorted
   by column. The host form is the reference `MATCMRSCUDA` is checked against. Concrete types:
   `MATSEQCMRS` ("seqaijcmrs") and `MATMPICMRS` ("mpiaijcmrs").

   Options Database Keys:
+  -mat_type cmrs - sets the matrix type to `MATCMRS` during a call to `MatSetFromOptions()`
.  -mat_cmrs_height <h> - rows per strip, 1-16 (0: chosen per matrix)
.  -mat_cmrs_sort <bool> - order each strip's entries by column
.  -mat_cmrs_kernel <auto,basic,modified> - layout: basic, or modified (strips of 16 rows padded to 32 entries)
.  -mat_cmrs_spmv <warp,shared,subwarp,segmented,auto> - the GPU product kernel (auto: chosen per matrix)
.  -mat_cmrs_lanes <0,8,16> - lanes per strip of the subwarp kernel (0: chosen per matrix)
-  -mat_gpumats_* - the options of every type: see `MATGPUMATS`

   Level: beginner

.seealso: [](ch_matrices), `MATCMRSCUDA`, `MATGPUMATS`, `MATAIJ`
M*/

/*MC
   MATCMRSCUDA - "cmrscuda" - CMRS matrix type for NVIDIA GPUs

   `MATCMRS`'s strips on an NVIDIA GPU, multiplied by one of four kernels over the same arrays:
   warp (register accumulators), shared (the paper's per-lane shared-memory buffer), subwarp (8 or
   16 lanes per strip) or segmented (entries in row order, a segmented scan), picked per matrix
   unless `-mat_cmrs_spmv` names one. Concrete types:
   `MATSEQCMRSCUDA` ("seqaijcmrscuda") and `MATMPICMRSCUDA` ("mpiaijcmrscuda").

   Options Database Keys:
+  -mat_type cmrscuda - sets the matrix type to `MATCMRSCUDA` during a call to `MatSetFromOptions()`
.  -mat_cmrs_* - as for `MATCMRS`
-  -mat_gpumats_* - see `MATGPUMATS`, the GPU-only ones included

   Level: beginner

.seealso: [](ch_matrices), `MATCMRS`, `MATGPUMATS`, `MATAUTOCUDA`, `MATAIJCUSPARSE`
M*/
