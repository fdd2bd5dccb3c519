//===- CostModelTest.cpp - FLOPs, bytes and roofline times ----------------===//

#include "pipe/Plan/CostModel.h"

#include "pipe/Dialect/Pipe/IR/PipeOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace mlir;
using namespace mlir::pipe;

namespace {

class CostModelTest : public ::testing::Test {
protected:
  CostModelTest() {
    context.loadDialect<PipeDialect, func::FuncDialect>();
    module = parseSourceString<ModuleOp>(R"mlir(
func.func @f(%a: tensor<2x64x128xf32>, %b: tensor<128x32xf32>,
             %x: tensor<1x3x32x32xf32>, %w: tensor<16x3x3x3xf32>,
             %m: tensor<8x4xf32>, %n: tensor<16x4xf32>, %c: tensor<16xf32>,
             %big: tensor<8192x8192xbf16>) {
  %0 = pipe.matmul %a, %b : tensor<2x64x128xf32>, tensor<128x32xf32>
  %1 = pipe.conv %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] group 1 : tensor<1x3x32x32xf32>, tensor<16x3x3x3xf32>
  %2 = pipe.gemm %m, %n, %c trans_b : tensor<8x4xf32>, tensor<16x4xf32>, tensor<16xf32>
  %3 = pipe.add %a, %a : tensor<2x64x128xf32>, tensor<2x64x128xf32>
  %4 = pipe.matmul %big, %big : tensor<8192x8192xbf16>, tensor<8192x8192xbf16>
  %5 = pipe.transpose %a perm [0, 2, 1] : tensor<2x64x128xf32>
  return
}
)mlir",
                                         &context);
    for (Operation &op : module->lookupSymbol<func::FuncOp>("f")
                             .getBody()
                             .front()
                             .without_terminator())
      ops.push_back(&op);
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  SmallVector<Operation *> ops;
};

TEST_F(CostModelTest, FlopsFromShapes) {
  ASSERT_EQ(ops.size(), 6u);
  OpCost matmul = estimateOpCost(ops[0]);
  EXPECT_EQ(matmul.flops, 2 * (2 * 64 * 32) * 128);
  EXPECT_TRUE(matmul.contraction);
  EXPECT_EQ(matmul.bytesRead, (2 * 64 * 128 + 128 * 32) * 4);
  EXPECT_EQ(matmul.bytesWritten, 2 * 64 * 32 * 4);
  // conv: 2 * outputs * (C/group * kH * kW).
  EXPECT_EQ(estimateOpCost(ops[1]).flops, 2 * (16 * 32 * 32) * (3 * 3 * 3));
  // gemm with C: 2MNK + MN.
  EXPECT_EQ(estimateOpCost(ops[2]).flops, 2 * 8 * 16 * 4 + 8 * 16);
  OpCost add = estimateOpCost(ops[3]);
  EXPECT_EQ(add.flops, 2 * 64 * 128);
  EXPECT_FALSE(add.contraction);
  EXPECT_EQ(estimateOpCost(ops[5]).flops, 0);
  // bf16 counts 2 bytes an element.
  EXPECT_EQ(estimateOpCost(ops[4]).bytesWritten, 8192LL * 8192 * 2);
}

