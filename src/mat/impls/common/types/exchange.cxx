// The staged ghost exchange of the MPI types (exchange.hpp).
#include "exchange.hpp"

#include <petscsf.h>

#include <limits>

namespace gpumats {

namespace {

// PETSc 3.18 counts the ranks of PetscSFGetRootRanks/GetLeafRanks in a PetscInt, later versions
// in a PetscMPIInt: the count's type is taken from the function PETSc declares.
template <class N>
PetscErrorCode RootRanks(PetscErrorCode (*get)(PetscSF, N *, const PetscMPIInt **, const PetscInt **, const PetscInt **, const PetscInt **), PetscSF sf,
                         PetscMPIInt *n, const PetscMPIInt **ranks, const PetscInt **offset, const PetscInt **mine)
{
  N               nn;
  const PetscInt *remote;

  PetscFunctionBegin;
  PetscCall(get(sf, &nn, ranks, offset, mine, &remote));
  PetscCall(PetscMPIIntCast(nn, n));
  PetscFunctionReturn(PETSC_SUCCESS);
}
template <class N>
PetscErrorCode LeafRanks(PetscErrorCode (*get)(PetscSF, N *, const PetscMPIInt **, const PetscInt **, const PetscInt **), PetscSF sf, PetscMPIInt *n,
                         const PetscMPIInt **ranks, const PetscInt **offset, const PetscInt **rootloc)
{
  N nn;

  PetscFunctionBegin;
  PetscCall(get(sf, &nn, ranks, offset, rootloc));
  PetscCall(PetscMPIIntCast(nn, n));
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace

// The stream, the events and the pinned buffers (which only grow) stay for the next setup.
void GhostExchange::clear()
{
#if GPUMATS_HAVE_CUDA
  clear_ipc();
#endif
  comm_ = MPI_COMM_NULL, tag_ = 0, device_ = false, nghost_ = 0;
  send_ranks_.clear(), recv_ranks_.clear(), send_offset_.clear(), recv_offset_.clear();
  send_idx_.clear(), unpack_.clear(), requests_.clear();
  send_host_.clear(), recv_host_.clear(), ghosts_host_.clear();
#if GPUMATS_HAVE_CUDA
  dev_send_idx_ = cuda::Buffer{}, dev_send_ = cuda::Buffer{}, dev_ghosts_ = cuda::Buffer{};
#endif
}

PetscErrorCode GhostExchange::setup(Mat A, const PetscInt *garray, PetscInt nghost, bool device, bool want_ipc)
{
  PetscSF            sf;
  PetscMPIInt        nrecv = 0, nsend = 0;
  const PetscMPIInt *rranks, *sranks;
  const PetscInt    *roffset, *rmine, *soffset, *rootloc;
  PetscInt           nlocal;

  PetscFunctionBegin;
  clear();
  PetscCall(MatGetLocalSize(A, NULL, &nlocal));
  PetscCheck(nlocal <= (PetscInt)std::numeric_limits<std::int32_t>::max(), PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE,
             "-mat_gpumats_exchange staged: %" PetscInt_FMT " local columns exceed its 32-bit indices; use more MPI ranks or -mat_gpumats_exchange petsc", nlocal);
  // the basic type: the one whose leaf ranks (who needs which of my entries) PETSc hands out
  PetscCall(PetscSFCreate(PetscObjectComm((PetscObject)A), &sf));
  PetscCall(PetscSFSetType(sf, PETSCSFBASIC));
  PetscCall(PetscSFSetGraphLayout(sf, A->cmap, nghost, NULL, PETSC_COPY_VALUES, garray));
  PetscCall(PetscSFSetUp(sf));
  PetscCall(RootRanks(PetscSFGetRootRanks, sf, &nrecv, &rranks, &roffset, &rmine));
  PetscCall(LeafRanks(PetscSFGetLeafRanks, sf, &nsend, &sranks, &soffset, &rootloc));
  recv_ranks_.assign(rranks, rranks + nrecv);
  recv_offset_.assign(roffset, roffset + nrecv + 1);
  send_ranks_.assign(sranks, sranks + nsend);
  send_offset_.assign(soffset, soffset + nsend + 1);
  send_idx_.assign(rootloc, rootloc + soffset[nsend]);
  // MPIAIJ's ghosts are sorted by global column, hence grouped by owner in rank order: the values
  // arrive in ghost order and need no unpacking
  bool in_order = true;
  for (PetscInt k = 0; k < roffset[nrecv] && in_order; ++k) in_order = rmine[k] == k;
  if (!in_order) unpack_.assign(rmine, rmine + roffset[nrecv]);
  PetscCall(PetscSFDestroy(&sf));
  PetscCheck(recv_offset_.back() == nghost, PETSC_COMM_SELF, PETSC_ERR_PLIB, "ghost exchange: %" PetscInt_FMT " values received for %" PetscInt_FMT " ghosts",
             recv_offset_.back(), nghost);

  PetscCall(PetscObjectGetNewTag((PetscObject)A, &tag_));
  comm_   = PetscObjectComm((PetscObject)A);
  device_ = device;
  nghost_ = nghost;
#if GPUMATS_HAVE_CUDA
  PetscCall(PetscObjectGetNewTag((PetscObject)A, &tag_done_));
  // (collective, so before anything a single rank may fail at: the others would wait for it)
  PetscCall(setup_ipc(want_ipc && device));
#else
  (void)want_ipc;
#endif
  // the exchange's buffers (the IPC one packs into its exported slot, with no host staging)
  const std::size_t    nsend_values = std::size_t(send_offset_.back()), nrecv_values = std::size_t(recv_offset_.back());
  const PetscErrorCode err          = guarded(PETSC_COMM_SELF, "setting up the ghost exchange", [&] {
    if (device) {
#if GPUMATS_HAVE_CUDA
      dev_send_idx_ = cuda::upload(send_idx_.data(), send_idx_.size());
      dev_ghosts_.resize(std::max<std::size_t>(nrecv_values, 1) * sizeof(Scalar));
      if (!ipc_) {
        dev_send_.resize(std::max<std::size_t>(nsend_values, 1) * sizeof(Scalar));
        pinned_send_.resize(std::max<std::size_t>(nsend_values, 1) * sizeof(Scalar));
        pinned_recv_.resize(std::max<std::size_t>(nrecv_values, 1) * sizeof(Scalar));
        if (!unpack_.empty()) ghosts_host_.resize(nrecv_values);
      }
#else
      throw std::logic_error("a device ghost exchange in a build without CUDA");
#endif
    } else {
      send_host_.resize(nsend_values);
      recv_host_.resize(nrecv_values);
      if (!unpack_.empty()) ghosts_host_.resize(nrecv_values);
    }
  });
  if (err) clear(); // (not ready: set up again at the next use)
  PetscCall(err);
  // a request per message: the values each way, or the IPC exchange's "ready" and "done" (begin_ipc)
  requests_.assign((ipc_ ? 2 : 1) * (send_ranks_.size() + recv_ranks_.size()), MPI_REQUEST_NULL);
  PetscFunctionReturn(PETSC_SUCCESS);
}

#if GPUMATS_HAVE_CUDA
namespace {
// What a rank sends each rank it sends values to, so that it can copy them: the exported buffer,
// the `packed` event, and where its values start in the buffer
struct ProducerInfo {
  cuda::IpcHandle memory, packed;
  std::int64_t    offset;
};
} // namespace

// Collective: every rank decides with all the others, so that no pair disagrees on how its
// values travel (a rank waiting for messages its neighbour never sends would hang).
PetscErrorCode GhostExchange::setup_ipc(bool want)
{
  PetscMPIInt rank, ok, all_ok;
  MPI_Comm    shm;
  MPI_Group   world_group, shm_group;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &want, 1, MPI_C_BOOL, MPI_LOR, comm_));
  if (!want) PetscFunctionReturn(PETSC_SUCCESS);
  // every neighbour on this node
  PetscCallMPI(MPI_Comm_rank(comm_, &rank));
  PetscCallMPI(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shm));
  PetscCallMPI(MPI_Comm_group(comm_, &world_group));
  PetscCallMPI(MPI_Comm_group(shm, &shm_group));
  std::vector<PetscMPIInt> neighbours(send_ranks_), local;
  neighbours.insert(neighbours.end(), recv_ranks_.begin(), recv_ranks_.end());
  local.resize(neighbours.size());
  if (!neighbours.empty()) PetscCallMPI(MPI_Group_translate_ranks(world_group, (PetscMPIInt)neighbours.size(), neighbours.data(), shm_group, local.data()));
  PetscCallMPI(MPI_Group_free(&shm_group));
  PetscCallMPI(MPI_Group_free(&world_group));
  PetscCallMPI(MPI_Comm_free(&shm));
  ok = device_ ? 1 : 0;
  for (PetscMPIInt l : local) ok = ok && l != MPI_UNDEFINED;
  PetscCallMPI(MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, comm_));
  if (!all_ok) {
    PetscCall(PetscInfo(NULL, "ghost exchange: staged, not ipc: a neighbour of some rank is on another node, or some rank's matrix is not on a GPU\n"));
    PetscFunctionReturn(PETSC_SUCCESS);
  }

  // export, trade and open; a failure on any rank sends every rank back to the staged exchange
  const std::size_t        nsend = send_ranks_.size(), nrecv = recv_ranks_.size();
  std::vector<ProducerInfo> mine(nsend), theirs(nrecv);
  std::vector<cuda::IpcHandle> my_copied(nrecv), their_copied(nsend);
  std::string               why;
  ok = 1;
  try {
    slot_ = cuda::acquire_slot(std::max<std::size_t>(std::size_t(send_offset_.back()), 1) * sizeof(Scalar));
    const cuda::IpcHandle memory = cuda::export_memory(slot_->send), packed = slot_->packed.handle(), copied = slot_->copied.handle();
    for (std::size_t j = 0; j < nsend; ++j) mine[j] = ProducerInfo{memory, packed, std::int64_t(send_offset_[j])};
    for (std::size_t i = 0; i < nrecv; ++i) my_copied[i] = copied;
  } catch (const std::exception &e) {
    ok = 0, why = e.what();
  }
  PetscCallMPI(MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, comm_));
  if (all_ok) {
    std::vector<MPI_Request> req;
    // a pair of ranks that both send to and receive from each other trades both kinds of message:
    // one tag each, or the producer's record could land in the buffer of the consumer's handle
    PetscMPIInt tag_producer, tag_consumer;
    PetscCall(PetscCommGetNewTag(comm_, &tag_producer));
    PetscCall(PetscCommGetNewTag(comm_, &tag_consumer));
    for (std::size_t i = 0; i < nrecv; ++i) {
      req.push_back(MPI_REQUEST_NULL);
      PetscCallMPI(MPI_Irecv(&theirs[i], (PetscMPIInt)sizeof(ProducerInfo), MPI_BYTE, recv_ranks_[i], tag_producer, comm_, &req.back()));
      req.push_back(MPI_REQUEST_NULL);
      PetscCallMPI(MPI_Isend(my_copied[i].data(), (PetscMPIInt)my_copied[i].size(), MPI_BYTE, recv_ranks_[i], tag_consumer, comm_, &req.back()));
    }
    for (std::size_t j = 0; j < nsend; ++j) {
      req.push_back(MPI_REQUEST_NULL);
      PetscCallMPI(MPI_Irecv(their_copied[j].data(), (PetscMPIInt)their_copied[j].size(), MPI_BYTE, send_ranks_[j], tag_consumer, comm_, &req.back()));
      req.push_back(MPI_REQUEST_NULL);
      PetscCallMPI(MPI_Isend(&mine[j], (PetscMPIInt)sizeof(ProducerInfo), MPI_BYTE, send_ranks_[j], tag_producer, comm_, &req.back()));
    }
    if (!req.empty()) PetscCallMPI(MPI_Waitall((PetscMPIInt)req.size(), req.data(), MPI_STATUSES_IGNORE));
    try {
      peer_send_.resize(nrecv), peer_packed_.resize(nrecv), peer_copied_.resize(nsend), peer_offset_.resize(nrecv);
      for (std::size_t i = 0; i < nrecv; ++i) {
        peer_send_[i].open(theirs[i].memory);
        peer_packed_[i].open(theirs[i].packed);
        peer_offset_[i] = PetscInt(theirs[i].offset);
      }
      for (std::size_t j = 0; j < nsend; ++j) peer_copied_[j].open(their_copied[j]);
      if (!unpack_.empty()) { // the gather that puts the values received in order into their ghosts
        std::vector<std::int32_t> inverse(unpack_.size());
        for (std::size_t k = 0; k < unpack_.size(); ++k) inverse[std::size_t(unpack_[k])] = std::int32_t(k);
        dev_unpack_ = cuda::upload(inverse.data(), inverse.size());
        dev_recv_.resize(std::max<std::size_t>(unpack_.size(), 1) * sizeof(Scalar));
      }
    } catch (const std::exception &e) {
      ok = 0, why = e.what();
    }
    PetscCallMPI(MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, comm_));
  }
  if (!all_ok) {
    PetscCall(PetscInfo(NULL, "ghost exchange: staged, not ipc: CUDA IPC failed on some rank%s%s\n", why.empty() ? "" : ": ", why.c_str()));
    // every rank closes what it opened before any releases what it exported
    peer_send_.clear(), peer_packed_.clear(), peer_copied_.clear();
    PetscCallMPI(MPI_Barrier(comm_));
    clear_ipc();
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  ipc_ = true;
  PetscFunctionReturn(PETSC_SUCCESS);
}

