//===- HostDevice.h - code that runs on the host and on a GPU ---*- C++ -*-===//
//
// Part of the pipe runtime. PIPE_HOST_DEVICE marks a function that the CPU
// target and the CUDA target both compile (nvcc sees __host__ __device__),
// so that the two run the same arithmetic.
//
//===----------------------------------------------------------------------===//

#ifndef PIPE_RUNTIME_COMMON_HOSTDEVICE_H
#define PIPE_RUNTIME_COMMON_HOSTDEVICE_H

#if defined(__CUDACC__)
#define PIPE_HOST_DEVICE __host__ __device__
#else
#define PIPE_HOST_DEVICE
#endif

#endif // PIPE_RUNTIME_COMMON_HOSTDEVICE_H
