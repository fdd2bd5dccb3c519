//===- CUDATarget.h - GPU stages as CUDA programs ---------------*- C++ -*-===//
//
// The CUDA target writes a stage on a GPU device as CUDA C++ and builds it
// for that GPU's architecture alone. It shares the stage's functions, its
// memory plan and the driver with the CPU target (StageEmitter.h,
// runtime/pipeline); fused steps become kernels, other ops calls into
// runtime/cuda, matrix products cuBLASLt call sites.
//
//===----------------------------------------------------------------------===//

#ifndef PIPE_TARGET_CUDA_CUDATARGET_H
#define PIPE_TARGET_CUDA_CUDATARGET_H

#include "pipe/Target/Common/StageEmitter.h"

#include "mlir/IR/Location.h"

#include <string>
#include <vector>

namespace mlir {
namespace pipe {

/// What the CUDA emitter adds to a stage's artifacts.
struct CUDAStageArtifacts {
  /// fused.h: every fused step's arithmetic, one __host__ __device__
  /// function per step (see docs/cuda-target.md).
  std::string fusedHeader;
  /// The GEMM call sites of the stage's functions, by their C++ names,
  /// prepared at start-up.
  std::vector<std::string> gemmSites;
  /// The names of the structs of fused.h, in order.
  std::vector<std::string> fusedSteps;
};

/// Emits `func` as the CUDA target's function NAME (StageEmitter::run):
/// its pointers are device pointers, its kernels run on the stage's
/// compute stream. Fails, naming the op, for ops the target does not run.
LogicalResult emitCUDAStage(func::FuncOp func, StringRef name,
                            const llvm::StringMap<std::string> &parameterData,
                            StageArtifacts &artifacts,
                            CUDAStageArtifacts &cuda);

/// How to find the CUDA compilers.
struct CUDAToolchainOptions {
  /// nvcc; empty: $CUDA_PATH/bin/nvcc, the build's nvcc, then PATH.
  std::string nvcc;
  /// The CUDA 12 root clang builds Volta (sm_70) stages against; empty:
  /// $PIPE_CUDA12_ROOT, then the .cuda12/root scripts/install-deps.sh
  /// assembles.
  std::string cuda12Root;
};

/// The compiler that builds a stage for one GPU architecture.
struct CUDAToolchain {
  /// The compiler's path, and how plan.json names it ("nvcc 13.0").
  std::string compiler, name;
  /// The CUDA installation it belongs to (its include and lib64).
  std::string root;
  /// clang compiling CUDA against `root` (Volta, which nvcc 13 dropped),
  /// rather than nvcc.
  bool clang = false;
};

/// The toolchain that builds `arch` ("sm_80") for stage `stage` on
/// `device` (of `kind`); an error naming the device, and the toolkit it
/// needs, where none installed can.
FailureOr<CUDAToolchain> findCUDAToolchain(Location loc, int64_t stage,
                                           StringRef device, StringRef kind,
                                           StringRef arch,
                                           const CUDAToolchainOptions &options);

/// The command that compiles a CUDA stage's `source` (and the CUDA
/// runtime's sources) for `arch` into `binary`, linked with the stage
/// driver and its libraries.
std::vector<std::string> cudaCompileCommand(const CUDAToolchain &toolchain,
                                            StringRef arch, StringRef source,
                                            StringRef binary);

} // namespace pipe
} // namespace mlir

#endif // PIPE_TARGET_CUDA_CUDATARGET_H
