//===- CudaRuntime.h - what a CUDA stage's main() calls ---------*- C++ -*-===//
//
// Part of the pipe runtime, CUDA side: the device and the transport a CUDA
// stage hands the stage driver (runtime/pipeline/StageDriver.h).
//
//===----------------------------------------------------------------------===//

#ifndef PIPE_RUNTIME_CUDA_CUDARUNTIME_H
#define PIPE_RUNTIME_CUDA_CUDARUNTIME_H

#include "Device.h"
#include "StageTable.h"
#include "Transport.h"

#include <memory>
#include <string>

namespace pipe_rt {
namespace cuda {

/// GPU `table.gpu` of this host, with the stage's compute stream; null
/// with `error` set where there is no such GPU, no usable driver, or the
/// GPU cannot run code built for `table.arch`.
std::unique_ptr<Device> createDevice(const StageTable &table,
                                     std::string &error);

/// The transport of a CUDA stage: NCCL to the stages of `table.ncclPeers`
/// (on other GPUs), MPI staged through host memory to the others
/// (NcclTransport.cu).
std::unique_ptr<Transport> createTransport(int &argc, char **&argv,
                                           const StageTable &table,
                                           Device &device, std::string &error);

} // namespace cuda
} // namespace pipe_rt

#endif // PIPE_RUNTIME_CUDA_CUDARUNTIME_H
