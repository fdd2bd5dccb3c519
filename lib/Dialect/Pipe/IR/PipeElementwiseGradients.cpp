//===- PipeElementwiseGradients.cpp - gradients of the elementwise ops ----===//
//
// GradientOpInterface for the ops of PipeElementwiseOps.td. Each rule builds
// the adjoints of an op's operands from those of its results.
//
//===----------------------------------------------------------------------===//

#include "pipe/Dialect/Pipe/IR/GradientBuilder.h"

using namespace mlir;
using namespace mlir::pipe;

LogicalResult AddOp::buildGradients(GradientBuilder &g) {
  Value grad = g.grad();
  g.operandGrad(0) = g.unbroadcast(grad, g.typeOf(getLhs()));
  g.operandGrad(1) = g.unbroadcast(grad, g.typeOf(getRhs()));
  return success();
}

LogicalResult SubOp::buildGradients(GradientBuilder &g) {
  Value grad = g.grad();
  g.operandGrad(0) = g.unbroadcast(grad, g.typeOf(getLhs()));
  g.operandGrad(1) = g.unbroadcast(g.neg(grad), g.typeOf(getRhs()));
  return success();
}

LogicalResult MulOp::buildGradients(GradientBuilder &g) {
  Value grad = g.grad();
  g.operandGrad(0) = g.unbroadcast(g.mul(grad, getRhs()), g.typeOf(getLhs()));
  g.operandGrad(1) = g.unbroadcast(g.mul(grad, getLhs()), g.typeOf(getRhs()));
  return success();
}

LogicalResult DivOp::buildGradients(GradientBuilder &g) {
  Value grad = g.grad();
  // d(a/b) = g/b da - g a/b^2 db = g/b da - g y/b db.
  Value overB = g.div(grad, getRhs());
  g.operandGrad(0) = g.unbroadcast(overB, g.typeOf(getLhs()));
  Value term = g.mul(overB, getResult());
  g.operandGrad(1) = g.unbroadcast(g.neg(term), g.typeOf(getRhs()));
  return success();
}

LogicalResult NegOp::buildGradients(GradientBuilder &g) {
  Value grad = g.grad();
  g.operandGrad(0) = g.neg(grad);
  return success();
}

LogicalResult ReluOp::buildGradients(GradientBuilder &g) {
  Value grad = g.grad();
  Value zero = g.constant(g.typeOf(getInput()), 0.0);
  Value positive = g.greater(getInput(), zero);
  g.operandGrad(0) = g.where(positive, grad, zero);
  return success();
}

LogicalResult TanhOp::buildGradients(GradientBuilder &g) {
  // g (1 - y^2).
  Value y = getResult();
  Value one = g.constant(g.typeOf(y), 1.0);
  g.operandGrad(0) = g.mul(g.grad(), g.sub(one, g.mul(y, y)));
  return success();
}

LogicalResult SigmoidOp::buildGradients(GradientBuilder &g) {
  // g y (1 - y).
  Value y = getResult();
  Value slope = g.mul(y, g.sub(g.constant(g.typeOf(y), 1.0), y));
  g.operandGrad(0) = g.mul(g.grad(), slope);
  return success();
}

LogicalResult ExpOp::buildGradients(GradientBuilder &g) {
  Value grad = g.grad();
  g.operandGrad(0) = g.mul(grad, getResult());
  return success();
}

LogicalResult LogOp::buildGradients(GradientBuilder &g) {
  Value grad = g.grad();
  g.operandGrad(0) = g.div(grad, getInput());
  return success();
}

LogicalResult SqrtOp::buildGradients(GradientBuilder &g) {
  Value grad = g.grad();
  // g / (2 y).
  Value two = g.constant(g.typeOf(getResult()), 2.0);
  g.operandGrad(0) = g.div(grad, g.mul(two, getResult()));
  return success();
}

LogicalResult ErfOp::buildGradients(GradientBuilder &g) {
  Value grad = g.grad();
  // g 2/sqrt(pi) exp(-x^2).
  Value x = getInput();
  Value square = g.mul(x, x);
  Value bell = g.create<ExpOp>(g.neg(square));
  Value scale = g.constant(g.typeOf(x), 1.1283791670955126);
  g.operandGrad(0) = g.mul(grad, g.mul(bell, scale));
  return success();
}

LogicalResult AbsOp::buildGradients(GradientBuilder &g) {
  Value grad = g.grad();
  Value x = getInput();
  Value zero = g.constant(g.typeOf(x), 0.0);
  Value negative = g.where(g.less(x, zero), g.neg(grad), zero);
  g.operandGrad(0) = g.where(g.greater(x, zero), grad, negative);
  return success();
}

LogicalResult ReciprocalOp::buildGradients(GradientBuilder &g) {
  Value grad = g.grad();
  // -g y^2.
  Value y = getResult();
  g.operandGrad(0) = g.neg(g.mul(grad, g.mul(y, y)));
  return success();
}

LogicalResult SoftplusOp::buildGradients(GradientBuilder &g) {
  Value grad = g.grad();
  g.operandGrad(0) = g.mul(grad, g.create<SigmoidOp>(getInput()));
  return success();
}

LogicalResult LeakyReluOp::buildGradients(GradientBuilder &g) {
  Value grad = g.grad();
  Value x = getInput();
  Value slope =
      g.mul(grad, g.constant(g.typeOf(x), getAlpha().convertToDouble()));
  g.operandGrad(0) =
      g.where(g.greater(x, g.constant(g.typeOf(x), 0.0)), grad, slope);
  return success();
}

