// Type installation and conversion plumbing shared by the Seq and MPI types (typeops.hpp).
#include "typeops.hpp"

namespace gpumats {

PetscErrorCode TypeData::is_current(Mat A, PetscBool *current)
{
  PetscObjectId    aid;
  PetscObjectState ast;

  PetscFunctionBegin;
  PetscCall(PetscObjectGetId((PetscObject)A, &aid));
  PetscCall(PetscObjectStateGet((PetscObject)A, &ast));
  *current = (valid && aid == id && (ast == state || (from_assembly && ast == state + 1))) ? PETSC_TRUE : PETSC_FALSE;
  if (*current) state = ast, from_assembly = false;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode TypeData::mark_current(Mat A, bool in_assembly)
{
  PetscFunctionBegin;
  PetscCall(PetscObjectGetId((PetscObject)A, &id));
  PetscCall(PetscObjectStateGet((PetscObject)A, &state));
  valid         = true;
  from_assembly = in_assembly;
  PetscFunctionReturn(PETSC_SUCCESS);
}

std::vector<std::string> convert_sources(const char *prefix)
{
  std::vector<std::string> v{std::string(prefix) + "aij", std::string(prefix) + "aijcusparse"};
  for (FormatInfo *const *f = all_formats(); *f; ++f)
    for (bool d : {false, true})
      if (d || *f != &auto_info) v.push_back(type_name(**f, prefix, d)); // autocuda has no host form
  return v;
}

namespace {

PetscErrorCode RetrieveValues(Mat A)
{
  TypeData *d = Data(A);

  PetscFunctionBegin;
  PetscCheck(d && d->retrieve, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MatRetrieveValues wrapper without the AIJ implementation");
  PetscCall(d->retrieve(A));
  d->invalidate(); // values came back from the stored copy without a state change, here or in MPI blocks
  PetscFunctionReturn(PETSC_SUCCESS);
}

std::string convert_name(const std::string &from, const std::string &to) { return "MatConvert_" + from + "_" + to + "_C"; }

} // namespace

PetscErrorCode InstallType(Mat A, TypeData *d, const char *prefix, const OpFn ours[kNumOps], PetscErrorCode (*into)(Mat, MatType, MatReuse, Mat *),
                           PetscErrorCode (*back)(Mat, MatType, MatReuse, Mat *))
{
  const std::string name = type_name(*d->info, prefix, d->device);

  PetscFunctionBegin;
  PetscCheck(!A->spptr, PETSC_COMM_SELF, PETSC_ERR_PLIB, "matrix already carries another implementation's data");
  for (int i = 0; i < kNumOps; ++i) {
    PetscCall(MatGetOperation(A, kOverridden[i], &d->saved[i]));
    PetscCall(MatSetOperation(A, kOverridden[i], ours[i]));
  }
  PetscCall(PetscObjectQueryFunction((PetscObject)A, "MatRetrieveValues_C", &d->retrieve));
  if (d->retrieve) PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatRetrieveValues_C", RetrieveValues));
  A->spptr = d;
  PetscCall(PetscObjectChangeTypeName((PetscObject)A, name.c_str()));
  for (const std::string &src : convert_sources(prefix))
    if (src != name) PetscCall(PetscObjectComposeFunction((PetscObject)A, convert_name(src, name).c_str(), into));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, convert_name(name, std::string(prefix) + "aij").c_str(), back));
#if PetscDefined(HAVE_CUDA)
  if (d->device) PetscCall(MatSetVecType(A, VECCUDA));
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode UninstallType(Mat A, const char *prefix, const char *base)
{
  TypeData         *d    = Data(A);
  const std::string name = type_name(*d->info, prefix, d->device);

  PetscFunctionBegin;
  for (int i = 0; i < kNumOps; ++i) PetscCall(MatSetOperation(A, kOverridden[i], d->saved[i]));
  if (d->retrieve) PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatRetrieveValues_C", d->retrieve));
  for (const std::string &src : convert_sources(prefix))
    if (src != name) PetscCall(PetscObjectComposeFunction((PetscObject)A, convert_name(src, name).c_str(), (OpFn) nullptr));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, convert_name(name, std::string(prefix) + "aij").c_str(), (OpFn) nullptr));
  A->spptr = nullptr;
  delete d;
  PetscCall(PetscObjectChangeTypeName((PetscObject)A, base));
  PetscCall(MatSetVecType(A, VECSTANDARD));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode SetFromOptionsCommon(Mat A, OptionItems PetscOptionsObject, FormatOperator &proto, PetscBool *changed)
{
  TypeData *d = Data(A);

  PetscFunctionBegin;
  if (d->saved[kSetFromOptions]) PetscCall(d->call<PetscErrorCode (*)(Mat, OptionItems)>(kSetFromOptions, A, PetscOptionsObject));
  PetscCall(ReadFormatOptions(A, *d->info, proto, PetscOptionsObject, changed));
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace gpumats
