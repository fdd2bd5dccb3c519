//===- MemoryPlanTest.cpp - static buffer reuse by liveness ---------------===//

#include "pipe/Target/Common/MemoryPlan.h"

#include "pipe/Dialect/Pipe/IR/PipeOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#include "gtest/gtest.h"

#include <random>

using namespace mlir;
using namespace mlir::pipe;

namespace {

class MemoryPlanTest : public ::testing::Test {
protected:
  MemoryPlanTest() : builder(&context) {
    context.loadDialect<PipeDialect>();
    module = ModuleOp::create(builder.getUnknownLoc());
    builder.setInsertionPointToEnd(module->getBody());
  }

  /// A distinct value to key a request.
  Value value() {
    auto type = RankedTensorType::get({1}, builder.getF32Type());
    return ConstantOp::create(builder, builder.getUnknownLoc(),
                              DenseElementsAttr::get(type, 0.0f));
  }

  static bool overlap(const BufferRequest &a, const BufferRequest &b,
                      const MemoryPlan &plan) {
    bool live = a.firstStep <= b.lastStep && b.firstStep <= a.lastStep;
    int64_t x = plan.offsets.lookup(a.value), y = plan.offsets.lookup(b.value);
    bool bytes = x < y + b.bytes && y < x + a.bytes;
    return live && bytes;
  }

  MLIRContext context;
  OpBuilder builder;
  OwningOpRef<ModuleOp> module;
};

TEST_F(MemoryPlanTest, ChainReusesTwoBuffers) {
  // a -> b -> c -> d, each read only by the next step: two buffers suffice.
  SmallVector<BufferRequest> requests;
  for (int64_t i = 0; i < 4; ++i)
    requests.push_back({value(), 1024, i, i + 1});
  MemoryPlan plan = planMemory(requests);
  EXPECT_EQ(plan.totalBytes, 4096);
  EXPECT_EQ(plan.peakBytes, 2048);
  for (size_t i = 0; i < requests.size(); ++i)
    for (size_t j = i + 1; j < requests.size(); ++j)
      EXPECT_FALSE(overlap(requests[i], requests[j], plan));
}

TEST_F(MemoryPlanTest, OffsetsAreAligned) {
  SmallVector<BufferRequest> requests = {{value(), 3, 0, 1},
                                         {value(), 5, 0, 1}};
  MemoryPlan plan = planMemory(requests, 64);
  for (const BufferRequest &request : requests)
    EXPECT_EQ(plan.offsets.lookup(request.value) % 64, 0);
  EXPECT_EQ(plan.peakBytes, 128);
}

TEST_F(MemoryPlanTest, RandomLifetimesNeverCollide) {
  std::mt19937 random(7);
  SmallVector<BufferRequest> requests;
  for (int i = 0; i < 200; ++i) {
    int64_t first = random() % 100;
    requests.push_back({value(), int64_t(1 + random() % 5000), first,
                        first + int64_t(random() % 20)});
  }
  MemoryPlan plan = planMemory(requests);
  for (size_t i = 0; i < requests.size(); ++i)
    for (size_t j = i + 1; j < requests.size(); ++j)
      ASSERT_FALSE(overlap(requests[i], requests[j], plan))
          << "buffers " << i << " and " << j << " collide";
  // The peak is at least the largest set of buffers live at one step.
  int64_t needed = 0;
  for (int64_t step = 0; step < 120; ++step) {
    int64_t live = 0;
    for (const BufferRequest &r : requests)
      if (r.firstStep <= step && step <= r.lastStep)
        live += r.bytes;
    needed = std::max(needed, live);
  }
  EXPECT_GE(plan.peakBytes, needed);
  EXPECT_LT(plan.peakBytes, plan.totalBytes);
}

} // namespace
