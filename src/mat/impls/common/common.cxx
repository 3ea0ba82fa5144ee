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

PetscErrorCode ReadFormatOptions(Mat A, const FormatInfo &f, bool device, FormatOperator &op, TransposeMode *transpose, OptionItems, PetscBool *changed)
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
                              "stored copy, with atomics on the GPU; no second copy), or auto (explicit where MAT_FORM_EXPLICIT_TRANSPOSE is set, as GAMG does on "
                              "the prolongators it repartitions; implicit otherwise)",
                              man.c_str(), transposes, 3, transposes[tm], &tm, NULL));
  if (device)
    PetscCall(PetscOptionsEList("-mat_gpumats_build",
                                "Where the GPU copy is converted from the CSR: device (on the GPU, from one upload of the CSR) or host (on the host, then uploaded in "
                                "the format: the reference path)",
                                man.c_str(), builds, 2, builds[bo], &bo, &set_b));
  PetscOptionsEnd();
  *transpose = TransposeMode(tm);
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

void FormatOperator::build_copy(const CsrIn &A, const std::vector<std::int32_t> &order, SplitRule split, PetscInt block_size, bool device, bool compress_rows,
                                void *stream)
{
  reorder_.clear();
  tail_.clear();
  rowmap_.clear();
  total_footprint_ = Footprint{};
  if (compress_rows && (!order.empty() || split.long_rows)) throw std::logic_error("row compression of a renumbered or split block");
#if GPUMATS_HAVE_CUDA
  const bool                                         on_gpu = device && !build_on_host; // converted on the GPU from an upload of the CSR
  const std::unique_ptr<cuda::BuildLog>              log    = on_gpu ? BuildEventsIfLogging() : nullptr;
  std::unique_ptr<cuda::DeviceCsr<Scalar, PetscInt>> up; // the block as built, uploaded once
  auto upload = [&](const CsrIn &B) {
    up.reset(); // a superseded upload goes first
    cuda::enter_step(log.get(), cuda::BuildStep::kUpload, stream);
    up = std::make_unique<cuda::DeviceCsr<Scalar, PetscInt>>(B, stream);
  };
#else
  (void)stream;
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
    clear();
    reorder_.clear();
    tail_.clear();
    rowmap_.clear();
    total_footprint_ = Footprint{};
    throw;
  }
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

PetscErrorCode BuildFromSeqAIJ(Mat block, const FormatInfo &f, FormatOperator &op, bool device, PetscInt block_size, bool diagonal, bool transposed)
{
  const PetscInt           *ia, *ja;
  const PetscScalar        *aa;
  PetscInt                  m, n;
  PetscBool                 done;
  std::vector<std::int32_t> order; // the RCM order of a renumbered copy

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(f.convert_event, block, 0, 0, 0));
  PetscCall(MatGetSize(block, &m, &n));
  const bool reorder = op.reorder_rcm && diagonal && !transposed && m == n && m > 0;
  PetscCheck(!reorder || m <= (PetscInt)std::numeric_limits<std::int32_t>::max(), PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE,
             "-mat_gpumats_reorder rcm: a block of %" PetscInt_FMT " rows exceeds the 32-bit row order; use more MPI ranks or no reordering", m);
  PetscCall(MatGetRowIJ(block, 0, PETSC_FALSE, PETSC_FALSE, &m, &ia, &ja, &done));
  PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MatGetRowIJ did not return the CSR of a SeqAIJ block");
  PetscCall(MatSeqAIJGetArrayRead(block, &aa));
  const CsrIn    A{m, n, ia, ja, aa};
  void          *stream = nullptr;
  PetscErrorCode err    = device ? CurrentStream(&stream) : PETSC_SUCCESS;
  if (!err && reorder) err = RcmOrder(m, ia, ja, aa, order);
  if (!err) err = guarded(PETSC_COMM_SELF, device ? "converting to the GPU format" : "converting to the host format", [&] {
    Csr<PetscScalar, PetscInt> T; // the copy for products with A^T holds A^T's rows (A's columns)
    CsrIn                      B = A;
    if (transposed) {
      T = transpose<PetscInt>(A);
      B = T.view();
    }
    // long rows may be split in diagonal blocks only; build_copy decides from the longest row
    const SplitRule split = diagonal ? SplitRule{op.long_rows, !f.split_long_rows} : SplitRule{};
    // an off-diagonal block keeps its rows with entries only where most rows have none
    const bool compress = !diagonal && !transposed && worth_compressing_rows(B);
    op.build_copy(B, order, split, block_size, device, compress, stream);
  });
  PetscCall(MatSeqAIJRestoreArrayRead(block, &aa));
  PetscCall(MatRestoreRowIJ(block, 0, PETSC_FALSE, PETSC_FALSE, &m, &ia, &ja, &done));
  PetscCall(err);
  if (device) PetscCall(PetscLogCpuToGpu((PetscLogDouble)(A.nnz() * (sizeof(PetscScalar) + sizeof(PetscInt)) + (m + 1) * sizeof(PetscInt))));
  PetscCall(PetscLogEventEnd(f.convert_event, block, 0, 0, 0));
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
    if (mode != kWrite) PetscCall(PetscLogCpuToGpu((PetscLogDouble)n_ * sizeof(PetscScalar)));
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
