//===- CudaRuntime.h - what a CUDA stage's main() calls ---------*- C++ -*-===//
//
// Part of the pipe runtime, CUDA side: the device and the transport a CUDA
// stage hands the stage driver (runtime/pipeline/StageDriver.h).
//
//===----------------------------------------------------------------------===//

#ifndef PIPE_RUNTIME_CUDA_CUDARUNTIME_H
#define PIPE_RUNTIME_CUDA_CUDARUNTIME_H

#include "Device.h"
#include "Transport.h"

#include <memory>
#include <string>

namespace pipe_rt {
namespace cuda {

/// GPU `gpu` of this host, with the stage's compute stream; null with
/// `error` set where there is no such GPU or no usable driver.
std::unique_ptr<Device> createDevice(int gpu, std::string &error);

} // namespace cuda
} // namespace pipe_rt

#endif // PIPE_RUNTIME_CUDA_CUDARUNTIME_H
