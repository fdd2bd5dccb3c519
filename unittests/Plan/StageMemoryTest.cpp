//===- StageMemoryTest.cpp - stash, optimizer state and recompute ---------===//

#include "pipe/Plan/PlanProblem.h"

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
    auto built = buildLayerGraph(module->lookupSymbol<func::FuncOp>("f"));
    EXPECT_TRUE(bool(built));
    graph = std::move(*built);
  }

  /// The memory of the whole function as stage 1 of 4 (two stages after
  /// it), with M = 8.
  StageMemory memory(Recompute recompute, Optimizer optimizer,
                     Schedule schedule = Schedule::OneFOneB,
                     bool training = true) {
    PlanOptions options;
    options.training = training;
    options.schedule = schedule;
    options.microbatches = 8;
    options.optimizer = optimizer;
    PlanProblem problem(graph, cluster, options);
    return problem.stageMemory(0, problem.numLayers(), 2, recompute);
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  LayerGraph graph;
  Cluster cluster = Cluster::hostCPU(2, 24);
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

TEST_F(StageMemoryTest, LayersAreOpsWithoutNodeNames) {
  ASSERT_EQ(graph.layers.size(), 3u); // matmul, relu, reshape
  EXPECT_EQ(graph.layers[0].contractionBytes, kAct);
  EXPECT_EQ(graph.layers[2].stashBytes, 0); // reshapes alias
  EXPECT_EQ(graph.cutBytes(), (std::vector<int64_t>{kAct, kAct}));
}

TEST_F(StageMemoryTest, ParametersCountOnceAndAdamDoublesThem) {
  StageMemory m = memory(Recompute::None, Optimizer::Adam);
  EXPECT_EQ(m.parameters, kParam);
  EXPECT_EQ(m.gradients, kParam);
  EXPECT_EQ(m.optimizerState, 2 * kParam);
  EXPECT_EQ(memory(Recompute::None, Optimizer::SGDMomentum).optimizerState,
            kParam);
}

TEST_F(StageMemoryTest, StashFollowsTheScheduleAndRecompute) {
  // The input (the weight's gradient reads it), matmul and relu, not the
  // reshape.
  StageMemory none = memory(Recompute::None, Optimizer::SGD);
  EXPECT_EQ(none.stashPerMicrobatch, 3 * kAct);
  EXPECT_EQ(none.microbatchesInFlight, 3); // 1F1B: S - i
  EXPECT_EQ(none.workspace, 2 * kAct);     // the matmul's input and result

  StageMemory selective = memory(Recompute::Selective, Optimizer::SGD);
  EXPECT_EQ(selective.stashPerMicrobatch, kAct + kAct); // input + matmul
  EXPECT_EQ(selective.recomputeBuffer, kAct);           // the relu

  StageMemory full = memory(Recompute::Full, Optimizer::SGD);
  EXPECT_EQ(full.stashPerMicrobatch, kAct); // the stage input only
  EXPECT_EQ(full.recomputeBuffer, 2 * kAct);
  EXPECT_LT(full.total(), selective.total());
  EXPECT_LT(selective.total(), none.total());

  EXPECT_EQ(memory(Recompute::None, Optimizer::SGD, Schedule::GPipe)
                .microbatchesInFlight,
            8);
}

TEST_F(StageMemoryTest, InferenceKeepsNoStash) {
  StageMemory m = memory(Recompute::None, Optimizer::Adam, Schedule::OneFOneB,
                         /*training=*/false);
  EXPECT_EQ(m.gradients, 0);
  EXPECT_EQ(m.optimizerState, 0);
  // The parameter, and the matmul's input and result while it runs.
  EXPECT_EQ(m.total(), kParam + 2 * kAct);
}

TEST(StageMemory, AReshapedParameterIsNoWorkspace) {
  MLIRContext context;
  context.loadDialect<PipeDialect, func::FuncDialect>();
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(R"mlir(
pipe.parameter @w : tensor<16384xf32> trainable
func.func @f(%x: tensor<32x128xf32>) -> tensor<32x128xf32> {
  %w = pipe.param_ref @w : tensor<16384xf32>
  %m = pipe.reshape %w : tensor<16384xf32> to tensor<128x128xf32>
  %y = pipe.matmul %x, %m : tensor<32x128xf32>, tensor<128x128xf32>
  return %y : tensor<32x128xf32>
}
)mlir",
                                                             &context);
  llvm::Expected<LayerGraph> graph =
      buildLayerGraph(module->lookupSymbol<func::FuncOp>("f"));
  ASSERT_TRUE(bool(graph)) << llvm::toString(graph.takeError());
  // The matmul's input and result; the weight counts as a parameter only.
  for (const PlanLayer &layer : graph->layers)
    EXPECT_LE(layer.workspaceBytes, 2 * kAct);
  EXPECT_EQ(graph->layers.back().workspaceBytes, 2 * kAct);
}