/// The gradient of y = gamma (x > 0 ? x : alpha (e^x - 1)), given dy =
/// `grad`: gamma g where x > 0, else g (y + gamma alpha).
static Value eluGradient(GradientBuilder &g, Value grad, Value x, Value y,
                         double alpha, double gamma) {
  auto type = g.typeOf(x);
  Value positive = gamma == 1.0 ? grad : g.mul(grad, g.constant(type, gamma));
  Value negative = g.mul(grad, g.add(y, g.constant(type, gamma * alpha)));
  return g.where(g.greater(x, g.constant(type, 0.0)), positive, negative);
}

LogicalResult EluOp::buildGradients(GradientBuilder &g) {
  g.operandGrad(0) = eluGradient(g, g.grad(), getInput(), getResult(),
                                 getAlpha().convertToDouble(), /*gamma=*/1.0);
  return success();
}

LogicalResult SeluOp::buildGradients(GradientBuilder &g) {
  g.operandGrad(0) =
      eluGradient(g, g.grad(), getInput(), getResult(),
                  getAlpha().convertToDouble(), getGamma().convertToDouble());
  return success();
}

LogicalResult ClipOp::buildGradients(GradientBuilder &g) {
  Value grad = g.grad();
  // The gradient passes where min <= x <= max.
  Value x = getInput();
  auto type = g.typeOf(x);
  if (!isa<FloatType>(type.getElementType()))
    return failure();
  Value zero = g.constant(type, 0.0), passed = grad;
  if (std::optional<APFloat> max = getMax())
    passed = g.where(g.greater(x, g.constant(type, max->convertToDouble())),
                     zero, passed);
  if (std::optional<APFloat> min = getMin())
    passed = g.where(g.less(x, g.constant(type, min->convertToDouble())), zero,
                     passed);
  g.operandGrad(0) = passed;
  return success();
}

/// The gradients of max(lhs, rhs) (`max`) or min(lhs, rhs): the chosen
/// operand gets the gradient; ties share it equally, as torch.maximum and
/// torch.minimum do.
static void extremumGradients(GradientBuilder &g, Value grad, Value lhs,
                              Value rhs, bool max) {
  Value zero = g.constant(g.typeOf(grad), 0.0);
  Value half = g.mul(grad, g.constant(g.typeOf(grad), 0.5));
  Value tie = g.equal(lhs, rhs);
  Value right = max ? g.less(lhs, rhs) : g.greater(lhs, rhs);
  Value toLeft = g.where(right, zero, grad);
  Value toRight = g.where(right, grad, zero);
  g.operandGrad(0) = g.unbroadcast(g.where(tie, half, toLeft), g.typeOf(lhs));
  g.operandGrad(1) = g.unbroadcast(g.where(tie, half, toRight), g.typeOf(rhs));
}

LogicalResult MaxOp::buildGradients(GradientBuilder &g) {
  extremumGradients(g, g.grad(), getLhs(), getRhs(), /*max=*/true);
  return success();
}

LogicalResult MinOp::buildGradients(GradientBuilder &g) {
  extremumGradients(g, g.grad(), getLhs(), getRhs(), /*max=*/false);
  return success();
}

LogicalResult PowOp::buildGradients(GradientBuilder &g) {
  Value grad = g.grad();
  // d/da = b a^(b-1), d/db = y log(a).
  Value base = getLhs(), exponent = getRhs();
  auto expType = g.typeOf(exponent);
  if (!isa<FloatType>(expType.getElementType()) ||
      expType.getElementType() != g.typeOf(base).getElementType())
    return failure();
  Value lower =
      g.create<PowOp>(base, g.sub(exponent, g.constant(expType, 1.0)));
  g.operandGrad(0) =
      g.unbroadcast(g.mul(grad, g.mul(exponent, lower)), g.typeOf(base));
  g.operandGrad(1) = g.unbroadcast(
      g.mul(grad, g.mul(getResult(), g.create<LogOp>(base))), expType);
  return success();
}

LogicalResult PReluOp::buildGradients(GradientBuilder &g) {
  Value grad = g.grad();
  Value x = getInput(), slope = getSlope();
  Value zero = g.constant(g.typeOf(x), 0.0);
  Value negative = g.less(x, zero);
  g.operandGrad(0) = g.where(negative, g.mul(grad, slope), grad);
  g.operandGrad(1) =
      g.unbroadcast(g.where(negative, g.mul(grad, x), zero), g.typeOf(slope));
  return success();
}

LogicalResult CastOp::buildGradients(GradientBuilder &g) {
  Value grad = g.grad();
  // Between floating-point types only.
  auto from = g.typeOf(getInput());
  if (!isa<FloatType>(from.getElementType()) ||
      !isa<FloatType>(g.typeOf(grad).getElementType()))
    return failure();
  g.operandGrad(0) = g.create<CastOp>(from, grad);
  return success();
}

LogicalResult WhereOp::buildGradients(GradientBuilder &g) {
  Value grad = g.grad();
  // Each branch gets the gradient where it was chosen.
  Value zero = g.constant(g.typeOf(grad), 0.0);
  g.operandGrad(1) =
      g.unbroadcast(g.where(getCondition(), grad, zero), g.typeOf(getLhs()));
  g.operandGrad(2) =
      g.unbroadcast(g.where(getCondition(), zero, grad), g.typeOf(getRhs()));
  return success();
}
