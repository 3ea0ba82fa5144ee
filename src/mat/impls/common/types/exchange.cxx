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
  comm_ = MPI_COMM_NULL, tag_ = 0, device_ = false, nghost_ = 0;
  send_ranks_.clear(), recv_ranks_.clear(), send_offset_.clear(), recv_offset_.clear();
  send_idx_.clear(), unpack_.clear(), requests_.clear();
  send_host_.clear(), recv_host_.clear(), ghosts_host_.clear();
#if GPUMATS_HAVE_CUDA
  dev_send_idx_ = cuda::Buffer{}, dev_send_ = cuda::Buffer{}, dev_ghosts_ = cuda::Buffer{};
#endif
}

PetscErrorCode GhostExchange::setup(Mat A, const PetscInt *garray, PetscInt nghost, bool device)
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

  const std::size_t nsend_values = std::size_t(send_offset_.back()), nrecv_values = std::size_t(recv_offset_.back());
  PetscCall(guarded(PETSC_COMM_SELF, "setting up the ghost exchange", [&] {
    if (device) {
#if GPUMATS_HAVE_CUDA
      dev_send_idx_ = cuda::upload(send_idx_.data(), send_idx_.size());
      dev_send_.resize(std::max<std::size_t>(nsend_values, 1) * sizeof(Scalar));
      dev_ghosts_.resize(std::max<std::size_t>(nrecv_values, 1) * sizeof(Scalar));
      pinned_send_.resize(std::max<std::size_t>(nsend_values, 1) * sizeof(Scalar));
      pinned_recv_.resize(std::max<std::size_t>(nrecv_values, 1) * sizeof(Scalar));
      if (!unpack_.empty()) ghosts_host_.resize(nrecv_values);
#else
      throw std::logic_error("a device ghost exchange in a build without CUDA");
#endif
    } else {
      send_host_.resize(nsend_values);
      recv_host_.resize(nrecv_values);
      if (!unpack_.empty()) ghosts_host_.resize(nrecv_values);
    }
  }));
  requests_.assign(send_ranks_.size() + recv_ranks_.size(), MPI_REQUEST_NULL);
  PetscCall(PetscObjectGetNewTag((PetscObject)A, &tag_));
  comm_   = PetscObjectComm((PetscObject)A);
  device_ = device;
  nghost_ = nghost;
  PetscFunctionReturn(PETSC_SUCCESS);
}

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
  return "sends " + std::to_string(send_offset_.empty() ? 0 : send_offset_.back()) + " values to " + ranks(send_ranks_.size()) + ", receives " +
         std::to_string(nghost_) + " from " + ranks(recv_ranks_.size());
}

} // namespace gpumats
