//===- TypeInferenceTest.cpp - result types built through the C++ API -----===//
//
// Ops built with the inferring builders get the shapes ONNX prescribes.
//
//===----------------------------------------------------------------------===//

#include "pipe/Dialect/Pipe/IR/PipeOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::pipe;

namespace {

class TypeInferenceTest : public ::testing::Test {
protected:
  TypeInferenceTest() : builder(&context) {
    context.loadDialect<PipeDialect, func::FuncDialect>();
    module = ModuleOp::create(builder.getUnknownLoc());
    builder.setInsertionPointToEnd(module->getBody());
  }

  /// A constant of the given shape, to feed ops under test.
  Value tensor(ArrayRef<int64_t> shape, Type element = {}) {
    if (!element)
      element = builder.getF32Type();
    auto type = RankedTensorType::get(shape, element);
    Attribute zero = isa<FloatType>(element)
                         ? Attribute(builder.getFloatAttr(element, 0.0))
                         : Attribute(builder.getIntegerAttr(element, 0));
    return ConstantOp::create(builder, builder.getUnknownLoc(),
                              SplatElementsAttr::get(type, zero));
  }

  static ArrayRef<int64_t> shapeOf(Value value) {
    return cast<RankedTensorType>(value.getType()).getShape();
  }

  MLIRContext context;
  OpBuilder builder;
  OwningOpRef<ModuleOp> module;
};

TEST_F(TypeInferenceTest, MatMulBatchBroadcast) {
  auto op = MatMulOp::create(builder, builder.getUnknownLoc(),
                             tensor({5, 1, 2, 3}), tensor({4, 3, 7}));
  EXPECT_EQ(shapeOf(op), (ArrayRef<int64_t>{5, 4, 2, 7}));
}

TEST_F(TypeInferenceTest, MatMulVectorPromotion) {
  auto op = MatMulOp::create(builder, builder.getUnknownLoc(), tensor({3}),
                             tensor({2, 3, 4}));
  EXPECT_EQ(shapeOf(op), (ArrayRef<int64_t>{2, 4}));
  auto dot = MatMulOp::create(builder, builder.getUnknownLoc(), tensor({3}),
                              tensor({3}));
  EXPECT_EQ(shapeOf(dot), (ArrayRef<int64_t>{}));
}

TEST_F(TypeInferenceTest, ConvStridedPaddedDilated) {
  auto op = ConvOp::create(
      builder, builder.getUnknownLoc(), tensor({2, 4, 9, 9}),
      tensor({8, 2, 3, 3}), Value(), builder.getDenseI64ArrayAttr({2, 2}),
      builder.getDenseI64ArrayAttr({1, 1, 1, 1}),
      builder.getDenseI64ArrayAttr({2, 2}), builder.getI64IntegerAttr(2));
  // (9 + 2 - (2 * 2 + 1)) / 2 + 1 = 4
  EXPECT_EQ(shapeOf(op), (ArrayRef<int64_t>{2, 8, 4, 4}));
}

TEST_F(TypeInferenceTest, MaxPoolCeilMode) {
  auto op = MaxPoolOp::create(
      builder, builder.getUnknownLoc(), tensor({1, 1, 5, 5}),
      builder.getDenseI64ArrayAttr({2, 2}),
      builder.getDenseI64ArrayAttr({2, 2}),
      builder.getDenseI64ArrayAttr({0, 0, 0, 0}),
      builder.getDenseI64ArrayAttr({1, 1}), builder.getUnitAttr());
  EXPECT_EQ(shapeOf(op), (ArrayRef<int64_t>{1, 1, 3, 3}));
}

TEST_F(TypeInferenceTest, GatherShape) {
  auto op = GatherOp::create(
      builder, builder.getUnknownLoc(), tensor({10, 6, 4}),
      tensor({2, 3}, builder.getI64Type()), builder.getI64IntegerAttr(1));
  EXPECT_EQ(shapeOf(op), (ArrayRef<int64_t>{10, 2, 3, 4}));
}

TEST_F(TypeInferenceTest, LossReductions) {
  Value scores = tensor({4, 10, 3});
  Value labels = tensor({4, 3}, builder.getI64Type());
  auto none = SoftmaxCrossEntropyLossOp::create(
      builder, builder.getUnknownLoc(), scores, labels, Value(),
      Reduction::none, IntegerAttr());
  EXPECT_EQ(shapeOf(none), (ArrayRef<int64_t>{4, 3}));
  auto mean = NegativeLogLikelihoodLossOp::create(
      builder, builder.getUnknownLoc(), scores, labels, Value(),
      Reduction::mean, IntegerAttr());
  EXPECT_EQ(shapeOf(mean), (ArrayRef<int64_t>{}));
  EXPECT_TRUE(succeeded(verify(*module)));
}

TEST_F(TypeInferenceTest, VerifierRejectsBadReshape) {
  ReshapeOp::create(builder, builder.getUnknownLoc(),
                    RankedTensorType::get({5}, builder.getF32Type()),
                    tensor({2, 3}));
  context.getDiagEngine().registerHandler(
      [](Diagnostic &) { return success(); });
  EXPECT_TRUE(failed(verify(*module)));
}

} // namespace
