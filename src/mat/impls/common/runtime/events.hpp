// The -log_view events of petsc-gpumats.
#pragma once

#include "../operator/format_operator.hpp"

namespace gpumats {

// Registers an event for work one rank does on its own share: a block's product, an upload, a
// conversion. PETSc takes new events to be collective, and with -log_sync (which PETSc's test
// harness turns on through -petsc_ci) it puts a barrier on the logged object's communicator in
// front of each: a rank whose off-diagonal block is empty skips that product and its event, the
// others' barriers then pair with later ones of its own, and the run deadlocks.
PetscErrorCode RegisterRankEvent(const char *name, PetscLogEvent *event);

} // namespace gpumats
