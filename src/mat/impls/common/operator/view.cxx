// The -mat_view ::ascii_info lines shared by every type: a format copy, its updates, its transpose path.
#include "format_operator.hpp"

namespace gpumats {

PetscErrorCode ViewOperator(PetscViewer viewer, const FormatInfo &f, const char *what, const FormatOperator &op, bool device)
{
  const Footprint &fp = op.total_footprint();

  PetscFunctionBegin;
  PetscCall(PetscViewerASCIIPrintf(viewer, "%s%s %s: %s\n", f.title, device ? " (CUDA)" : " (host)", what, op.parameters().c_str()));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  %" PetscInt64_FMT " x %" PetscInt64_FMT ", %" PetscInt64_FMT " nonzeros, %" PetscInt64_FMT
                                           " stored entries (fill ratio %.3f), %.4g MB (CSR: %.4g MB)\n",
                                   (PetscInt64)fp.rows, (PetscInt64)fp.cols, (PetscInt64)fp.nnz, (PetscInt64)fp.stored, fp.fill_ratio(),
                                   fp.total_bytes() / 1e6, csr_bytes(fp.rows, fp.nnz, sizeof(PetscScalar)) / 1e6));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode ViewUpdates(PetscViewer viewer, ValuesUpdate mode, const UpdateCounts &counts, double slot_bytes)
{
  char text[256];

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(text, sizeof(text),
                          "  same-pattern changes: %s (-mat_gpumats_values_update %s); so far %" PetscInt64_FMT " full conversion%s, %" PetscInt64_FMT
                          " values-only update%s; slot maps %.4g MB\n",
                          mode == ValuesUpdate::kAuto ? "values only" : "converted in full", ValuesUpdateName(mode), counts.conversions,
                          counts.conversions == 1 ? "" : "s", counts.values_only, counts.values_only == 1 ? "" : "s", slot_bytes / 1e6));
  PetscCall(PetscViewerASCIIPrintf(viewer, "%s", text)); // one call: each one indents its text anew
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode ViewTranspose(PetscViewer viewer, TransposeMode mode, TransposePath path, PetscInt64 held, PetscInt64 stored, double bytes)
{
  const char *how  = path == TransposePath::kFormatCopy ? "explicit, a transposed copy in the format"
                     : path == TransposePath::kCusparse ? "cusparse, cuSPARSE's transposed CSR of the aijcusparse shadow"
                                                        : "implicit, scattered from the stored copy";
  std::string line = std::string("  transpose products: ") + how + " (-mat_gpumats_transpose " + TransposeModeName(mode) + "); ";
  char held_text[128] = "no transposed copy held";

  PetscFunctionBegin;
  if (held) PetscCall(PetscSNPrintf(held_text, sizeof(held_text), "transposed copy held: %" PetscInt64_FMT " stored entries, %.4g MB", stored, bytes / 1e6));
  PetscCall(PetscViewerASCIIPrintf(viewer, "%s%s\n", line.c_str(), held_text)); // one call: each one indents its text anew
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace gpumats
