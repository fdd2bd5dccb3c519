//===- Device.h - where a stage keeps its tensors ---------------*- C++ -*-===//
//
// Part of the pipe runtime. A stage's compute functions read and write one
// kind of memory: the host's for a CPU stage, a GPU's for a CUDA stage. The
// stage driver keeps every tensor a function touches (weights, arena,
// stash, transfers, gradients) in that memory through this interface, and
// moves inputs, outputs and the loss between it and the host.
//
// Work on a device is ordered: what the driver asks of it, and the kernels
// the functions launch, run in the order they were issued. Copies to the
// host wait for everything before them.
//
//===----------------------------------------------------------------------===//

#ifndef PIPE_RUNTIME_PIPELINE_DEVICE_H
#define PIPE_RUNTIME_PIPELINE_DEVICE_H

#include "Npy.h"

#include <cstdint>
#include <memory>
#include <string>

namespace pipe_rt {

class Device {
public:
  virtual ~Device() = default;

  /// Whether the device's memory is the host's: then host data (an input
  /// file's rows, an output array) is passed to the functions in place.
  virtual bool isHost() const = 0;

  /// `bytes` of the device's memory, aligned to 64 bytes at least, or null
  /// with lastError() set.
  virtual void *allocate(int64_t bytes) = 0;
  virtual void release(void *data) = 0;

  /// Host to device, in order with the device's work; `from` may be reused
  /// once the call returns.
  virtual void copyIn(void *to, const void *from, int64_t bytes) = 0;
  /// Device to host, after the device's work before it.
  virtual void copyOut(void *to, const void *from, int64_t bytes) = 0;
  virtual void zero(void *data, int64_t bytes) = 0;
  /// `sum[i] += addend[i]` and `data[i] *= factor` for `count` elements of
  /// `dtype` (F32 or F64).
  virtual void accumulate(DType dtype, void *sum, const void *addend,
                          int64_t count) = 0;
  virtual void scale(DType dtype, void *data, int64_t count, double factor) = 0;

  /// Waits for the device's work; returns an empty string, or what failed
  /// on the device.
  virtual std::string synchronize() = 0;
  /// What made the last call fail.
  virtual std::string lastError() const = 0;
};

/// The host's memory and cores: the device of CPU stages.
std::unique_ptr<Device> createHostDevice();

struct StageTable;

/// How a stage's main() makes the device of the stage `table` describes
/// (the host when it gives none).
using DeviceFactory = std::unique_ptr<Device> (*)(const StageTable &table,
                                                  std::string &error);

/// A tensor's storage on a device. Movable, not copyable.
class DeviceBuffer {
public:
  DeviceBuffer() = default;
  DeviceBuffer(DeviceBuffer &&other) noexcept { *this = std::move(other); }
  DeviceBuffer &operator=(DeviceBuffer &&other) noexcept {
    std::swap(device, other.device);
    std::swap(pointer, other.pointer);
    std::swap(bytes, other.bytes);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  ~DeviceBuffer() {
    if (pointer)
      device->release(pointer);
  }

  /// Makes the buffer `size` bytes on `on` (zeroed where it is new);
  /// false if the device has no room.
  bool resize(Device &on, int64_t size) {
    if (pointer && device == &on && bytes == size)
      return true;
    if (pointer)
      device->release(pointer);
    device = &on;
    bytes = size;
    // Never null for an empty tensor: a function may take its address.
    pointer = static_cast<char *>(on.allocate(size > 0 ? size : 1));
    if (pointer)
      on.zero(pointer, size);
    return pointer != nullptr;
  }
  char *data() const { return pointer; }
  int64_t size() const { return bytes; }

private:
  Device *device = nullptr;
  char *pointer = nullptr;
  int64_t bytes = 0;
};

} // namespace pipe_rt

#endif // PIPE_RUNTIME_PIPELINE_DEVICE_H
