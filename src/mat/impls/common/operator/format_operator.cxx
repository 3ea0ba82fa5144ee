// The format operator (format_operator.hpp): a format copy of a block with its row order, row map,
// long-row tail and value slots; its build, its value updates and its products.
#include "format_operator.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <limits>
#include <utility>

namespace gpumats {

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

} // namespace gpumats
