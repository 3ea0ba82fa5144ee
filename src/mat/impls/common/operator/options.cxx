// What a format accepts, and the options of its format copies (-mat_gpumats_*) read for a matrix.
#include "format_operator.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <limits>
#include <utility>

namespace gpumats {

PetscErrorCode CheckSupported(Mat A, const FormatInfo &f, bool device)
{
  MPI_Comm comm = PetscObjectComm((PetscObject)A);

  PetscFunctionBegin;
  PetscCheck(GPUMATS_SUPPORTED_SCALAR, comm, PETSC_ERR_SUP,
             "petsc-gpumats supports real scalars only, and this PETSc is built with complex scalars; use a PETSc configured with "
             "--with-scalar-type=real for -mat_type %s",
             f.name);
  if (!device) PetscFunctionReturn(PETSC_SUCCESS);
#if !GPUMATS_HAVE_CUDA
  SETERRQ(comm, PETSC_ERR_SUP_SYS,
          "-mat_type %scuda needs the CUDA kernels, but this petsc-gpumats was built without CUDA (no nvcc at CUDA_DIR); rebuild it with "
          "CUDA_DIR=/path/to/cuda, or use -mat_type %s for the host implementation",
          f.name, f.host ? f.name : host_type_list().c_str());
#else
  std::string       why;
  const std::string host = f.host ? std::string(f.name) : host_type_list();
  PetscCheck(cuda::device_count(&why) > 0, comm, PETSC_ERR_SUP_SYS,
             "-mat_type %scuda needs an NVIDIA GPU with a driver for this CUDA version, and none is usable here: %s. Run on a GPU "
             "node, or use -mat_type %s for the host implementation",
             f.name, why.c_str(), host.c_str());
  PetscCall(SelectDevice(comm));
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

const char *TransposeModeName(TransposeMode m)
{
  static const char *const names[] = {"auto", "explicit", "implicit", "cusparse"};
  return names[int(m)];
}

const char *ValuesUpdateName(ValuesUpdate m)
{
  static const char *const names[] = {"auto", "rebuild"};
  return names[int(m)];
}

const char *BuildAtName(BuildAt m)
{
  static const char *const names[] = {"use", "assembly"};
  return names[int(m)];
}

PetscErrorCode ReadFormatOptions(Mat A, const FormatInfo &f, bool device, FormatOperator &op, TransposeMode *transpose, ValuesUpdate *values, BuildAt *build_at,
                                 OptionItems, PetscBool *changed)
{
  PetscFunctionBegin;
  // -help lists these under the type's own heading and manual page (MATSELLPCUDA, ...)
  std::string man = "MAT" + root_name(f, device);
  for (char &c : man) c = char(std::toupper((unsigned char)c));
  const std::string head = std::string(f.title) + (device ? " (CUDA)" : " (host)") + " options for matrix type " + root_name(f, device) + " (" + ((PetscObject)A)->type_name + ")";
  const char *loads[] = {"stream", "cached"};
  PetscInt    l       = op.stream_loads ? 0 : 1;
  PetscBool   set;
  // a block of our own, so that -help shows these under the type's heading rather than inside
  // AIJ's, whose MatSetFromOptions ours chains to
  const char *orders[] = {"none", "rcm"};
  PetscInt    o        = op.reorder_rcm ? 1 : 0;
  PetscBool   set_o;
  PetscInt    K = op.long_rows;
  PetscBool   set_k;
  const char *transposes[] = {TransposeModeName(TransposeMode::kAuto), TransposeModeName(TransposeMode::kExplicit), TransposeModeName(TransposeMode::kImplicit),
                               TransposeModeName(TransposeMode::kCusparse)};
  PetscInt    tm           = PetscInt(*transpose);
  const char *updates[]    = {ValuesUpdateName(ValuesUpdate::kAuto), ValuesUpdateName(ValuesUpdate::kRebuild)};
  PetscInt    vu           = PetscInt(*values);
  const char *whens[]      = {BuildAtName(BuildAt::kUse), BuildAtName(BuildAt::kAssembly)};
  PetscInt    ba           = PetscInt(*build_at);
  const char *builds[]     = {"device", "host"};
  PetscInt    bo           = op.build_on_host ? 1 : 0;
  PetscBool   set_b        = PETSC_FALSE;
  PetscOptionsBegin(PetscObjectComm((PetscObject)A), ((PetscObject)A)->prefix, head.c_str(), "Mat");
  PetscCall(op.set_from_options(PetscOptionsObject, PetscObjectComm((PetscObject)A), changed));
  PetscCall(PetscOptionsEList("-mat_gpumats_loads", "GPU loads of the matrix arrays: stream (evict-first, the caches keep x) or cached", man.c_str(), loads, 2,
                              loads[l], &l, &set));
  PetscCall(PetscOptionsEList("-mat_gpumats_reorder", "Renumber the rows and columns of the (diagonal) block for the GPU copy: none, or rcm (reverse Cuthill-McKee)",
                              man.c_str(), orders, 2, orders[o], &o, &set_o));
  PetscCall(PetscOptionsInt("-mat_gpumats_long_rows",
                            "Rows longer than this keep that many entries in the format and the rest in a warp-per-row tail (0: never split; -1: chosen per matrix)",
                            man.c_str(), K, &K, &set_k));
  PetscCall(PetscOptionsEList("-mat_gpumats_transpose",
                              "MatMultTranspose(Add): explicit (a transposed copy in the format, built at the first such product), implicit (scattered from the "
                              "stored copy, with atomics on the GPU; no second copy), cusparse (GPU types: cuSPARSE's transposed CSR of the aijcusparse shadow, "
                              "built on the GPU as aijcusparse does for MAT_FORM_EXPLICIT_TRANSPOSE), or auto (implicit, also where MAT_FORM_EXPLICIT_TRANSPOSE is "
                              "set: measured)",
                              man.c_str(), transposes, 4, transposes[tm], &tm, NULL));
  PetscCall(PetscOptionsEList("-mat_gpumats_values_update",
                              "A change that keeps the nonzero pattern (reassembly, MatScale, MatZeroRows with MAT_KEEP_NONZERO_PATTERN, ...): auto (refill the "
                              "format copy's values only, through a slot map made at the first such change) or rebuild (convert in full)",
                              man.c_str(), updates, 2, updates[vu], &vu, NULL));
  PetscCall(PetscOptionsEList("-mat_gpumats_build_at",
                              "When a final assembly brings the format copy up to date: assembly (inside MatAssemblyEnd, unless the copy built at the last "
                              "assembly was never used: then at the first use) or use (at the first product, MatGetDiagonal or view after it, as aijcusparse "
                              "copies at first use)",
                              man.c_str(), whens, 2, whens[ba], &ba, NULL));
  if (device)
    PetscCall(PetscOptionsEList("-mat_gpumats_build",
                                "Where the GPU copy is converted from the CSR: device (on the GPU, from one upload of the CSR) or host (on the host, then uploaded in "
                                "the format: the reference path)",
                                man.c_str(), builds, 2, builds[bo], &bo, &set_b));
  PetscOptionsEnd();
  *transpose = TransposeMode(tm);
  *values    = ValuesUpdate(vu);
  *build_at  = BuildAt(ba);
  PetscCheck(K >= -1, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE,
             "-mat_gpumats_long_rows %" PetscInt_FMT " is invalid: use a row length >= 1, 0 (never split rows) or -1 (chosen per matrix)", K);
  if (set_k && K != op.long_rows) {
    op.long_rows = K;
    *changed     = PETSC_TRUE;
  }
  if (set && (l == 0) != op.stream_loads) {
    op.stream_loads = l == 0;
    *changed        = PETSC_TRUE;
  }
  if (set_o && (o == 1) != op.reorder_rcm) {
    op.reorder_rcm = o == 1;
    *changed       = PETSC_TRUE;
  }
  if (set_b && (bo == 1) != op.build_on_host) {
    op.build_on_host = bo == 1;
    *changed         = PETSC_TRUE;
  }
  // a copy built with the old parameters must not be refilled as if it had the new ones
  if (*changed) op.forget_pattern();
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace gpumats
