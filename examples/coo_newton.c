/*
   coo_newton - petsc-gpumats example: a Newton solve whose Jacobian is assembled with COO.

   Synopsis:
     build/bin/coo_newton -dll_append lib/libpetscgpumats.so [-n <int>] [-lambda <real>]
                          [-coo_values auto|host|device] [-dm_mat_type <type>] [-dm_vec_type <type>]
                          [SNES, KSP and PC options]
     mpiexec -n <ranks> build/bin/coo_newton ...

   The 2D Bratu (Liouville-Bratu-Gelfand) problem of PETSc's snes ex5,

       -Laplacian(u) - lambda exp(u) = 0 in the unit square,  u = 0 on its boundary,

   on an n x n DMDA (n points a side, boundary points included) with the 5-point stencil. The residual
   is evaluated on the host through the DMDA's local arrays. The Jacobian is what an application that
   assembles on the GPU does: MatSetPreallocationCOO once (at the first Jacobian evaluation), with the
   (row, column) pairs of this rank's rows in PETSc's global numbering (columns of the ghost points
   included), then MatSetValuesCOO at every Newton step. This program knows nothing of
   petsc-gpumats: it is plain PETSc, and the library's types come in through -dll_append and
   -dm_mat_type, as for PETSc's own tutorials.

   Where the values live (-coo_values): `device` hands MatSetValuesCOO a device array (the array of a
   VECCUDA), `host` a host array. The default, `auto`, is device when PETSc has CUDA, the Jacobian's
   type name ends in "cuda" or "cusparse" (aijcusparse and the *cuda types of petsc-gpumats) and the
   type has a MatSetValuesCOO of its own (PETSc's fallback, MatSetValues entry by entry, reads the
   values on the host), else host.
   The values themselves are computed on the host and uploaded once per Newton step, inside the event
   CooValues (the VECCUDA's CpuToGpu copy in -log_view): computing them on the GPU would need a kernel
   or PETSc Vec operations on sub-arrays that differ between PETSc versions, and what the matrix types
   are measured on, MatSetValuesCOO with a device array, is the same either way.

   The Jacobian leaves out the columns of boundary points in the rows of interior points. The boundary
   rows are the identity (times a scale), the residual there is c*u = 0 from the initial guess on, so
   every Newton update is zero on the boundary and those entries would only multiply zeros: without
   them the Jacobian is the symmetric one of the interior problem, and CG applies (lambda below the
   fold at 6.808, the lower branch the initial guess leads to: positive definite).

   -log_view events of this program (besides PETSc's and the matrix types' own: MatSetValuesCOO,
   MatAssemblyEnd inside it, <FORMAT>Convert and GpuMatsValues of petsc-gpumats, MatCUSPARSCopyTo):
     CooPrealloc   MatSetPreallocationCOO, once
     CooValues     the Jacobian's values on the host, and their upload when they go to the device
     CooAssembly   MatSetValuesCOO, every Newton step

   Options:
+  -n <2048>                  - grid points a side (n^2 unknowns)
.  -lambda <6.0>              - the Bratu parameter, 0 <= lambda < 6.808 (the fold)
.  -coo_values <auto>         - auto, host or device (device needs a PETSc with CUDA)
-  -dm_mat_type, -dm_vec_type - the Jacobian's and the vectors' types (e.g. sellpcuda and cuda)

   Prints the grid, the Jacobian's type, where the COO values come from, and after the solve the
   Newton steps, the linear iterations summed over them and the final residual norm. Exit status 0
   when SNES converged.

   Examples:
     build/bin/coo_newton -dll_append lib/libpetscgpumats.so -n 65 -dm_mat_type sellp -ksp_type cg -pc_type jacobi -snes_monitor
     build/bin/coo_newton -dll_append lib/libpetscgpumats.so -dm_mat_type sellpcuda -dm_vec_type cuda -ksp_type cg -pc_type jacobi -log_view
*/

/*TEST

   test:
      suffix: aij
      args: -n 33 -dm_mat_type aij -ksp_type cg -pc_type jacobi -snes_converged_reason

   test:
      suffix: mpi
      nsize: 2
      args: -n 33 -dm_mat_type aij -ksp_type cg -pc_type jacobi -snes_converged_reason

   test:
      suffix: cuda
      requires: cuda
      args: -n 33 -dm_mat_type aijcusparse -dm_vec_type cuda -ksp_type cg -pc_type jacobi -snes_converged_reason

TEST*/

