// CUDA runtime helpers behind device.hpp: device discovery, buffers, copies, error translation.
#include "device.hpp"
#include "check.cuh"

#include <dlfcn.h>
#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
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
// the process (64 MB of pinned memory). 32 MB chunks: the upload probe's 670 MB took 0.021 s with
// 8 threads against 0.023 s in 16 MB chunks (4 threads: 0.028 and 0.031 s).
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
  // false: no pinned memory to be had (the caller copies pageable memory as before)
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
    const int nt = upload_threads();
    int       k  = 0;
    for (std::size_t off = 0; off < bytes; off += kChunk, k ^= 1) {
      const std::size_t len = std::min(kChunk, bytes - off);
      check(cudaEventSynchronize(done_[k]), "cudaEventSynchronize"); // the copy engine is done with chunk k
      fill(static_cast<char *>(pin_[k]), static_cast<const char *>(src) + off, len, nt);
      check(cudaMemcpyAsync(static_cast<char *>(dst) + off, pin_[k], len, cudaMemcpyHostToDevice, s), "cudaMemcpyAsync to device");
      check(cudaEventRecord(done_[k], s), "cudaEventRecord");
    }
    return true;
  }

private:
  // memcpy by nt threads, each a contiguous part (where a thread cannot be made, this one copies
  // the parts from there on)
  static void fill(char *dst, const char *src, std::size_t n, int nt)
  {
    const std::size_t        part = (n + std::size_t(nt) - 1) / std::size_t(nt);
    std::size_t              rest = n; // copied here besides the first part
    std::vector<std::thread> threads;
    for (int t = 1; t < nt && std::size_t(t) * part < n; ++t) {
      const std::size_t b = std::size_t(t) * part, e = std::min(n, b + part);
      try {
        threads.emplace_back([=] { std::memcpy(dst + b, src + b, e - b); });
      } catch (const std::system_error &) {
        rest = b;
        break;
      }
    }
    std::memcpy(dst, src, std::min(n, part));
    if (rest < n) std::memcpy(dst + rest, src + rest, n - rest);
    for (auto &t : threads) t.join();
  }

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
// One warp per tail row. On power-law rows (examples/profile_kernels.sh, H200) this kernel takes
// 24 us for the 15% of the entries past 32 per row, at half the L2 throughput of the main kernels:
// the few rows of up to 1000 entries walk 32 dependent steps each. Issuing the loads of 4 warp
// steps before their x loads measured slower (35 us, occupancy 37% against 64%), so the loop stays
// plain; splitting the longest rows over several warps (merge-path style) is what would pay.
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
