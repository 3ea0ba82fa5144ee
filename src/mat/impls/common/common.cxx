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

PetscErrorCode SelectDevice(MPI_Comm comm)
{
  PetscFunctionBegin;
#if GPUMATS_HAVE_CUDA
  #if PetscDefined(HAVE_CUDA)
  // PETSc picks and initialises this rank's GPU; its vectors live there, so must our copies
  PetscCall(PetscDeviceInitialize(PETSC_DEVICE_CUDA));
  (void)comm;
  #else
  // Without a CUDA PETSc nobody else picks: one GPU per rank of a node, by node-local rank from
  // the launcher's environment (no communication, so a single rank may call this alone).
  static bool done = false;
  if (!done) {
    int         local = -1;
    const char *vars[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "MV2_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "PMI_LOCAL_RANK"};
    for (const char *v : vars)
      if (const char *s = std::getenv(v)) {
        local = std::atoi(s);
        break;
      }
    if (local < 0) {
      PetscMPIInt rank;
      PetscCallMPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
      local = rank;
    }
    PetscCall(guarded(comm, "selecting a GPU", [&] { cuda::set_device(local % cuda::device_count(nullptr)); }));
    done = true;
  }
  #endif
#else
  (void)comm;
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

PetscErrorCode ReadFormatOptions(Mat A, const FormatInfo &f, bool device, FormatOperator &op, OptionItems, PetscBool *changed)
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
  PetscOptionsBegin(PetscObjectComm((PetscObject)A), ((PetscObject)A)->prefix, head.c_str(), "Mat");
  PetscCall(op.set_from_options(PetscOptionsObject, PetscObjectComm((PetscObject)A), changed));
  PetscCall(PetscOptionsEList("-mat_gpumats_loads", "GPU loads of the matrix arrays: stream (evict-first, the caches keep x) or cached", man.c_str(), loads, 2,
                              loads[l], &l, &set));
  PetscCall(PetscOptionsEList("-mat_gpumats_reorder", "Renumber the rows and columns of the (diagonal) block for the GPU copy: none, or rcm (reverse Cuthill-McKee)",
                              man.c_str(), orders, 2, orders[o], &o, &set_o));
  PetscCall(PetscOptionsInt("-mat_gpumats_long_rows",
                            "Rows longer than this keep that many entries in the format and the rest in a warp-per-row tail (0: never split; -1: chosen per matrix)",
                            man.c_str(), K, &K, &set_k));
  PetscOptionsEnd();
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
  PetscFunctionReturn(PETSC_SUCCESS);
}

// The RCM order of a square block from PETSc's MatGetOrdering (new position -> original row).
// MatGetOrdering insists on an assembled matrix, and a block is converted from inside its own
// MatAssemblyEnd, before PETSc marks it assembled: the flag is raised for the call only.
static PetscErrorCode RcmOrder(Mat block, std::vector<std::int32_t> &order)
{
  IS              rperm, cperm;
  const PetscInt *p;
  PetscInt        m;
  const PetscBool assembled = block->assembled;

  PetscFunctionBegin;
  PetscCall(MatGetLocalSize(block, &m, nullptr));
  block->assembled   = PETSC_TRUE;
  PetscErrorCode err = MatGetOrdering(block, MATORDERINGRCM, &rperm, &cperm);
  block->assembled   = assembled;
  PetscCall(err);
  PetscCall(ISGetIndices(rperm, &p));
  order.assign(p, p + m);
  PetscCall(ISRestoreIndices(rperm, &p));
  PetscCall(ISDestroy(&rperm));
  PetscCall(ISDestroy(&cperm));
  PetscFunctionReturn(PETSC_SUCCESS);
}

// B = A in the order `order` (row i of B is row order[i] of A, column j of B is column order[j]),
// rows kept sorted by column.
struct PermutedCsr {
  std::vector<PetscInt>    ptr, col;
  std::vector<PetscScalar> val;
};
static void Permute(const CsrIn &A, const std::vector<std::int32_t> &order, PermutedCsr &B)
{
  const std::int64_t        m = A.nrows;
  std::vector<std::int32_t> inverse(m);
  for (std::int64_t i = 0; i < m; ++i) inverse[order[i]] = std::int32_t(i);
  B.ptr.assign(m + 1, 0);
  for (std::int64_t i = 0; i < m; ++i) B.ptr[i + 1] = B.ptr[i] + (A.row_end(order[i]) - A.row_begin(order[i]));
  B.col.resize(B.ptr[m]);
  B.val.resize(B.ptr[m]);
  std::vector<std::pair<PetscInt, PetscScalar>> row;
  for (std::int64_t i = 0; i < m; ++i) {
    row.clear();
    for (std::int64_t k = A.row_begin(order[i]); k < A.row_end(order[i]); ++k) row.emplace_back(inverse[A.col_ind[k]], A.val[k]);
    std::sort(row.begin(), row.end(), [](const auto &a, const auto &b) { return a.first < b.first; });
    for (std::size_t k = 0; k < row.size(); ++k) B.col[B.ptr[i] + k] = row[k].first, B.val[B.ptr[i] + k] = row[k].second;
  }
}

std::string FormatOperator::glue_notes() const
{
  std::string s = !order.empty() ? ", rows and columns in RCM order" : (reorder_rcm ? ", RCM requested" : "");
  if (tail.split_at)
    s += ", rows longer than " + std::to_string(tail.split_at) + " split: " + std::to_string(tail.nnz()) + " entries of " + std::to_string(tail.rows.size()) +
         " rows in a warp-per-row tail";
  return s;
}

Footprint FormatOperator::total_footprint() const
{
  Footprint f = footprint();
  f.nnz += tail.nnz();
  f.stored += tail.nnz();
  f.index_bytes += 4 * (tail.nnz() + 2 * std::int64_t(tail.rows.size()) + (tail.split_at ? 1 : 0));
  f.value_bytes += std::int64_t(sizeof(Scalar)) * tail.nnz();
  return f;
}

// Where -mat_gpumats_long_rows cuts the rows of A: the user's length, or per matrix (-1): only
// when the longest row is far beyond the mean (longer than 16 mu + 64: never a stencil or a block
// matrix), at the longer of a warp's 32 entries and 4 mu rounded up to a power of two. 0: no cut.
// autocuda cuts only when told: it weighs the long rows itself and may keep cuSPARSE CSR, which
// balances them (powerlaw on the H200: cuSPARSE 79 us, split SELL-P 95 us).
static std::int64_t SplitAt(PetscInt long_rows, const CsrIn &A, bool only_when_told)
{
  if (long_rows == 0 || (long_rows < 0 && only_when_told) || !A.nrows || A.ncols > std::numeric_limits<std::int32_t>::max()) return 0;
  const std::int64_t longest = longest_row(A);
  if (long_rows > 0) return longest > long_rows ? long_rows : 0;
  const double mu = double(A.nnz()) / double(A.nrows);
  if (double(longest) <= 16 * mu + 64) return 0;
  std::int64_t K = 32;
  while (double(K) < 4 * mu) K *= 2;
  return longest > K ? K : 0;
}

// H = the first K entries of every row of A; the rest of the longer rows into op's tail.
static void Split(const CsrIn &A, std::int64_t K, PermutedCsr &H, FormatOperator::Tail &T)
{
  const std::int64_t m = A.nrows;
  H.ptr.assign(m + 1, 0);
  T           = FormatOperator::Tail{};
  T.split_at  = K;
  for (std::int64_t i = 0; i < m; ++i) {
    const std::int64_t b = A.row_begin(i), e = A.row_end(i), cut = std::min(e, b + K);
    H.ptr[i + 1] = H.ptr[i] + (cut - b);
    if (e > cut) {
      T.rows.push_back(std::int32_t(i));
      for (std::int64_t k = cut; k < e; ++k) T.col.push_back(std::int32_t(A.col_ind[k])), T.val.push_back(A.val[k]);
      T.ptr.push_back(checked_offset(std::int64_t(T.col.size()), "long-row tail"));
    }
  }
  H.col.resize(H.ptr[m]);
  H.val.resize(H.ptr[m]);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t k = 0; k < H.ptr[i + 1] - H.ptr[i]; ++k) H.col[H.ptr[i] + k] = A.col_ind[A.row_begin(i) + k], H.val[H.ptr[i] + k] = A.val[A.row_begin(i) + k];
}

