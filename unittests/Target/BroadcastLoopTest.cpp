//===- BroadcastLoopTest.cpp - rows of fused broadcast loops --------------===//

#include "pipe/Target/Common/ElementwiseFusion.h"

#include "gtest/gtest.h"

#include <vector>

using namespace mlir;
using namespace mlir::pipe;

namespace {

BroadcastLoop split(std::vector<int64_t> shape,
                    std::vector<std::vector<int64_t>> operands) {
  SmallVector<ArrayRef<int64_t>> refs;
  for (const std::vector<int64_t> &operand : operands)
    refs.push_back(operand);
  return splitBroadcastLoop(shape, refs);
}

TEST(BroadcastLoop, SameShapesAreOneRow) {
  BroadcastLoop loop = split({2, 3, 4}, {{2, 3, 4}, {2, 3, 4}});
  EXPECT_EQ(loop.outer, 1);
  EXPECT_EQ(loop.inner, 24);
  EXPECT_EQ(loop.splitDim, 0u);
}

TEST(BroadcastLoop, ChannelScaleIsFixedOverEachImagePlane) {
  // Squeeze-and-excitation: [N, C, H, W] * [N, C, 1, 1].
  BroadcastLoop loop = split({2, 672, 7, 7}, {{2, 672, 7, 7}, {2, 672, 1, 1}});
  EXPECT_EQ(loop.outer, 2 * 672);
  EXPECT_EQ(loop.inner, 49);
  EXPECT_EQ(loop.splitDim, 2u);
}

TEST(BroadcastLoop, BiasIsContiguousAlongRows) {
  // [B, S, D] + [D], and a lower-rank operand.
  BroadcastLoop loop = split({2, 197, 768}, {{2, 197, 768}, {768}});
  EXPECT_EQ(loop.outer, 2 * 197);
  EXPECT_EQ(loop.inner, 768);
  EXPECT_EQ(loop.splitDim, 2u);
}

TEST(BroadcastLoop, RowStatisticIsFixedAlongRows) {
  BroadcastLoop loop = split({4, 8, 16}, {{4, 8, 16}, {4, 8, 1}});
  EXPECT_EQ(loop.outer, 32);
  EXPECT_EQ(loop.inner, 16);
}

TEST(BroadcastLoop, UnitDimensionsJoinTheRow) {
  // A size-1 dimension of the result neither breaks nor grows a row.
  BroadcastLoop loop = split({3, 1, 5}, {{3, 1, 5}, {1, 1, 5}});
  EXPECT_EQ(loop.outer, 3);
  EXPECT_EQ(loop.inner, 5);
  EXPECT_EQ(loop.splitDim, 1u);
}

TEST(BroadcastLoop, OuterProductRowsAlongTheContiguousOperand) {
  // [M, 1] * [1, N]: within a row of N, the first operand is fixed and the
  // second contiguous; across rows the second would be fixed, so a row
  // ends there.
  BroadcastLoop loop = split({6, 7}, {{6, 1}, {1, 7}});
  EXPECT_EQ(loop.inner, 7);
  EXPECT_EQ(loop.outer, 6);
}

TEST(BroadcastLoop, EmptyResult) {
  BroadcastLoop loop = split({0, 4}, {{0, 4}, {4}});
  EXPECT_EQ(loop.outer * loop.inner, 0);
}

TEST(BroadcastLoop, Strides) {
  EXPECT_EQ(broadcastStrides({2, 3, 4}, {3, 1}),
            (SmallVector<int64_t>{0, 1, 0}));
  EXPECT_EQ(broadcastStrides({2, 3, 4}, {2, 3, 4}),
            (SmallVector<int64_t>{12, 4, 1}));
  EXPECT_EQ(broadcastStrides({5}, {}), (SmallVector<int64_t>{0}));
}

} // namespace
