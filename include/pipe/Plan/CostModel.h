//===- CostModel.h - FLOPs, bytes and time of pipe ops ----------*- C++ -*-===//
//
// The planner's cost model for one op on one device: FLOPs and bytes from
// the IR, and a roofline time with documented efficiency factors. See
// docs/planner.md.
//
//===----------------------------------------------------------------------===//

#ifndef PIPE_PLAN_COSTMODEL_H
#define PIPE_PLAN_COSTMODEL_H

#include "pipe/Plan/Cluster.h"

#include "mlir/IR/Block.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir {
namespace pipe {

/// The work of one op, independent of the device.
struct OpCost {
  /// Floating-point operations (a multiply-add counts 2).
  int64_t flops = 0;
  /// Bytes the op reads (operands) and writes (results).
  int64_t bytesRead = 0, bytesWritten = 0;
  /// Whether the op is a contraction (matmul, gemm, conv) that runs on
  /// tensor cores / BLAS at the device's compute peak.
  bool contraction = false;
  /// Whether the op starts a kernel (a loop) of its own: not the ops after
  /// the first of a fused elementwise step, which pay no launch.
  bool launches = true;
};

/// Counts the FLOPs and bytes of `op` from its types and attributes.
OpCost estimateOpCost(Operation *op);

/// The cost of every op of `ops` (in program order) as the targets run
/// them: a run of elementwise ops that fuses into one step (groupSteps, as
/// both targets fuse) reads each operand from outside the run once, writes
/// only its last result, and starts one kernel; a reshape, an alias, starts
/// none. Parameter references, constants and terminators are left out.
llvm::DenseMap<Operation *, OpCost>
estimateStepCosts(ArrayRef<Operation *> ops);

/// The estimate of an op's backward pass when its gradient ops are not
/// known: twice its forward pass. For a contraction that is exact: it
/// computes the input and the weight gradients, two products of the
/// forward's size. Other ops read the incoming gradient and the saved
/// operands and write a gradient: about twice the traffic of the forward.
OpCost backwardCost(const OpCost &forward);

/// The precision the model computes in.
enum class Precision { FP32, TF32, BF16, FP16 };

/// Peak TFLOP/s of `device` in `precision`.
double peakTflops(const DeviceSpec &device, Precision precision);

/// Roofline time of `cost` on `device` in milliseconds: the larger of the
/// compute time (FLOPs over peak times the compute efficiency) and the
/// memory time (bytes over bandwidth times the memory efficiency).
///
/// Efficiency factors (docs/planner.md): contractions reach 0.80 of peak
/// once they fill the device, at 2^33 FLOPs on a GPU (a 2048 x 2048 x 1024
/// GEMM) with the square root of their size below that, at 2^25 on a CPU
/// (a 256^3 GEMM) with the eighth root, to no less than 0.05; other ops
/// reach 0.25 of the compute peak (no tensor cores); memory
/// traffic reaches 0.80 of the bandwidth. A fixed launch overhead is added
/// per kernel (an op that `launches`): 5 us on GPUs, 1 us on CPUs.
double estimateOpTimeMs(const OpCost &cost, const DeviceSpec &device,
                        Precision precision);

/// Time to move `bytes` over `link`, in milliseconds: latency plus bytes
/// over bandwidth.
double transferTimeMs(int64_t bytes, const LinkSpec &link);

} // namespace pipe
} // namespace mlir

#endif // PIPE_PLAN_COSTMODEL_H
