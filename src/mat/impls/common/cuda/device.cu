// CUDA runtime helpers behind device.hpp: device discovery, buffers, copies, error translation.
#include "device.hpp"
#include "check.cuh"

#include <dlfcn.h>
#include <sched.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace gpumats {
namespace cuda {

namespace {
// Without the driver library the runtime answers "CUDA driver version is insufficient", which
// sends people looking for a driver upgrade on a machine that has no driver at all. The runtime
// finds the driver by this name, so a failed dlopen of it is the runtime's own failure.
bool driver_installed()
{
  void *lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (!lib) return false;
  dlclose(lib);
  return true;
}
} // namespace

int device_count(std::string *why)
{
  int         n   = 0;
  cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    if (why) *why = driver_installed() ? cudaGetErrorString(err) : "no NVIDIA driver found: libcuda.so.1 is not installed on this machine";
    cudaGetLastError(); // clear the sticky "no device" state so later queries start clean
    return 0;
  }
  if (!n && why) *why = "the CUDA runtime reports no devices";
  return n;
}

void set_device(int device) { check(cudaSetDevice(device), "cudaSetDevice"); }

void synchronize(void *stream) { check(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)), "cudaStreamSynchronize"); }

int current_device()
{
  int d = -1;
  check(cudaGetDevice(&d), "cudaGetDevice");
  return d;
}

std::string device_name(int device)
{
  cudaDeviceProp p;
  check(cudaGetDeviceProperties(&p, device), "cudaGetDeviceProperties");
  return p.name;
}

const std::string &process_gpu_model()
{
  static const std::string name = device_count(nullptr) > 0 ? device_name(current_device()) : std::string();
  return name;
}

Buffer::~Buffer()
{
  if (ptr_) cudaFree(ptr_); // never throws from a destructor; a failed free has nothing to recover
}

Buffer &Buffer::operator=(Buffer &&o) noexcept
{
  if (this != &o) {
    if (ptr_) cudaFree(ptr_);
    ptr_ = o.ptr_, bytes_ = o.bytes_;
    o.ptr_ = nullptr, o.bytes_ = 0;
  }
  return *this;
}

void Buffer::resize(std::size_t bytes)
{
  if (bytes <= bytes_) return;
  if (ptr_) check(cudaFree(ptr_), "cudaFree");
  ptr_ = nullptr, bytes_ = 0;
  void *p = nullptr;
  check(cudaMalloc(&p, bytes), "cudaMalloc", bytes);
  ptr_ = p, bytes_ = bytes;
}

