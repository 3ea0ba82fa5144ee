// Registration of every petsc-gpumats type with PETSc: PetscGpuMatsInitialize() for applications
// that link the library, PetscDLLibraryRegister_petscgpumats() for -dll_append.
#include "kinds.hpp"

#include <cctype>

namespace gpumats {
namespace {

PetscBool registered = PETSC_FALSE;

PetscErrorCode ForgetRegistration(void)
{
  registered = PETSC_FALSE; // MatFinalizePackage has emptied PETSc's type list
  return PETSC_SUCCESS;
}

// PETSc's own LU/ILU/Cholesky/ICC work on our Seq types, which are SeqAIJ underneath, but PETSc's
// solver registry matches by type-name prefix ("seqaij"): ask it under that name. This keeps the
// default preconditioner of a sequential KSP (ILU) working with -mat_type cmrs.
PetscErrorCode GetFactorAsAIJ(Mat A, MatFactorType ftype, Mat *F)
{
  const std::string name = ((PetscObject)A)->type_name;

  PetscFunctionBegin;
  PetscCall(PetscObjectChangeTypeName((PetscObject)A, MATSEQAIJ));
  PetscErrorCode err = MatGetFactor(A, MATSOLVERPETSC, ftype, F);
  PetscCall(PetscObjectChangeTypeName((PetscObject)A, name.c_str()));
  PetscCall(err);
  PetscFunctionReturn(PETSC_SUCCESS);
}

struct Creators {
  FormatInfo *info;
  bool        device;
  PetscErrorCode (*seq)(Mat), (*mpi)(Mat);
};

template <FormatInfo *F, bool D>
constexpr Creators creators()
{
  return {F, D, CreateType<SeqKind, F, D>, CreateType<MpiKind, F, D>};
}

std::string upper(const char *s)
{
  std::string u(s);
  for (char &c : u) c = char(std::toupper((unsigned char)c));
  return u;
}

} // namespace
} // namespace gpumats

using namespace gpumats;

PetscErrorCode PetscGpuMatsInitialize(void)
{
  const Creators table[] = {creators<&cmrs_info, false>(),     creators<&cmrs_info, true>(),     creators<&sellp_info, false>(), creators<&sellp_info, true>(),
                            creators<&bellpack_info, false>(), creators<&bellpack_info, true>(), creators<&auto_info, true>()};

  PetscFunctionBegin;
  if (registered) PetscFunctionReturn(PETSC_SUCCESS);
  for (FormatInfo *const *f = all_formats(); *f; ++f) {
    PetscCall(PetscLogEventRegister((upper((*f)->name) + "Convert").c_str(), MAT_CLASSID, &(*f)->convert_event));
    PetscCall(PetscLogEventRegister((upper((*f)->name) + "SpMV").c_str(), MAT_CLASSID, &(*f)->spmv_event));
  }
  for (const Creators &c : table) {
    const std::string root = type_name(*c.info, "", c.device), seq = type_name(*c.info, "seq", c.device), mpi = type_name(*c.info, "mpi", c.device);
    PetscCall(MatRegisterRootName(root.c_str(), seq.c_str(), mpi.c_str()));
    PetscCall(MatRegister(seq.c_str(), c.seq));
    PetscCall(MatRegister(mpi.c_str(), c.mpi));
    for (MatFactorType ft : {MAT_FACTOR_LU, MAT_FACTOR_ILU, MAT_FACTOR_CHOLESKY, MAT_FACTOR_ICC})
      PetscCall(MatSolverTypeRegister(MATSOLVERPETSC, seq.c_str(), ft, GetFactorAsAIJ));
  }
  PetscCall(PetscRegisterFinalize(ForgetRegistration));
  registered = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PetscDLLibraryRegister_petscgpumats(void)
{
  return PetscGpuMatsInitialize();
}