PetscErrorCode BuildFromSeqAIJ(Mat block, const FormatInfo &f, FormatOperator &op, bool device, PetscInt block_size, bool diagonal)
{
  const PetscInt    *ia, *ja;
  const PetscScalar *aa;
  PetscInt           m, n;
  PetscBool          done;
  PermutedCsr        P, H;

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(f.convert_event, block, 0, 0, 0));
  PetscCall(MatGetSize(block, &m, &n));
  op.order.clear();
  op.inverse.clear();
  op.tail = FormatOperator::Tail{};
  const bool reorder = op.reorder_rcm && diagonal && m == n && m > 0;
  PetscCheck(!reorder || m <= (PetscInt)std::numeric_limits<std::int32_t>::max(), PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE,
             "-mat_gpumats_reorder rcm: a block of %" PetscInt_FMT " rows exceeds the 32-bit row order; use more MPI ranks or no reordering", m);
  if (reorder) PetscCall(RcmOrder(block, op.order));
  PetscCall(MatGetRowIJ(block, 0, PETSC_FALSE, PETSC_FALSE, &m, &ia, &ja, &done));
  PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_PLIB, "MatGetRowIJ did not return the CSR of a SeqAIJ block");
  PetscCall(MatSeqAIJGetArrayRead(block, &aa));
  const CsrIn    A{m, n, ia, ja, aa};
  PetscErrorCode err = guarded(PETSC_COMM_SELF, device ? "converting to the GPU format" : "converting to the host format", [&] {
    CsrIn B = A; // the block in the copy's row order
    if (reorder) {
      Permute(A, op.order, P);
      B = CsrIn{m, n, P.ptr.data(), P.col.data(), P.val.data()};
    }
    const std::int64_t K = diagonal ? SplitAt(op.long_rows, B, !f.split_long_rows) : 0;
    if (K) {
      Split(B, K, H, op.tail);
      op.build(CsrIn{m, n, H.ptr.data(), H.col.data(), H.val.data()}, block_size, device);
#if GPUMATS_HAVE_CUDA
      if (device) {
        op.tail.dev_rows = cuda::upload(op.tail.rows.data(), op.tail.rows.size());
        op.tail.dev_ptr  = cuda::upload(op.tail.ptr.data(), op.tail.ptr.size());
        op.tail.dev_col  = cuda::upload(op.tail.col.data(), op.tail.col.size());
        op.tail.dev_val  = cuda::upload(op.tail.val.data(), op.tail.val.size());
      }
#endif
    } else op.build(B, block_size, device);
    if (reorder) {
      op.inverse.resize(op.order.size());
      for (std::size_t i = 0; i < op.order.size(); ++i) op.inverse[op.order[i]] = std::int32_t(i);
#if GPUMATS_HAVE_CUDA
      if (device) {
        op.dev_order   = cuda::upload(op.order.data(), op.order.size());
        op.dev_inverse = cuda::upload(op.inverse.data(), op.inverse.size());
        op.dev_x.resize(std::size_t(n) * sizeof(PetscScalar));
        op.dev_y.resize(std::size_t(m) * sizeof(PetscScalar));
      }
#endif
    }
  });
  if (err) op.order.clear(), op.inverse.clear(), op.tail = FormatOperator::Tail{};
  PetscCall(MatSeqAIJRestoreArrayRead(block, &aa));
  PetscCall(MatRestoreRowIJ(block, 0, PETSC_FALSE, PETSC_FALSE, &m, &ia, &ja, &done));
  PetscCall(err);
  if (device) PetscCall(PetscLogCpuToGpu((PetscLogDouble)(A.nnz() * (sizeof(PetscScalar) + sizeof(PetscInt)) + (m + 1) * sizeof(PetscInt))));
  PetscCall(PetscLogEventEnd(f.convert_event, block, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode ViewOperator(PetscViewer viewer, const FormatInfo &f, const char *what, const FormatOperator &op, bool device)
{
  const Footprint fp = op.total_footprint();

  PetscFunctionBegin;
  PetscCall(PetscViewerASCIIPrintf(viewer, "%s%s %s: %s\n", f.title, device ? " (CUDA)" : " (host)", what, op.parameters().c_str()));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  %" PetscInt64_FMT " x %" PetscInt64_FMT ", %" PetscInt64_FMT " nonzeros, %" PetscInt64_FMT
                                           " stored entries (fill ratio %.3f), %.4g MB (CSR: %.4g MB)\n",
                                   (PetscInt64)fp.rows, (PetscInt64)fp.cols, (PetscInt64)fp.nnz, (PetscInt64)fp.stored, fp.fill_ratio(),
                                   fp.total_bytes() / 1e6, csr_bytes(fp.rows, fp.nnz, sizeof(PetscScalar)) / 1e6));
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

PetscErrorCode ApplyOperator(const FormatInfo &f, const FormatOperator &op, bool device, const Scalar *x, Scalar alpha, Scalar beta, const Scalar *in,
                             Scalar *out, void *stream)
{
  const PetscLogDouble flops = 2.0 * (PetscLogDouble)op.total_footprint().nnz;

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(f.spmv_event, 0, 0, 0, 0));
  if (device) {
#if GPUMATS_HAVE_CUDA
    PetscCall(PetscLogGpuTimeBegin());
    PetscCall(guarded(PETSC_COMM_SELF, "running the SpMV kernel", [&] {
      const cuda::Epilogue<Scalar> ep{alpha, beta, in, out};
      const auto                  &T    = op.tail;
      auto                         tail = [&](const Scalar *xt, Scalar *yt, Scalar a) {
        if (T.split_at)
          cuda::tail_spmv(xt, yt, a, T.dev_rows.as<std::int32_t>(), T.dev_ptr.as<std::int32_t>(), T.dev_col.as<std::int32_t>(), T.dev_val.as<Scalar>(),
                          std::int64_t(T.rows.size()), stream);
      };
      if (op.order.empty()) {
        op.mult_device(x, ep, stream);
        tail(x, out, alpha);
      } else { // a reordered copy: x into its order, its product into a scratch vector, then back
        const std::int64_t n  = std::int64_t(op.order.size());
        Scalar *const      yc = op.dev_y.as<Scalar>();
        cuda::gather(op.dev_x.as<Scalar>(), x, op.dev_order.as<std::int32_t>(), n, stream);
        op.mult_device(op.dev_x.as<Scalar>(), cuda::Epilogue<Scalar>{1, 0, nullptr, yc}, stream);
        tail(op.dev_x.as<Scalar>(), yc, Scalar(1));
        cuda::gather_epilogue(ep, yc, op.dev_inverse.as<std::int32_t>(), n, stream);
      }
    }));
    PetscCall(PetscLogGpuTimeEnd());
    PetscCall(PetscLogGpuFlops(flops));
#endif
  } else {
    PetscCall(guarded(PETSC_COMM_SELF, "host SpMV", [&] {
      const auto &T    = op.tail;
      auto        tail = [&](const Scalar *xt, Scalar *yt, Scalar a) {
        for (std::size_t r = 0; r < T.rows.size(); ++r) {
          Scalar s = 0;
          for (std::int32_t k = T.ptr[r]; k < T.ptr[r + 1]; ++k) s += T.val[k] * xt[T.col[k]];
          yt[T.rows[r]] += a * s;
        }
      };
      if (op.order.empty()) {
        op.mult_host(x, Epilogue<Scalar>{alpha, beta, in, out});
        tail(x, out, alpha);
      } else {
        const std::size_t n = op.order.size();
        op.host_x.resize(n);
        op.host_y.resize(n);
        for (std::size_t j = 0; j < n; ++j) op.host_x[j] = x[op.order[j]];
        op.mult_host(op.host_x.data(), Epilogue<Scalar>{1, 0, nullptr, op.host_y.data()});
        tail(op.host_x.data(), op.host_y.data(), Scalar(1));
        for (std::size_t j = 0; j < n; ++j) out[j] = alpha * op.host_y[op.inverse[j]] + (beta != Scalar(0) ? beta * in[j] : Scalar(0));
      }
    }));
    PetscCall(PetscLogFlops(flops));
  }
  PetscCall(PetscLogEventEnd(f.spmv_event, 0, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

} // namespace gpumats
