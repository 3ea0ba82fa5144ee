// Matrices the plug-in makes for its own use, out of sight of the user's viewer options.
#pragma once

#include <petscmat.h>
#include <petscviewer.h>

namespace gpumats {

// Runs f() with PETSc's viewers from options turned off. PETSc views every matrix assembled outside
// another assembly by -mat_view (and -mat_view_*); the helper matrices made here (the aijcusparse
// shadows, the graph RCM orders a block by) are ours, aijcusparse in our place makes none, and a
// user's -mat_view is about the user's matrices.
template <class F>
PetscErrorCode WithoutOptionViewers(F &&f)
{
  PetscFunctionBegin;
#if PETSC_VERSION_LT(3, 22, 0)
  PetscCall(PetscOptionsPushGetViewerOff(PETSC_TRUE));
#else
  PetscCall(PetscOptionsPushCreateViewerOff(PETSC_TRUE));
#endif
  const PetscErrorCode err = f();
#if PETSC_VERSION_LT(3, 22, 0)
  PetscCall(PetscOptionsPopGetViewerOff());
#else
  PetscCall(PetscOptionsPopCreateViewerOff());
#endif
  PetscCall(err);
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace gpumats