namespace {

int default_upload_threads()
{
  cpu_set_t set;
  int       cpus = int(std::thread::hardware_concurrency());
  if (!sched_getaffinity(0, sizeof set, &set)) cpus = CPU_COUNT(&set);
  const int online = int(std::thread::hardware_concurrency());
  if (cpus >= online) { // not bound: the node's ranks share the CPUs
    for (const char *var : {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"})
      if (const char *v = std::getenv(var)) {
        const int local = std::atoi(v);
        if (local > 1) cpus /= local;
        break;
      }
  }
  return std::clamp(cpus, 1, kMaxUploadThreads);
}

int upload_threads_ = 0; // 0: not chosen yet

// The staging of copy_to_device: two pinned chunks, each with the event of its last copy, so the
// host fills one while the copy engine reads the other. Made at the first large upload, kept for
// the process (64 MB of pinned memory). 32 MB chunks: an upload probe found them faster than 16 MB
// chunks at every thread count.
// The threads that fill the chunks live for the whole upload, each copying its part of every
// chunk: threads made and joined per chunk cost more than they save.
class Stager {
public:
  static constexpr std::size_t kChunk = std::size_t(32) << 20;
  // uploads below this size are one pageable cudaMemcpy: no pinned memory for small matrices
  static constexpr std::size_t kMinBytes = std::size_t(4) << 20;

  ~Stager()
  {
    for (int k = 0; k < 2; ++k) { // (at exit the runtime may be gone: errors are ignored)
      if (done_[k]) cudaEventDestroy(done_[k]);
      if (pin_[k]) cudaFreeHost(pin_[k]);
    }
  }
  // false: no pinned memory to be had (the caller copies from pageable memory)
  bool upload(void *dst, const void *src, std::size_t bytes, cudaStream_t s)
  {
    if (failed_) return false;
    if (!pin_[0])
      for (int k = 0; k < 2; ++k)
        if (cudaHostAlloc(&pin_[k], kChunk, cudaHostAllocPortable) != cudaSuccess || cudaEventCreateWithFlags(&done_[k], cudaEventDisableTiming) != cudaSuccess) {
          cudaGetLastError();
          failed_ = true;
          return false;
        }
    Fill f(*this, static_cast<char *>(dst), static_cast<const char *>(src), bytes, s);
    f.run(upload_threads());
    return true;
  }

private:
  // One upload: `parts` threads, this one included, copy part t of each chunk into its pinned
  // buffer once the copy engine is done with that buffer (its event: the copy of chunk c - 2, or
  // of the previous upload); this thread queues a chunk's copy when all its parts are in.
  class Fill {
  public:
    Fill(Stager &st, char *dst, const char *src, std::size_t bytes, cudaStream_t s) : st_(st), dst_(dst), src_(src), bytes_(bytes), s_(s)
    {
      chunks_ = (bytes + kChunk - 1) / kChunk;
      filled_.assign(chunks_, 0);
    }
    void run(int nt)
    {
      check(cudaGetDevice(&device_), "cudaGetDevice");
      std::vector<std::thread> threads;
      for (int t = 1; t < nt; ++t) { // (where a thread cannot be made, the parts are fewer)
        try {
          threads.emplace_back([this, t] { work(t); });
        } catch (const std::system_error &) {
          break;
        }
      }
      {
        std::lock_guard<std::mutex> l(m_);
        parts_ = int(threads.size()) + 1;
      }
      cv_.notify_all();
      std::exception_ptr failure;
      try {
        issue();
      } catch (...) {
        failure = std::current_exception();
        stop();
      }
      for (auto &t : threads) t.join();
      if (failure) std::rethrow_exception(failure);
      if (!error_.empty()) throw DeviceError(error_, false);
    }

  private:
    // [begin, end) of part t of chunk c
    std::pair<std::size_t, std::size_t> part(std::size_t c, int t) const
    {
      const std::size_t off = c * kChunk, len = std::min(kChunk, bytes_ - off), per = (len + std::size_t(parts_) - 1) / std::size_t(parts_);
      return {off + std::min(len, std::size_t(t) * per), off + std::min(len, std::size_t(t + 1) * per)};
    }
    // waits until chunk c's buffer may be written: false when the upload stopped
    bool wait_buffer(std::size_t c)
    {
      {
        std::unique_lock<std::mutex> l(m_);
        cv_.wait(l, [&] { return stopped_ || (parts_ > 0 && issued_ + 2 > c); });
        if (stopped_) return false;
      }
      const cudaError_t err = cudaEventSynchronize(st_.done_[c & 1]);
      if (err == cudaSuccess) return true;
      stop(std::string("cudaEventSynchronize failed: ") + cudaGetErrorString(err));
      return false;
    }
    void copy_part(std::size_t c, int t)
    {
      const auto [b, e] = part(c, t);
      std::memcpy(static_cast<char *>(st_.pin_[c & 1]) + (b - c * kChunk), src_ + b, e - b);
      std::lock_guard<std::mutex> l(m_);
      if (++filled_[c] == parts_) cv_.notify_all();
    }
    void work(int t)
    {
      if (const cudaError_t err = cudaSetDevice(device_); err != cudaSuccess) { // (the event waits below need the caller's device)
        stop(std::string("cudaSetDevice in an upload thread failed: ") + cudaGetErrorString(err));
        return;
      }
      {
        std::unique_lock<std::mutex> l(m_);
        cv_.wait(l, [&] { return stopped_ || parts_ > 0; });
      }
      for (std::size_t c = 0; c < chunks_; ++c) {
        if (!wait_buffer(c)) return;
        copy_part(c, t);
      }
    }
    void issue()
    {
      for (std::size_t c = 0; c < chunks_; ++c) {
        if (!wait_buffer(c)) break;
        copy_part(c, 0);
        {
          std::unique_lock<std::mutex> l(m_);
          cv_.wait(l, [&] { return stopped_ || filled_[c] == parts_; });
          if (stopped_) break;
        }
        const std::size_t off = c * kChunk, len = std::min(kChunk, bytes_ - off);
        check(cudaMemcpyAsync(dst_ + off, st_.pin_[c & 1], len, cudaMemcpyHostToDevice, s_), "cudaMemcpyAsync to device");
        check(cudaEventRecord(st_.done_[c & 1], s_), "cudaEventRecord");
        {
          std::lock_guard<std::mutex> l(m_);
          issued_ = c + 1;
        }
        cv_.notify_all();
      }
    }
    // stops every part; a message (the first one kept) makes run() throw it after the joins
    void stop(const std::string &error = {})
    {
      std::lock_guard<std::mutex> l(m_);
      if (error_.empty()) error_ = error;
      stopped_ = true;
      cv_.notify_all();
    }

    Stager                 &st_;
    char                   *dst_;
    const char             *src_;
    std::size_t             bytes_, chunks_ = 0;
    cudaStream_t            s_;
    int                     device_ = 0, parts_ = 0; // parts_: 0 until the threads are made
    std::mutex              m_;
    std::condition_variable cv_;
    std::size_t             issued_ = 0; // chunks whose copy is queued
    std::vector<int>        filled_;     // parts copied, per chunk
    bool                    stopped_ = false;
    std::string             error_;
  };

  void       *pin_[2]  = {nullptr, nullptr};
  cudaEvent_t done_[2] = {nullptr, nullptr};
  bool        failed_  = false;
};

Stager &stager()
{
  static Stager s;
  return s;
}

// pageable host memory (not pinned, registered, device or managed)
bool pageable(const void *p)
{
  cudaPointerAttributes a;
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    cudaGetLastError();
    return true;
  }
  return a.type == cudaMemoryTypeUnregistered;
}

} // namespace

void set_upload_threads(int n) { upload_threads_ = n > 0 ? std::min(n, kMaxUploadThreads) : default_upload_threads(); }
int  upload_threads()
{
  if (!upload_threads_) upload_threads_ = default_upload_threads();
  return upload_threads_;
}

void copy_to_device(void *dst, const void *src, std::size_t bytes, void *stream)
{
  const auto s = static_cast<cudaStream_t>(stream);
  if (bytes >= Stager::kMinBytes && upload_threads() > 1 && pageable(src) && stager().upload(dst, src, bytes, s)) return;
  check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s), "cudaMemcpyAsync to device");
}

