static char help[] = "Geometric multigrid on a DMDA keeps the type under test on every level.\n"
                     "  -types a,b,c   : types under test, given to DMSetMatType (default cmrs,sellp,bellpack)\n"
                     "  -levels n      : PCMG levels (default 3)\n"
                     "  -galerkin      : coarse operators by Galerkin products (PtAP) instead of the DM\n"
                     "  -dof n         : unknowns per grid point (default 1; DMDA then interpolates through a MAIJ)\n"
                     "  -da_grid_x n ..., -dm_vec_type t : as for any DMDA (default grid 17^3)\n";

/*
   PCMG on a DMDA, as in ksp ex45 with -pc_type mg: PCSetUp_MG coarsens the DM, asks it for the
   interpolation of each level (DMCreateInterpolation) and for each coarse operator. -ksp_view
   shows the level operators but never the interpolation (PCView_MG of PETSc 3.18 to 3.25), so this
   program asks PCMG for both and checks their types against the type the DM creates for its
   operators (DMCreateMatrix). DMDA's interpolation takes the DM's matrix type only when that name
   begins with aij, seqaij or mpiaij and otherwise falls back to plain AIJ (ConvertToAIJ in
   src/dm/impls/da/dainterp.c): a type whose interpolation stays on the host, in plain AIJ, fails
   here. A *cuda type may also have its interpolation in aijcusparse, which runs on the GPU too.
   With -dof n > 1, DMDA wraps the scalar interpolation in a MAIJ (host products): the plug-in
   expands it into the DM's type, so the same check applies.
*/
#include "check.h"
#include <petscdmda.h>
#include <petscksp.h>

/* the 7-point Laplacian of ex45 (scaled by the cell volume, identity rows on the boundary), one
   uncoupled copy per component */
