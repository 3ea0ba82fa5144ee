// Interface between the PETSc glue and the CUDA layer. It names no CUDA type, so the glue compiles
// with PETSc's C++ compiler while the kernels compile with nvcc; streams travel as void*.
#pragma once

#include "../core/csr.hpp"

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>

namespace gpumats {
namespace cuda {

// A CUDA failure, with the runtime's own message. out_of_memory() tells the glue to answer with
// PETSc's memory error instead of a generic GPU error.
struct DeviceError : std::runtime_error {
  DeviceError(const std::string &what, bool oom) : std::runtime_error(what), oom_(oom) {}
  bool out_of_memory() const { return oom_; }

private:
  bool oom_;
};

// Number of usable CUDA devices; 0 when there is no GPU or no driver, with the reason in *why.
int  device_count(std::string *why);
void set_device(int device);
void synchronize(void *stream);
// The current device and a device's name, for -mat_view
int         current_device();
std::string device_name(int device);
// The GPU model of this process (its current device's name, read once), "" without a GPU: what the
// per-GPU tuning tables are keyed by (every rank's GPU is one model on the machines we know)
const std::string &process_gpu_model();

// Device memory with one owner and one free.
class Buffer {
public:
  Buffer() = default;
  explicit Buffer(std::size_t bytes) { resize(bytes); }
  ~Buffer();
  Buffer(const Buffer &)            = delete;
  Buffer &operator=(const Buffer &) = delete;
  Buffer(Buffer &&o) noexcept : ptr_(o.ptr_), bytes_(o.bytes_) { o.ptr_ = nullptr, o.bytes_ = 0; }
  Buffer &operator=(Buffer &&o) noexcept;

  void        resize(std::size_t bytes); // keeps nothing; grows only
  void       *get() const { return ptr_; }
  std::size_t bytes() const { return bytes_; }
  template <class T>
  T *as() const
  {
    return static_cast<T *>(ptr_);
  }

private:
  void       *ptr_   = nullptr;
  std::size_t bytes_ = 0;
};

// Host <-> device copies ordered on `stream`; the *_sync forms wait for completion. With pinned
// host memory (PinnedBuffer) the asynchronous forms return at once. copy_to_device returns once
// src may change (pageable memory) or at once (pinned); large pageable arrays (a build's CSR, a
// values-only update's values) go through pinned staging buffers, filled by several host threads
// while the copy engine moves the previous chunk (upload_threads).
void copy_to_device(void *dst, const void *src, std::size_t bytes, void *stream);
// Host threads that fill the staging buffers of copy_to_device. The default: the CPUs this
// process may run on (its affinity), divided by the MPI ranks of the node when the launcher says
// (OMPI_COMM_WORLD_LOCAL_SIZE, MPI_LOCALNRANKS) and the ranks are not bound to CPUs of their own,
// at most kMaxUploadThreads; 1 copies with one thread. A pageable cudaMemcpy is the driver's own
// staging with one thread; an upload probe of ksp ex45 200^3's CSR went up about four times as
// fast staged by 8 threads, and more threads gained nothing, host memcpy being the bound.
constexpr int kMaxUploadThreads = 8;
void set_upload_threads(int n); // n <= 0: the default
int  upload_threads();
void copy_to_host(void *dst, const void *src, std::size_t bytes, void *stream);
void copy_to_host_sync(void *dst, const void *src, std::size_t bytes, void *stream);
void copy_on_device(void *dst, const void *src, std::size_t bytes, void *stream); // device to device

// Page-locked host memory with one owner and one free: the staging buffers of the ghost exchange,
// so that its copies run on the copy engines while kernels run, and return without waiting.
class PinnedBuffer {
public:
  PinnedBuffer() = default;
  ~PinnedBuffer();
  PinnedBuffer(const PinnedBuffer &)            = delete;
  PinnedBuffer &operator=(const PinnedBuffer &) = delete;

