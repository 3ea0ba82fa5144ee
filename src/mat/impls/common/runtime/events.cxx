#include "events.hpp"

namespace gpumats {

PetscErrorCode RegisterRankEvent(const char *name, PetscLogEvent *event)
{
  PetscFunctionBegin;
  PetscCall(PetscLogEventRegister(name, MAT_CLASSID, event));
  PetscCall(PetscLogEventSetCollective(*event, PETSC_FALSE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace gpumats
