// CUDA IPC for the ghost exchange (ipc.hpp).
#include "check.cuh"
#include "ipc.hpp"

#include <cstring>
#include <vector>

namespace gpumats {
namespace cuda {

static_assert(sizeof(cudaIpcMemHandle_t) == sizeof(IpcHandle) && sizeof(cudaIpcEventHandle_t) == sizeof(IpcHandle), "CUDA IPC handles are 64 bytes");

IpcHandle export_memory(const Buffer &b)
{
  cudaIpcMemHandle_t h;
  check(cudaIpcGetMemHandle(&h, b.get()), "cudaIpcGetMemHandle");
  IpcHandle out;
  std::memcpy(out.data(), &h, sizeof(h));
  return out;
}

IpcMemory::~IpcMemory()
{
  if (ptr_) cudaIpcCloseMemHandle(ptr_); // never throws from a destructor
}

void IpcMemory::open(const IpcHandle &h)
{
  cudaIpcMemHandle_t mh;
  std::memcpy(&mh, h.data(), sizeof(mh));
  if (ptr_) check(cudaIpcCloseMemHandle(ptr_), "cudaIpcCloseMemHandle");
  ptr_    = nullptr;
  void *p = nullptr;
  check(cudaIpcOpenMemHandle(&p, mh, cudaIpcMemLazyEnablePeerAccess), "cudaIpcOpenMemHandle");
  ptr_ = p;
}

IpcEvent::~IpcEvent()
{
  if (event_) cudaEventDestroy(static_cast<cudaEvent_t>(event_));
}

void IpcEvent::create()
{
  cudaEvent_t e = nullptr;
  check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming | cudaEventInterprocess), "cudaEventCreateWithFlags (interprocess)");
  if (event_) cudaEventDestroy(static_cast<cudaEvent_t>(event_));
  event_ = e;
}

IpcHandle IpcEvent::handle() const
{
  cudaIpcEventHandle_t h;
  check(cudaIpcGetEventHandle(&h, static_cast<cudaEvent_t>(event_)), "cudaIpcGetEventHandle");
  IpcHandle out;
  std::memcpy(out.data(), &h, sizeof(h));
  return out;
}

void IpcEvent::open(const IpcHandle &h)
{
  cudaIpcEventHandle_t eh;
  std::memcpy(&eh, h.data(), sizeof(eh));
  cudaEvent_t e = nullptr;
  check(cudaIpcOpenEventHandle(&e, eh), "cudaIpcOpenEventHandle");
  if (event_) cudaEventDestroy(static_cast<cudaEvent_t>(event_));
  event_ = e;
}

void IpcEvent::record(void *stream) { check(cudaEventRecord(static_cast<cudaEvent_t>(event_), static_cast<cudaStream_t>(stream)), "cudaEventRecord (interprocess)"); }

void IpcEvent::wait(void *stream) const
{
  check(cudaStreamWaitEvent(static_cast<cudaStream_t>(stream), static_cast<cudaEvent_t>(event_), 0), "cudaStreamWaitEvent (interprocess)");
}

namespace {
// (allocated once and never destroyed: see IpcSlot)
struct SlotPool {
  std::vector<IpcSlot *> all;
  std::vector<bool>      used;
};
SlotPool &pool()
{
  static SlotPool *p = new SlotPool;
  return *p;
}
} // namespace

IpcSlot *acquire_slot(std::size_t bytes)
{
  SlotPool &p = pool();
  for (std::size_t k = 0; k < p.all.size(); ++k)
    if (!p.used[k] && p.all[k]->send.bytes() >= bytes) {
      p.used[k] = true;
      return p.all[k];
    }
  auto *slot = new IpcSlot;
  try {
    slot->send.resize(bytes);
    slot->packed.create();
    slot->copied.create();
  } catch (...) {
    delete slot; // (exported to no one yet)
    throw;
  }
  p.all.push_back(slot);
  p.used.push_back(true);
  return slot;
}

void release_slot(IpcSlot *slot, void *stream)
{
  if (!slot) return;
  synchronize(stream);
  SlotPool &p = pool();
  for (std::size_t k = 0; k < p.all.size(); ++k)
    if (p.all[k] == slot) p.used[k] = false;
}

} // namespace cuda
} // namespace gpumats
