//===- CostModel.cpp - FLOPs, bytes and time of pipe ops ------------------===//

#include "pipe/Plan/CostModel.h"

#include "pipe/Dialect/Pipe/IR/PipeOps.h"

#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::pipe;

static int64_t elements(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && type.hasStaticShape() ? type.getNumElements() : 0;
}

/// The product of `factors`, or INT64_MAX where it would overflow: a count
/// past any the planner accepts (buildLayerGraph rejects it).
static int64_t product(std::initializer_list<int64_t> factors) {
  int64_t result = 1;
  for (int64_t factor : factors)
    if (llvm::MulOverflow(result, factor, result))
      return std::numeric_limits<int64_t>::max();
  return result;
}

/// a + b, or INT64_MAX where it would overflow.
static int64_t sum(int64_t a, int64_t b) {
  int64_t result;
  return llvm::AddOverflow(a, b, result) ? std::numeric_limits<int64_t>::max()
                                         : result;
}

OpCost mlir::pipe::estimateOpCost(Operation *op) {
  OpCost cost;
  // Parameters and constants are resident, not read per op from HBM here;
  // their reads are counted where ops consume them.
  if (isa<ConstantOp, ParamRefOp, ReshapeOp>(op))
    return cost;
  for (Value operand : op->getOperands())
    cost.bytesRead += tensorBytes(operand.getType());
  for (Value result : op->getResults())
    cost.bytesWritten += tensorBytes(result.getType());

  llvm::TypeSwitch<Operation *>(op)
      .Case([&](MatMulOp o) {
        auto lhs = cast<RankedTensorType>(o.getLhs().getType());
        cost.flops =
            product({2, elements(o.getResult()), lhs.getShape().back()});
        cost.contraction = true;
      })
      .Case([&](GemmOp o) {
        auto a = cast<RankedTensorType>(o.getA().getType());
        int64_t k = a.getDimSize(o.getTransA() ? 0 : 1);
        cost.flops = product({2, elements(o.getResult()), k});
        if (o.getC())
          cost.flops = sum(cost.flops, elements(o.getResult()));
        cost.contraction = true;
      })
      .Case([&](ConvOp o) {
        auto w = cast<RankedTensorType>(o.getWeight().getType());
        // No output channels, no work (and no division by zero).
        int64_t perOutput =
            w.getDimSize(0) ? w.getNumElements() / w.getDimSize(0) : 0;
        cost.flops = product({2, elements(o.getResult()), perOutput});
        cost.contraction = true;
      })
      .Case([&](ConvTransposeOp o) {
        auto w = cast<RankedTensorType>(o.getWeight().getType());
        int64_t perInput =
            w.getDimSize(0) ? w.getNumElements() / w.getDimSize(0) : 0;
        cost.flops = product({2, elements(o.getInput()), perInput});
        cost.contraction = true;
      })
      .Case<MaxPoolOp, AveragePoolOp>([&](auto o) {
        cost.flops = elements(o.getResult());
        for (int64_t k : o.getKernelShape())
          cost.flops = product({cost.flops, k});
      })
      .Case<SoftmaxOp, LogSoftmaxOp, LayerNormOp, BatchNormOp, BatchNormTrainOp,
            InstanceNormOp, SoftmaxCrossEntropyLossOp,
            NegativeLogLikelihoodLossOp>([&](Operation *o) {
        // About five passes over the input (max/mean, exp/centre, sum/var,
        // scale, shift).
        cost.flops = product({5, elements(o->getOperand(0))});
      })
      .Case<ReduceMeanOp, ReduceSumOp, ReduceMaxOp, GlobalAveragePoolOp>(
          [&](Operation *o) { cost.flops = elements(o->getOperand(0)); })
      .Case([&](GatherOp o) {
        // Only the rows the indices pick are read (an embedding lookup
        // reads a few rows of its table, not the table).
        cost.bytesRead =
            sum(std::min(tensorBytes(o.getData().getType()), cost.bytesWritten),
                tensorBytes(o.getIndices().getType()));
      })
      .Case([&](SliceOp o) {
        cost.bytesRead =
            std::min(tensorBytes(o.getInput().getType()), cost.bytesWritten);
      })
      .Case<TransposeOp, ConcatOp, SplitOp, ExpandOp, TileOp, PadOp, CastOp,
            TriluOp>([&](Operation *) { cost.flops = 0; })
      .Default([&](Operation *o) {
        // Elementwise: one operation per result element.
        for (Value result : o->getResults())
          cost.flops = sum(cost.flops, elements(result));
      });
  return cost;
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
  double launchMs = device.isCPU() ? 1e-3 : 5e-3;
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
