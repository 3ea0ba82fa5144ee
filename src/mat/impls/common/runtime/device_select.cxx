// Which GPU each rank uses (PETSc's choice with a CUDA PETSc, else the node-local rank modulo
// the GPUs), its description for -mat_view, and the stream of PETSc's current device context.
#include "../operator/format_operator.hpp"

#if PetscDefined(HAVE_CUDA)
  #include <petscdevice.h>
#endif

namespace gpumats {

namespace {
// How this process's GPU was chosen, for -mat_view
std::string device_choice;

#if GPUMATS_HAVE_CUDA && !PetscDefined(HAVE_CUDA)

// This rank's place on its node: among the ranks of comm on the same node (MPI_Comm_split_type,
// collective on comm) when comm spans all of MPI_COMM_WORLD; otherwise (a sequential matrix,
// which one rank may create alone) from the launcher's environment, else the world rank.
PetscErrorCode NodeLocalRank(MPI_Comm comm, int *local)
{
  int         cmp;
  PetscMPIInt rank;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_compare(comm, MPI_COMM_WORLD, &cmp));
  if (cmp == MPI_IDENT || cmp == MPI_CONGRUENT) {
    MPI_Comm shm;
    PetscCallMPI(MPI_Comm_rank(comm, &rank));
    PetscCallMPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shm));
    PetscCallMPI(MPI_Comm_rank(shm, &rank));
    PetscCallMPI(MPI_Comm_free(&shm));
    *local = rank;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  for (const char *v : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "MV2_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "PMI_LOCAL_RANK"})
    if (const char *s = std::getenv(v)) {
      *local = std::atoi(s);
      PetscFunctionReturn(PETSC_SUCCESS);
    }
  PetscCallMPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  *local = rank;
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif
} // namespace

PetscErrorCode SelectDevice(MPI_Comm comm)
{
  PetscFunctionBegin;
#if GPUMATS_HAVE_CUDA
  static bool threads_read = false;
  if (!threads_read) {
    // -mat_gpumats_upload_threads: for the whole process, from the options database (no prefix)
    PetscInt  n = 0;
    PetscBool set;
    PetscCall(PetscOptionsGetInt(nullptr, nullptr, "-mat_gpumats_upload_threads", &n, &set));
    PetscCheck(!set || (n >= 0 && n <= cuda::kMaxUploadThreads), comm, PETSC_ERR_ARG_OUTOFRANGE,
               "-mat_gpumats_upload_threads %" PetscInt_FMT " is out of range: host threads staging uploads to the GPU, 1 to %d (0: by the CPUs this process may use)",
               n, cuda::kMaxUploadThreads);
    cuda::set_upload_threads(int(n));
    threads_read = true;
  }
  #if PetscDefined(HAVE_CUDA)
  // PETSc picked this rank's GPU when it initialised (its rank on PETSC_COMM_WORLD modulo the
  // visible GPUs, or -device_select); its vectors live there, so must our copies
  PetscCall(PetscDeviceInitialize(PETSC_DEVICE_CUDA));
  (void)comm;
  if (device_choice.empty()) device_choice = "PETSc's device";
  #else
  // Without a CUDA PETSc nobody else picks: one GPU per rank of a node, ranks beyond the GPUs of
  // a node sharing them round robin (CUDA_VISIBLE_DEVICES narrowed to one GPU: that one)
  if (device_choice.empty()) {
    int local = 0, n = cuda::device_count(nullptr);
    PetscCall(NodeLocalRank(comm, &local));
    PetscCall(guarded(comm, "selecting a GPU", [&] { cuda::set_device(local % n); }));
    device_choice = n == 1 ? "the one visible GPU" : "node-local rank " + std::to_string(local) + " modulo " + std::to_string(n) + " GPUs";
  }
  #endif
#else
  (void)comm;
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DeviceDescription(std::string *s)
{
  PetscFunctionBegin;
  *s = "no GPU";
#if GPUMATS_HAVE_CUDA
  PetscCall(guarded(PETSC_COMM_SELF, "describing the GPU", [&] {
    const int d = cuda::current_device();
    *s          = "GPU " + std::to_string(d) + " of " + std::to_string(cuda::device_count(nullptr)) + ", " + cuda::device_name(d) +
         (device_choice.empty() ? "" : " (" + device_choice + ")");
  }));
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode CurrentStream(void **stream)
{
  PetscFunctionBegin;
  *stream = nullptr; // the legacy default stream: what PETSc's vectors use unless told otherwise
#if PetscDefined(HAVE_CUDA) && PETSC_VERSION_GE(3, 24, 0)
  PetscDeviceContext dctx;
  void              *handle = nullptr;
  PetscCall(PetscDeviceContextGetCurrentContext(&dctx));
  PetscCall(PetscDeviceContextGetStreamHandle(dctx, &handle));
  if (handle) *stream = *static_cast<void **>(handle);
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace gpumats