static PetscErrorCode ComputeMatrix(KSP ksp, Mat J, Mat A, void *ctx)
{
  DM          da;
  PetscInt    mx, my, mz, xs, ys, zs, xm, ym, zm;
  PetscReal   hx, hy, hz;
  MatStencil  row, col[7];
  PetscScalar v[7];

  PetscFunctionBeginUser;
  PetscInt    dof;

  PetscCall(KSPGetDM(ksp, &da));
  PetscCall(DMDAGetInfo(da, NULL, &mx, &my, &mz, NULL, NULL, NULL, &dof, NULL, NULL, NULL, NULL, NULL));
  hx = 1.0 / (mx - 1);
  hy = 1.0 / (my - 1);
  hz = 1.0 / (mz - 1);
  PetscCall(DMDAGetCorners(da, &xs, &ys, &zs, &xm, &ym, &zm));
  for (PetscInt k = zs; k < zs + zm; k++) {
    for (PetscInt j = ys; j < ys + ym; j++) {
      for (PetscInt i = xs; i < xs + xm; i++) {
        for (PetscInt c = 0; c < dof; c++) {
          row.c = c;
          row.i = i;
          row.j = j;
          row.k = k;
          if (i == 0 || j == 0 || k == 0 || i == mx - 1 || j == my - 1 || k == mz - 1) {
            v[0] = 2.0 * (hy * hz / hx + hx * hz / hy + hx * hy / hz);
            PetscCall(MatSetValuesStencil(A, 1, &row, 1, &row, v, INSERT_VALUES));
            continue;
          }
          /* neighbours in ex45's order: k-1, j-1, i-1, centre, i+1, j+1, k+1 */
          const PetscInt  di[7] = {0, 0, -1, 0, 1, 0, 0}, dj[7] = {0, -1, 0, 0, 0, 1, 0}, dk[7] = {-1, 0, 0, 0, 0, 0, 1};
          const PetscReal w[3]  = {hy * hz / hx, hx * hz / hy, hx * hy / hz};
          for (int n = 0; n < 7; n++) {
            col[n].i = i + di[n];
            col[n].j = j + dj[n];
            col[n].k = k + dk[n];
            col[n].c = c;
            v[n]     = di[n] ? -w[0] : dj[n] ? -w[1] : dk[n] ? -w[2] : 2.0 * (w[0] + w[1] + w[2]);
          }
          PetscCall(MatSetValuesStencil(A, 1, &row, 7, col, v, INSERT_VALUES));
        }
      }
    }
  }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* P has the DM's operator type (same concrete type name), or aijcusparse for a *cuda type */
static PetscErrorCode CheckType(Mat P, const char *optype, const char *type, const char *name)
{
  MatType   ptype;
  PetscBool same, cuda = PETSC_FALSE, isgpu = PETSC_FALSE;
  char      why[256];
  size_t    len;

  PetscFunctionBeginUser;
  PetscCall(MatGetType(P, &ptype));
  PetscCall(PetscStrcmp(ptype, optype, &same));
  PetscCall(PetscStrlen(type, &len));
  if (len > 4) PetscCall(PetscStrcmp(type + len - 4, "cuda", &cuda));
  if (cuda) PetscCall(PetscObjectTypeCompareAny((PetscObject)P, &isgpu, MATSEQAIJCUSPARSE, MATMPIAIJCUSPARSE, ""));
  /* plain AIJ keeps DMDA's MAIJ (dof > 1) */
  if (!same && (!strcmp(optype, MATSEQAIJ) || !strcmp(optype, MATMPIAIJ))) PetscCall(PetscObjectTypeCompareAny((PetscObject)P, &same, MATSEQMAIJ, MATMPIMAIJ, ""));
  PetscCall(PetscSNPrintf(why, sizeof(why), "type %s, the DM's operators are %s", ptype, optype));
  PetscCall(Check(PetscObjectComm((PetscObject)P), (same || isgpu) ? PETSC_TRUE : PETSC_FALSE, name, why));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* block sizes dof by dof, as with aij: DMDA's MAIJ interpolation has them, and Galerkin coarse
   operators take theirs from it (snes ex40f90) */
static PetscErrorCode CheckBlockSizes(Mat M, PetscInt dof, const char *name)
{
  PetscInt rbs, cbs;
  char     why[128];

  PetscFunctionBeginUser;
  PetscCall(MatGetBlockSizes(M, &rbs, &cbs));
  PetscCall(PetscSNPrintf(why, sizeof(why), "block sizes %" PetscInt_FMT " x %" PetscInt_FMT ", not %" PetscInt_FMT, rbs, cbs, dof));
  PetscCall(Check(PetscObjectComm((PetscObject)M), rbs == dof && cbs == dof ? PETSC_TRUE : PETSC_FALSE, name, why));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode RunType(const char *type, PetscInt levels, PetscBool galerkin, PetscInt dof)
{
  DM        da;
  Mat       A;
  MatType   optype;
  KSP       ksp;
  PC        pc;
  PetscBool plain, isaij;
  char      name[256], why[256];

  PetscFunctionBeginUser;
  PetscCall(DMDACreate3d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_STAR, 17, 17, 17, PETSC_DECIDE, PETSC_DECIDE, PETSC_DECIDE, dof, 1, NULL, NULL,
                         NULL, &da));
  PetscCall(DMSetFromOptions(da));
  PetscCall(DMSetMatType(da, type)); /* after DMSetFromOptions: -types, not -dm_mat_type, decides */
  PetscCall(DMSetUp(da));

  /* what the DM creates for operators: the concrete type every level is checked against */
  PetscCall(DMCreateMatrix(da, &A));
  PetscCall(MatGetType(A, &optype));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)A, &plain, MATSEQAIJ, MATMPIAIJ, ""));
  PetscCall(PetscStrInList(type, "aij,seqaij,mpiaij", ',', &isaij)); /* only AIJ itself may give plain AIJ */
  PetscCall(PetscSNPrintf(name, sizeof(name), "mg-dm-operator/%s", type));
  PetscCall(PetscSNPrintf(why, sizeof(why), "DMCreateMatrix with mat type %s gave plain %s", type, optype));
  PetscCall(Check(PETSC_COMM_WORLD, (plain && !isaij) ? PETSC_FALSE : PETSC_TRUE, name, why));

  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetDM(ksp, da));
  PetscCall(KSPSetComputeOperators(ksp, ComputeMatrix, NULL));
  PetscCall(KSPSetType(ksp, KSPCG));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCMG));
  PetscCall(PCMGSetLevels(pc, levels, NULL));
  if (galerkin) PetscCall(PCMGSetGalerkin(pc, PC_MG_GALERKIN_BOTH));
  PetscCall(KSPSetUp(ksp));
  for (PetscInt l = 0; l < levels; l++) {
    KSP smoother;
    Mat Al, P;
    PetscCall(PCMGGetSmoother(pc, l, &smoother));
    PetscCall(KSPGetOperators(smoother, &Al, NULL));
    PetscCall(PetscSNPrintf(name, sizeof(name), "mg-%soperator-level-%" PetscInt_FMT "/%s", galerkin ? "galerkin-" : "", l, type));
    PetscCall(CheckType(Al, optype, type, name));
    PetscCall(PetscSNPrintf(name, sizeof(name), "mg-%soperator-block-size-level-%" PetscInt_FMT "/%s", galerkin ? "galerkin-" : "", l, type));
    PetscCall(CheckBlockSizes(Al, dof, name));
    if (!l) continue;
    PetscCall(PCMGGetInterpolation(pc, l, &P));
    PetscCall(PetscSNPrintf(name, sizeof(name), "mg-%sinterpolation-level-%" PetscInt_FMT "/%s", galerkin ? "galerkin-" : "", l, type));
    PetscCall(CheckType(P, optype, type, name));
    PetscCall(PetscSNPrintf(name, sizeof(name), "mg-%sinterpolation-block-size-level-%" PetscInt_FMT "/%s", galerkin ? "galerkin-" : "", l, type));
    PetscCall(CheckBlockSizes(P, dof, name));
  }
  PetscCall(KSPDestroy(&ksp));
  PetscCall(MatDestroy(&A));
  PetscCall(DMDestroy(&da));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  TypeList  types;
  PetscInt  levels   = 3;
  PetscBool galerkin = PETSC_FALSE;
  PetscInt  dof      = 1;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGpuMatsInitialize());
  PetscCall(GetTypeList(&types));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-levels", &levels, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-galerkin", &galerkin, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-dof", &dof, NULL));
  for (PetscInt t = 0; t < types.ntypes; t++) PetscCall(RunType(types.types[t], levels, galerkin, dof));
  PetscCall(FreeTypeList(&types));
  PetscCall(PetscFinalize());
  return check_failures ? 1 : 0;
}