void copy_on_device(void *dst, const void *src, std::size_t bytes, void *stream)
{
  check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, static_cast<cudaStream_t>(stream)), "cudaMemcpyAsync on the device");
}

void copy_to_host(void *dst, const void *src, std::size_t bytes, void *stream)
{
  check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, static_cast<cudaStream_t>(stream)), "cudaMemcpyAsync to host");
}

PinnedBuffer::~PinnedBuffer()
{
  if (ptr_) cudaFreeHost(ptr_);
}

void PinnedBuffer::resize(std::size_t bytes)
{
  if (bytes <= bytes_) return;
  if (ptr_) check(cudaFreeHost(ptr_), "cudaFreeHost");
  ptr_ = nullptr, bytes_ = 0;
  void *p = nullptr;
  check(cudaMallocHost(&p, bytes), "cudaMallocHost", bytes);
  ptr_ = p, bytes_ = bytes;
}

Stream::~Stream()
{
  if (stream_) cudaStreamDestroy(static_cast<cudaStream_t>(stream_));
}

void *Stream::get()
{
  if (!stream_) {
    int          least = 0, greatest = 0;
    cudaStream_t s     = nullptr;
    check(cudaDeviceGetStreamPriorityRange(&least, &greatest), "cudaDeviceGetStreamPriorityRange");
    check(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, greatest), "cudaStreamCreateWithPriority");
    stream_ = s;
  }
  return stream_;
}

Event::~Event()
{
  if (event_) cudaEventDestroy(static_cast<cudaEvent_t>(event_));
}

void Event::record(void *stream)
{
  if (!event_) {
    cudaEvent_t e = nullptr;
    check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreateWithFlags");
    event_ = e;
  }
  check(cudaEventRecord(static_cast<cudaEvent_t>(event_), static_cast<cudaStream_t>(stream)), "cudaEventRecord");
}

void Event::wait(void *stream) const
{
  if (event_) check(cudaStreamWaitEvent(static_cast<cudaStream_t>(stream), static_cast<cudaEvent_t>(event_), 0), "cudaStreamWaitEvent");
}

void copy_to_host_sync(void *dst, const void *src, std::size_t bytes, void *stream)
{
  check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, static_cast<cudaStream_t>(stream)), "cudaMemcpyAsync to host");
  synchronize(stream);
}

