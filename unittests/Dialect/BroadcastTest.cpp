//===- BroadcastTest.cpp - numpy broadcasting rules -----------------------===//

#include "pipe/Dialect/Pipe/IR/PipeOps.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::pipe;

namespace {

SmallVector<int64_t> broadcast(ArrayRef<ArrayRef<int64_t>> shapes) {
  FailureOr<SmallVector<int64_t>> result = broadcastShapes(shapes);
  EXPECT_TRUE(succeeded(result));
  return succeeded(result) ? *result : SmallVector<int64_t>{};
}

TEST(Broadcast, EqualShapes) {
  EXPECT_EQ(broadcast({{2, 3}, {2, 3}}), (SmallVector<int64_t>{2, 3}));
}

TEST(Broadcast, TrailingAlignment) {
  EXPECT_EQ(broadcast({{4, 1, 3}, {5, 1}}), (SmallVector<int64_t>{4, 5, 3}));
}

TEST(Broadcast, ScalarWithAnything) {
  EXPECT_EQ(broadcast({{}, {7, 2}}), (SmallVector<int64_t>{7, 2}));
  EXPECT_EQ(broadcast({{}, {}}), (SmallVector<int64_t>{}));
}

TEST(Broadcast, ThreeOperands) {
  EXPECT_EQ(broadcast({{2, 1, 1}, {1, 3, 1}, {4}}),
            (SmallVector<int64_t>{2, 3, 4}));
}

TEST(Broadcast, ZeroExtentBroadcastsFromOne) {
  EXPECT_EQ(broadcast({{0, 3}, {1, 3}}), (SmallVector<int64_t>{0, 3}));
}

TEST(Broadcast, IncompatibleExtentsFail) {
  EXPECT_TRUE(failed(broadcastShapes({{2, 3}, {3, 2}})));
  EXPECT_TRUE(failed(broadcastShapes({{0}, {2}})));
}

TEST(FormatShape, Brackets) {
  EXPECT_EQ(formatShape({2, 3, 4}), "[2, 3, 4]");
  EXPECT_EQ(formatShape({}), "[]");
}

} // namespace