  void resize(std::size_t bytes); // keeps nothing; grows only
  template <class T>
  T *as() const
  {
    return static_cast<T *>(ptr_);
  }

private:
  void       *ptr_   = nullptr;
  std::size_t bytes_ = 0;
};

// A stream of our own, created at first use on the current device: non-blocking (no implicit
// ordering with the legacy default stream that PETSc's vectors use), at the device's highest
// priority. Priority decides which waiting kernel gets the next free SM: a small kernel queued at
// equal priority behind a large SpMV grid starts only when that grid's last blocks are dispatched,
// so the ghost exchange's packing would wait for the diagonal block it is meant to overlap.
class Stream {
public:
  Stream() = default;
  ~Stream();
  Stream(const Stream &)            = delete;
  Stream &operator=(const Stream &) = delete;
  void *get(); // creates it at first use

private:
  void *stream_ = nullptr;
};

// Orders work across streams: wait(s) makes stream s wait for the work recorded before record().
// Created at first use, without timing (cheaper to record).
class Event {
public:
  Event() = default;
  ~Event();
  Event(const Event &)            = delete;
  Event &operator=(const Event &) = delete;
  void record(void *stream);
  void wait(void *stream) const;

private:
  void *event_ = nullptr;
};

// Uploads a host array into a fresh Buffer (synchronously: the host array may be freed after).
template <class T>
Buffer upload(const T *host, std::size_t n)
{
  Buffer b(n * sizeof(T));
  if (n) copy_to_device(b.get(), host, n * sizeof(T), nullptr);
  synchronize(nullptr);
  return b;
}

// The two ends of a product with a reordered copy (-mat_gpumats_reorder), both gathers so that
// every write is coalesced: dst[i] = src[idx[i]] (x into the copy's column order), and
// out[j] = alpha*y[idx[j]] + beta*in[j] (the copy's rows back to the user's order). The epilogue is
// the core's (core/csr.hpp), as in every kernel.
template <class V>
void gather(V *dst, const V *src, const std::int32_t *idx, std::int64_t n, void *stream);
template <class V>
void gather_epilogue(const Epilogue<V> &ep, const V *y, const std::int32_t *idx, std::int64_t n, void *stream);

// The end of a product with a copy of the rows with entries only (RowMap in the glue): the
// format's product t of those rows goes into the block's rows through the map, ep.apply(idx[j],
// t[j]) for j < n; with ep.in == ep.out and beta 1, rows outside the map keep their values.
template <class V>
void scatter_epilogue(const Epilogue<V> &ep, const V *t, const std::int32_t *idx, std::int64_t n, void *stream);

// The long-row tail (-mat_gpumats_long_rows): y[rows[r]] += alpha * sum_k val[k] x[col[k]] over
// ptr[r] <= k < ptr[r+1], one warp per row, for r < nrows.
template <class V>
void tail_spmv(const V *x, V *y, V alpha, const std::int32_t *rows, const std::int32_t *ptr, const std::int32_t *col, const V *val, std::int64_t nrows,
               void *stream);

// The implicit products with A^T (every Operator's spmv_transpose, the tail's) scatter
// alpha*v*x[row] into out[column] with atomics, so out first holds the epilogue's other term:
// out[i] = beta*in[i], or 0 when beta == 0 (in then never read), for i < n. in may alias out.
template <class V>
void transpose_prologue(const Epilogue<V> &ep, std::int64_t n, void *stream);

// The long-row tail's part of a product with A^T: y[col[k]] += alpha * val[k] * x[rows[r]] for
// every tail entry, one warp per tail row, with atomics (tail rows share columns).
template <class V>
void tail_spmv_transpose(const V *x, V *y, V alpha, const std::int32_t *rows, const std::int32_t *ptr, const std::int32_t *col, const V *val,
                         std::int64_t nrows, void *stream);

// The long-row tail's part of the diagonal: y[rows[r]] = val[k] for the tail entry k of row r whose
// column is rows[r], if any (one thread per tail row; other entries of y are left as they are).
template <class V>
void tail_diagonal(V *y, const std::int32_t *rows, const std::int32_t *ptr, const std::int32_t *col, const V *val, std::int64_t nrows, void *stream);

// Values-only updates (core/values.hpp, the glue's ValueSlots): val[p] = csr[slot[p]], or 0 where
// slot[p] is -1 (padding and block fill stay explicit zeros), for p < n; csr holds the block's CSR
// values uploaded from its first entry on.
template <class V>
void gather_values(V *val, const V *csr, const std::int32_t *slot, std::int64_t n, void *stream);
// slot[p] = val[p] - 1 for the value array of a copy built from core/values.hpp's slot_csr: its
// slot map, made where the copy lives.
template <class V>
void slots_from_values(const V *val, std::int64_t n, std::int32_t *slot, void *stream);

// Load policy for the matrix streams (the ELLPACK paper's cache-differentiated loads): kStream
// marks matrix arrays evict-first so that x keeps the caches; kDefault leaves caching to the hardware.
enum class LoadPolicy { kDefault = 0, kStream = 1 };

// One format copy of one matrix block, resident on the current GPU.
template <class V>
class Operator {
public:
  virtual ~Operator() = default;
  virtual void spmv(const V *x, const Epilogue<V> &ep, void *stream) const = 0;
  // out = ep(A^T x) (out and in: ncols entries; x: nrows) from the same arrays, without a
  // transposed copy: transpose_prologue, then each stored entry adds alpha*v*x[row] into
  // out[column] with atomicAdd. Padding writes nothing. Summation order varies from run to run.
  virtual void        spmv_transpose(const V *x, const Epilogue<V> &ep, void *stream) const = 0;
  // d[i] = the stored value at (i, i), for every row i that stores one (its column i, in the
  // format's own numbering); other entries of d (nrows of them) are left as they are, so the caller
  // zeroes d first. Read from the format's arrays, as the SpMV reads them: MatGetDiagonal of a *cuda
  // type without the host CSR (PCJacobi, Chebyshev and GAMG read the diagonal, also inside solves).
  // Each stored (row, column) is unique and padding writes nothing, so there are no races.
  virtual void        diagonal(V *d, void *stream) const                                  = 0;
  virtual std::size_t bytes() const                                                         = 0;
  // The value array the kernels read, padding and block fill included, and its length in *count:
  // what a values-only update overwrites in place (the indices stay as they are)
  virtual V          *values(std::int64_t *count)                                           = 0;
  // whether the values are stored in a compressed form (SELL-P's or BELLPACK's value dictionary):
  // then there is no value array to gather new values into, and a values-only update goes through
  // open_plain_values below
  virtual bool        values_compressed() const { return false; }
  // A values-only update of a copy whose values are compressed: a plain value array in the layout
  // of the codes (*count entries, padding and block fill included), allocated beside them for the
  // update to gather the new values into; the format's encoder then replaces codes and table from
  // it (sellp::encode_values, bellpack::encode_values), as at the build. Null where the values
  // are not compressed.
  virtual V          *open_plain_values(std::int64_t *count)
  {
    *count = 0;
    return nullptr;
  }
  // After open_plain_values and the gather, instead of encoding: the copy keeps the plain values
  // and drops codes and table (new values too many for a dictionary). Nothing to do where the
  // values are not compressed.
  virtual void        keep_plain_values() {}
  LoadPolicy          load_policy = LoadPolicy::kStream;
  Footprint           footprint; // of the format this copy holds, as the host core counts it
};

} // namespace cuda
} // namespace gpumats
