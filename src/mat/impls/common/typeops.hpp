// What the Seq and MPI types have in common: per-Mat data kept in A->spptr, the AIJ operations we
// override (saved so we can chain to them and restore them on conversion back to AIJ), the state
// key that tells whether the format copy is current, and the conversion functions composed on
// every object so that MatConvert finds them.
#pragma once

#include "glue.hpp"

#include <string>
#include <vector>

namespace gpumats {

using OpFn = void (*)(void);

enum OpIndex { kMult, kMultAdd, kAssemblyEnd, kDestroy, kDuplicate, kView, kSetFromOptions, kTranspose, kNumOps };
constexpr MatOperation kOverridden[kNumOps] = {MATOP_MULT, MATOP_MULT_ADD,         MATOP_ASSEMBLY_END, MATOP_DESTROY,
                                               MATOP_DUPLICATE, MATOP_VIEW, MATOP_SET_FROM_OPTIONS, MATOP_TRANSPOSE};

// Base of the Seq and MPI per-matrix data (A->spptr).
struct TypeData {
  const FormatInfo *info   = nullptr;
  bool              device = false;
  OpFn              saved[kNumOps]{};
  PetscErrorCode (*retrieve)(Mat) = nullptr; // AIJ's MatRetrieveValues, which changes values without a state change
  // the format copy is current while the matrix keeps the (id, state) it was built from; a copy
  // built inside MatAssemblyEnd sees the state go up by one when MatAssemblyEnd returns, which
  // `from_assembly` tolerates once
  PetscObjectId    id    = 0;
  PetscObjectState state = 0;
  bool             valid = false, from_assembly = false;
  Staging          stage;

  virtual ~TypeData() = default;
  // forget every format copy: the next use rebuilds (after changes PETSc does not record in a state)
  virtual void invalidate() { valid = false; }

  template <class Fn, class... Args>
  PetscErrorCode call(OpIndex i, Args... args) const
  {
    return reinterpret_cast<Fn>(saved[i])(args...);
  }
  PetscErrorCode is_current(Mat A, PetscBool *current);
  PetscErrorCode mark_current(Mat A, bool in_assembly);
};

inline TypeData *Data(Mat A) { return static_cast<TypeData *>(A->spptr); }

// Names of the types a MatConvert into `target` may start from (AIJ, its CUDA subclass, ours).
std::vector<std::string> convert_sources(const char *prefix);

// Installs d on A: saves and overrides the operations, wraps MatRetrieveValues, renames the type,
// composes the converters, selects CUDA vectors for device types.
PetscErrorCode InstallType(Mat A, TypeData *d, const char *prefix, const OpFn ours[kNumOps], PetscErrorCode (*into)(Mat, MatType, MatReuse, Mat *),
                           PetscErrorCode (*back)(Mat, MatType, MatReuse, Mat *));
// Undoes InstallType: A is a plain AIJ again and d is deleted.
PetscErrorCode UninstallType(Mat A, const char *prefix, const char *base);

// Generic MatConvert bodies, instantiated per (kind, format, device) in seq.cxx / mpi.cxx.
// Kind provides: prefix, base (MATSEQAIJ/MATMPIAIJ), FromAIJ(Mat, FormatInfo&, bool), ToAIJ(Mat).
template <class Kind>
PetscErrorCode StripToAIJ(Mat A)
{
  PetscBool ours = Data(A) ? PETSC_TRUE : PETSC_FALSE, plain;

  PetscFunctionBegin;
  if (ours) PetscCall(Kind::ToAIJ(A));
  PetscCall(PetscObjectTypeCompare((PetscObject)A, Kind::base, &plain));
  if (!plain) PetscCall(MatConvert(A, Kind::base, MAT_INPLACE_MATRIX, &A)); // e.g. from aijcusparse
  PetscFunctionReturn(PETSC_SUCCESS);
}

template <class Kind, FormatInfo *F, bool D>
PetscErrorCode ConvertInto(Mat A, MatType, MatReuse reuse, Mat *B)
{
  Mat C = A;

  PetscFunctionBegin;
  if (reuse == MAT_REUSE_MATRIX) {
    PetscCall(MatCopy(A, *B, SAME_NONZERO_PATTERN));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (reuse == MAT_INITIAL_MATRIX) PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &C));
  PetscErrorCode err = StripToAIJ<Kind>(C);
  if (!err) err = Kind::FromAIJ(C, *F, D);
  if (err && C != A) PetscCall(MatDestroy(&C)); // a failed conversion leaves nothing behind
  PetscCall(err);
  *B = C;
  PetscFunctionReturn(PETSC_SUCCESS);
}

// The converter into (format, device) for a kind, as a plain function pointer PETSc can compose.
using IntoFn = PetscErrorCode (*)(Mat, MatType, MatReuse, Mat *);
template <class Kind>
IntoFn into_for(const FormatInfo &f, bool device)
{
  if (&f == &cmrs_info) return device ? ConvertInto<Kind, &cmrs_info, true> : ConvertInto<Kind, &cmrs_info, false>;
  if (&f == &sellp_info) return device ? ConvertInto<Kind, &sellp_info, true> : ConvertInto<Kind, &sellp_info, false>;
  if (&f == &auto_info) return ConvertInto<Kind, &auto_info, true>; // a GPU type only
  return device ? ConvertInto<Kind, &bellpack_info, true> : ConvertInto<Kind, &bellpack_info, false>;
}

template <class Kind>
PetscErrorCode ConvertBack(Mat A, MatType, MatReuse reuse, Mat *B)
{
  Mat C = A;

  PetscFunctionBegin;
  if (reuse == MAT_REUSE_MATRIX) {
    PetscCall(MatCopy(A, *B, SAME_NONZERO_PATTERN));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (reuse == MAT_INITIAL_MATRIX) PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &C));
  PetscCall(Kind::ToAIJ(C));
  *B = C;
  PetscFunctionReturn(PETSC_SUCCESS);
}

template <class Kind, FormatInfo *F, bool D>
PetscErrorCode CreateType(Mat A)
{
  PetscFunctionBegin;
  PetscCall(MatSetType(A, Kind::base));
  PetscCall(Kind::FromAIJ(A, *F, D));
  PetscFunctionReturn(PETSC_SUCCESS);
}

// Reads the format's options when the user calls MatSetFromOptions, chaining to AIJ's first.
PetscErrorCode SetFromOptionsCommon(Mat A, OptionItems PetscOptionsObject, FormatOperator &proto, PetscBool *changed);

} // namespace gpumats
