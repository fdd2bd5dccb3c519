//===- StageMemoryTest.cpp - stash, optimizer state and recompute ---------===//

#include "pipe/Plan/StageMemory.h"

#include "pipe/Dialect/Pipe/IR/PipeOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::pipe;

namespace {

// One layer: matmul (16 KiB result) -> relu (16 KiB) -> reshape (alias),
// a 64 KiB parameter read twice, and a 16 KiB stage input.
class StageMemoryTest : public ::testing::Test {
protected:
  StageMemoryTest() {
    context.loadDialect<PipeDialect, func::FuncDialect>();
    module = parseSourceString<ModuleOp>(R"mlir(
pipe.parameter @w : tensor<128x128xf32> trainable
func.func @f(%x: tensor<32x128xf32>) -> tensor<64x64xf32> {
  %w = pipe.param_ref @w : tensor<128x128xf32>
  %w2 = pipe.param_ref @w : tensor<128x128xf32>
  %h = pipe.matmul %x, %w : tensor<32x128xf32>, tensor<128x128xf32>
  %r = pipe.relu %h : tensor<32x128xf32>
  %s = pipe.reshape %r : tensor<32x128xf32> to tensor<64x64xf32>
  return %s : tensor<64x64xf32>
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

constexpr int64_t kParam = 128 * 128 * 4, kAct = 32 * 128 * 4;

TEST(InFlight, OneFOneBAndGPipe) {
  StagePosition p{0, 4, 8, Schedule::OneFOneB, true};
  EXPECT_EQ(microbatchesInFlight(p), 4);
  p.index = 3;
  EXPECT_EQ(microbatchesInFlight(p), 1);
  p.microbatches = 2;
  p.index = 0;
  EXPECT_EQ(microbatchesInFlight(p), 2); // never more than M
  p.schedule = Schedule::GPipe;
  p.microbatches = 8;
  EXPECT_EQ(microbatchesInFlight(p), 8);
  p.training = false;
  EXPECT_EQ(microbatchesInFlight(p), 0);
}

TEST_F(StageMemoryTest, ParametersCountOnceAndAdamDoublesThem) {
  StagePosition p{1, 4, 8, Schedule::OneFOneB, true};
  StageMemory m = estimateStageMemory(ops, p, Recompute::None, Optimizer::Adam);
  EXPECT_EQ(m.parameters, kParam);
  EXPECT_EQ(m.gradients, kParam);
  EXPECT_EQ(m.optimizerState, 2 * kParam);
  EXPECT_EQ(estimateStageMemory(ops, p, Recompute::None, Optimizer::SGDMomentum)
                .optimizerState,
            kParam);
}

TEST_F(StageMemoryTest, StashFollowsTheScheduleAndRecompute) {
  StagePosition p{1, 4, 8, Schedule::OneFOneB, true};
  StageMemory none =
      estimateStageMemory(ops, p, Recompute::None, Optimizer::SGD);
  EXPECT_EQ(none.stashPerMicrobatch, 2 * kAct); // matmul + relu, not reshape
  EXPECT_EQ(none.microbatchesInFlight, 3);      // 1F1B: S - i
  EXPECT_EQ(none.workspace, kAct);

  StageMemory selective =
      estimateStageMemory(ops, p, Recompute::Selective, Optimizer::SGD);
  EXPECT_EQ(selective.stashPerMicrobatch, kAct + kAct); // input + matmul
  EXPECT_EQ(selective.recomputeBuffer, kAct);           // the relu

  StageMemory full =
      estimateStageMemory(ops, p, Recompute::Full, Optimizer::SGD);
  EXPECT_EQ(full.stashPerMicrobatch, kAct); // the stage input only
  EXPECT_EQ(full.recomputeBuffer, 2 * kAct);
  EXPECT_LT(full.total(), none.total());

  p.schedule = Schedule::GPipe;
  EXPECT_EQ(estimateStageMemory(ops, p, Recompute::None, Optimizer::SGD)
                .microbatchesInFlight,
            8);
}

TEST_F(StageMemoryTest, InferenceKeepsNoStash) {
  StagePosition p{0, 2, 8, Schedule::OneFOneB, false};
  StageMemory m = estimateStageMemory(ops, p, Recompute::None, Optimizer::Adam);
  EXPECT_EQ(m.gradients, 0);
  EXPECT_EQ(m.optimizerState, 0);
  EXPECT_EQ(m.total(), kParam + kAct);
}

} // namespace
