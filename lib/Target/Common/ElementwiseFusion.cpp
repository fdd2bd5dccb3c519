//===- ElementwiseFusion.cpp - fused loops of elementwise ops -------------===//

#include "pipe/Target/Common/ElementwiseFusion.h"

#include "pipe/Dialect/Pipe/IR/PipeOps.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace mlir;
using namespace mlir::pipe;

bool mlir::pipe::isElementwise(Operation *op) {
  return op->hasTrait<Pointwise>();
}

SmallVector<SmallVector<Operation *>>
mlir::pipe::groupSteps(ArrayRef<Operation *> ops) {
  SmallVector<SmallVector<Operation *>> steps;
  bool open = false;
  for (Operation *op : ops) {
    if (!isElementwise(op)) {
      steps.push_back({op});
      open = false;
      continue;
    }
    if (open) {
      Operation *last = steps.back().back();
      Value lastResult = last->getResult(0);
      bool readsLast = llvm::is_contained(op->getOperands(), lastResult);
      bool onlyUse = lastResult.hasOneUse();
      auto shapeOf = [](Value v) {
        return cast<RankedTensorType>(v.getType()).getShape();
      };
      if (readsLast && onlyUse &&
          shapeOf(op->getResult(0)) == shapeOf(lastResult)) {
        steps.back().push_back(op);
        continue;
      }
    }
    steps.push_back({op});
    open = true;
  }
  return steps;
}

SmallVector<int64_t>
mlir::pipe::broadcastStrides(ArrayRef<int64_t> shape,
                             ArrayRef<int64_t> operandShape) {
  SmallVector<int64_t> strides(shape.size(), 0);
  size_t offset = shape.size() - operandShape.size();
  int64_t stride = 1;
  for (int64_t d = (int64_t)operandShape.size() - 1; d >= 0; --d) {
    if (operandShape[d] != 1)
      strides[d + offset] = stride;
    stride *= operandShape[d];
  }
  return strides;
}

BroadcastLoop
mlir::pipe::splitBroadcastLoop(ArrayRef<int64_t> shape,
                               ArrayRef<ArrayRef<int64_t>> operandShapes) {
  // Per operand, how it walks the inner run so far.
  enum class Walk { Undecided, Contiguous, Fixed };
  SmallVector<Walk> modes(operandShapes.size(), Walk::Undecided);
  SmallVector<SmallVector<int64_t>> strides;
  for (ArrayRef<int64_t> operandShape : operandShapes)
    strides.push_back(broadcastStrides(shape, operandShape));
  BroadcastLoop loop;
  loop.splitDim = shape.size();
  for (int64_t d = (int64_t)shape.size() - 1; d >= 0; --d) {
    if (shape[d] == 1) {
      loop.splitDim = d;
      continue;
    }
    SmallVector<Walk> next(modes);
    bool fits = true;
    for (auto [i, operandStrides] : llvm::enumerate(strides)) {
      Walk mode = operandStrides[d] == 0 ? Walk::Fixed : Walk::Contiguous;
      // Contiguous across this dimension: its stride is the inner run's
      // size so far.
      if (mode == Walk::Contiguous && operandStrides[d] != loop.inner)
        fits = false;
      if (modes[i] != Walk::Undecided && modes[i] != mode)
        fits = false;
      next[i] = mode;
    }
    if (!fits)
      break;
    modes = next;
    loop.inner *= shape[d];
    loop.splitDim = d;
  }
  int64_t count = 1;
  for (int64_t extent : shape)
    count *= extent;
  loop.outer = loop.inner == 0 ? 0 : count / loop.inner;
  return loop;
}

SmallVector<Value> mlir::pipe::fusedStepOperands(ArrayRef<Operation *> ops,
                                                 bool skipScalars) {
  llvm::SetVector<Value> operands;
  for (Operation *op : ops)
    for (Value operand : op->getOperands())
      if (!llvm::is_contained(ops, operand.getDefiningOp()) &&
          (!skipScalars ||
           cast<ShapedType>(operand.getType()).getNumElements() != 1))
        operands.insert(operand);
  return SmallVector<Value>(operands.begin(), operands.end());
}

