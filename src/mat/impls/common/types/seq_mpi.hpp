// The Seq and MPI "kinds" used by the generic type templates of type_data.hpp.
#pragma once

#include "type_data.hpp"

namespace gpumats {

struct SeqKind {
  static constexpr const char *prefix = "seq";
  static constexpr const char *base   = MATSEQAIJ;
  static PetscErrorCode        FromAIJ(Mat A, const FormatInfo &f, bool device); // A: an assembled or empty SeqAIJ
  static PetscErrorCode        ToAIJ(Mat A, bool destroying = false);           // (destroying: see UninstallType)
};

struct MpiKind {
  static constexpr const char *prefix = "mpi";
  static constexpr const char *base   = MATMPIAIJ;
  static PetscErrorCode        FromAIJ(Mat A, const FormatInfo &f, bool device);
  static PetscErrorCode        ToAIJ(Mat A, bool destroying = false);
  static PetscErrorCode        RegisterEvents(); // the -log_view events of MatMult's parts, from PetscGpuMatsInitialize
};

} // namespace gpumats
