// The registration of every petsc-gpumats type with PETSc: PetscGpuMatsInitialize() for
// applications that link the library, PetscDLLibraryRegister_petscgpumats() for -dll_append.
#include "seq_mpi.hpp"
#include "../runtime/events.hpp"

#include <array>
#include <cctype>
#include <utility>

namespace gpumats {

namespace {

PetscBool registered = PETSC_FALSE;

PetscErrorCode ForgetRegistration(void)
{
  registered = PETSC_FALSE; // MatFinalizePackage has emptied PETSc's type list
  return PETSC_SUCCESS;
}

// MatRegister takes a plain function per concrete type: one instantiation per (kind, registry
// entry, form), generated from the table's length.
template <class Kind, std::size_t F, bool D>
PetscErrorCode Create(Mat A)
{
  PetscFunctionBegin;
  PetscCall(MatSetType(A, Kind::base));
  PetscCall(Kind::FromAIJ(A, *formats().begin()[F], D));
  PetscFunctionReturn(PETSC_SUCCESS);
}

using CreateFn = PetscErrorCode (*)(Mat);
struct Creators {
  CreateFn seq[2], mpi[2]; // [host, device]
};
template <std::size_t... F>
constexpr std::array<Creators, kNumFormats> creator_table(std::index_sequence<F...>)
{
  return {{Creators{{Create<SeqKind, F, false>, Create<SeqKind, F, true>}, {Create<MpiKind, F, false>, Create<MpiKind, F, true>}}...}};
}
constexpr std::array<Creators, kNumFormats> kCreators = creator_table(std::make_index_sequence<kNumFormats>{});

std::string upper(const std::string &s)
{
  std::string u(s);
  for (char &c : u) c = char(std::toupper((unsigned char)c));
  return u;
}

// Root, seq and mpi names of every type in the order of type_forms(), kept for the life of the
// process: PetscGpuMatsGetTypes hands out pointers to them.
struct Names {
  std::vector<std::string>  root, seq, mpi;
  std::vector<const char *> root_c, seq_c, mpi_c;
};
const Names &names()
{
  static const Names n = [] {
    Names v;
    for (const TypeForm &t : type_forms()) {
      v.root.push_back(root_name(*t.format, t.device));
      v.seq.push_back(concrete_name(*t.format, "seq", t.device));
      v.mpi.push_back(concrete_name(*t.format, "mpi", t.device));
    }
    for (std::size_t i = 0; i < v.root.size(); ++i) {
      v.root_c.push_back(v.root[i].c_str());
      v.seq_c.push_back(v.seq[i].c_str());
      v.mpi_c.push_back(v.mpi[i].c_str());
    }
    return v;
  }();
  return n;
}

} // namespace
} // namespace gpumats

using namespace gpumats;

PetscErrorCode PetscGpuMatsInitialize(void)
{
  PetscFunctionBegin;
  if (registered) PetscFunctionReturn(PETSC_SUCCESS);
  for (FormatInfo *f : formats()) {
    PetscCall(RegisterRankEvent((upper(f->name) + "Convert").c_str(), &f->convert_event));
    PetscCall(RegisterRankEvent((upper(f->name) + "SpMV").c_str(), &f->spmv_event));
  }
  PetscCall(RegisterRankEvent("GpuMatsValues", &values_event));
  PetscCall(MpiKind::RegisterEvents());
  PetscCall(RegisterBuildEvents());
  const std::vector<TypeForm> forms = type_forms();
  const Names                &n     = names(); // in the order of type_forms()
  for (std::size_t k = 0; k < forms.size(); ++k) {
    const Creators &c = kCreators[forms[k].index];
    PetscCall(MatRegisterRootName(n.root[k].c_str(), n.seq[k].c_str(), n.mpi[k].c_str()));
    PetscCall(MatRegister(n.seq[k].c_str(), c.seq[forms[k].device]));
    PetscCall(MatRegister(n.mpi[k].c_str(), c.mpi[forms[k].device]));
  }
  PetscCall(RegisterCusparseBridge());
  PetscCall(RegisterPetscFactors());
  PetscCall(RegisterMpiProductEvents());
  PetscCall(PetscRegisterFinalize(ForgetRegistration));
  registered = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PetscGpuMatsGetTypes(PetscInt *n, const char *const **roots, const char *const **seq, const char *const **mpi)
{
  const Names &v = names();

  PetscFunctionBegin;
  if (n) *n = (PetscInt)v.root.size();
  if (roots) *roots = v.root_c.data();
  if (seq) *seq = v.seq_c.data();
  if (mpi) *mpi = v.mpi_c.data();
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode PetscDLLibraryRegister_petscgpumats(void)
{
  return PetscGpuMatsInitialize();
}
