//===- CostModel.cpp - FLOPs, bytes and time of pipe ops ------------------===//

#include "pipe/Plan/CostModel.h"

#include "pipe/Dialect/Pipe/IR/PipeOps.h"
#include "pipe/Target/Common/ElementwiseFusion.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::pipe;

OpCost mlir::pipe::estimateOpCost(Operation *op) {
  // Each op says what it costs where it is defined (CostOpInterface); an op
  // of another dialect gets the interface's defaults.
  OpCost cost;
  cost.flops = opFlops(op);
  if (auto costly = dyn_cast<CostOpInterface>(op)) {
    cost.bytesRead = costly.getBytesRead();
    cost.bytesWritten = costly.getBytesWritten();
    cost.contraction = costly.isContraction();
    return cost;
  }
  cost.bytesRead = operandBytes(op);
  cost.bytesWritten = resultBytes(op);
  return cost;
}

llvm::DenseMap<Operation *, OpCost>
mlir::pipe::estimateStepCosts(ArrayRef<Operation *> all) {
  SmallVector<Operation *> ops;
  for (Operation *op : all)
    if (!isa<ParamRefOp, ConstantOp>(op) &&
        !op->hasTrait<OpTrait::IsTerminator>())
      ops.push_back(op);
  llvm::DenseMap<Operation *, OpCost> costs;
  for (ArrayRef<Operation *> step : groupSteps(ops)) {
    for (auto [index, op] : llvm::enumerate(step)) {
      OpCost cost = estimateOpCost(op);
      if (step.size() > 1) {
        // Inside a fused step, a value computed by the step before is a
        // register: only operands from outside the step are read, and only
        // the last result is written.
        cost.bytesRead = 0;
        for (Value operand : op->getOperands())
          if (index == 0 || operand.getDefiningOp() != step[index - 1])
            cost.bytesRead += tensorBytes(operand.getType());
        if (index + 1 != step.size())
          cost.bytesWritten = 0;
        cost.launches = index == 0;
      }
      if (isa<ReshapeOp>(op))
        cost.launches = false;
      costs[op] = cost;
    }
  }
  return costs;
}

double mlir::pipe::peakTflops(const DeviceSpec &device, Precision precision) {
  switch (precision) {
  case Precision::FP32:
    return device.peak.fp32;
  case Precision::TF32:
    return device.peak.tf32;
  case Precision::BF16:
    return device.peak.bf16;
  case Precision::FP16:
    return device.peak.fp16;
  }
  return device.peak.fp32;
}

double mlir::pipe::estimateOpTimeMs(const OpCost &cost,
                                    const DeviceSpec &device,
                                    Precision precision) {
  // Contractions reach 0.80 of the peak once they fill the device: at 2^33
  // FLOPs on a GPU (a 2048 x 2048 x 1024 GEMM), below which the efficiency
  // falls with the square root of the size; at 2^25 on a CPU (a 256^3
  // GEMM), whose few cores fill sooner, below which it falls with the
  // eighth root (OpenBLAS SGEMM on this project's 2-core machine:
  // docs/benchmarks.md, "The cost model against measured runs").
  constexpr double kGpuFull = 8589934592.0, kCpuFull = 33554432.0;
  double efficiency = 0.25;
  double peak = device.peak.fp32;
  if (cost.contraction) {
    peak = peakTflops(device, precision);
    bool cpu = device.isCPU();
    double size =
        std::min(1.0, double(cost.flops) / (cpu ? kCpuFull : kGpuFull));
    efficiency =
        std::max(0.05, 0.80 * (cpu ? std::pow(size, 0.125) : std::sqrt(size)));
  }
  double computeMs = cost.flops / (peak * 1e12 * efficiency) * 1e3;
  double memoryMs = double(cost.bytesRead + cost.bytesWritten) /
                    (device.memoryBandwidthGBps * 1e9 * 0.80) * 1e3;
  double launchMs = !cost.launches ? 0.0 : device.isCPU() ? 1e-3 : 5e-3;
  return std::max(computeMs, memoryMs) + launchMs;
}

double mlir::pipe::transferTimeMs(int64_t bytes, const LinkSpec &link) {
  return link.latencyUs * 1e-3 +
         double(bytes) / (link.bandwidthGBps * 1e9) * 1e3;
}

OpCost mlir::pipe::backwardCost(const OpCost &forward) {
  OpCost cost = forward;
  cost.flops *= 2;
  cost.bytesRead *= 2;
  cost.bytesWritten *= 2;
  return cost;
}