/// Three layers whose stash reads are given (plus `filler` layers that read
/// nothing): layer 0 computes a (a contraction, 100 bytes), which its own
/// gradient reads and layer 1's op b = f(a) (10 bytes) reads; layer 2's
/// gradient reads b. Under selective and full recompute, a stage ending
/// past layer 2 rebuilds b, and needs a for it.
static LayerGraph derivedStashChain(unsigned filler) {
  constexpr unsigned kNever = StashRead::kNeverNeeded;
  LayerGraph graph;
  graph.derivedBackward = graph.derivedStash = true;
  graph.layers.resize(3 + filler);
  graph.values.push_back({100, 0, /*contraction=*/true});
  graph.values.back().stashReads = {StashRead{0, {0, 0, 0}},
                                    StashRead{1, {kNever, 2, 2}}};
  graph.values.push_back({10, 1, /*contraction=*/false});
  graph.values.back().stashReads = {StashRead{2, {2, 2, 2}}};
  graph.layers[1].inputs = {0};
  graph.layers[2].inputs = {1};
  return graph;
}

TEST(DerivedStash, KeepsWhatTheBackwardPassAndRecomputeRead) {
  // Past kMaxStashTableLayers the stash is summed per range, not tabled:
  // both agree.
  for (unsigned filler : {0u, 2500u, 4200u}) {
    SCOPED_TRACE(filler);
    LayerGraph graph = derivedStashChain(filler);
    PlanOptions options;
    options.training = true;
    options.microbatches = 4;
    PlanProblem problem(graph, Cluster::hostCPU(2, 24), options);
    auto stash = [&](unsigned begin, unsigned end, Recompute recompute) {
      return problem.stageMemory(begin, end, 0, recompute).stashPerMicrobatch;
    };
    // Without recompute, what the gradients read.
    EXPECT_EQ(stash(0, 1, Recompute::None), 100);
    EXPECT_EQ(stash(0, 3, Recompute::None), 110);
    EXPECT_EQ(stash(1, 3, Recompute::None), 10);
    EXPECT_EQ(stash(1, 2, Recompute::None), 0);
    // Selective keeps a, which it computes or receives, and rebuilds b
    // from it; b it keeps only where it receives it.
    EXPECT_EQ(stash(0, 3, Recompute::Selective), 100);
    EXPECT_EQ(problem.stageMemory(0, 3, 0, Recompute::Selective)
                  .recomputeBuffer,
              10);
    EXPECT_EQ(stash(1, 3, Recompute::Selective), 100);
    EXPECT_EQ(stash(1, 2, Recompute::Selective), 0);
    EXPECT_EQ(stash(2, 3, Recompute::Selective), 10);
    // Full keeps only what it receives, and only what it needs; it
    // rebuilds what its gradients read and it computes.
    EXPECT_EQ(stash(0, 3, Recompute::Full), 0);
    EXPECT_EQ(problem.stageMemory(0, 3, 0, Recompute::Full).recomputeBuffer,
              110);
    EXPECT_EQ(problem.stageMemory(1, 3, 0, Recompute::Full).recomputeBuffer,
              10);
    EXPECT_EQ(problem.stageMemory(0, 3, 0, Recompute::None).recomputeBuffer,
              0);
    EXPECT_EQ(stash(1, 3, Recompute::Full), 100);
    EXPECT_EQ(stash(1, 2, Recompute::Full), 0);
    EXPECT_EQ(stash(2, 3, Recompute::Full), 10);
    if (filler)
      EXPECT_EQ(stash(1, 3 + filler, Recompute::Full), 100);
  }
}

/// The planner's stash of a model it derives the backward pass of is what
/// --pipe-split-stages keeps (test/Transforms/pipe-plan-stash.mlir checks
/// it on stages): here, for the whole model as one stage.
TEST(DerivedStash, DeriveBackwardCostsRecordsTheReads) {
  MLIRContext context;
  context.loadDialect<PipeDialect, func::FuncDialect>();
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(R"mlir(
pipe.parameter @w : tensor<128x128xf32> trainable
func.func @main(%x: tensor<32x128xf32>) -> (tensor<f32> {pipe.name = "loss"}) {
  %w = pipe.param_ref @w : tensor<128x128xf32>
  %h = pipe.matmul %x, %w : tensor<32x128xf32>, tensor<128x128xf32>
  %t = pipe.tanh %h : tensor<32x128xf32>
  %l = pipe.reduce_mean %t axes [0, 1] : tensor<32x128xf32>
  return %l : tensor<f32>
}
)mlir",
                                                             &context);
  ASSERT_TRUE(module);
  auto main = module->lookupSymbol<func::FuncOp>("main");
  llvm::Expected<LayerGraph> graph = buildLayerGraph(main);
  ASSERT_TRUE(bool(graph)) << llvm::toString(graph.takeError());
  std::string estimatedBecause;
  ASSERT_FALSE(bool(deriveBackwardCosts(*module, *graph, estimatedBecause)));
  ASSERT_TRUE(graph->derivedStash) << estimatedBecause;
  PlanOptions options;
  options.training = true;
  PlanProblem problem(*graph, Cluster::hostCPU(2, 24), options);
  unsigned end = problem.numLayers();
  // tanh's gradient reads its result; the weight's reads x, a graph
  // input, which the stage does not stash.
  EXPECT_EQ(problem.stageMemory(0, end, 0, Recompute::None).stashPerMicrobatch,
            kAct);
  // Selective keeps the matmul's result to rebuild tanh's; full keeps
  // nothing, and rebuilds from x.
  EXPECT_EQ(
      problem.stageMemory(0, end, 0, Recompute::Selective).stashPerMicrobatch,
      kAct);
  EXPECT_EQ(problem.stageMemory(0, end, 0, Recompute::Full).stashPerMicrobatch,
            0);
}

} // namespace
