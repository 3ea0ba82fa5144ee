// Pieces of the PETSc glue shared by the Seq and MPI types of every format.
#include "glue.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <limits>
#include <utility>

#if PetscDefined(HAVE_CUDA)
  #include <petscdevice.h>
#endif

namespace gpumats {

PetscErrorCode CheckSupported(Mat A, const FormatInfo &f, bool device)
{
  MPI_Comm comm = PetscObjectComm((PetscObject)A);

  PetscFunctionBegin;
  PetscCheck(GPUMATS_SUPPORTED_SCALAR, comm, PETSC_ERR_SUP,
             "petsc-gpumats supports real scalars only, and this PETSc is built with complex scalars; use a PETSc configured with "
             "--with-scalar-type=real for -mat_type %s",
             f.name);
  if (!device) PetscFunctionReturn(PETSC_SUCCESS);
#if !GPUMATS_HAVE_CUDA
  SETERRQ(comm, PETSC_ERR_SUP_SYS,
          "-mat_type %scuda needs the CUDA kernels, but this petsc-gpumats was built without CUDA (no nvcc at CUDA_DIR); rebuild it with "
          "CUDA_DIR=/path/to/cuda, or use -mat_type %s for the host implementation",
          f.name, f.host ? f.name : host_type_list().c_str());
#else
  std::string       why;
  const std::string host = f.host ? std::string(f.name) : host_type_list();
  PetscCheck(cuda::device_count(&why) > 0, comm, PETSC_ERR_SUP_SYS,
             "-mat_type %scuda needs an NVIDIA GPU with a driver for this CUDA version, and none is usable here: %s. Run on a GPU "
             "node, or use -mat_type %s for the host implementation",
             f.name, why.c_str(), host.c_str());
  PetscCall(SelectDevice(comm));
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

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

const char *TransposeModeName(TransposeMode m)
{
  static const char *const names[] = {"auto", "explicit", "implicit"};
  return names[int(m)];
}

const char *ValuesUpdateName(ValuesUpdate m)
{
  static const char *const names[] = {"auto", "rebuild"};
  return names[int(m)];
}

const char *BuildAtName(BuildAt m)
{
  static const char *const names[] = {"use", "assembly"};
  return names[int(m)];
}

PetscLogEvent values_event = 0;

PetscErrorCode ReadFormatOptions(Mat A, const FormatInfo &f, bool device, FormatOperator &op, TransposeMode *transpose, ValuesUpdate *values, BuildAt *build_at,
                                 OptionItems, PetscBool *changed)
{
  PetscFunctionBegin;
  // -help lists these under the type's own heading and manual page (MATSELLPCUDA, ...)
  std::string man = "MAT" + root_name(f, device);
  for (char &c : man) c = char(std::toupper((unsigned char)c));
  const std::string head = std::string(f.title) + (device ? " (CUDA)" : " (host)") + " options for matrix type " + root_name(f, device) + " (" + ((PetscObject)A)->type_name + ")";
  const char *loads[] = {"stream", "cached"};
  PetscInt    l       = op.stream_loads ? 0 : 1;
  PetscBool   set;
  // a block of our own, so that -help shows these under the type's heading rather than inside
  // AIJ's, whose MatSetFromOptions ours chains to
  const char *orders[] = {"none", "rcm"};
  PetscInt    o        = op.reorder_rcm ? 1 : 0;
  PetscBool   set_o;
  PetscInt    K = op.long_rows;
  PetscBool   set_k;
  const char *transposes[] = {TransposeModeName(TransposeMode::kAuto), TransposeModeName(TransposeMode::kExplicit), TransposeModeName(TransposeMode::kImplicit)};
  PetscInt    tm           = PetscInt(*transpose);
  const char *updates[]    = {ValuesUpdateName(ValuesUpdate::kAuto), ValuesUpdateName(ValuesUpdate::kRebuild)};
  PetscInt    vu           = PetscInt(*values);
  const char *whens[]      = {BuildAtName(BuildAt::kUse), BuildAtName(BuildAt::kAssembly)};
  PetscInt    ba           = PetscInt(*build_at);
  const char *builds[]     = {"device", "host"};
  PetscInt    bo           = op.build_on_host ? 1 : 0;
  PetscBool   set_b        = PETSC_FALSE;
  PetscOptionsBegin(PetscObjectComm((PetscObject)A), ((PetscObject)A)->prefix, head.c_str(), "Mat");
  PetscCall(op.set_from_options(PetscOptionsObject, PetscObjectComm((PetscObject)A), changed));
  PetscCall(PetscOptionsEList("-mat_gpumats_loads", "GPU loads of the matrix arrays: stream (evict-first, the caches keep x) or cached", man.c_str(), loads, 2,
                              loads[l], &l, &set));
  PetscCall(PetscOptionsEList("-mat_gpumats_reorder", "Renumber the rows and columns of the (diagonal) block for the GPU copy: none, or rcm (reverse Cuthill-McKee)",
                              man.c_str(), orders, 2, orders[o], &o, &set_o));
  PetscCall(PetscOptionsInt("-mat_gpumats_long_rows",
                            "Rows longer than this keep that many entries in the format and the rest in a warp-per-row tail (0: never split; -1: chosen per matrix)",
                            man.c_str(), K, &K, &set_k));
  PetscCall(PetscOptionsEList("-mat_gpumats_transpose",
                              "MatMultTranspose(Add): explicit (a transposed copy in the format, built at the first such product), implicit (scattered from the "
                              "stored copy, with atomics on the GPU; no second copy), or auto (implicit, also where MAT_FORM_EXPLICIT_TRANSPOSE is set: the copy's "
                              "build pays only after thousands of products)",
                              man.c_str(), transposes, 3, transposes[tm], &tm, NULL));
  PetscCall(PetscOptionsEList("-mat_gpumats_values_update",
                              "A change that keeps the nonzero pattern (reassembly, MatScale, MatZeroRows with MAT_KEEP_NONZERO_PATTERN, ...): auto (refill the "
                              "format copy's values only, through a slot map made at the first such change) or rebuild (convert in full)",
                              man.c_str(), updates, 2, updates[vu], &vu, NULL));
  PetscCall(PetscOptionsEList("-mat_gpumats_build_at",
                              "When a final assembly brings the format copy up to date: assembly (inside MatAssemblyEnd) or use (at the first product, "
                              "MatGetDiagonal or view after it, as aijcusparse copies at first use)",
                              man.c_str(), whens, 2, whens[ba], &ba, NULL));
  if (device)
    PetscCall(PetscOptionsEList("-mat_gpumats_build",
                                "Where the GPU copy is converted from the CSR: device (on the GPU, from one upload of the CSR) or host (on the host, then uploaded in "
                                "the format: the reference path)",
                                man.c_str(), builds, 2, builds[bo], &bo, &set_b));
  PetscOptionsEnd();
  *transpose = TransposeMode(tm);
  *values    = ValuesUpdate(vu);
  *build_at  = BuildAt(ba);
  PetscCheck(K >= -1, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE,
             "-mat_gpumats_long_rows %" PetscInt_FMT " is invalid: use a row length >= 1, 0 (never split rows) or -1 (chosen per matrix)", K);
  if (set_k && K != op.long_rows) {
    op.long_rows = K;
    *changed     = PETSC_TRUE;
  }
  if (set && (l == 0) != op.stream_loads) {
    op.stream_loads = l == 0;
    *changed        = PETSC_TRUE;
  }
  if (set_o && (o == 1) != op.reorder_rcm) {
    op.reorder_rcm = o == 1;
    *changed       = PETSC_TRUE;
  }
  if (set_b && (bo == 1) != op.build_on_host) {
    op.build_on_host = bo == 1;
    *changed         = PETSC_TRUE;
  }
  // a copy built with the old parameters must not be refilled as if it had the new ones
  if (*changed) op.forget_pattern();
  PetscFunctionReturn(PETSC_SUCCESS);
}

// The RCM order of a square block from PETSc's MatGetOrdering (new position -> original row),
// computed on a SeqAIJ that wraps the block's own CSR arrays (MatCreateSeqAIJWithArrays: no copy,
// assembled by construction). The block itself cannot be asked: it is converted from inside its
// own MatAssemblyEnd, before PETSc marks it assembled, and MatGetOrdering takes assembled
// matrices only. The wrapper is ordered row by row, as the copy stores the rows: its inodes (found
// when it was assembled) are switched off, and a second assembly drops them, as PETSc lets a user
// change MAT_USE_INODES between assemblies.
static PetscErrorCode RcmOrder(PetscInt m, const PetscInt *ia, const PetscInt *ja, const PetscScalar *aa, std::vector<std::int32_t> &order)
{
  Mat             graph;
  IS              rperm, cperm;
  const PetscInt *p;

  PetscFunctionBegin;
  // the wrapper takes non-const arrays; it neither frees them nor changes their values
  PetscCall(MatCreateSeqAIJWithArrays(PETSC_COMM_SELF, m, m, const_cast<PetscInt *>(ia), const_cast<PetscInt *>(ja), const_cast<PetscScalar *>(aa), &graph));
  PetscCall(MatSetOption(graph, MAT_USE_INODES, PETSC_FALSE));
  PetscCall(MatAssemblyBegin(graph, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(graph, MAT_FINAL_ASSEMBLY));
  PetscCall(MatGetOrdering(graph, MATORDERINGRCM, &rperm, &cperm));
  PetscCall(ISGetIndices(rperm, &p));
  order.assign(p, p + m);
  PetscCall(ISRestoreIndices(rperm, &p));
  PetscCall(ISDestroy(&rperm));
  PetscCall(ISDestroy(&cperm));
  PetscCall(MatDestroy(&graph));
  PetscFunctionReturn(PETSC_SUCCESS);
}

void Reordering::build(const std::vector<std::int32_t> &order, bool device)
{
  clear();
  const std::vector<std::int32_t> inverse = inverse_permutation(order);
  const std::int64_t              n       = std::int64_t(order.size());
  if (device) {
#if GPUMATS_HAVE_CUDA
    dev_order_   = cuda::upload(order.data(), order.size());
    dev_inverse_ = cuda::upload(inverse.data(), inverse.size());
    dev_x_.resize(std::size_t(n) * sizeof(Scalar));
    dev_y_.resize(std::size_t(n) * sizeof(Scalar));
#endif
    order_ = order; // (only for a values-only update's slot build)
  } else {
    order_   = order;
    inverse_ = inverse;
    x_.resize(std::size_t(n));
    y_.resize(std::size_t(n));
  }
  n_ = n;
}

void Reordering::clear() { *this = Reordering{}; }

template <class Product>
void Reordering::apply(const Scalar *x, const Epilogue<Scalar> &ep, bool device, void *stream, Product &&product)
{
  if (device) {
#if GPUMATS_HAVE_CUDA
    Scalar *const xc = dev_x_.as<Scalar>(), *const yc = dev_y_.as<Scalar>();
    cuda::gather(xc, x, dev_order_.as<std::int32_t>(), n_, stream);
    product(xc, Epilogue<Scalar>{1, 0, nullptr, yc});
    cuda::gather_epilogue(ep, yc, dev_inverse_.as<std::int32_t>(), n_, stream);
#endif
  } else {
    for (std::int64_t j = 0; j < n_; ++j) x_[j] = x[order_[j]];
    product(x_.data(), Epilogue<Scalar>{1, 0, nullptr, y_.data()});
    for (std::int64_t j = 0; j < n_; ++j) ep.apply(j, y_[inverse_[j]]);
  }
}

template <class Fill>
void Reordering::diagonal(Scalar *d, void *stream, Fill &&fill)
{
#if GPUMATS_HAVE_CUDA
  Scalar *const yc = dev_y_.as<Scalar>();
  fill(yc);
  cuda::gather(d, yc, dev_inverse_.as<std::int32_t>(), n_, stream); // the block's row j sits at inverse[j] in the copy
#else
  (void)d, (void)stream, (void)fill;
  throw std::logic_error("a device diagonal in a build without CUDA");
#endif
}

void RowMap::build(const std::vector<std::int32_t> &rows, std::int64_t block_rows, bool device)
{
  clear();
  const std::int64_t n = std::int64_t(rows.size());
  if (device) {
#if GPUMATS_HAVE_CUDA
    dev_rows_ = cuda::upload(rows.data(), rows.size());
    dev_t_.resize(std::size_t(std::max<std::int64_t>(n, 1)) * sizeof(Scalar));
#endif
  } else {
    rows_ = rows;
    t_.resize(std::size_t(n));
  }
  nrows_      = n;
  block_rows_ = block_rows;
}

void RowMap::clear() { *this = RowMap{}; }

Footprint RowMap::footprint() const
{
  Footprint f;
  f.index_bytes = std::int64_t(sizeof(std::int32_t)) * nrows_;
  return f;
}

template <class Product>
void RowMap::apply(const Scalar *x, const Epilogue<Scalar> &ep, bool device, void *stream, Product &&product)
{
  if (ep.in != ep.out || ep.beta != Scalar(1)) throw std::logic_error("a copy of the rows with entries only can add into its output only (out = out + alpha A x)");
  if (device) {
#if GPUMATS_HAVE_CUDA
    Scalar *const t = dev_t_.as<Scalar>();
    product(x, Epilogue<Scalar>{1, 0, nullptr, t});
    cuda::scatter_epilogue(ep, t, dev_rows_.as<std::int32_t>(), nrows_, stream);
#endif
  } else {
    product(x, Epilogue<Scalar>{1, 0, nullptr, t_.data()});
    for (std::int64_t j = 0; j < nrows_; ++j) ep.apply(rows_[std::size_t(j)], t_[std::size_t(j)]);
  }
}

template <class Product>
void RowMap::apply_transpose(const Scalar *x, const Epilogue<Scalar> &ep, bool device, void *stream, Product &&product)
{
  if (device) {
#if GPUMATS_HAVE_CUDA
    Scalar *const xc = dev_t_.as<Scalar>();
    cuda::gather(xc, x, dev_rows_.as<std::int32_t>(), nrows_, stream);
    product(xc, ep);
#endif
  } else {
    for (std::int64_t j = 0; j < nrows_; ++j) t_[std::size_t(j)] = x[rows_[std::size_t(j)]];
    product(t_.data(), ep);
  }
}

void LongRowTail::build(RowTail<Scalar> &&tail, bool device)
{
  clear();
  const Footprint    fp       = gpumats::footprint(tail);
  const std::int64_t split_at = tail.split_at, nrows = tail.nrows();
  if (device) {
#if GPUMATS_HAVE_CUDA
    dev_rows_ = cuda::upload(tail.rows.data(), tail.rows.size());
    dev_ptr_  = cuda::upload(tail.ptr.data(), tail.ptr.size());
    dev_col_  = cuda::upload(tail.col.data(), tail.col.size());
    dev_val_  = cuda::upload(tail.val.data(), tail.val.size());
#endif
  } else {
    host_ = std::move(tail);
  }
  split_at_  = split_at;
  nrows_     = nrows;
  footprint_ = fp;
}

void LongRowTail::clear() { *this = LongRowTail{}; }

Scalar *LongRowTail::values(bool device)
{
#if GPUMATS_HAVE_CUDA
  if (device) return dev_val_.as<Scalar>();
#endif
  (void)device;
  return host_.val.data();
}

void ValueSlots::build(const Scalar *format, std::int64_t n, const std::vector<std::int32_t> &tail, std::int64_t nnz, bool device, void *stream)
{
  clear();
  if (device) {
#if GPUMATS_HAVE_CUDA
    dev_format_.resize(std::size_t(n) * sizeof(std::int32_t));
    cuda::slots_from_values(format, n, dev_format_.as<std::int32_t>(), stream);
    dev_tail_ = cuda::upload(tail.data(), tail.size());
    dev_csr_.resize(std::size_t(nnz) * sizeof(Scalar));
    cuda::synchronize(stream); // the slot build's copy, whose values the kernel reads, goes when we return
#endif
  } else {
    format_.resize(std::size_t(n));
    slots_from_values(format, n, format_.data());
    tail_ = tail;
  }
  nformat_ = n, ntail_ = std::int64_t(tail.size()), nnz_ = nnz;
  ready_   = true;
}

void ValueSlots::clear() { *this = ValueSlots{}; }

std::size_t ValueSlots::bytes() const
{
  if (!ready_) return 0;
  std::size_t b = sizeof(std::int32_t) * std::size_t(nformat_ + ntail_);
#if GPUMATS_HAVE_CUDA
  b += dev_csr_.bytes();
#endif
  return b;
}

void ValueSlots::gather(const Scalar *csr, std::int64_t nnz, Scalar *format, std::int64_t n, Scalar *tail, std::int64_t ntail, bool device, void *stream,
                        bool csr_on_device)
{
  if (csr_on_device && !device) throw std::logic_error("values-only update: device values for a host copy");
  if (!ready_ || n != nformat_ || ntail != ntail_ || nnz != nnz_)
    throw std::logic_error("values-only update: the copy holds " + std::to_string(n) + " + " + std::to_string(ntail) + " values of " + std::to_string(nnz) +
                           " nonzeros, its slot maps were made for " + std::to_string(nformat_) + " + " + std::to_string(ntail_) + " of " + std::to_string(nnz_));
  if (device) {
#if GPUMATS_HAVE_CUDA
    // A plain copy on the current stream: the CSR values live in PETSc's pageable SeqAIJ array,
    // which PETSc may reallocate or free at any time (new nonzeros, MatSeqAIJ*Preallocation,
    // MatDestroy), so it cannot be registered as pinned memory safely. The synchronisation makes the
    // copy current when we return (PETSc's next product may run on another stream) and lets the
    // host change csr at once even where the array happens to be pinned.
    // (values already on the device, csr_on_device: gathered from there, no upload)
    const Scalar *src = csr_on_device ? csr : upload(csr, nnz, stream);
    cuda::gather_values(format, src, dev_format_.as<std::int32_t>(), n, stream);
    cuda::gather_values(tail, src, dev_tail_.as<std::int32_t>(), ntail, stream);
    cuda::synchronize(stream);
#endif
  } else {
    gather_values(format, csr, format_.data(), n);
    gather_values(tail, csr, tail_.data(), ntail);
  }
}

#if GPUMATS_HAVE_CUDA
const Scalar *ValueSlots::upload(const Scalar *csr, std::int64_t nnz, void *stream)
{
  if (!ready_ || nnz != nnz_) throw std::logic_error("values-only update: " + std::to_string(nnz) + " values for slot maps of " + std::to_string(nnz_));
  if (nnz) cuda::copy_to_device(dev_csr_.get(), csr, std::size_t(nnz) * sizeof(Scalar), stream);
  return dev_csr_.as<Scalar>();
}
#endif

void LongRowTail::apply(const Scalar *x, Scalar *y, Scalar alpha, bool device, void *stream) const
{
  if (!nrows_) return;
  if (device) {
#if GPUMATS_HAVE_CUDA
    cuda::tail_spmv(x, y, alpha, dev_rows_.as<std::int32_t>(), dev_ptr_.as<std::int32_t>(), dev_col_.as<std::int32_t>(), dev_val_.as<Scalar>(), nrows_, stream);
#endif
  } else {
    for (std::int64_t r = 0; r < nrows_; ++r) {
      Scalar s = 0;
      for (std::int32_t k = host_.ptr[r]; k < host_.ptr[r + 1]; ++k) s += host_.val[k] * x[host_.col[k]];
      y[host_.rows[r]] += alpha * s;
    }
  }
}

void LongRowTail::apply_transpose(const Scalar *x, Scalar *y, Scalar alpha, bool device, void *stream) const
{
  if (!nrows_) return;
  if (device) {
#if GPUMATS_HAVE_CUDA
    cuda::tail_spmv_transpose(x, y, alpha, dev_rows_.as<std::int32_t>(), dev_ptr_.as<std::int32_t>(), dev_col_.as<std::int32_t>(), dev_val_.as<Scalar>(), nrows_,
                              stream);
#endif
  } else {
    for (std::int64_t r = 0; r < nrows_; ++r) {
      const Scalar xr = alpha * x[host_.rows[r]];
      for (std::int32_t k = host_.ptr[r]; k < host_.ptr[r + 1]; ++k) y[host_.col[k]] += host_.val[k] * xr;
    }
  }
}

void LongRowTail::diagonal(Scalar *y, void *stream) const
{
#if GPUMATS_HAVE_CUDA
  cuda::tail_diagonal(y, dev_rows_.as<std::int32_t>(), dev_ptr_.as<std::int32_t>(), dev_col_.as<std::int32_t>(), dev_val_.as<Scalar>(), nrows_, stream);
#else
  (void)y, (void)stream;
#endif
}

CsrIn FormatOperator::stage(const CsrIn &A, const std::vector<std::int32_t> &order, std::int64_t split_at, bool compress_rows, Staged &s)
{
  if (compress_rows && (!order.empty() || split_at)) throw std::logic_error("row compression of a renumbered or split block");
  CsrIn B = A;
  if (compress_rows) {
    s.C = gpumats::compress_rows<PetscInt>(A, s.rows);
    B   = s.C.view();
  }
  if (!order.empty()) {
    s.P = permute<PetscInt>(A, order);
    B   = s.P.view();
  }
  if (split_at) {
    split_rows<PetscInt>(B, split_at, s.H, s.T);
    B = s.H.view();
  }
  return B;
}

void FormatOperator::clear_all()
{
  clear();
  reorder_.clear();
  tail_.clear();
  rowmap_.clear();
  slots_.clear();
  pattern          = BlockPattern{};
  total_footprint_ = Footprint{};
}

void FormatOperator::build_copy(const CsrIn &A, const std::vector<std::int32_t> &order, SplitRule split, PetscInt block_size, bool device, bool compress_rows,
                                void *stream, const DeviceCsrIn *on_device)
{
  clear_all();
  if (compress_rows && (!order.empty() || split.long_rows)) throw std::logic_error("row compression of a renumbered or split block");
#if GPUMATS_HAVE_CUDA
  const bool                                         on_gpu = device && !build_on_host; // converted on the GPU from an upload of the CSR
  const std::unique_ptr<cuda::BuildLog>              log    = on_gpu ? BuildEventsIfLogging() : nullptr;
  std::unique_ptr<cuda::DeviceCsr<Scalar, PetscInt>> up; // the block as built, uploaded once
  auto upload = [&](const CsrIn &B) {
    up.reset(); // a superseded upload goes first
    cuda::enter_step(log.get(), cuda::BuildStep::kUpload, stream);
    if (on_device && B.row_ptr == A.row_ptr) // the block itself, which is on the GPU already
      up = std::make_unique<cuda::DeviceCsr<Scalar, PetscInt>>(CsrIn{B.nrows, B.ncols, on_device->row_ptr, on_device->col_ind, on_device->val}, B.nnz(),
                                                                cuda::DeviceCsr<Scalar, PetscInt>::OnDevice{}, stream);
    else up = std::make_unique<cuda::DeviceCsr<Scalar, PetscInt>>(B, stream);
  };
#else
  (void)stream, (void)on_device;
#endif
  try {
    Csr<Scalar, PetscInt> P, H, C; // the block in the copy's order; the head of its rows after a split; its rows with entries
    std::vector<std::int32_t> rows; // where C's rows sit in A
    CsrIn                 B = A;
    if (compress_rows) {
      C = gpumats::compress_rows<PetscInt>(A, rows);
      B = C.view();
    }
    if (!order.empty()) {
      P = permute<PetscInt>(A, order);
      B = P.view();
    }
    BlockSource src{B};
#if GPUMATS_HAVE_CUDA
    if (on_gpu) upload(B);
    src.device = up.get();
    src.log    = log.get();
#endif
    // the split reads the longest row only (renumbering merely reorders the rows): from the upload
    // when there is one, so a GPU build makes no host pass over the rows for it
    const std::int64_t split_at = choose_split(split.long_rows, B.nrows, B.ncols, B.nnz(), split.only_when_told, [&] { return src.longest_row(); });
    if (split_at) {
      RowTail<Scalar> T;
      split_rows<PetscInt>(B, split_at, H, T);
      B        = H.view();
      src.host = B;
      tail_.build(std::move(T), device);
#if GPUMATS_HAVE_CUDA
      if (on_gpu) upload(B); // the head replaces the whole block's upload
      src.device = up.get();
#endif
    }
    build(src, block_size, device);
#if GPUMATS_HAVE_CUDA
    if (on_gpu) cuda::enter_step(log.get(), cuda::BuildStep::kDone, stream);
    up.reset(); // the format holds what it needs; the CSR copy goes before the small uploads below
#endif
    if (!order.empty()) reorder_.build(order, device);
    if (compress_rows) rowmap_.build(rows, A.nrows, device);
    total_footprint_ = footprint();
    total_footprint_.add_part(tail_.footprint());
    if (compress_rows) total_footprint_.add_part(rowmap_.footprint()).rows = A.nrows; // the copy stands for the whole block
  } catch (...) {
    clear_all();
    throw;
  }
}

bool FormatOperator::update_values(const CsrIn &A, PetscInt block_size, bool device, void *stream, bool values_on_device, const DeviceCsrIn *structure_on_device)
{
  const std::int64_t nnz = A.nnz();
  std::int64_t       n   = 0;
  Scalar *const      val = values(&n);
  // values not held as an array to refill (a value dictionary, SELL-P's or BELLPACK's): a GPU copy
  // is refilled through a plain array and encoded anew (refill_compressed, below); a host copy is
  // rebuilt by the caller
  const bool compressed = !val && footprint().stored > 0;
  if (compressed && !device) return false;
  if (!slots_.ready()) {
    if (!slot_map_exact<Scalar>(nnz)) return false;
    // the slot build: the same block with its positions + 1 as values, through the same order,
    // split and row compression, into a copy of the same format and parameters
    std::vector<Scalar> storage;
    Staged              s;
    BlockSource         src;
#if GPUMATS_HAVE_CUDA
    std::unique_ptr<cuda::DeviceCsr<Scalar, PetscInt>> up; // converted where the copy was: on the GPU
    const bool as_is = reorder_.order().empty() && !tail_.split_at() && !rowmap_.active();
    if (device && !build_on_host && as_is) {
      // the slot values are written on the GPU, into the structure there (a host slot CSR and its
      // upload would cost most of the first update), or into an upload of the host's structure
      // (the values neither set on the host nor uploaded)
      using DevCsr = cuda::DeviceCsr<Scalar, PetscInt>;
      src.host     = CsrIn{A.nrows, A.ncols, A.row_ptr, A.col_ind, nullptr}; // the structure decisions read the host's; no values there
      if (structure_on_device)
        up = std::make_unique<DevCsr>(CsrIn{A.nrows, A.ncols, structure_on_device->row_ptr, structure_on_device->col_ind, nullptr}, nnz,
                                      typename DevCsr::SlotValues{}, stream);
      else up = std::make_unique<DevCsr>(src.host, typename DevCsr::UploadSlotValues{}, stream);
      src.device = up.get();
    } else
#endif
    {
      src.host = stage(slot_csr(A, storage), reorder_.order(), tail_.split_at(), rowmap_.active(), s);
#if GPUMATS_HAVE_CUDA
      if (device && !build_on_host) src.device = (up = std::make_unique<cuda::DeviceCsr<Scalar, PetscInt>>(src.host, stream)).get();
#endif
    }
    const auto copy = build_like(src, block_size, device);
    std::int64_t        nv   = 0;
    const Scalar       *v    = copy->values(&nv);
    if (!v && copy->footprint().stored > 0) return false; // the slot copy compressed its values too
    std::vector<std::int32_t> tail(s.T.val.size());
    slots_from_values(s.T.val.data(), std::int64_t(tail.size()), tail.data());
    slots_.build(v, nv, tail, nnz, device, stream);
  }
  const Scalar *csr = nnz && !values_on_device ? A.val + A.row_ptr[0] : A.val;
#if GPUMATS_HAVE_CUDA
  if (compressed) {
    // The new values get a table of their own: a Newton step's or a scaled matrix's values are
    // not the old ones. Counted on the GPU from their upload; with more than a dictionary holds
    // (distinct empty), the copy keeps them plain in the same layout (refill_compressed).
    const Scalar       *dev = values_on_device ? csr : slots_.upload(csr, nnz, stream);
    std::int64_t        count = 0;
    const std::vector<Scalar> distinct = cuda::distinct_values(dev, nnz, kMaxDictionary, &count, stream);
    const std::int64_t before = footprint().value_bytes;
    const bool         done   = refill_compressed(distinct, [&](Scalar *plain, std::int64_t np) {
      slots_.gather(dev, nnz, plain, np, tail_.values(device), tail_.nnz(), device, stream, true);
    });
    if (done) total_footprint_.value_bytes += footprint().value_bytes - before; // (the table may have grown or shrunk)
    return done;
  }
#endif
  slots_.gather(csr, nnz, val, n, tail_.values(device), tail_.nnz(), device, stream, values_on_device);
  return true;
}

void FormatOperator::apply(const Scalar *x, const Epilogue<Scalar> &ep, bool device, void *stream) { run(x, ep, device, stream, false); }

void FormatOperator::apply_transpose(const Scalar *x, const Epilogue<Scalar> &ep, bool device, void *stream) { run(x, ep, device, stream, true); }

void FormatOperator::run(const Scalar *x, const Epilogue<Scalar> &ep, bool device, void *stream, bool transpose)
{
#if !GPUMATS_HAVE_CUDA
  if (device) throw std::logic_error("a device product in a build without CUDA");
#endif
  // the format's product (or transposed product, which applies the epilogue: out = alpha B^T x +
  // beta in), then the tail's entries added into the same out, all in the copy's order; the RCM
  // gathers serve both, the order being symmetric
  auto product = [&](const Scalar *xc, const Epilogue<Scalar> &epc) {
    if (!device) transpose ? mult_transpose_host(xc, epc) : mult_host(xc, epc);
#if GPUMATS_HAVE_CUDA
    else transpose ? mult_transpose_device(xc, epc, stream) : mult_device(xc, epc, stream);
#endif
    if (transpose) tail_.apply_transpose(xc, epc.out, epc.alpha, device, stream);
    else tail_.apply(xc, epc.out, epc.alpha, device, stream);
  };
  if (rowmap_.active()) transpose ? rowmap_.apply_transpose(x, ep, device, stream, product) : rowmap_.apply(x, ep, device, stream, product);
  else if (reorder_.active()) reorder_.apply(x, ep, device, stream, product);
  else product(x, ep);
}

void FormatOperator::diagonal(Scalar *d, std::int64_t nrows, void *stream)
{
  if (rowmap_.active()) throw std::logic_error("the diagonal of a copy of a block's rows with entries only");
#if GPUMATS_HAVE_CUDA
  auto fill = [&](Scalar *y) {
    cuda::transpose_prologue(Epilogue<Scalar>{1, 0, nullptr, y}, nrows, stream); // 0 where the block stores no diagonal entry
    diagonal_device(y, stream);
    tail_.diagonal(y, stream); // a split row's diagonal entry may lie past split_at
  };
  if (reorder_.active()) reorder_.diagonal(d, stream, fill);
  else fill(d);
#else
  (void)d, (void)nrows, (void)stream;
  throw std::logic_error("a device diagonal in a build without CUDA");
#endif
}

std::string FormatOperator::glue_notes() const
{
  std::string s = reorder_.active() ? ", rows and columns in RCM order" : (reorder_rcm ? ", RCM requested" : "");
  if (build_on_host) s += ", converted on the host (-mat_gpumats_build host)";
  if (rowmap_.active())
    s += ", rows with entries only: " + std::to_string(rowmap_.nrows()) + " of " + std::to_string(rowmap_.block_rows()) + ", added through a row map";
  if (tail_.split_at())
    s += ", rows longer than " + std::to_string(tail_.split_at()) + " split: " + std::to_string(tail_.nnz()) + " entries of " + std::to_string(tail_.nrows()) +
         " rows in a warp-per-row tail";
  return s;
}

namespace {
// The record of what op would be built from now (see BlockPattern)
PetscErrorCode PatternOf(Mat block, PetscInt m, PetscInt n, const PetscInt *ia, const PetscInt *ja, PetscInt block_size, bool diagonal, BlockPattern *p)
{
  PetscFunctionBegin;
  p->valid = true;
  PetscCall(PetscObjectGetId((PetscObject)block, &p->block));
  PetscCall(MatGetNonzeroState(block, &p->nonzero_state));
  p->row_ptr = ia, p->col_ind = ja;
  p->rows = m, p->cols = n, p->nnz = m ? ia[m] - ia[0] : 0, p->block_size = block_size;
  p->diagonal = diagonal;
  PetscFunctionReturn(PETSC_SUCCESS);
}
} // namespace

PetscErrorCode BuildFromSeqAIJ(Mat block, const FormatInfo &f, FormatOperator &op, bool device, PetscInt block_size, bool diagonal, bool transposed,
                               ValuesUpdate values, UpdateCounts *counts, const DeviceCsrIn *on_device, bool host_stale)
{
  const PetscInt           *ia, *ja;
  const PetscScalar        *aa;
  PetscInt                  m, n;
  PetscBool                 done;
  std::vector<std::int32_t> order; // the RCM order of a renumbered copy
  BlockPattern              now;
  const char               *full = nullptr; // why the copy is converted in full
  void                     *stream = nullptr;

  PetscFunctionBegin;
  PetscCall(MatGetSize(block, &m, &n));
  const bool reorder = op.reorder_rcm && diagonal && !transposed && m == n && m > 0;
  PetscCheck(!reorder || m <= (PetscInt)std::numeric_limits<std::int32_t>::max(), PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE,
             "-mat_gpumats_reorder rcm: a block of %" PetscInt_FMT " rows exceeds the 32-bit row order; use more MPI ranks or no reordering", m);
  PetscCall(MatGetRowIJ(block, 0, PETSC_FALSE, PETSC_FALSE, &m, &ia, &ja, &done));
  PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MatGetRowIJ did not return the CSR of a SeqAIJ block");
  if (!device || transposed || reorder) on_device = nullptr; // (a transposed or renumbered block is made on the host)
  // long rows may be split in diagonal blocks only; build_copy decides from the longest row
  const SplitRule split = diagonal ? SplitRule{op.long_rows, !f.split_long_rows} : SplitRule{};
  // A GPU build from on_device reads the host's structure only, unless it splits long rows or
  // keeps an off-diagonal block's rows with entries only, which cut from the host CSR: stale host
  // values (a product's, whose first use this often is, inside the solve for a coarse operator)
  // are then left where they are
  bool read_values = !host_stale || !on_device || op.build_on_host || !diagonal;
  if (!read_values) {
    const CsrIn S{m, n, ia, ja, nullptr};
    read_values = choose_split(split.long_rows, m, n, S.nnz(), split.only_when_told, [&] { return longest_row(S); }) != 0;
  }
  aa = nullptr;
  if (read_values) PetscCall(MatSeqAIJGetArrayRead(block, &aa));
  PetscCheck(!read_values || aa || ia[m] == ia[0], PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE,
             "%s: the matrix holds a nonzero pattern without values (MAT_STRUCTURE_ONLY), of which no format copy can be made; set its values, or multiply it as MATAIJ",
             f.title);
  const CsrIn A{m, n, ia, ja, aa};
  PetscCall(PatternOf(block, m, n, ia, ja, block_size, diagonal, &now));
  if (transposed) full = "a transposed copy";
  else if (values == ValuesUpdate::kRebuild) full = "-mat_gpumats_values_update rebuild";
  else if (!op.pattern.valid) full = "no copy of this block with these parameters yet";
  else if (!op.pattern.same(now)) full = "the nonzero pattern changed";
  if (device) PetscCall(CurrentStream(&stream));

  PetscErrorCode err = PETSC_SUCCESS;
  if (!full) { // the copy's structure is right: only the values move
    bool              exact = true;
    const std::size_t had   = op.slot_bytes();
    PetscCall(PetscLogEventBegin(values_event, block, 0, 0, 0));
    err = guarded(PETSC_COMM_SELF, device ? "updating the values of the GPU format" : "updating the values of the host format",
                  [&] { exact = on_device ? op.update_values(CsrIn{m, n, ia, ja, on_device->val}, block_size, device, stream, true)
                                          : op.update_values(A, block_size, device, stream); });
    if (!err && exact && device && !on_device) err = PetscLogCpuToGpu((PetscLogDouble)(A.nnz() * sizeof(PetscScalar)));
    PetscCall(PetscLogEventEnd(values_event, block, 0, 0, 0));
    if (err) op.forget_pattern(); // its values may be half refilled: the next change converts in full
    else if (exact) {
      if (counts) counts->values_only++;
      PetscCall(PetscInfo(block, "%s copy: values only, the nonzero pattern being unchanged since it was built: %" PetscInt64_FMT " CSR values gathered%s\n", f.title,
                          (PetscInt64)A.nnz(), had ? "" : " (slot maps made now)"));
    } else
      full = "the copy holds its values compressed (a value dictionary on the host), or its slot map would not be exact in this scalar type";
  }
  if (full && !err) {
    PetscCall(PetscLogEventBegin(f.convert_event, block, 0, 0, 0));
    err = reorder ? RcmOrder(m, ia, ja, aa, order) : PETSC_SUCCESS;
    if (!err) err = guarded(PETSC_COMM_SELF, device ? "converting to the GPU format" : "converting to the host format", [&] {
      Csr<PetscScalar, PetscInt> T; // the copy for products with A^T holds A^T's rows (A's columns)
      CsrIn                      B = A;
      if (transposed) {
        T = transpose<PetscInt>(A);
        B = T.view();
      }
      // an off-diagonal block keeps its rows with entries only where most rows have none
      const bool compress = !diagonal && !transposed && worth_compressing_rows(B);
      op.build_copy(B, order, split, block_size, device, compress, stream, on_device);
    });
    if (!err) {
      if (!transposed) op.pattern = now; // (a transposed copy is never refilled: it goes when the matrix changes)
      if (counts) counts->conversions++;
      if (device && !on_device) err = PetscLogCpuToGpu((PetscLogDouble)(A.nnz() * (sizeof(PetscScalar) + sizeof(PetscInt)) + (m + 1) * sizeof(PetscInt)));
    }
    PetscCall(PetscLogEventEnd(f.convert_event, block, 0, 0, 0));
    if (!err)
      PetscCall(PetscInfo(block, "%s copy of %" PetscInt_FMT " x %" PetscInt_FMT " (%" PetscInt64_FMT " nonzeros): converted in full: %s\n", f.title, m, n,
                          (PetscInt64)A.nnz(), full));
  }
  if (read_values) PetscCall(MatSeqAIJRestoreArrayRead(block, &aa));
  PetscCall(MatRestoreRowIJ(block, 0, PETSC_FALSE, PETSC_FALSE, &m, &ia, &ja, &done));
  PetscCall(err);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode UpdateValuesFromDevice(Mat block, const FormatInfo &f, FormatOperator &op, const PetscScalar *device_values, const DeviceCsrIn *structure,
                                      PetscInt block_size, bool diagonal,
                                      UpdateCounts *counts, PetscBool *done)
{
  const PetscInt *ia, *ja;
  PetscInt        m, n;
  PetscBool       got;
  BlockPattern    now;
  bool            exact = false;
  void           *stream = nullptr;

  PetscFunctionBegin;
  *done = PETSC_FALSE;
#if GPUMATS_HAVE_CUDA
  PetscCall(MatGetSize(block, &m, &n));
  PetscCall(MatGetRowIJ(block, 0, PETSC_FALSE, PETSC_FALSE, &m, &ia, &ja, &got));
  PetscCheck(got, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MatGetRowIJ did not return the CSR of a SeqAIJ block");
  PetscCall(PatternOf(block, m, n, ia, ja, block_size, diagonal, &now));
  // the structure is read on the host, the values never: val is the device array
  const CsrIn A{m, n, ia, ja, device_values};
  PetscErrorCode err = PETSC_SUCCESS;
  if (op.pattern.valid && op.pattern.same(now)) {
    PetscCall(CurrentStream(&stream));
    PetscCall(PetscLogEventBegin(values_event, block, 0, 0, 0));
    err = guarded(PETSC_COMM_SELF, "updating the values of the GPU format from device values",
                  [&] { exact = op.update_values(A, block_size, true, stream, true, structure); });
    PetscCall(PetscLogEventEnd(values_event, block, 0, 0, 0));
    if (err) op.forget_pattern(); // half refilled: the caller's full conversion follows
    else if (exact) {
      if (counts) counts->values_only++;
      *done = PETSC_TRUE;
      PetscCall(PetscInfo(block, "%s copy: values only, from %" PetscInt64_FMT " device values (no host round trip)\n", f.title, (PetscInt64)A.nnz()));
    }
  }
  PetscCall(MatRestoreRowIJ(block, 0, PETSC_FALSE, PETSC_FALSE, &m, &ia, &ja, &got));
  PetscCall(err);
#else
  (void)block, (void)f, (void)op, (void)device_values, (void)structure, (void)block_size, (void)diagonal, (void)counts, (void)ia, (void)ja, (void)m, (void)n, (void)got,
    (void)now, (void)exact, (void)stream;
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode ViewOperator(PetscViewer viewer, const FormatInfo &f, const char *what, const FormatOperator &op, bool device)
{
  const Footprint &fp = op.total_footprint();

  PetscFunctionBegin;
  PetscCall(PetscViewerASCIIPrintf(viewer, "%s%s %s: %s\n", f.title, device ? " (CUDA)" : " (host)", what, op.parameters().c_str()));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  %" PetscInt64_FMT " x %" PetscInt64_FMT ", %" PetscInt64_FMT " nonzeros, %" PetscInt64_FMT
                                           " stored entries (fill ratio %.3f), %.4g MB (CSR: %.4g MB)\n",
                                   (PetscInt64)fp.rows, (PetscInt64)fp.cols, (PetscInt64)fp.nnz, (PetscInt64)fp.stored, fp.fill_ratio(),
                                   fp.total_bytes() / 1e6, csr_bytes(fp.rows, fp.nnz, sizeof(PetscScalar)) / 1e6));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode ViewUpdates(PetscViewer viewer, ValuesUpdate mode, const UpdateCounts &counts, double slot_bytes)
{
  char text[256];

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(text, sizeof(text),
                          "  same-pattern changes: %s (-mat_gpumats_values_update %s); so far %" PetscInt64_FMT " full conversion%s, %" PetscInt64_FMT
                          " values-only update%s; slot maps %.4g MB\n",
                          mode == ValuesUpdate::kAuto ? "values only" : "converted in full", ValuesUpdateName(mode), counts.conversions,
                          counts.conversions == 1 ? "" : "s", counts.values_only, counts.values_only == 1 ? "" : "s", slot_bytes / 1e6));
  PetscCall(PetscViewerASCIIPrintf(viewer, "%s", text)); // one call: each one indents its text anew
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode ViewTranspose(PetscViewer viewer, TransposeMode mode, bool hint, PetscInt64 held, PetscInt64 stored, double bytes)
{
  std::string line = std::string("  transpose products: ") + (UseExplicitTranspose(mode, hint) ? "explicit, a transposed copy in the format" : "implicit, scattered from the stored copy") +
                     " (-mat_gpumats_transpose " + TransposeModeName(mode) +
                     (mode != TransposeMode::kAuto ? "" : (hint ? ", MAT_FORM_EXPLICIT_TRANSPOSE set" : ", MAT_FORM_EXPLICIT_TRANSPOSE not set")) + "); ";
  char held_text[128] = "no transposed copy held";

  PetscFunctionBegin;
  if (held) PetscCall(PetscSNPrintf(held_text, sizeof(held_text), "transposed copy held: %" PetscInt64_FMT " stored entries, %.4g MB", stored, bytes / 1e6));
  PetscCall(PetscViewerASCIIPrintf(viewer, "%s%s\n", line.c_str(), held_text)); // one call: each one indents its text anew
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode VecArray::get(Vec v, Mode mode, bool device, Staging *stage, int slot, void *stream)
{
  PetscFunctionBegin;
  vec_ = v, mode_ = mode, device_ = device, staged_ = false, stream_ = stream;
  PetscCall(VecGetLocalSize(v, &n_));
  if (!device) {
    if (mode == kRead) PetscCall(VecGetArrayRead(v, (const PetscScalar **)&host_));
    else if (mode == kWrite) PetscCall(VecGetArrayWrite(v, &host_));
    else PetscCall(VecGetArray(v, &host_));
    ptr_ = host_;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
#if GPUMATS_HAVE_CUDA
  PetscMemType mtype;
  if (mode == kRead) PetscCall(VecGetArrayReadAndMemType(v, (const PetscScalar **)&host_, &mtype));
  else if (mode == kWrite) PetscCall(VecGetArrayWriteAndMemType(v, &host_, &mtype));
  else PetscCall(VecGetArrayAndMemType(v, &host_, &mtype));
  if (PetscMemTypeDevice(mtype)) {
    ptr_ = host_; // a VECCUDA array: the kernel works on it in place
  } else {
    // a host vector (a PETSc without CUDA, or a non-CUDA Vec type): stage it through the GPU
    staged_ = true;
    PetscCall(guarded(PETSC_COMM_SELF, "staging a vector on the GPU", [&] {
      stage->slot[slot].resize(std::size_t(n_) * sizeof(PetscScalar));
      if (mode != kWrite && n_) cuda::copy_to_device(stage->slot[slot].get(), host_, std::size_t(n_) * sizeof(PetscScalar), stream);
    }));
    if (mode != kWrite && n_) PetscCall(PetscLogCpuToGpu((PetscLogDouble)n_ * sizeof(PetscScalar)));
    PetscCall(PetscInfo(v, "staging a host vector (%s) of %" PetscInt_FMT " entries on the GPU\n", ((PetscObject)v)->type_name, n_));
    ptr_ = stage->slot[slot].as<PetscScalar>();
  }
#else
  (void)stage, (void)slot;
  SETERRQ(PETSC_COMM_SELF, PETSC_ERR_PLIB, "device access without CUDA");
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode VecArray::restore()
{
  PetscFunctionBegin;
  if (!vec_) PetscFunctionReturn(PETSC_SUCCESS);
  if (device_) {
#if GPUMATS_HAVE_CUDA
    if (staged_ && mode_ != kRead && n_) {
      PetscCall(guarded(PETSC_COMM_SELF, "copying a staged vector back from the GPU",
                        [&] { cuda::copy_to_host_sync(host_, ptr_, std::size_t(n_) * sizeof(PetscScalar), stream_); }));
      PetscCall(PetscLogGpuToCpu((PetscLogDouble)n_ * sizeof(PetscScalar)));
    }
    if (mode_ == kRead) PetscCall(VecRestoreArrayReadAndMemType(vec_, (const PetscScalar **)&host_));
    else if (mode_ == kWrite) PetscCall(VecRestoreArrayWriteAndMemType(vec_, &host_));
    else PetscCall(VecRestoreArrayAndMemType(vec_, &host_));
#endif
  } else {
    if (mode_ == kRead) PetscCall(VecRestoreArrayRead(vec_, (const PetscScalar **)&host_));
    else if (mode_ == kWrite) PetscCall(VecRestoreArrayWrite(vec_, &host_));
    else PetscCall(VecRestoreArray(vec_, &host_));
  }
  vec_ = nullptr;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DiagonalOnDevice(FormatOperator &op, Vec v, PetscBool *done)
{
  PetscFunctionBegin;
  *done = PETSC_FALSE;
#if GPUMATS_HAVE_CUDA
  PetscScalar *a;
  PetscMemType mtype;
  PetscInt     n;
  void        *stream = nullptr;
  PetscCall(VecGetLocalSize(v, &n));
  PetscCall(VecGetArrayWriteAndMemType(v, &a, &mtype));
  if (PetscMemTypeDevice(mtype)) {
    PetscCall(CurrentStream(&stream));
    PetscErrorCode err = guarded(PETSC_COMM_SELF, "reading the diagonal of the GPU format", [&] { op.diagonal(a, n, stream); });
    PetscCall(VecRestoreArrayWriteAndMemType(v, &a));
    PetscCall(err);
    *done = PETSC_TRUE;
  } else PetscCall(VecRestoreArrayWriteAndMemType(v, &a));
#else
  (void)op, (void)v;
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode ApplyOperator(const FormatInfo &f, FormatOperator &op, bool device, const Scalar *x, Scalar alpha, Scalar beta, const Scalar *in, Scalar *out,
                             void *stream, bool transpose, bool gpu_timer)
{
  const PetscLogDouble flops = 2.0 * (PetscLogDouble)op.total_footprint().nnz;

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(f.spmv_event, 0, 0, 0, 0));
  if (device) {
#if GPUMATS_HAVE_CUDA
    if (gpu_timer) PetscCall(PetscLogGpuTimeBegin());
    PetscCall(guarded(PETSC_COMM_SELF, transpose ? "running the transposed SpMV kernel" : "running the SpMV kernel", [&] {
      const Epilogue<Scalar> ep{alpha, beta, in, out};
      transpose ? op.apply_transpose(x, ep, true, stream) : op.apply(x, ep, true, stream);
    }));
    if (gpu_timer) PetscCall(PetscLogGpuTimeEnd());
    PetscCall(PetscLogGpuFlops(flops));
#endif
  } else {
    PetscCall(guarded(PETSC_COMM_SELF, transpose ? "host transposed SpMV" : "host SpMV", [&] {
      const Epilogue<Scalar> ep{alpha, beta, in, out};
      transpose ? op.apply_transpose(x, ep, false, stream) : op.apply(x, ep, false, stream);
    }));
    PetscCall(PetscLogFlops(flops));
  }
  PetscCall(PetscLogEventEnd(f.spmv_event, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace gpumats