TEST(CostModel, LookupsReadWhatTheyPick) {
  MLIRContext context;
  context.loadDialect<PipeDialect, func::FuncDialect>();
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(R"mlir(
func.func @f(%table: tensor<50000x768xf32>, %ids: tensor<1x128xi64>,
             %x: tensor<1x512x7x7xf32>) {
  %0 = pipe.gather %table, %ids axis 0 : tensor<50000x768xf32>, tensor<1x128xi64>
  %1 = pipe.slice %table offsets [0, 0] sizes [16, 768] strides [1, 1] : tensor<50000x768xf32>
  %2 = pipe.global_average_pool %x : tensor<1x512x7x7xf32>
  return
}
)mlir",
                                                             &context);
  SmallVector<Operation *> ops;
  for (Operation &op :
       module->lookupSymbol<func::FuncOp>("f").getBody().front())
    ops.push_back(&op);
  // An embedding lookup reads its 128 rows and the indices, not the table.
  OpCost gather = estimateOpCost(ops[0]);
  EXPECT_EQ(gather.bytesRead, 128 * 768 * 4 + 128 * 8);
  EXPECT_EQ(gather.bytesWritten, 128 * 768 * 4);
  EXPECT_EQ(estimateOpCost(ops[1]).bytesRead, 16 * 768 * 4);
  // A global average: one operation per input element.
  EXPECT_EQ(estimateOpCost(ops[2]).flops, 512 * 7 * 7);
}

TEST_F(CostModelTest, LargeGemmRunsAtEightyPercentOfPeak) {
  const DeviceSpec &a100 = *lookupDeviceKind("A100-80GB");
  OpCost cost = estimateOpCost(ops[4]);
  double expected = 2.0 * 8192 * 8192 * 8192 / (312e12 * 0.80) * 1e3;
  EXPECT_NEAR(estimateOpTimeMs(cost, a100, Precision::BF16), expected + 5e-3,
              1e-9);
  // T4 has no bf16 tensor cores: the same GEMM is far slower.
  const DeviceSpec &t4 = *lookupDeviceKind("T4");
  EXPECT_GT(estimateOpTimeMs(cost, t4, Precision::BF16),
            30 * estimateOpTimeMs(cost, a100, Precision::BF16));
}

TEST_F(CostModelTest, ElementwiseIsMemoryBound) {
  const DeviceSpec &h100 = *lookupDeviceKind("H100-SXM");
  OpCost add = estimateOpCost(ops[3]);
  double memoryMs =
      double(add.bytesRead + add.bytesWritten) / (3350e9 * 0.80) * 1e3;
  EXPECT_NEAR(estimateOpTimeMs(add, h100, Precision::FP32), memoryMs + 5e-3,
              1e-12);
}

TEST_F(CostModelTest, SmallContractionsAreLessEfficient) {
  const DeviceSpec &a100 = *lookupDeviceKind("A100-80GB");
  OpCost small = estimateOpCost(ops[0]);
  OpCost large = estimateOpCost(ops[4]);
  double smallRate =
      small.flops / estimateOpTimeMs(small, a100, Precision::FP32);
  double largeRate =
      large.flops / estimateOpTimeMs(large, a100, Precision::FP32);
  EXPECT_LT(smallRate, largeRate);
}

/// A CPU's few cores fill at smaller contractions than a GPU: a 256^3 GEMM
/// runs at 0.80 of the device's peak, a 64^3 one at 0.80 * (1/64)^(1/8),
/// the eighth root of its share of 2^25 FLOPs (OpenBLAS SGEMM measured on
/// two cores, docs/benchmarks.md), where on an A100 a 1024^3 GEMM gets
/// 0.80 * sqrt(2^31 / 2^33) = 0.40 and the 256^3 one the floor, 0.05.
TEST(CostModel, CpuContractionsFillSooner) {
  DeviceSpec cpu = *lookupDeviceKind("cpu");
  cpu.cores = 2;
  cpu.peak.fp32 *= 2;
  auto efficiency = [](const DeviceSpec &device, int64_t n) {
    OpCost gemm;
    gemm.flops = 2 * n * n * n;
    gemm.contraction = true;
    double launchMs = device.isCPU() ? 1e-3 : 5e-3;
    double ms = estimateOpTimeMs(gemm, device, Precision::FP32) - launchMs;
    return double(gemm.flops) / (device.peak.fp32 * 1e12) / (ms * 1e-3);
  };
  EXPECT_NEAR(efficiency(cpu, 256), 0.80, 1e-9);
  EXPECT_NEAR(efficiency(cpu, 512), 0.80, 1e-9);
  EXPECT_NEAR(efficiency(cpu, 64), 0.80 * std::pow(1.0 / 64, 0.125), 1e-9);
  const DeviceSpec &a100 = *lookupDeviceKind("A100-80GB");
  EXPECT_NEAR(efficiency(a100, 256), 0.05, 1e-9);
  EXPECT_NEAR(efficiency(a100, 1024), 0.40, 1e-9);
  EXPECT_NEAR(efficiency(a100, 2048), 0.80, 1e-9);
}