SmallVector<int64_t> mlir::pipe::rowMajorStrides(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t d = (int64_t)shape.size() - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

std::string mlir::pipe::cppElementType(Type type) {
  if (type.isF32())
    return "float";
  if (type.isF64())
    return "double";
  if (type.isInteger(1))
    return "bool";
  if (auto integer = dyn_cast<IntegerType>(type)) {
    switch (integer.getWidth()) {
    case 8:
    case 16:
    case 32:
    case 64:
      return (integer.isUnsigned() ? "uint" : "int") +
             std::to_string(integer.getWidth()) + "_t";
    default:
      return "";
    }
  }
  return "";
}

static std::string floatLiteral(double value, Type type) {
  std::string t = type.isF32() ? "float" : "double";
  if (std::isnan(value))
    return "std::numeric_limits<" + t + ">::quiet_NaN()";
  if (std::isinf(value))
    return std::string(value < 0 ? "-" : "") + "std::numeric_limits<" + t +
           ">::infinity()";
  std::string text = llvm::formatv("{0:e17}", value).str();
  return type.isF32() ? "static_cast<float>(" + text + ")" : text;
}

FailureOr<std::string> mlir::pipe::scalarExpression(Operation *op,
                                                    ArrayRef<std::string> in) {
  Type element =
      cast<RankedTensorType>(op->getResult(0).getType()).getElementType();
  std::string t = cppElementType(element);
  if (t.empty())
    return failure();
  auto fmt = [](const char *pattern, auto &&...args) {
    return llvm::formatv(pattern, args...).str();
  };
  std::optional<std::string> result =
      llvm::TypeSwitch<Operation *, std::optional<std::string>>(op)
          .Case([&](NegOp) { return fmt("(-{0})", in[0]); })
          .Case([&](AbsOp) {
            return isa<FloatType>(element)
                       ? fmt("std::abs({0})", in[0])
                       : fmt("({0} < 0 ? -{0} : {0})", in[0]);
          })
          .Case([&](ExpOp) { return fmt("cpu::exp({0})", in[0]); })
          .Case([&](LogOp) { return fmt("std::log({0})", in[0]); })
          .Case([&](SqrtOp) { return fmt("std::sqrt({0})", in[0]); })
          .Case([&](ReciprocalOp) { return fmt("({0}(1) / {1})", t, in[0]); })
          .Case([&](ReluOp) {
            return fmt("({0} > {1}(0) ? {0} : {1}(0))", in[0], t);
          })
          .Case([&](SigmoidOp) {
            return fmt("({1}(1) / ({1}(1) + cpu::exp(-{0})))", in[0], t);
          })
          .Case([&](SoftplusOp) {
            // log(1 + exp(x)) without overflow.
            return fmt("({0} > {1}(0) ? {0} + std::log1p(cpu::exp(-{0})) : "
                       "std::log1p(cpu::exp({0})))",
                       in[0], t);
          })
          .Case([&](TanhOp) { return fmt("cpu::tanh({0})", in[0]); })
          .Case([&](ErfOp) { return fmt("cpu::erf({0})", in[0]); })
          .Case([&](NotOp) { return fmt("(!{0})", in[0]); })
          .Case([&](LeakyReluOp o) {
            return fmt("({0} < {1}(0) ? {2} * {0} : {0})", in[0], t,
                       floatLiteral(o.getAlpha().convertToFloat(), element));
          })
          .Case([&](EluOp o) {
            return fmt("({0} < {1}(0) ? {2} * (cpu::exp({0}) - {1}(1)) : {0})",
                       in[0], t,
                       floatLiteral(o.getAlpha().convertToFloat(), element));
          })
          .Case([&](SeluOp o) {
            return fmt("({3} * ({0} > {1}(0) ? {0} : {2} * (cpu::exp({0}) - "
                       "{1}(1))))",
                       in[0], t,
                       floatLiteral(o.getAlpha().convertToFloat(), element),
                       floatLiteral(o.getGamma().convertToFloat(), element));
          })
          .Case([&](ClipOp o) {
            std::string value = in[0];
            auto bound = [&](double b) {
              return isa<FloatType>(element) ? floatLiteral(b, element)
                                             : fmt("{0}({1})", t, (int64_t)b);
            };
            if (o.getMin())
              value = fmt("std::max<{0}>({1}, {2})", t, value,
                          bound(o.getMin()->convertToDouble()));
            if (o.getMax())
              value = fmt("std::min<{0}>({1}, {2})", t, value,
                          bound(o.getMax()->convertToDouble()));
            return value;
          })
          .Case([&](CastOp) {
            if (element.isInteger(1))
              return fmt("({0} != 0)", in[0]);
            return fmt("static_cast<{0}>({1})", t, in[0]);
          })
          .Case([&](AddOp) { return fmt("({0} + {1})", in[0], in[1]); })
          .Case([&](SubOp) { return fmt("({0} - {1})", in[0], in[1]); })
          .Case([&](MulOp) { return fmt("({0} * {1})", in[0], in[1]); })
          .Case([&](DivOp) { return fmt("({0} / {1})", in[0], in[1]); })
          .Case([&](MaxOp) {
            return fmt("std::max<{0}>({1}, {2})", t, in[0], in[1]);
          })
          .Case([&](MinOp) {
            return fmt("std::min<{0}>({1}, {2})", t, in[0], in[1]);
          })
          .Case([&](PowOp) {
            return fmt("static_cast<{0}>(std::pow({1}, {2}))", t, in[0], in[1]);
          })
          .Case([&](EqualOp) { return fmt("({0} == {1})", in[0], in[1]); })
          .Case([&](LessOp) { return fmt("({0} < {1})", in[0], in[1]); })
          .Case([&](GreaterOp) { return fmt("({0} > {1})", in[0], in[1]); })
          .Case([&](PReluOp) {
            return fmt("({0} < {2}(0) ? {1} * {0} : {0})", in[0], in[1], t);
          })
          .Case([&](WhereOp) {
            return fmt("({0} ? {1} : {2})", in[0], in[1], in[2]);
          })
          .Default([](Operation *) { return std::nullopt; });
  if (!result)
    return failure();
  return *result;
}