namespace {
template <class V>
__global__ void gather_kernel(V *__restrict__ dst, const V *__restrict__ src, const std::int32_t *__restrict__ idx, std::int64_t n)
{
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = __ldg(src + idx[i]);
}
template <class V>
__global__ void gather_epilogue_kernel(Epilogue<V> ep, const V *__restrict__ y, const std::int32_t *__restrict__ idx, std::int64_t n)
{
  const std::int64_t j = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= n) return;
  ep.apply(j, __ldg(y + idx[j]));
}
template <class V>
__global__ void scatter_epilogue_kernel(Epilogue<V> ep, const V *__restrict__ t, const std::int32_t *__restrict__ idx, std::int64_t n)
{
  const std::int64_t j = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j < n) ep.apply(idx[j], t[j]);
}
// One warp per tail row. On power-law rows this kernel runs at half the L2 throughput of the main
// kernels (docs/results/profile-h200-2026-11-24.md): the few rows of up to 1000 entries walk 32
// dependent steps each. Issuing the loads of 4 warp steps before their x loads lowers occupancy
// and measured slower, so the loop stays plain; splitting the longest rows over several warps
// (merge-path style) is what would pay.
template <class V>
__global__ void tail_kernel(const V *__restrict__ x, V *__restrict__ y, V alpha, const std::int32_t *__restrict__ rows, const std::int32_t *__restrict__ ptr,
                            const std::int32_t *__restrict__ col, const V *__restrict__ val, std::int64_t nrows)
{
  const std::int64_t r    = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int          lane = threadIdx.x % 32;
  if (r >= nrows) return;
  V sum = 0;
  for (std::int32_t k = ptr[r] + lane; k < ptr[r + 1]; k += 32) sum += __ldcs(val + k) * __ldg(x + __ldcs(col + k));
  for (int off = 16; off; off /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, off);
  if (!lane) y[rows[r]] += alpha * sum;
}
template <class V>
__global__ void gather_values_kernel(V *__restrict__ val, const V *__restrict__ csr, const std::int32_t *__restrict__ slot, std::int64_t n)
{
  const std::int64_t p = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (p >= n) return;
  const std::int32_t s = slot[p];
  val[p]               = s >= 0 ? __ldg(csr + s) : V(0);
}
template <class V>
__global__ void slots_from_values_kernel(const V *__restrict__ val, std::int64_t n, std::int32_t *__restrict__ slot)
{
  const std::int64_t p = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (p < n) slot[p] = std::int32_t(val[p]) - 1;
}
template <class V>
__global__ void prologue_kernel(Epilogue<V> ep, std::int64_t n)
{
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) ep.apply(i, V(0)); // beta*in[i], or 0 without reading in
}
// one warp per tail row: its entries, 32 at a time, scattered into their columns
template <class V>
__global__ void tail_transpose_kernel(const V *__restrict__ x, V *__restrict__ y, V alpha, const std::int32_t *__restrict__ rows,
                                      const std::int32_t *__restrict__ ptr, const std::int32_t *__restrict__ col, const V *__restrict__ val, std::int64_t nrows)
{
  const std::int64_t r    = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int          lane = threadIdx.x % 32;
  if (r >= nrows) return;
  const V xr = alpha * __ldg(x + rows[r]);
  for (std::int32_t k = ptr[r] + lane; k < ptr[r + 1]; k += 32) atomicAdd(y + __ldcs(col + k), __ldcs(val + k) * xr);
}
// one thread per tail row: the entry in its own column, if the row stores one
template <class V>
__global__ void tail_diagonal_kernel(V *__restrict__ y, const std::int32_t *__restrict__ rows, const std::int32_t *__restrict__ ptr,
                                     const std::int32_t *__restrict__ col, const V *__restrict__ val, std::int64_t nrows)
{
  const std::int64_t r = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= nrows) return;
  const std::int32_t row = rows[r];
  for (std::int32_t k = ptr[r]; k < ptr[r + 1]; ++k)
    if (col[k] == row) y[row] = val[k];
}
} // namespace

template <class V>
void tail_diagonal(V *y, const std::int32_t *rows, const std::int32_t *ptr, const std::int32_t *col, const V *val, std::int64_t nrows, void *stream)
{
  if (!nrows) return;
  tail_diagonal_kernel<V><<<unsigned((nrows + 255) / 256), 256, 0, static_cast<cudaStream_t>(stream)>>>(y, rows, ptr, col, val, nrows);
  check_launch("long-row tail diagonal kernel");
}
template void tail_diagonal<float>(float *, const std::int32_t *, const std::int32_t *, const std::int32_t *, const float *, std::int64_t, void *);
template void tail_diagonal<double>(double *, const std::int32_t *, const std::int32_t *, const std::int32_t *, const double *, std::int64_t, void *);

template <class V>
void transpose_prologue(const Epilogue<V> &ep, std::int64_t n, void *stream)
{
  if (!n) return;
  prologue_kernel<V><<<unsigned((n + 255) / 256), 256, 0, static_cast<cudaStream_t>(stream)>>>(ep, n);
  check_launch("transpose prologue kernel");
}
template void transpose_prologue<float>(const Epilogue<float> &, std::int64_t, void *);
template void transpose_prologue<double>(const Epilogue<double> &, std::int64_t, void *);