TEST(Transfer, LatencyPlusBandwidth) {
  LinkSpec link{"test", 25, 5};
  EXPECT_NEAR(transferTimeMs(25'000'000, link), 5e-3 + 1.0, 1e-12);
  EXPECT_NEAR(transferTimeMs(0, link), 5e-3, 1e-12);
}

} // namespace

/// A run of elementwise ops is priced as the targets run it: one fused
/// step that reads each outside operand once, writes its last result, and
/// launches once.
TEST(StepCosts, FusedElementwiseRunsAreOneKernel) {
  MLIRContext context;
  context.loadDialect<PipeDialect, func::FuncDialect>();
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(R"mlir(
func.func @f(%x: tensor<256xf32>, %b: tensor<256xf32>) -> (tensor<256xf32>, tensor<256xf32>) {
  %0 = pipe.add %x, %b : tensor<256xf32>, tensor<256xf32>
  %1 = pipe.relu %0 : tensor<256xf32>
  %2 = pipe.tanh %1 : tensor<256xf32>
  %3 = pipe.softmax %2 axis 0 : tensor<256xf32>
  %4 = pipe.exp %3 : tensor<256xf32>
  return %4, %3 : tensor<256xf32>, tensor<256xf32>
}
)mlir",
                                                             &context);
  ASSERT_TRUE(module);
  Block &body = module->lookupSymbol<func::FuncOp>("f").getBody().front();
  SmallVector<Operation *> ops;
  for (Operation &op : body.without_terminator())
    ops.push_back(&op);
  llvm::DenseMap<Operation *, OpCost> costs = estimateStepCosts(ops);
  ASSERT_EQ(costs.size(), ops.size());
  const int64_t bytes = 256 * 4;
  // add, relu, tanh: one step.
  EXPECT_TRUE(costs[ops[0]].launches);
  EXPECT_EQ(costs[ops[0]].bytesRead, 2 * bytes);
  EXPECT_EQ(costs[ops[0]].bytesWritten, 0);
  EXPECT_FALSE(costs[ops[1]].launches);
  EXPECT_EQ(costs[ops[1]].bytesRead, 0);
  EXPECT_EQ(costs[ops[1]].bytesWritten, 0);
  EXPECT_FALSE(costs[ops[2]].launches);
  EXPECT_EQ(costs[ops[2]].bytesRead, 0);
  EXPECT_EQ(costs[ops[2]].bytesWritten, bytes);
  // softmax is a kernel of its own; exp alone is a step of one op.
  EXPECT_TRUE(costs[ops[3]].launches);
  EXPECT_EQ(costs[ops[3]].bytesRead, estimateOpCost(ops[3]).bytesRead);
  EXPECT_TRUE(costs[ops[4]].launches);
  EXPECT_EQ(costs[ops[4]].bytesRead, bytes);
  EXPECT_EQ(costs[ops[4]].bytesWritten, bytes);
  // The fused ops pay no launch: on a GPU, 5 us less each.
  DeviceSpec gpu = *lookupDeviceKind("H100-SXM");
  OpCost launched = costs[ops[2]];
  launched.launches = true;
  EXPECT_NEAR(estimateOpTimeMs(launched, gpu, Precision::FP32) -
                  estimateOpTimeMs(costs[ops[2]], gpu, Precision::FP32),
              5e-3, 1e-12);
}
