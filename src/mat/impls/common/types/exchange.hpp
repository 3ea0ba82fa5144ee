// The ghost exchange of the MPI types when it is ours rather than PETSc's VecScatter
// (-mat_gpumats_exchange staged, the default for GPU types over an MPI that is not CUDA-aware).
//
// Why not PETSc's scatter there: with device vectors and such an MPI, VecScatterBegin packs on
// PETSc's stream, copies the buffer to pageable host memory and synchronises that stream before it
// posts the messages, and VecScatterEnd copies the received values back the same way. Whatever
// runs on PETSc's stream when they are called (the diagonal block's SpMV, if launched first) is
// waited for; whatever is launched after Begin starts only once the packing is done. Here the
// packing kernel and both copies run on a stream of our own at the device's highest priority, into
// pinned buffers, so that they slip in beside a diagonal-block SpMV launched just before on PETSc's
// stream, and the messages travel while that SpMV runs (OpenMPI moves them inside the wait).
//
// The send and receive lists are those of a PetscSF of the off-diagonal block's columns (garray):
// this rank receives, per owning rank, the ghosts it needs in PetscSF's leaf order, and sends, per
// rank that needs them, its entries of x in that rank's order (the pairing PETSc's own basic SF
// packs and unpacks by). Host types use the same lists with plain host buffers, so the CPU test
// suite runs this code too.
//
// -mat_gpumats_exchange ipc: GPU to GPU within a node through CUDA IPC, no host copy and no wait
// for the GPU on the host. Each rank exports its packing buffer and two interprocess events
// (cuda/ipc.hpp); per product, on our stream:
//   begin: pack, record `packed`; a zero-byte message "ready" to every rank it sends to;
//   end:   on each "ready", wait for that neighbour's `packed` and copy its slice of the
//          neighbour's buffer into the ghosts; record `copied`; "done" to every rank it received
//          from; on each "done", wait for that neighbour's `copied` (so that the next packing
//          cannot overwrite a buffer a neighbour still copies from).
// A neighbour's event is waited for only after its message, which it sends after the record: the
// wait sees that record. Chosen for the whole communicator or for none: where a neighbour is on
// another node (or a GPU cannot open another's memory) every rank takes the staged exchange.
#pragma once

#include "../operator/format_operator.hpp"
#if GPUMATS_HAVE_CUDA
  #include "../cuda/ipc.hpp"
#endif

#include <string>
#include <vector>

namespace gpumats {

class GhostExchange {
public:
  GhostExchange() = default;
  ~GhostExchange() { clear(); }
  GhostExchange(const GhostExchange &)            = delete;
  GhostExchange &operator=(const GhostExchange &) = delete;

  // Collective on A's communicator: the lists for the nghost ghost columns garray (ascending
  // global columns, as MPIAIJ keeps them) of A's off-diagonal block; with want_ipc (device types)
  // the IPC exchange where every rank can take it.
  PetscErrorCode setup(Mat A, const PetscInt *garray, PetscInt nghost, bool device, bool want_ipc = false);
  void           clear();
  bool           ready() const { return comm_ != MPI_COMM_NULL; }
  bool           ipc() const { return ipc_; }

  // Device types: work queued on `stream` before this call (what produced x) comes before the
  // packing; work queued after it (the diagonal block's SpMV) does not, and runs alongside.
  PetscErrorCode order_after(void *stream);
  // Packs the entries of this rank's x (a device array for device types) that other ranks need
  // and posts the messages. Host: returns once the values are in the send buffer.
  PetscErrorCode begin(const Scalar *x);
  // Waits for the messages; ghosts() then holds the values, for work queued on `stream` after this call.
  PetscErrorCode end(void *stream);
  const Scalar  *ghosts() const;

  // For -mat_view: how many ranks and values this rank sends to and receives from.
  std::string describe() const;

private:
  MPI_Comm                  comm_   = MPI_COMM_NULL;
  PetscMPIInt               tag_    = 0;
  bool                      device_ = false;
  PetscInt                  nghost_ = 0;
  std::vector<PetscMPIInt>  send_ranks_, recv_ranks_;
  std::vector<PetscInt>     send_offset_, recv_offset_; // per rank, into the send and receive buffers
  std::vector<std::int32_t> send_idx_;                  // the entry of x behind each value sent
  std::vector<std::int32_t> unpack_;                    // the ghost each received value is; empty: in order
  std::vector<MPI_Request>  requests_;
  std::vector<Scalar>       send_host_, recv_host_, ghosts_host_; // host types, and the unpacking of device ones
  bool                      ipc_ = false;
#if GPUMATS_HAVE_CUDA
  cuda::Buffer       dev_send_idx_, dev_send_, dev_ghosts_;
  cuda::PinnedBuffer pinned_send_, pinned_recv_;
  cuda::Stream       stream_;
  cuda::Event        x_ready_, ghosts_ready_;
  // the IPC exchange: this rank's exported slot; per rank received from, its buffer opened here,
  // the offset of this rank's values in it and its `packed` event; per rank sent to, its `copied`
  // event; the received values in arrival order when they need unpacking, and the gather that does it
  cuda::IpcSlot               *slot_ = nullptr;
  std::vector<cuda::IpcMemory> peer_send_;
  std::vector<PetscInt>        peer_offset_;
  std::vector<cuda::IpcEvent>  peer_packed_, peer_copied_;
  cuda::Buffer                 dev_recv_, dev_unpack_;
  PetscMPIInt                  tag_done_ = 0;
  char                         signal_    = 0; // the buffer of the zero-byte "ready" and "done" messages (MPI may refuse NULL)
  PetscErrorCode               setup_ipc(bool want);
  void                         clear_ipc();
  PetscErrorCode               begin_ipc(const Scalar *x);
  PetscErrorCode               end_ipc(void *stream);
#endif
  Scalar *send_buffer();
  Scalar *recv_buffer();
};

} // namespace gpumats