template <class V>
void tail_spmv_transpose(const V *x, V *y, V alpha, const std::int32_t *rows, const std::int32_t *ptr, const std::int32_t *col, const V *val, std::int64_t nrows,
                         void *stream)
{
  if (!nrows) return;
  tail_transpose_kernel<V><<<unsigned((nrows * 32 + 255) / 256), 256, 0, static_cast<cudaStream_t>(stream)>>>(x, y, alpha, rows, ptr, col, val, nrows);
  check_launch("long-row tail transpose kernel");
}
template void tail_spmv_transpose<float>(const float *, float *, float, const std::int32_t *, const std::int32_t *, const std::int32_t *, const float *,
                                         std::int64_t, void *);
template void tail_spmv_transpose<double>(const double *, double *, double, const std::int32_t *, const std::int32_t *, const std::int32_t *, const double *,
                                          std::int64_t, void *);

template <class V>
void tail_spmv(const V *x, V *y, V alpha, const std::int32_t *rows, const std::int32_t *ptr, const std::int32_t *col, const V *val, std::int64_t nrows,
               void *stream)
{
  if (!nrows) return;
  tail_kernel<V><<<unsigned((nrows * 32 + 255) / 256), 256, 0, static_cast<cudaStream_t>(stream)>>>(x, y, alpha, rows, ptr, col, val, nrows);
  check_launch("long-row tail kernel");
}
template void tail_spmv<float>(const float *, float *, float, const std::int32_t *, const std::int32_t *, const std::int32_t *, const float *, std::int64_t, void *);
template void tail_spmv<double>(const double *, double *, double, const std::int32_t *, const std::int32_t *, const std::int32_t *, const double *, std::int64_t,
                                void *);

template <class V>
void gather(V *dst, const V *src, const std::int32_t *idx, std::int64_t n, void *stream)
{
  if (!n) return;
  gather_kernel<V><<<unsigned((n + 255) / 256), 256, 0, static_cast<cudaStream_t>(stream)>>>(dst, src, idx, n);
  check_launch("gather kernel");
}
template <class V>
void gather_epilogue(const Epilogue<V> &ep, const V *y, const std::int32_t *idx, std::int64_t n, void *stream)
{
  if (!n) return;
  gather_epilogue_kernel<V><<<unsigned((n + 255) / 256), 256, 0, static_cast<cudaStream_t>(stream)>>>(ep, y, idx, n);
  check_launch("gather epilogue kernel");
}
template <class V>
void scatter_epilogue(const Epilogue<V> &ep, const V *t, const std::int32_t *idx, std::int64_t n, void *stream)
{
  if (!n) return;
  scatter_epilogue_kernel<V><<<unsigned((n + 255) / 256), 256, 0, static_cast<cudaStream_t>(stream)>>>(ep, t, idx, n);
  check_launch("scatter epilogue kernel");
}
template <class V>
void gather_values(V *val, const V *csr, const std::int32_t *slot, std::int64_t n, void *stream)
{
  if (!n) return;
  gather_values_kernel<V><<<unsigned((n + 255) / 256), 256, 0, static_cast<cudaStream_t>(stream)>>>(val, csr, slot, n);
  check_launch("values gather kernel");
}
template <class V>
void slots_from_values(const V *val, std::int64_t n, std::int32_t *slot, void *stream)
{
  if (!n) return;
  slots_from_values_kernel<V><<<unsigned((n + 255) / 256), 256, 0, static_cast<cudaStream_t>(stream)>>>(val, n, slot);
  check_launch("slot map kernel");
}
template void gather_values<float>(float *, const float *, const std::int32_t *, std::int64_t, void *);
template void gather_values<double>(double *, const double *, const std::int32_t *, std::int64_t, void *);
template void slots_from_values<float>(const float *, std::int64_t, std::int32_t *, void *);
template void slots_from_values<double>(const double *, std::int64_t, std::int32_t *, void *);
template void scatter_epilogue<float>(const Epilogue<float> &, const float *, const std::int32_t *, std::int64_t, void *);
template void scatter_epilogue<double>(const Epilogue<double> &, const double *, const std::int32_t *, std::int64_t, void *);
template void gather<float>(float *, const float *, const std::int32_t *, std::int64_t, void *);
template void gather<double>(double *, const double *, const std::int32_t *, std::int64_t, void *);
template void gather_epilogue<float>(const Epilogue<float> &, const float *, const std::int32_t *, std::int64_t, void *);
template void gather_epilogue<double>(const Epilogue<double> &, const double *, const std::int32_t *, std::int64_t, void *);

} // namespace cuda
} // namespace gpumats