// The neighbours' buffers and events are closed; this rank's slot goes back to the pool once our
// stream, which waited for every neighbour's copies out of it, is done.
void GhostExchange::clear_ipc()
{
  peer_send_.clear(), peer_packed_.clear(), peer_copied_.clear(), peer_offset_.clear();
  dev_recv_ = cuda::Buffer{}, dev_unpack_ = cuda::Buffer{};
  if (slot_) {
    try {
      cuda::release_slot(slot_, stream_.get());
    } catch (...) { // a GPU error here leaves the slot out of the pool: nothing else is lost
    }
  }
  slot_ = nullptr, ipc_ = false;
}

PetscErrorCode GhostExchange::begin_ipc(const Scalar *x)
{
  const PetscInt    nsend = send_offset_.back();
  const std::size_t ns = send_ranks_.size(), nr = recv_ranks_.size();

  PetscFunctionBegin;
  PetscCall(guarded(PETSC_COMM_SELF, "packing the ghost values", [&] {
    void *s = stream_.get();
    x_ready_.wait(s);
    cuda::gather(slot_->send.as<Scalar>(), x, dev_send_idx_.as<std::int32_t>(), nsend, s);
    slot_->packed.record(s);
  }));
  // requests: "ready" from each rank received from, "done" from each rank sent to, then the sends
  // (all of them completed by the last end_ipc)
  for (std::size_t i = 0; i < nr; ++i) PetscCallMPI(MPI_Irecv(&signal_, 0, MPI_BYTE, recv_ranks_[i], tag_, comm_, &requests_[i]));
  for (std::size_t j = 0; j < ns; ++j) PetscCallMPI(MPI_Irecv(&signal_, 0, MPI_BYTE, send_ranks_[j], tag_done_, comm_, &requests_[nr + j]));
  for (std::size_t j = 0; j < ns; ++j) PetscCallMPI(MPI_Isend(&signal_, 0, MPI_BYTE, send_ranks_[j], tag_, comm_, &requests_[nr + ns + j]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GhostExchange::end_ipc(void *stream)
{
  const std::size_t ns = send_ranks_.size(), nr = recv_ranks_.size();
  void             *s  = nullptr;

  PetscFunctionBegin;
  if (nr) PetscCallMPI(MPI_Waitall((PetscMPIInt)nr, requests_.data(), MPI_STATUSES_IGNORE));
  PetscCall(guarded(PETSC_COMM_SELF, "copying the ghost values from the neighbours' GPUs", [&] {
    s            = stream_.get();
    Scalar *dest = unpack_.empty() ? dev_ghosts_.as<Scalar>() : dev_recv_.as<Scalar>();
    for (std::size_t i = 0; i < nr; ++i) {
      const std::size_t n = std::size_t(recv_offset_[i + 1] - recv_offset_[i]);
      peer_packed_[i].wait(s);
      if (n) cuda::copy_on_device(dest + recv_offset_[i], static_cast<const Scalar *>(peer_send_[i].get()) + peer_offset_[i], n * sizeof(Scalar), s);
    }
    if (!unpack_.empty()) cuda::gather(dev_ghosts_.as<Scalar>(), dev_recv_.as<Scalar>(), dev_unpack_.as<std::int32_t>(), nghost_, s);
    slot_->copied.record(s);
    // the off-diagonal product waits for the ghosts, not for the neighbours' copies waited for below
    ghosts_ready_.record(s);
    ghosts_ready_.wait(stream);
  }));
  for (std::size_t i = 0; i < nr; ++i) PetscCallMPI(MPI_Isend(&signal_, 0, MPI_BYTE, recv_ranks_[i], tag_done_, comm_, &requests_[nr + 2 * ns + i]));
  if (ns) PetscCallMPI(MPI_Waitall((PetscMPIInt)ns, requests_.data() + nr, MPI_STATUSES_IGNORE));
  PetscCall(guarded(PETSC_COMM_SELF, "ordering the next packing after the neighbours' copies", [&] {
    for (std::size_t j = 0; j < ns; ++j) peer_copied_[j].wait(s);
  }));
  PetscCallMPI(MPI_Waitall((PetscMPIInt)(ns + nr), requests_.data() + nr + ns, MPI_STATUSES_IGNORE));
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif

Scalar *GhostExchange::send_buffer()
{
#if GPUMATS_HAVE_CUDA
  if (device_) return pinned_send_.as<Scalar>();
#endif
  return send_host_.data();
}

Scalar *GhostExchange::recv_buffer()
{
#if GPUMATS_HAVE_CUDA
  if (device_) return pinned_recv_.as<Scalar>();
#endif
  return recv_host_.data();
}

PetscErrorCode GhostExchange::order_after(void *stream)
{
  PetscFunctionBegin;
#if GPUMATS_HAVE_CUDA
  if (device_) PetscCall(guarded(PETSC_COMM_SELF, "ordering the ghost exchange", [&] { x_ready_.record(stream); }));
#else
  (void)stream;
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GhostExchange::begin(const Scalar *x)
{
  const PetscInt nsend = send_offset_.back();
  Scalar        *sbuf  = send_buffer(), *rbuf = recv_buffer();

  PetscFunctionBegin;
  PetscCheck(ready(), PETSC_COMM_SELF, PETSC_ERR_PLIB, "ghost exchange used before its setup");
#if GPUMATS_HAVE_CUDA
  if (ipc_) {
    PetscCall(begin_ipc(x));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
#endif
  if (device_) {
#if GPUMATS_HAVE_CUDA
    // the previous product's copy out of the receive buffer ran on our stream too: this
    // synchronisation also frees that buffer for the messages posted below
    PetscCall(guarded(PETSC_COMM_SELF, "packing the ghost values", [&] {
      void *s = stream_.get();
      x_ready_.wait(s);
      cuda::gather(dev_send_.as<Scalar>(), x, dev_send_idx_.as<std::int32_t>(), nsend, s);
      if (nsend) cuda::copy_to_host(sbuf, dev_send_.get(), std::size_t(nsend) * sizeof(Scalar), s);
      cuda::synchronize(s);
    }));
    if (nsend) PetscCall(PetscLogGpuToCpu((PetscLogDouble)nsend * sizeof(Scalar)));
#endif
  } else {
    for (PetscInt k = 0; k < nsend; ++k) sbuf[k] = x[send_idx_[std::size_t(k)]];
  }
  std::size_t r = 0;
  for (std::size_t i = 0; i < recv_ranks_.size(); ++i) {
    PetscMPIInt n;
    PetscCall(PetscMPIIntCast(recv_offset_[i + 1] - recv_offset_[i], &n));
    PetscCallMPI(MPI_Irecv(rbuf + recv_offset_[i], n, MPIU_SCALAR, recv_ranks_[i], tag_, comm_, &requests_[r++]));
  }
  for (std::size_t i = 0; i < send_ranks_.size(); ++i) {
    PetscMPIInt n;
    PetscCall(PetscMPIIntCast(send_offset_[i + 1] - send_offset_[i], &n));
    PetscCallMPI(MPI_Isend(sbuf + send_offset_[i], n, MPIU_SCALAR, send_ranks_[i], tag_, comm_, &requests_[r++]));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode GhostExchange::end(void *stream)
{
  const Scalar *rbuf = recv_buffer();

  PetscFunctionBegin;
#if GPUMATS_HAVE_CUDA
  if (ipc_) {
    PetscCall(end_ipc(stream));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
#endif
  if (!requests_.empty()) PetscCallMPI(MPI_Waitall((PetscMPIInt)requests_.size(), requests_.data(), MPI_STATUSES_IGNORE));
  if (!unpack_.empty())
    for (std::size_t k = 0; k < unpack_.size(); ++k) ghosts_host_[std::size_t(unpack_[k])] = rbuf[k];
  if (device_) {
#if GPUMATS_HAVE_CUDA
    const Scalar *src = unpack_.empty() ? rbuf : ghosts_host_.data();
    PetscCall(guarded(PETSC_COMM_SELF, "copying the ghost values to the GPU", [&] {
      void *s = stream_.get();
      if (nghost_) cuda::copy_to_device(dev_ghosts_.get(), src, std::size_t(nghost_) * sizeof(Scalar), s);
      ghosts_ready_.record(s);
      ghosts_ready_.wait(stream);
    }));
    if (nghost_) PetscCall(PetscLogCpuToGpu((PetscLogDouble)nghost_ * sizeof(Scalar)));
#else
    (void)stream;
#endif
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

const Scalar *GhostExchange::ghosts() const
{
#if GPUMATS_HAVE_CUDA
  if (device_) return dev_ghosts_.as<Scalar>();
#endif
  return unpack_.empty() ? recv_host_.data() : ghosts_host_.data();
}

std::string GhostExchange::describe() const
{
  auto ranks = [](std::size_t n) { return std::to_string(n) + (n == 1 ? " rank" : " ranks"); };
  return std::string(ipc_ ? "GPU to GPU (CUDA IPC): " : "") + "sends " + std::to_string(send_offset_.empty() ? 0 : send_offset_.back()) + " values to " + ranks(send_ranks_.size()) + ", receives " +
         std::to_string(nghost_) + " from " + ranks(recv_ranks_.size());
}

} // namespace gpumats
