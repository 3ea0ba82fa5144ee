// Device memory and events shared between the processes of one node through CUDA IPC, for the
// ghost exchange's ipc mode (types/exchange.hpp): a rank exports the buffer it packs its ghost
// values into and an event recorded after the packing; its neighbours open both, and copy the
// values GPU to GPU, ordered after that event, without the host staging of the staged exchange.
// Names no CUDA type, like device.hpp; handles travel between ranks as plain bytes.
#pragma once

#include "device.hpp"

#include <array>

namespace gpumats {
namespace cuda {

// A cudaIpcMemHandle_t or cudaIpcEventHandle_t (both 64 bytes), as bytes for MPI.
using IpcHandle = std::array<unsigned char, 64>;

// The handle of a Buffer's allocation (cudaMalloc'd memory), for a process of the node to open.
IpcHandle export_memory(const Buffer &b);

// A peer's exported memory opened in this process (on its current device; peer access enabled
// when the memory lives on another GPU). Closed by the destructor.
class IpcMemory {
public:
  IpcMemory() = default;
  ~IpcMemory();
  IpcMemory(const IpcMemory &)            = delete;
  IpcMemory &operator=(const IpcMemory &) = delete;
  IpcMemory(IpcMemory &&o) noexcept : ptr_(o.ptr_) { o.ptr_ = nullptr; }
  void  open(const IpcHandle &h);
  void *get() const { return ptr_; }

private:
  void *ptr_ = nullptr;
};

// An interprocess event: created here and exported (create, handle), or a peer's opened here
// (open). wait(s) makes stream s wait for the work recorded before the last record() that
// happened before the call, in whichever process recorded it.
class IpcEvent {
public:
  IpcEvent() = default;
  ~IpcEvent();
  IpcEvent(const IpcEvent &)            = delete;
  IpcEvent &operator=(const IpcEvent &) = delete;
  IpcEvent(IpcEvent &&o) noexcept : event_(o.event_) { o.event_ = nullptr; }
  void      create();
  IpcHandle handle() const;
  void      open(const IpcHandle &h);
  void      record(void *stream);
  void      wait(void *stream) const;

private:
  void *event_ = nullptr;
};

// What a rank exports for its ghost exchange: the buffer it packs the values its neighbours need
// into, an event recorded after each packing, and one recorded after its own copies out of its
// neighbours' buffers. A slot is never freed while the process runs: a neighbour may still have the
// buffer or the events open (memory freed before every importer closes it is undefined behaviour,
// and so is a neighbour's wait on a destroyed event), so a released slot goes back to a pool of
// this process for the next exchange it fits.
struct IpcSlot {
  Buffer   send;
  IpcEvent packed, copied;
};
// A free slot of the pool whose buffer holds at least `bytes`, or a new one.
IpcSlot *acquire_slot(std::size_t bytes);
// Returns a slot to the pool once `stream` (which waited for the neighbours' copies out of it)
// has finished.
void release_slot(IpcSlot *slot, void *stream);

} // namespace cuda
} // namespace gpumats
