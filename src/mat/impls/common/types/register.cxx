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

/*MC
   MATGPUMATS - what every matrix type of petsc-gpumats shares, and the options they all read

   Each type (`MATCMRS`, `MATSELLP`, `MATBELLPACK`, their `*CUDA` forms, `MATAUTOCUDA`) is an AIJ
   matrix, which stays authoritative, with a copy of its values in the type's format that products
   use. With one process a type is its sequential concrete type, a subclass of `MATSEQAIJ`; with
   several, its parallel one, a subclass of `MATMPIAIJ` whose diagonal and off-diagonal blocks each
   hold a copy, the ghost exchange overlapped with the diagonal block's product. The concrete names
   start with "seqaij" and "mpiaij" so that PETSc's AIJ code paths take them, as they take
   `MATSEQAIJCUSPARSE`. Load the plug-in with `-dll_append libpetscgpumats.so` or call
   `PetscGpuMatsInitialize()`; `-dm_mat_type <type>` selects a type for `DMCreateMatrix()`. With a
   PETSc built with CUDA, the `*CUDA` types read and write `VECCUDA` arrays on the GPU, and sparse
   products and factorizations go through `MATAIJCUSPARSE` code. Each option's default and
   meaning: docs/options.md.

   Options Database Keys:
+  -mat_gpumats_loads <stream,cached> - GPU loads of the matrix arrays: evict-first streaming (the caches keep x) or cached
.  -mat_gpumats_reorder <none,rcm> - renumber the (diagonal) block in reverse Cuthill-McKee order for the format copy
.  -mat_gpumats_long_rows <K> - rows longer than K keep K entries in the format, the rest in a tail (0: never; -1: chosen per matrix)
.  -mat_gpumats_transpose <auto,explicit,implicit,cusparse> - how products with the transpose are done (cusparse: cuSPARSE's transposed CSR of the shadow, GPU types)
.  -mat_gpumats_values_update <auto,rebuild> - a change that keeps the nonzero pattern refills the values only (auto) or converts in full
.  -mat_gpumats_build_at <assembly,use> - bring the format copy up to date inside MatAssemblyEnd() (unless the last one's copy is still unused) or at its first use
.  -mat_gpumats_build <device,host> - GPU types: convert on the GPU from one upload of the CSR, or on the host and upload the format
.  -mat_gpumats_products <gpu,host> - GPU types: sparse products through cuSPARSE on the GPU or PETSc's host products
.  -mat_gpumats_upload_threads <n> - GPU types: host threads staging large uploads, for the whole process (no prefix)
.  -mat_gpumats_overlap <bool> - MPI types: run the diagonal block's product while the ghost values travel
-  -mat_gpumats_exchange <auto,petsc,staged,ipc> - MPI types: the ghost exchange

   Level: beginner

.seealso: [](ch_matrices), `MATCMRSCUDA`, `MATSELLPCUDA`, `MATBELLPACKCUDA`, `MATAUTOCUDA`, `PetscGpuMatsInitialize()`, `PetscGpuMatsGetTypes()`
M*/