static char help[] = "2D Bratu problem on a DMDA, Newton with the Jacobian assembled by MatSetPreallocationCOO/MatSetValuesCOO.\n"
                     "  -n <int>: grid points a side  -lambda <real>: Bratu parameter  -coo_values auto|host|device\n"
                     "  -dm_mat_type <type> -dm_vec_type <type>, and any SNES/KSP/PC option\n\n";

#include <petscdmda.h>
#include <petscsnes.h>
#include <string.h>

/* PETSc before 3.19 returned a plain 0 for success */
#if PETSC_VERSION_LT(3, 19, 0)
  #define PETSC_SUCCESS 0
#endif

typedef struct {
  DM            da;
  PetscReal     lambda;
  PetscBool     device;      /* MatSetValuesCOO gets a device array */
  PetscBool     preallocated;
  PetscCount    ncoo;        /* this rank's COO entries */
  Vec           values;      /* the ncoo values: VECCUDA when device, else a host Vec */
  PetscLogEvent prealloc_event, values_event, assembly_event;
} AppCtx;

static PetscBool OnBoundary(PetscInt i, PetscInt j, PetscInt mx, PetscInt my) { return (PetscBool)(i == 0 || j == 0 || i == mx - 1 || j == my - 1); }

/* ex5's initial guess: 0 on the boundary, lambda/(lambda+1) sqrt(distance to it) inside */
static PetscErrorCode FormInitialGuess(AppCtx *user, Vec X)
{
  PetscInt      i, j, mx, my, xs, ys, xm, ym;
  PetscReal     hx, hy, scale;
  PetscScalar **x;

  PetscFunctionBeginUser;
  PetscCall(DMDAGetInfo(user->da, NULL, &mx, &my, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
  PetscCall(DMDAGetCorners(user->da, &xs, &ys, NULL, &xm, &ym, NULL));
  hx    = 1.0 / (PetscReal)(mx - 1);
  hy    = 1.0 / (PetscReal)(my - 1);
  scale = user->lambda / (user->lambda + 1.0);
  PetscCall(DMDAVecGetArray(user->da, X, &x));
  for (j = ys; j < ys + ym; j++) {
    const PetscReal dy = PetscMin(j, my - j - 1) * hy;
    for (i = xs; i < xs + xm; i++) {
      const PetscReal dx = PetscMin(i, mx - i - 1) * hx;
      x[j][i]            = OnBoundary(i, j, mx, my) ? 0.0 : scale * PetscSqrtReal(PetscMin(dx, dy));
    }
  }
  PetscCall(DMDAVecRestoreArray(user->da, X, &x));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The grid of the owned points and the 5-point stencil's coefficients, and X with its ghost points
   (restored by the caller: DMDAVecRestoreArrayRead, DMRestoreLocalVector) */
typedef struct {
  PetscInt  mx, my, xs, ys, xm, ym;
  PetscReal hxdhy, hydhx, sc;
} Grid;

static PetscErrorCode GetGrid(AppCtx *user, Vec X, Grid *g, Vec *local, const PetscScalar ***x)
{
  DM        da = user->da;
  PetscReal hx, hy;

  PetscFunctionBeginUser;
  PetscCall(DMDAGetInfo(da, NULL, &g->mx, &g->my, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
  PetscCall(DMDAGetCorners(da, &g->xs, &g->ys, NULL, &g->xm, &g->ym, NULL));
  hx       = 1.0 / (PetscReal)(g->mx - 1);
  hy       = 1.0 / (PetscReal)(g->my - 1);
  g->hxdhy = hx / hy;
  g->hydhx = hy / hx;
  g->sc    = hx * hy * user->lambda;
  PetscCall(DMGetLocalVector(da, local));
  PetscCall(DMGlobalToLocalBegin(da, X, INSERT_VALUES, *local));
  PetscCall(DMGlobalToLocalEnd(da, X, INSERT_VALUES, *local));
  PetscCall(DMDAVecGetArrayRead(da, *local, x));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* F(u), scaled by hx*hy as in ex5: c u on the boundary, the 5-point stencil minus lambda hx hy exp(u) inside */
static PetscErrorCode FormFunction(SNES snes, Vec X, Vec F, void *ctx)
{
  AppCtx             *user = (AppCtx *)ctx;
  DM                  da   = user->da;
  Vec                 local;
  PetscInt            i, j, mx, my, xs, ys, xm, ym;
  PetscReal           hxdhy, hydhx, sc;
  Grid                g;
  const PetscScalar **x;
  PetscScalar       **f;

  PetscFunctionBeginUser;
  PetscCall(GetGrid(user, X, &g, &local, &x));
  mx = g.mx, my = g.my, xs = g.xs, ys = g.ys, xm = g.xm, ym = g.ym;
  hxdhy = g.hxdhy, hydhx = g.hydhx, sc = g.sc;
  PetscCall(DMDAVecGetArray(da, F, &f));
  for (j = ys; j < ys + ym; j++) {
    for (i = xs; i < xs + xm; i++) {
      const PetscScalar u = x[j][i];
      if (OnBoundary(i, j, mx, my)) f[j][i] = 2.0 * (hydhx + hxdhy) * u;
      else f[j][i] = (2.0 * u - x[j][i - 1] - x[j][i + 1]) * hydhx + (2.0 * u - x[j - 1][i] - x[j + 1][i]) * hxdhy - sc * PetscExpScalar(u);
    }
  }
  PetscCall(DMDAVecRestoreArray(da, F, &f));
  PetscCall(DMDAVecRestoreArrayRead(da, local, &x));
  PetscCall(DMRestoreLocalVector(da, &local));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The COO entries of this rank's rows, in the order FormJacobian writes their values: each owned
   point (x fastest) with its diagonal first, then its interior neighbours west, east, south, north.
   Indices are made in the DMDA's local (ghosted) numbering and mapped to PETSc's global one. */
static PetscErrorCode PreallocateCOO(AppCtx *user, Mat J)
{
  DM                     da = user->da;
  ISLocalToGlobalMapping ltog;
  PetscInt               i, j, mx, my, xs, ys, xm, ym, gxs, gys, gxm, *ci, *cj;
  PetscCount             n = 0;

  PetscFunctionBeginUser;
  PetscCall(DMDAGetInfo(da, NULL, &mx, &my, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
  PetscCall(DMDAGetCorners(da, &xs, &ys, NULL, &xm, &ym, NULL));
  PetscCall(DMDAGetGhostCorners(da, &gxs, &gys, NULL, &gxm, NULL, NULL));
  PetscCall(PetscMalloc2(5 * (size_t)xm * ym, &ci, 5 * (size_t)xm * ym, &cj));
  for (j = ys; j < ys + ym; j++) {
    for (i = xs; i < xs + xm; i++) {
      const PetscInt row = (j - gys) * gxm + (i - gxs);
      const PetscInt nb[4][2] = {
        {i - 1, j    },
        {i + 1, j    },
        {i,     j - 1},
        {i,     j + 1}
      };
      ci[n] = row, cj[n++] = row;
      if (OnBoundary(i, j, mx, my)) continue;
      for (int k = 0; k < 4; k++) {
        if (OnBoundary(nb[k][0], nb[k][1], mx, my)) continue;
        ci[n] = row, cj[n++] = (nb[k][1] - gys) * gxm + (nb[k][0] - gxs);
      }
    }
  }
  PetscCall(DMGetLocalToGlobalMapping(da, &ltog));
  PetscCall(ISLocalToGlobalMappingApply(ltog, (PetscInt)n, ci, ci));
  PetscCall(ISLocalToGlobalMappingApply(ltog, (PetscInt)n, cj, cj));
  PetscCall(PetscLogEventBegin(user->prealloc_event, J, 0, 0, 0));
  PetscCall(MatSetPreallocationCOO(J, n, ci, cj));
  PetscCall(PetscLogEventEnd(user->prealloc_event, J, 0, 0, 0));
  PetscCall(PetscFree2(ci, cj));

  user->ncoo = n;
  PetscCall(VecCreate(PETSC_COMM_SELF, &user->values));
  PetscCall(VecSetSizes(user->values, (PetscInt)n, (PetscInt)n));
#if PetscDefined(HAVE_CUDA)
  PetscCall(VecSetType(user->values, user->device ? VECCUDA : VECSTANDARD));
#else
  PetscCall(VecSetType(user->values, VECSTANDARD));
#endif
  user->preallocated = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode FormJacobian(SNES snes, Vec X, Mat Amat, Mat J, void *ctx)
{
  AppCtx             *user = (AppCtx *)ctx;
  DM                  da   = user->da;
  Vec                 local;
  PetscInt            i, j, mx, my, xs, ys, xm, ym;
  PetscCount          n = 0;
  PetscReal           hxdhy, hydhx, sc;
  Grid                g;
  const PetscScalar **x, *v;
  PetscScalar        *a;
  PetscMemType        mtype;

  PetscFunctionBeginUser;
  if (!user->preallocated) PetscCall(PreallocateCOO(user, J));
  PetscCall(PetscLogEventBegin(user->values_event, J, 0, 0, 0));
  PetscCall(GetGrid(user, X, &g, &local, &x));
  mx = g.mx, my = g.my, xs = g.xs, ys = g.ys, xm = g.xm, ym = g.ym;
  hxdhy = g.hxdhy, hydhx = g.hydhx, sc = g.sc;
  PetscCall(VecGetArrayWrite(user->values, &a));
  for (j = ys; j < ys + ym; j++) {
    for (i = xs; i < xs + xm; i++) {
      if (OnBoundary(i, j, mx, my)) {
        a[n++] = 2.0 * (hydhx + hxdhy);
        continue;
      }
      a[n++] = 2.0 * (hydhx + hxdhy) - sc * PetscExpScalar(x[j][i]);
      if (!OnBoundary(i - 1, j, mx, my)) a[n++] = -hydhx;
      if (!OnBoundary(i + 1, j, mx, my)) a[n++] = -hydhx;
      if (!OnBoundary(i, j - 1, mx, my)) a[n++] = -hxdhy;
      if (!OnBoundary(i, j + 1, mx, my)) a[n++] = -hxdhy;
    }
  }
  PetscCall(VecRestoreArrayWrite(user->values, &a));
  PetscCall(DMDAVecRestoreArrayRead(da, local, &x));
  PetscCall(DMRestoreLocalVector(da, &local));
  PetscCheck(n == user->ncoo, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%" PetscInt64_FMT " COO values for %" PetscInt64_FMT " entries", (PetscInt64)n, (PetscInt64)user->ncoo);
  /* a VECCUDA uploads here: v is its device array */
  PetscCall(VecGetArrayReadAndMemType(user->values, &v, &mtype));
  PetscCall(PetscLogEventEnd(user->values_event, J, 0, 0, 0));
  PetscCheck(user->device == (PetscBool)!PetscMemTypeHost(mtype), PETSC_COMM_SELF, PETSC_ERR_PLIB, "COO values in %s memory, expected %s", PetscMemTypeHost(mtype) ? "host" : "device",
             user->device ? "device" : "host");

  PetscCall(PetscLogEventBegin(user->assembly_event, J, 0, 0, 0));
  PetscCall(MatSetValuesCOO(J, v, INSERT_VALUES));
  PetscCall(PetscLogEventEnd(user->assembly_event, J, 0, 0, 0));
  PetscCall(VecRestoreArrayReadAndMemType(user->values, &v));
  if (Amat != J) {
    PetscCall(MatAssemblyBegin(Amat, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(Amat, MAT_FINAL_ASSEMBLY));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscBool EndsWith(const char *s, const char *tail)
{
  const size_t n = strlen(s), m = strlen(tail);
  return (PetscBool)(n >= m && !strcmp(s + n - m, tail));
}

int main(int argc, char **argv)
{
  SNES                snes;
  Mat                 J;
  Vec                 X;
  AppCtx              user;
  PetscInt            n = 2048, newton, linear, where = 0;
  PetscReal           fnorm;
  MatType             mtype;
  VecType             vtype;
  PetscClassId        classid;
  SNESConvergedReason reason;
  const char         *wheres[] = {"auto", "host", "device"};
  PetscErrorCode    (*coo)(void) = NULL;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscMemzero(&user, sizeof(user)));
  user.lambda = 6.0;
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "COO Newton options", "");
  PetscCall(PetscOptionsInt("-n", "grid points a side", "", n, &n, NULL));
  PetscCall(PetscOptionsReal("-lambda", "Bratu parameter", "", user.lambda, &user.lambda, NULL));
  PetscCall(PetscOptionsEList("-coo_values", "where MatSetValuesCOO's values are", "", wheres, 3, wheres[where], &where, NULL));
  PetscOptionsEnd();
  PetscCheck(n >= 3, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-n %" PetscInt_FMT ": at least 3 points a side", n);
  PetscCheck(user.lambda >= 0.0 && user.lambda < 6.808, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-lambda %g: 0 <= lambda < 6.808 (no solution past the fold)", (double)user.lambda);
#if !PetscDefined(HAVE_CUDA)
  PetscCheck(where != 2, PETSC_COMM_WORLD, PETSC_ERR_SUP, "-coo_values device needs a PETSc configured with CUDA");
#endif

  PetscCall(PetscClassIdRegister("COO Newton", &classid));
  PetscCall(PetscLogEventRegister("CooPrealloc", classid, &user.prealloc_event));
  PetscCall(PetscLogEventRegister("CooValues", classid, &user.values_event));
  PetscCall(PetscLogEventRegister("CooAssembly", classid, &user.assembly_event));

  PetscCall(DMDACreate2d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_STAR, n, n, PETSC_DECIDE, PETSC_DECIDE, 1, 1, NULL, NULL, &user.da));
  PetscCall(DMSetFromOptions(user.da));
  PetscCall(DMSetUp(user.da));
  /* the pattern comes from MatSetPreallocationCOO, so DMCreateMatrix need not preallocate and
     assemble the stencil (PETSc 3.25 skips it; 3.18's DMDA ignores the flag and does it anyway) */
  PetscCall(DMSetMatrixPreallocateSkip(user.da, PETSC_TRUE));
  PetscCall(DMCreateMatrix(user.da, &J));
  PetscCall(DMCreateGlobalVector(user.da, &X));
  PetscCall(MatGetType(J, &mtype));
  PetscCall(VecGetType(X, &vtype));
  /* a device array only for a type with a COO implementation of its own: PETSc's generic fallback
     (MatSetValues entry by entry) reads the values on the host */
  PetscCall(PetscObjectQueryFunction((PetscObject)J, "MatSetValuesCOO_C", &coo));
  user.device = (PetscBool)(where == 2 || (where == 0 && PetscDefined(HAVE_CUDA) && coo && (EndsWith(mtype, "cuda") || EndsWith(mtype, "cusparse"))));
  PetscCheck(!user.device || coo, PETSC_COMM_WORLD, PETSC_ERR_SUP, "-coo_values device: %s has no MatSetValuesCOO of its own (PETSc's fallback reads the values on the host)", mtype);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "coo_newton: %" PetscInt_FMT " x %" PetscInt_FMT " grid, lambda %g; Jacobian %s, vectors %s; COO values from %s memory\n", n, n,
                        (double)user.lambda, mtype, vtype, user.device ? "device" : "host"));

  PetscCall(SNESCreate(PETSC_COMM_WORLD, &snes));
  PetscCall(SNESSetDM(snes, user.da));
  PetscCall(SNESSetFunction(snes, NULL, FormFunction, &user));
  PetscCall(SNESSetJacobian(snes, J, J, FormJacobian, &user));
  PetscCall(SNESSetFromOptions(snes));
  PetscCall(FormInitialGuess(&user, X));
  PetscCall(SNESSolve(snes, NULL, X));

  PetscCall(SNESGetIterationNumber(snes, &newton));
  PetscCall(SNESGetLinearSolveIterations(snes, &linear));
  PetscCall(SNESGetConvergedReason(snes, &reason));
  PetscCall(SNESGetFunctionNorm(snes, &fnorm));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "coo_newton: %s after %" PetscInt_FMT " Newton steps, %" PetscInt_FMT " linear iterations, ||F|| %.6e\n", SNESConvergedReasons[reason], newton, linear,
                        (double)fnorm));

  PetscCall(VecDestroy(&user.values));
  PetscCall(VecDestroy(&X));
  PetscCall(MatDestroy(&J));
  PetscCall(SNESDestroy(&snes));
  PetscCall(DMDestroy(&user.da));
  PetscCall(PetscFinalize());
  return reason > 0 ? 0 : 1;
}
