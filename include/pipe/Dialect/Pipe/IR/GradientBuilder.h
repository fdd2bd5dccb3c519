//===- GradientBuilder.h - what gradient rules build with -------*- C++ -*-===//
//
// The builder that GradientOpInterface's rules create their IR with, and
// the pieces several rules share: broadcast reductions, one-hot rows,
// normalization gradients, slices and pads. `--pipe-autodiff` owns one and
// hands it to each op's rule (PipeInterfaces.td).
//
//===----------------------------------------------------------------------===//

#ifndef PIPE_DIALECT_PIPE_IR_GRADIENTBUILDER_H
#define PIPE_DIALECT_PIPE_IR_GRADIENTBUILDER_H

#include "pipe/Dialect/Pipe/IR/PipeOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/SmallVector.h"

#include <tuple>
#include <utility>

namespace mlir {
namespace pipe {

/// Builds gradient IR at the builder's insertion point. For each op that
/// `--pipe-autodiff` differentiates, `begin` points it at the op: its
/// location, the adjoints of its results, and one null adjoint per
/// operand, which the op's rule sets.
class GradientBuilder {
public:
  GradientBuilder(OpBuilder &builder, Location loc)
      : builder(builder), loc(loc) {}

  /// Starts on `op`, whose results have the adjoints `resultGrads`.
  void begin(Operation *op, ArrayRef<Value> resultGrads);
  /// The adjoint of the op's result `result` (a zero tensor where the loss
  /// does not read it), and of all its results.
  Value grad(unsigned result = 0) const { return resultGrads[result]; }
  ArrayRef<Value> grads() const { return resultGrads; }
  /// The adjoint of the op's operand `operand`: null until the rule sets
  /// it, and null where the operand needs none.
  Value &operandGrad(unsigned operand) { return operandGrads[operand]; }
  ArrayRef<Value> getOperandGrads() const { return operandGrads; }

  /// The ranked tensor type of `value`.
  static RankedTensorType typeOf(Value value) {
    return cast<RankedTensorType>(value.getType());
  }

  /// An op of type `OpTy` built at `loc` from `args`.
  template <typename OpTy, typename... Args> OpTy create(Args &&...args) {
    return OpTy::create(builder, loc, std::forward<Args>(args)...);
  }

  /// Elementwise ops with numpy broadcasting.
  Value add(Value lhs, Value rhs) { return create<AddOp>(lhs, rhs); }
  Value sub(Value lhs, Value rhs) { return create<SubOp>(lhs, rhs); }
  Value mul(Value lhs, Value rhs) { return create<MulOp>(lhs, rhs); }
  Value div(Value lhs, Value rhs) { return create<DivOp>(lhs, rhs); }
  Value neg(Value value) { return create<NegOp>(value); }
  Value greater(Value lhs, Value rhs) { return create<GreaterOp>(lhs, rhs); }
  Value less(Value lhs, Value rhs) { return create<LessOp>(lhs, rhs); }
  Value equal(Value lhs, Value rhs) { return create<EqualOp>(lhs, rhs); }
  /// `condition ? lhs : rhs`, elementwise.
  Value where(Value condition, Value lhs, Value rhs) {
    return create<WhereOp>(condition, lhs, rhs);
  }

  /// A splat constant of `type`'s shape (scalar when `scalar`).
  Value constant(RankedTensorType type, double value, bool scalar = true);
  /// Sums `grad` over the dimensions broadcast to reach it from `target`.
  Value unbroadcast(Value grad, RankedTensorType target);
  /// An integer constant of `element` (i32 or i64) and `shape` holding
  /// `values`.
  Value integers(Type element, ArrayRef<int64_t> shape,
                 ArrayRef<int64_t> values);
  /// One-hot rows of `indices` (flattened) over `classes` values:
  /// [number of indices, classes] of `element`.
  Value onehot(Value indices, int64_t classes, Type element);
  /// The input gradient of y = scale * xhat + bias with xhat = (x -
  /// mean(x)) / sqrt(var(x) + eps) over `axes` (biased variance), given
  /// dy = `grad` and `scale` broadcastable to x. Also returns xhat:
  ///   gs = g scale,  dx = (gs - mean(gs) - xhat mean(gs xhat)) / sigma.
  std::pair<Value, Value> normalization(Value x, Value grad, Value scale,
                                        ArrayRef<int64_t> axisList,
                                        double epsilon);
  /// The gradients (input, scale, bias) of a normalization of x [N, C,
  /// D...] per sample and channel over the spatial axes, with scale and
  /// bias [C] (instance norm).
  std::tuple<Value, Value, Value>
  channelNormalization(Value x, Value scale, double epsilon, Value grad);
  /// `scale` [C] reshaped to [C, 1, ...] to broadcast over [N, C, D...].
  Value perChannel(Value scale, RankedTensorType type);
  /// Sums `value` [N, C, D...] over every axis but the channels: [C].
  Value sumPerChannel(Value value);
  /// `value` reversed along `axis`.
  Value reverse(Value value, int64_t axis);
  /// `value` with `before` and `after` zeros along `axis`.
  Value zeroPad(Value value, int64_t axis, int64_t before, int64_t after);
  /// The gradient of a reflect (or edge) pad of `input` by `pads`, given
  /// the padded result's gradient: along each axis, the padded parts'
  /// gradients go back to the positions they copied. Null for negative
  /// pads or reflections longer than the input allows.
  Value unpad(Value grad, RankedTensorType input, ArrayRef<int64_t> pads,
              bool reflect);
  /// `size` entries of `value` along `axis` from `offset`.
  Value slice(Value value, int64_t axis, int64_t offset, int64_t size);
  /// Moves axis 1 (classes) of [N, C, D...] last and flattens the rest:
  /// [N * D..., C]. `fromRows` undoes it.
  Value toRows(Value value);
  Value fromRows(Value rows, RankedTensorType type);
  /// Swaps the last two dimensions.
  Value transposeLast(Value value);

  OpBuilder &builder;
  Location loc;

private:
  SmallVector<Value> resultGrads, operandGrads;
};

} // namespace pipe
} // namespace mlir

#endif // PIPE_DIALECT_PIPE_IR_GRADIENTBUILDER_H
