//===- Autodiff.cpp - reverse-mode gradients of the loss ------------------===//

#include "pipe/Dialect/Pipe/IR/PipeOps.h"
#include "pipe/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/TypeSwitch.h"

#define DEBUG_TYPE "pipe-autodiff"

namespace mlir {
namespace pipe {
#define GEN_PASS_DEF_AUTODIFF
#include "pipe/Transforms/Passes.h.inc"
} // namespace pipe
} // namespace mlir

using namespace mlir;
using namespace mlir::pipe;

namespace {
/// Builds gradient IR at the end of @main.
class GradientBuilder {
public:
  GradientBuilder(OpBuilder &builder, Location loc)
      : builder(builder), loc(loc) {}

  /// A splat constant of `type`'s shape (scalar when `scalar`).
  Value constant(RankedTensorType type, double value, bool scalar = true) {
    auto tensorType =
        scalar ? RankedTensorType::get({}, type.getElementType()) : type;
    auto attr = DenseElementsAttr::get(
        tensorType, builder.getFloatAttr(type.getElementType(), value));
    return ConstantOp::create(builder, loc, attr);
  }

  /// Sums `grad` over the dimensions broadcast to reach it from `shape`.
  Value unbroadcast(Value grad, RankedTensorType target) {
    auto type = cast<RankedTensorType>(grad.getType());
    if (type.getShape() == target.getShape())
      return grad;
    SmallVector<int64_t> axes;
    int64_t extra = type.getRank() - target.getRank();
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (d < extra ||
          (target.getDimSize(d - extra) == 1 && type.getDimSize(d) != 1))
        axes.push_back(d);
    Value summed = grad;
    if (!axes.empty())
      summed = ReduceSumOp::create(builder, loc, grad,
                                   builder.getDenseI64ArrayAttr(axes),
                                   builder.getUnitAttr());
    if (cast<RankedTensorType>(summed.getType()).getShape() !=
        target.getShape())
      summed = ReshapeOp::create(builder, loc, target, summed);
    return summed;
  }

  /// An integer constant of `element` (i32 or i64) and `shape` holding
  /// `values`.
  Value integers(Type element, ArrayRef<int64_t> shape,
                 ArrayRef<int64_t> values) {
    unsigned width = element.getIntOrFloatBitWidth();
    SmallVector<APInt> bits;
    for (int64_t value : values)
      bits.push_back(APInt(width, value, /*isSigned=*/true));
    return ConstantOp::create(
        builder, loc,
        DenseElementsAttr::get(RankedTensorType::get(shape, element), bits));
  }

  /// One-hot rows of `indices` (flattened) over `classes` values:
  /// [number of indices, classes] of `element`.
  Value onehot(Value indices, int64_t classes, Type element) {
    auto type = cast<RankedTensorType>(indices.getType());
    Type index = type.getElementType();
    int64_t count = type.getNumElements();
    Value column = ReshapeOp::create(
        builder, loc, RankedTensorType::get({count, 1}, index), indices);
    SmallVector<int64_t> values;
    for (int64_t k = 0; k < classes; ++k)
      values.push_back(k);
    Value iota = integers(index, {classes}, values);
    return CastOp::create(builder, loc,
                          RankedTensorType::get({count, classes}, element),
                          EqualOp::create(builder, loc, column, iota));
  }

  /// The input gradient of y = scale * xhat + bias with xhat = (x -
  /// mean(x)) / sqrt(var(x) + eps) over `axes` (biased variance), given
  /// dy = `grad` and `scale` broadcastable to x. Also returns xhat:
  ///   gs = g scale,  dx = (gs - mean(gs) - xhat mean(gs xhat)) / sigma.
  std::pair<Value, Value> normalization(Value x, Value grad, Value scale,
                                        ArrayRef<int64_t> axisList,
                                        double epsilon) {
    auto type = cast<RankedTensorType>(x.getType());
    auto axes = builder.getDenseI64ArrayAttr(axisList);
    auto keep = builder.getUnitAttr();
    Value mean = ReduceMeanOp::create(builder, loc, x, axes, keep);
    Value centred = SubOp::create(builder, loc, x, mean);
    Value variance = ReduceMeanOp::create(
        builder, loc, MulOp::create(builder, loc, centred, centred), axes,
        keep);
    Value sigma = SqrtOp::create(
        builder, loc,
        AddOp::create(builder, loc, variance, constant(type, epsilon)));
    Value xhat = DivOp::create(builder, loc, centred, sigma);
    Value gs = MulOp::create(builder, loc, grad, scale);
    Value meanGs = ReduceMeanOp::create(builder, loc, gs, axes, keep);
    Value meanGsX = ReduceMeanOp::create(
        builder, loc, MulOp::create(builder, loc, gs, xhat), axes, keep);
    Value inner =
        SubOp::create(builder, loc, SubOp::create(builder, loc, gs, meanGs),
                      MulOp::create(builder, loc, xhat, meanGsX));
    return {DivOp::create(builder, loc, inner, sigma), xhat};
  }

  /// The gradients (input, scale, bias) of a normalization of x [N, C,
  /// D...] per channel with scale and bias [C]: over the spatial axes
  /// (instance norm), and the batch too with `overBatch` (batch norm).
  std::tuple<Value, Value, Value> channelNormalization(Value x, Value scale,
                                                       double epsilon,
                                                       Value grad,
                                                       bool overBatch) {
    auto type = cast<RankedTensorType>(x.getType());
    SmallVector<int64_t> axes;
    if (overBatch)
      axes.push_back(0);
    for (int64_t d = 2; d < type.getRank(); ++d)
      axes.push_back(d);
    auto [dx, xhat] =
        normalization(x, grad, perChannel(scale, type), axes, epsilon);
    return {dx, sumPerChannel(MulOp::create(builder, loc, grad, xhat)),
            sumPerChannel(grad)};
  }

  /// `scale` [C] reshaped to [C, 1, ...] to broadcast over [N, C, D...].
  Value perChannel(Value scale, RankedTensorType type) {
    SmallVector<int64_t> shape = {type.getDimSize(1)};
    shape.append(type.getRank() - 2, 1);
    return ReshapeOp::create(
        builder, loc, RankedTensorType::get(shape, type.getElementType()),
        scale);
  }

  /// Sums `value` [N, C, D...] over every axis but the channels: [C].
  Value sumPerChannel(Value value) {
    auto type = cast<RankedTensorType>(value.getType());
    SmallVector<int64_t> axes = {0};
    for (int64_t d = 2; d < type.getRank(); ++d)
      axes.push_back(d);
    return ReduceSumOp::create(builder, loc, value,
                               builder.getDenseI64ArrayAttr(axes));
  }

  /// `value` reversed along `axis`.
  Value reverse(Value value, int64_t axis) {
    auto type = cast<RankedTensorType>(value.getType());
    SmallVector<int64_t> offsets(type.getRank(), 0), sizes(type.getShape()),
        strides(type.getRank(), 1);
    offsets[axis] = type.getDimSize(axis) - 1;
    strides[axis] = -1;
    return SliceOp::create(builder, loc, value,
                           builder.getDenseI64ArrayAttr(offsets),
                           builder.getDenseI64ArrayAttr(sizes),
                           builder.getDenseI64ArrayAttr(strides));
  }

  /// `value` with `before` and `after` zeros along `axis`.
  Value zeroPad(Value value, int64_t axis, int64_t before, int64_t after) {
    if (!before && !after)
      return value;
    int64_t rank = cast<RankedTensorType>(value.getType()).getRank();
    SmallVector<int64_t> pads(2 * rank, 0);
    pads[axis] = before;
    pads[rank + axis] = after;
    return PadOp::create(builder, loc, value, pads, PadMode::constant,
                         llvm::APFloat(0.0));
  }

  /// The gradient of a reflect (or edge) pad of `input` by `pads`, given
  /// the padded result's gradient: along each axis, the padded parts'
  /// gradients go back to the positions they copied. Null for negative
  /// pads or reflections longer than the input allows.
  Value unpad(Value grad, RankedTensorType input, ArrayRef<int64_t> pads,
              bool reflect) {
    int64_t rank = input.getRank();
    Value current = grad;
    for (int64_t d = 0; d < rank; ++d) {
      int64_t before = pads[d], after = pads[rank + d];
      int64_t n = input.getDimSize(d);
      if (before < 0 || after < 0 || (reflect && (before >= n || after >= n)))
        return nullptr;
      if (!before && !after)
        continue;
      Value inside = slice(current, d, before, n);
      auto add = [&](Value part, int64_t at, int64_t length) {
        inside = AddOp::create(builder, loc, inside,
                               zeroPad(part, d, at, n - at - length));
      };
      if (before) {
        Value left = slice(current, d, 0, before);
        if (reflect) // out[i] = in[before - i]: in[1 .. before]
          add(reverse(left, d), 1, before);
        else
          add(ReduceSumOp::create(builder, loc, left,
                                  builder.getDenseI64ArrayAttr({d}),
                                  builder.getUnitAttr()),
              0, 1);
      }
      if (after) {
        Value right = slice(current, d, before + n, after);
        if (reflect) // out[before + n + k] = in[n - 2 - k]
          add(reverse(right, d), n - 1 - after, after);
        else
          add(ReduceSumOp::create(builder, loc, right,
                                  builder.getDenseI64ArrayAttr({d}),
                                  builder.getUnitAttr()),
              n - 1, 1);
      }
      current = inside;
    }
    return current;
  }

  /// `size` entries of `value` along `axis` from `offset`.
  Value slice(Value value, int64_t axis, int64_t offset, int64_t size) {
    auto type = cast<RankedTensorType>(value.getType());
    SmallVector<int64_t> offsets(type.getRank(), 0), sizes(type.getShape()),
        strides(type.getRank(), 1);
    offsets[axis] = offset;
    sizes[axis] = size;
    if (sizes == SmallVector<int64_t>(type.getShape()))
      return value;
    return SliceOp::create(builder, loc, value,
                           builder.getDenseI64ArrayAttr(offsets),
                           builder.getDenseI64ArrayAttr(sizes),
                           builder.getDenseI64ArrayAttr(strides));
  }

  /// Moves axis 1 (classes) of [N, C, D...] last and flattens the rest:
  /// [N * D..., C]. `fromRows` undoes it.
  Value toRows(Value value) {
    auto type = cast<RankedTensorType>(value.getType());
    if (type.getRank() == 2)
      return value;
    SmallVector<int64_t> perm = {0};
    for (int64_t d = 2; d < type.getRank(); ++d)
      perm.push_back(d);
    perm.push_back(1);
    Value moved = TransposeOp::create(builder, loc, value,
                                      builder.getDenseI64ArrayAttr(perm));
    int64_t classes = type.getDimSize(1);
    return ReshapeOp::create(
        builder, loc,
        RankedTensorType::get({type.getNumElements() / classes, classes},
                              type.getElementType()),
        moved);
  }
  Value fromRows(Value rows, RankedTensorType type) {
    if (type.getRank() == 2)
      return rows;
    SmallVector<int64_t> shape = {type.getDimSize(0)};
    for (int64_t d = 2; d < type.getRank(); ++d)
      shape.push_back(type.getDimSize(d));
    shape.push_back(type.getDimSize(1));
    Value unflat = ReshapeOp::create(
        builder, loc, RankedTensorType::get(shape, type.getElementType()),
        rows);
    SmallVector<int64_t> perm = {0, type.getRank() - 1};
    for (int64_t d = 1; d < type.getRank() - 1; ++d)
      perm.push_back(d);
    return TransposeOp::create(builder, loc, unflat,
                               builder.getDenseI64ArrayAttr(perm));
  }

  /// Swaps the last two dimensions.
  Value transposeLast(Value value) {
    auto type = cast<RankedTensorType>(value.getType());
    SmallVector<int64_t> perm;
    for (int64_t d = 0; d < type.getRank(); ++d)
      perm.push_back(d);
    std::swap(perm[type.getRank() - 1], perm[type.getRank() - 2]);
    return TransposeOp::create(builder, loc, value,
                               builder.getDenseI64ArrayAttr(perm));
  }

  OpBuilder &builder;
  Location loc;
};

struct AutodiffPass : public pipe::impl::AutodiffBase<AutodiffPass> {
  void runOnOperation() override;

private:
  /// The gradients of `op`'s operands, given its results' adjoints; null
  /// for operands that need none. Fails on ops without a rule.
  FailureOr<SmallVector<Value>>
  gradients(Operation *op, ArrayRef<Value> resultGrads, GradientBuilder &g);
};
} // namespace

/// The gradient of softmax cross-entropy (`softmax`) or negative log
/// likelihood with respect to the scores [N, C, D...], for labels
/// [N, D...], optional class weights [C], `ignore` and `reduction`, given
/// the loss's gradient `grad`. Per row r (a position of N * D...) with
/// label l and weight w[l] (0 when ignored), the gradient is
/// w[l] (softmax(x_r) - onehot(l)) or -w[l] onehot(l); the mean divides by
/// the sum of the rows' weights.
static Value lossGradient(Value scores, Value labels, Value weight,
                          Reduction reduction, std::optional<int64_t> ignore,
                          bool softmax, Value grad, GradientBuilder &g) {
  OpBuilder &b = g.builder;
  Location loc = g.loc;
  auto type = cast<RankedTensorType>(scores.getType());
  int64_t classes = type.getDimSize(1);
  int64_t rows = type.getNumElements() / classes;
  Type f = type.getElementType();
  auto labelType = cast<RankedTensorType>(labels.getType());
  Type index = labelType.getElementType();
  auto rowType = RankedTensorType::get({rows, 1}, f);

  Value onehot = g.onehot(labels, classes, f);
  Value factor = g.constant(rowType, 1.0, /*scalar=*/false);
  if (weight)
    factor = MatMulOp::create(
        b, loc, onehot,
        ReshapeOp::create(b, loc, RankedTensorType::get({classes, 1}, f),
                          weight));
  if (ignore) {
    Value column = ReshapeOp::create(
        b, loc, RankedTensorType::get({rows, 1}, index), labels);
    Value ignored = g.integers(index, {}, {*ignore});
    Value keep = CastOp::create(
        b, loc, rowType,
        NotOp::create(b, loc, EqualOp::create(b, loc, column, ignored)));
    factor = MulOp::create(b, loc, factor, keep);
  }
  Value base = softmax
                   ? SubOp::create(b, loc,
                                   SoftmaxOp::create(b, loc, g.toRows(scores),
                                                     b.getI64IntegerAttr(1)),
                                   onehot)
                         .getResult()
                   : NegOp::create(b, loc, onehot).getResult();
  Value perRow = MulOp::create(b, loc, base, factor);
  Value scaled;
  switch (reduction) {
  case Reduction::none:
    scaled =
        MulOp::create(b, loc, perRow, ReshapeOp::create(b, loc, rowType, grad));
    break;
  case Reduction::sum:
    scaled = MulOp::create(b, loc, perRow, grad);
    break;
  case Reduction::mean: {
    // With every row ignored the loss is 0/0, but no row contributes: the
    // gradient is zero (as in PyTorch), not NaN.
    Value total =
        ReduceSumOp::create(b, loc, factor, b.getDenseI64ArrayAttr({0, 1}));
    Value zero = g.constant(cast<RankedTensorType>(total.getType()), 0.0);
    Value share = WhereOp::create(b, loc, EqualOp::create(b, loc, total, zero),
                                  zero, DivOp::create(b, loc, grad, total));
    scaled = MulOp::create(b, loc, perRow, share);
    break;
  }
  }
  return g.fromRows(scaled, type);
}

FailureOr<SmallVector<Value>>
AutodiffPass::gradients(Operation *op, ArrayRef<Value> resultGrads,
                        GradientBuilder &g) {
  OpBuilder &b = g.builder;
  Location loc = g.loc;
  Value grad = resultGrads.front();
  auto typeOf = [](Value v) { return cast<RankedTensorType>(v.getType()); };
  SmallVector<Value> out(op->getNumOperands());
  bool handled = true;
  llvm::TypeSwitch<Operation *>(op)
      .Case([&](AddOp o) {
        out[0] = g.unbroadcast(grad, typeOf(o.getLhs()));
        out[1] = g.unbroadcast(grad, typeOf(o.getRhs()));
      })
      .Case([&](SubOp o) {
        out[0] = g.unbroadcast(grad, typeOf(o.getLhs()));
        out[1] = g.unbroadcast(NegOp::create(b, loc, grad), typeOf(o.getRhs()));
      })
      .Case([&](MulOp o) {
        out[0] = g.unbroadcast(MulOp::create(b, loc, grad, o.getRhs()),
                               typeOf(o.getLhs()));
        out[1] = g.unbroadcast(MulOp::create(b, loc, grad, o.getLhs()),
                               typeOf(o.getRhs()));
      })
      .Case([&](DivOp o) {
        // d(a/b) = g/b da - g a/b^2 db = g/b da - g y/b db.
        Value overB = DivOp::create(b, loc, grad, o.getRhs());
        out[0] = g.unbroadcast(overB, typeOf(o.getLhs()));
        Value term = MulOp::create(b, loc, overB, o.getResult());
        out[1] = g.unbroadcast(NegOp::create(b, loc, term), typeOf(o.getRhs()));
      })
      .Case([&](NegOp o) { out[0] = NegOp::create(b, loc, grad); })
      .Case([&](ReluOp o) {
        Value zero = g.constant(typeOf(o.getInput()), 0.0);
        Value positive = GreaterOp::create(b, loc, o.getInput(), zero);
        out[0] = WhereOp::create(b, loc, positive, grad, zero);
      })
      .Case([&](TanhOp o) {
        // g (1 - y^2).
        Value y = o.getResult();
        Value one = g.constant(typeOf(y), 1.0);
        Value slope = SubOp::create(b, loc, one, MulOp::create(b, loc, y, y));
        out[0] = MulOp::create(b, loc, grad, slope);
      })
      .Case([&](SigmoidOp o) {
        // g y (1 - y).
        Value y = o.getResult();
        Value one = g.constant(typeOf(y), 1.0);
        Value slope = MulOp::create(b, loc, y, SubOp::create(b, loc, one, y));
        out[0] = MulOp::create(b, loc, grad, slope);
      })
      .Case(
          [&](ExpOp o) { out[0] = MulOp::create(b, loc, grad, o.getResult()); })
      .Case(
          [&](LogOp o) { out[0] = DivOp::create(b, loc, grad, o.getInput()); })
      .Case([&](SqrtOp o) {
        // g / (2 y).
        Value two = g.constant(typeOf(o.getResult()), 2.0);
        out[0] = DivOp::create(b, loc, grad,
                               MulOp::create(b, loc, two, o.getResult()));
      })
      .Case([&](ErfOp o) {
        // g 2/sqrt(pi) exp(-x^2).
        Value x = o.getInput();
        Value square = MulOp::create(b, loc, x, x);
        Value bell = ExpOp::create(b, loc, NegOp::create(b, loc, square));
        Value scale = g.constant(typeOf(x), 1.1283791670955126);
        out[0] =
            MulOp::create(b, loc, grad, MulOp::create(b, loc, bell, scale));
      })
      .Case([&](SoftmaxOp o) {
        // y (g - sum(g y)) over the axis.
        Value y = o.getResult();
        Value gy = MulOp::create(b, loc, grad, y);
        Value sum = ReduceSumOp::create(
            b, loc, gy, b.getDenseI64ArrayAttr({o.getAxis()}), b.getUnitAttr());
        out[0] = MulOp::create(b, loc, y, SubOp::create(b, loc, grad, sum));
      })
      .Case([&](LogSoftmaxOp o) {
        // g - exp(y) sum(g) over the axis.
        Value sum = ReduceSumOp::create(b, loc, grad,
                                        b.getDenseI64ArrayAttr({o.getAxis()}),
                                        b.getUnitAttr());
        Value p = ExpOp::create(b, loc, o.getResult());
        out[0] = SubOp::create(b, loc, grad, MulOp::create(b, loc, p, sum));
      })
      .Case([&](LayerNormOp o) {
        // Over the normalized axes (axis..rank-1); dscale = sum(g xhat) and
        // dbias = sum(g) over the other axes.
        auto type = typeOf(o.getInput());
        SmallVector<int64_t> axes;
        for (int64_t d = o.getAxis(); d < type.getRank(); ++d)
          axes.push_back(d);
        auto [dx, xhat] =
            g.normalization(o.getInput(), grad, o.getScale(), axes,
                            o.getEpsilon().convertToDouble());
        out[0] = dx;
        out[1] = g.unbroadcast(MulOp::create(b, loc, grad, xhat),
                               typeOf(o.getScale()));
        if (Value bias = o.getBias())
          out[2] = g.unbroadcast(grad, typeOf(bias));
      })
      .Case([&](InstanceNormOp o) {
        // Per sample and channel, over the spatial axes.
        std::tie(out[0], out[1], out[2]) = g.channelNormalization(
            o.getInput(), o.getScale(), o.getEpsilon().convertToDouble(), grad,
            /*overBatch=*/false);
      })
      .Case([&](BatchNormOp o) {
        // With the running statistics (frozen): per channel,
        // y = scale (x - mean) / sigma + bias, sigma = sqrt(var + eps).
        Value x = o.getInput();
        auto type = typeOf(x);
        auto statType = typeOf(o.getScale());
        Value sigma = SqrtOp::create(
            b, loc,
            AddOp::create(
                b, loc, o.getVariance(),
                g.constant(statType, o.getEpsilon().convertToDouble())));
        Value factor = DivOp::create(b, loc, o.getScale(), sigma);
        Value centred =
            SubOp::create(b, loc, x, g.perChannel(o.getMean(), type));
        Value xhat = DivOp::create(b, loc, centred, g.perChannel(sigma, type));
        out[0] = MulOp::create(b, loc, grad, g.perChannel(factor, type));
        out[1] = g.sumPerChannel(MulOp::create(b, loc, grad, xhat));
        Value biasGrad = g.sumPerChannel(grad);
        out[2] = biasGrad;
        // d/dmean = -sum(g) scale / sigma; d/dvar = -sum(g xhat) scale /
        // (2 sigma^2).
        out[3] = NegOp::create(b, loc, MulOp::create(b, loc, biasGrad, factor));
        out[4] = NegOp::create(
            b, loc,
            DivOp::create(b, loc, MulOp::create(b, loc, out[1], o.getScale()),
                          MulOp::create(b, loc, g.constant(statType, 2.0),
                                        MulOp::create(b, loc, sigma, sigma))));
      })
      .Case([&](BatchNormTrainOp o) {
        // Batch statistics: per channel, over the batch and spatial axes.
        // The updated running statistics are not differentiated; they must
        // not feed the loss.
        if (!o.getRunningMean().use_empty() ||
            !o.getRunningVariance().use_empty()) {
          handled = false;
          return;
        }
        std::tie(out[0], out[1], out[2]) = g.channelNormalization(
            o.getInput(), o.getScale(), o.getEpsilon().convertToDouble(), grad,
            /*overBatch=*/true);
      })
      .Case<SoftmaxCrossEntropyLossOp, NegativeLogLikelihoodLossOp>(
          [&](auto o) {
            out[0] = lossGradient(
                o.getInput(), o.getLabels(), o.getWeight(), o.getReduction(),
                o.getIgnoreIndex(),
                isa<SoftmaxCrossEntropyLossOp>(o.getOperation()), grad, g);
          })
      .Case([&](AbsOp o) {
        Value x = o.getInput();
        Value zero = g.constant(typeOf(x), 0.0);
        Value negative =
            WhereOp::create(b, loc, LessOp::create(b, loc, x, zero),
                            NegOp::create(b, loc, grad), zero);
        out[0] = WhereOp::create(b, loc, GreaterOp::create(b, loc, x, zero),
                                 grad, negative);
      })
      .Case([&](ReciprocalOp o) {
        // -g y^2.
        Value y = o.getResult();
        out[0] = NegOp::create(
            b, loc, MulOp::create(b, loc, grad, MulOp::create(b, loc, y, y)));
      })
      .Case([&](SoftplusOp o) {
        out[0] = MulOp::create(b, loc, grad,
                               SigmoidOp::create(b, loc, o.getInput()));
      })
      .Case([&](LeakyReluOp o) {
        Value x = o.getInput();
        Value slope = MulOp::create(
            b, loc, grad,
            g.constant(typeOf(x), o.getAlpha().convertToDouble()));
        out[0] = WhereOp::create(
            b, loc, GreaterOp::create(b, loc, x, g.constant(typeOf(x), 0.0)),
            grad, slope);
      })
      .Case<EluOp, SeluOp>([&](auto o) {
        // x > 0: gamma g; else g (y + gamma alpha), as y = gamma alpha
        // (e^x - 1) there (gamma = 1 for elu).
        Value x = o.getInput(), y = o.getResult();
        double alpha = o.getAlpha().convertToDouble(), gamma = 1.0;
        if (auto selu = dyn_cast<SeluOp>(o.getOperation()))
          gamma = selu.getGamma().convertToDouble();
        auto type = typeOf(x);
        Value positive =
            gamma == 1.0 ? grad
                         : MulOp::create(b, loc, grad, g.constant(type, gamma))
                               .getResult();
        Value negative = MulOp::create(
            b, loc, grad,
            AddOp::create(b, loc, y, g.constant(type, gamma * alpha)));
        out[0] = WhereOp::create(
            b, loc, GreaterOp::create(b, loc, x, g.constant(type, 0.0)),
            positive, negative);
      })
      .Case([&](ClipOp o) {
        // The gradient passes where min <= x <= max.
        Value x = o.getInput();
        auto type = typeOf(x);
        if (!isa<FloatType>(type.getElementType())) {
          handled = false;
          return;
        }
        Value zero = g.constant(type, 0.0), passed = grad;
        if (std::optional<APFloat> max = o.getMax())
          passed = WhereOp::create(
              b, loc,
              GreaterOp::create(b, loc, x,
                                g.constant(type, max->convertToDouble())),
              zero, passed);
        if (std::optional<APFloat> min = o.getMin())
          passed = WhereOp::create(
              b, loc,
              LessOp::create(b, loc, x,
                             g.constant(type, min->convertToDouble())),
              zero, passed);
        out[0] = passed;
      })
      .Case<MaxOp, MinOp>([&](auto o) {
        // The chosen operand gets the gradient; ties share it equally, as
        // torch.maximum and torch.minimum do.
        Value lhs = o.getLhs(), rhs = o.getRhs();
        Value zero = g.constant(typeOf(grad), 0.0);
        Value half = MulOp::create(b, loc, grad, g.constant(typeOf(grad), 0.5));
        Value tie = EqualOp::create(b, loc, lhs, rhs);
        Value right = isa<MaxOp>(o.getOperation())
                          ? LessOp::create(b, loc, lhs, rhs).getResult()
                          : GreaterOp::create(b, loc, lhs, rhs).getResult();
        Value toLeft = WhereOp::create(b, loc, right, zero, grad);
        Value toRight = WhereOp::create(b, loc, right, grad, zero);
        out[0] = g.unbroadcast(WhereOp::create(b, loc, tie, half, toLeft),
                               typeOf(lhs));
        out[1] = g.unbroadcast(WhereOp::create(b, loc, tie, half, toRight),
                               typeOf(rhs));
      })
      .Case([&](PowOp o) {
        // d/da = b a^(b-1), d/db = y log(a).
        Value base = o.getLhs(), exponent = o.getRhs();
        auto expType = typeOf(exponent);
        if (!isa<FloatType>(expType.getElementType()) ||
            expType.getElementType() != typeOf(base).getElementType()) {
          handled = false;
          return;
        }
        Value lower = PowOp::create(
            b, loc, base,
            SubOp::create(b, loc, exponent, g.constant(expType, 1.0)));
        out[0] = g.unbroadcast(
            MulOp::create(b, loc, grad, MulOp::create(b, loc, exponent, lower)),
            typeOf(base));
        out[1] = g.unbroadcast(
            MulOp::create(b, loc, grad,
                          MulOp::create(b, loc, o.getResult(),
                                        LogOp::create(b, loc, base))),
            expType);
      })
      .Case([&](PReluOp o) {
        Value x = o.getInput(), slope = o.getSlope();
        Value zero = g.constant(typeOf(x), 0.0);
        Value negative = LessOp::create(b, loc, x, zero);
        out[0] = WhereOp::create(b, loc, negative,
                                 MulOp::create(b, loc, grad, slope), grad);
        out[1] =
            g.unbroadcast(WhereOp::create(b, loc, negative,
                                          MulOp::create(b, loc, grad, x), zero),
                          typeOf(slope));
      })
      .Case([&](CastOp o) {
        // Between floating-point types only.
        auto from = typeOf(o.getInput());
        if (!isa<FloatType>(from.getElementType()) ||
            !isa<FloatType>(typeOf(grad).getElementType())) {
          handled = false;
          return;
        }
        out[0] = CastOp::create(b, loc, from, grad);
      })
      .Case([&](ExpandOp o) {
        out[0] = g.unbroadcast(grad, typeOf(o.getInput()));
      })
      .Case([&](TileOp o) {
        // [r0 d0, r1 d1, ...] -> [r0, d0, r1, d1, ...], summed over the r.
        auto inputType = typeOf(o.getInput());
        SmallVector<int64_t> split, axes;
        for (auto [d, repeat] : llvm::enumerate(o.getRepeats())) {
          axes.push_back(split.size());
          split.append({repeat, inputType.getDimSize(d)});
        }
        Value blocks = ReshapeOp::create(
            b, loc, RankedTensorType::get(split, inputType.getElementType()),
            grad);
        Value summed =
            ReduceSumOp::create(b, loc, blocks, b.getDenseI64ArrayAttr(axes));
        out[0] = ReshapeOp::create(b, loc, inputType, summed);
      })
      .Case([&](PadOp o) {
        // Constant mode: the gradient inside the input's window; cropped
        // parts (negative pads) get zeros. Reflect and edge modes: axis by
        // axis, the padded parts' gradients are added to the positions
        // they copied.
        auto inputType = typeOf(o.getInput());
        if (o.getMode() != PadMode::constant) {
          out[0] = g.unpad(grad, inputType, o.getPads(),
                           o.getMode() == PadMode::reflect);
          handled = static_cast<bool>(out[0]);
          return;
        }
        int64_t rank = inputType.getRank();
        ArrayRef<int64_t> pads = o.getPads();
        SmallVector<int64_t> offsets, sizes, strides(rank, 1), crops(2 * rank);
        for (int64_t d = 0; d < rank; ++d) {
          int64_t begin = pads[d], end = pads[rank + d];
          offsets.push_back(std::max<int64_t>(begin, 0));
          sizes.push_back(inputType.getDimSize(d) -
                          std::max<int64_t>(-begin, 0) -
                          std::max<int64_t>(-end, 0));
          crops[d] = std::max<int64_t>(-begin, 0);
          crops[rank + d] = std::max<int64_t>(-end, 0);
        }
        Value inside = SliceOp::create(
            b, loc, grad, b.getDenseI64ArrayAttr(offsets),
            b.getDenseI64ArrayAttr(sizes), b.getDenseI64ArrayAttr(strides));
        out[0] = llvm::all_of(crops, [](int64_t c) { return !c; })
                     ? inside
                     : PadOp::create(b, loc, inside, crops, PadMode::constant,
                                     llvm::APFloat(0.0))
                           .getResult();
      })
      .Case([&](TriluOp o) {
        out[0] = TriluOp::create(b, loc, grad, o.getK(), o.getUpper());
      })
      .Case([&](GlobalAveragePoolOp o) {
        auto inputType = typeOf(o.getInput());
        int64_t planes = inputType.getDimSize(0) * inputType.getDimSize(1);
        double scale = double(planes) / double(inputType.getNumElements());
        out[0] = MulOp::create(b, loc, grad,
                               g.constant(inputType, scale, /*scalar=*/false));
      })
      .Case([&](ReduceMaxOp o) {
        // Shared evenly between the maxima, as torch.amax does.
        Value x = o.getInput();
        auto inputType = typeOf(x);
        SmallVector<int64_t> kept(inputType.getShape());
        for (int64_t axis : o.getAxes())
          kept[axis] = 1;
        auto keptType = RankedTensorType::get(kept, inputType.getElementType());
        Value y = ReshapeOp::create(b, loc, keptType, o.getResult());
        Value isMax = EqualOp::create(b, loc, x, y);
        Value count = ReduceSumOp::create(
            b, loc, CastOp::create(b, loc, inputType, isMax),
            b.getDenseI64ArrayAttr(o.getAxes()), b.getUnitAttr());
        Value share = DivOp::create(
            b, loc, ReshapeOp::create(b, loc, keptType, grad), count);
        out[0] = WhereOp::create(
            b, loc, isMax,
            MulOp::create(b, loc, share,
                          g.constant(inputType, 1.0, /*scalar=*/false)),
            g.constant(inputType, 0.0));
      })
      .Case([&](MatMulOp o) {
        // Y = A B (batched, broadcast): dA = dY B^T, dB = A^T dY, each
        // summed over the batch dimensions it was broadcast along.
        Value lhs = o.getLhs(), rhs = o.getRhs();
        if (typeOf(lhs).getRank() < 2 || typeOf(rhs).getRank() < 2) {
          handled = false;
          return;
        }
        out[0] = g.unbroadcast(
            MatMulOp::create(b, loc, grad, g.transposeLast(rhs)), typeOf(lhs));
        out[1] = g.unbroadcast(
            MatMulOp::create(b, loc, g.transposeLast(lhs), grad), typeOf(rhs));
      })
      .Case([&](GemmOp o) {
        // Y = alpha op(A) op(B) + beta C.
        bool transA = o.getTransA(), transB = o.getTransB();
        FloatAttr alpha = o.getAlphaAttr();
        FloatAttr one = b.getF32FloatAttr(1.0);
        UnitAttr yes = b.getUnitAttr(), no;
        // dA: alpha dY op(B)^T, or its transpose when A is transposed.
        out[0] = transA ? GemmOp::create(b, loc, o.getB(), grad, Value(), alpha,
                                         one, transB ? yes : no, yes)
                        : GemmOp::create(b, loc, grad, o.getB(), Value(), alpha,
                                         one, no, transB ? no : yes);
        // dB: alpha op(A)^T dY, or its transpose when B is transposed.
        out[1] = transB ? GemmOp::create(b, loc, grad, o.getA(), Value(), alpha,
                                         one, yes, transA ? yes : no)
                        : GemmOp::create(b, loc, o.getA(), grad, Value(), alpha,
                                         one, transA ? no : yes, no);
        if (Value c = o.getC()) {
          Value scaled = grad;
          if (o.getBeta().convertToDouble() != 1.0)
            scaled = MulOp::create(
                b, loc, grad,
                g.constant(typeOf(grad), o.getBeta().convertToDouble()));
          out[2] = g.unbroadcast(scaled, typeOf(c));
        }
      })
      .Case([&](ConvOp o) {
        // dX is the transposed convolution of dY with W, in the same
        // groups, with the output padding that restores X's size. Each
        // group's dW is the convolution of its X and dY channels with batch
        // and channels swapped, strides and dilations exchanged, cut to the
        // kernel. dB sums dY.
        Value x = o.getInput(), w = o.getWeight();
        auto xType = typeOf(x), wType = typeOf(w), yType = typeOf(grad);
        int64_t group = o.getGroup();
        int64_t spatial = xType.getRank() - 2;
        ArrayRef<int64_t> strides = o.getStrides(), pads = o.getPads(),
                          dilations = o.getDilations();
        SmallVector<int64_t> outputPadding;
        for (int64_t d = 0; d < spatial; ++d) {
          int64_t span = xType.getDimSize(d + 2) + pads[d] + pads[spatial + d] -
                         dilations[d] * (wType.getDimSize(d + 2) - 1) - 1;
          outputPadding.push_back(span % strides[d]);
        }
        auto dx =
            ConvTransposeOp::create(b, loc, grad, w, Value(), strides, pads,
                                    dilations, outputPadding, group);
        if (dx.getType() != xType) {
          handled = false;
          return;
        }
        out[0] = dx;
        SmallVector<int64_t> swap;
        for (int64_t d = 0; d < xType.getRank(); ++d)
          swap.push_back(d);
        std::swap(swap[0], swap[1]);
        auto swapAttr = b.getDenseI64ArrayAttr(swap);
        int64_t inPerGroup = xType.getDimSize(1) / group,
                outPerGroup = wType.getDimSize(0) / group;
        SmallVector<Value> pieces;
        for (int64_t j = 0; j < group; ++j) {
          Value xs = TransposeOp::create(
              b, loc, g.slice(x, 1, j * inPerGroup, inPerGroup), swapAttr);
          Value ys = TransposeOp::create(
              b, loc, g.slice(grad, 1, j * outPerGroup, outPerGroup), swapAttr);
          Value full =
              ConvOp::create(b, loc, xs, ys, Value(), dilations, pads, strides);
          for (int64_t d = 0; d < spatial; ++d)
            full = g.slice(full, d + 2, 0, wType.getDimSize(d + 2));
          pieces.push_back(TransposeOp::create(b, loc, full, swapAttr));
        }
        out[1] = group == 1 ? pieces.front()
                            : ConcatOp::create(b, loc, pieces, 0).getResult();
        if (Value bias = o.getBias()) {
          SmallVector<int64_t> axes = {0};
          for (int64_t d = 2; d < yType.getRank(); ++d)
            axes.push_back(d);
          out[2] =
              ReduceSumOp::create(b, loc, grad, b.getDenseI64ArrayAttr(axes));
        }
      })
      .Case([&](MaxPoolOp o) {
        out[0] = MaxPoolGradOp::create(
            b, loc, o.getInput().getType(), o.getInput(), grad,
            o.getKernelShape(), o.getStrides(), o.getPads(), o.getDilations());
      })
      .Case([&](AveragePoolOp o) {
        out[0] = AveragePoolGradOp::create(b, loc, o.getInput().getType(), grad,
                                           o.getKernelShape(), o.getStrides(),
                                           o.getPads(), o.getCountIncludePad());
      })
      .Case([&](ConcatOp o) {
        // Each input gets its slice of the gradient.
        int64_t offset = 0, axis = o.getAxis();
        for (auto [i, input] : llvm::enumerate(o.getInputs())) {
          int64_t size = typeOf(input).getDimSize(axis);
          out[i] = g.slice(grad, axis, offset, size);
          offset += size;
        }
      })
      .Case([&](SplitOp o) {
        // The pieces' gradients (zero for unused pieces), joined.
        out[0] = resultGrads.size() == 1
                     ? resultGrads.front()
                     : ConcatOp::create(b, loc, resultGrads, o.getAxis())
                           .getResult();
      })
      .Case([&](WhereOp o) {
        // Each branch gets the gradient where it was chosen.
        Value zero = g.constant(typeOf(grad), 0.0);
        out[1] =
            g.unbroadcast(WhereOp::create(b, loc, o.getCondition(), grad, zero),
                          typeOf(o.getLhs()));
        out[2] =
            g.unbroadcast(WhereOp::create(b, loc, o.getCondition(), zero, grad),
                          typeOf(o.getRhs()));
      })
      .Case([&](GatherOp o) {
        // Scatter-add the gradient into the gathered rows, as
        // onehot(indices)^T times the gradient: the gathered axis k moved
        // first, the index dimensions of the gradient moved first and
        // flattened. Negative indices count from the end.
        Value data = o.getData(), indices = o.getIndices();
        auto dataType = typeOf(data), indexType = typeOf(indices);
        int64_t axis = o.getAxis(), rank = dataType.getRank();
        int64_t indexRank = indexType.getRank();
        int64_t count = indexType.getNumElements();
        int64_t rows = dataType.getDimSize(axis);
        int64_t width = dataType.getNumElements() / std::max<int64_t>(rows, 1);
        Type f = dataType.getElementType();
        Value extent = g.integers(indexType.getElementType(), {}, {rows});
        Value zero = g.integers(indexType.getElementType(), {}, {0});
        Value wrapped =
            WhereOp::create(b, loc, LessOp::create(b, loc, indices, zero),
                            AddOp::create(b, loc, indices, extent), indices);
        Value onehot = g.onehot(wrapped, rows, f);
        // The gradient is data[:k] + indices + data[k+1:]: indices first.
        SmallVector<int64_t> perm;
        for (int64_t d = 0; d < indexRank; ++d)
          perm.push_back(axis + d);
        for (int64_t d = 0; d < typeOf(grad).getRank(); ++d)
          if (d < axis || d >= axis + indexRank)
            perm.push_back(d);
        Value moved = grad;
        if (axis != 0)
          moved =
              TransposeOp::create(b, loc, grad, b.getDenseI64ArrayAttr(perm));
        Value flat = ReshapeOp::create(
            b, loc, RankedTensorType::get({count, width}, f), moved);
        Value summed = MatMulOp::create(b, loc, g.transposeLast(onehot), flat);
        // [rows, data[:k], data[k+1:]] back to the data's order.
        SmallVector<int64_t> firstShape = {rows}, back;
        for (int64_t d = 0; d < rank; ++d)
          if (d != axis)
            firstShape.push_back(dataType.getDimSize(d));
        for (int64_t d = 1; d <= axis; ++d)
          back.push_back(d);
        back.push_back(0);
        for (int64_t d = axis + 1; d < rank; ++d)
          back.push_back(d);
        Value unflat = ReshapeOp::create(
            b, loc, RankedTensorType::get(firstShape, f), summed);
        out[0] = axis == 0 ? unflat
                           : TransposeOp::create(b, loc, unflat,
                                                 b.getDenseI64ArrayAttr(back))
                                 .getResult();
      })
      .Case([&](SliceOp o) {
        // The gradient goes back to the positions the slice read, zeros
        // elsewhere. Along an axis with stride s, a negative stride is
        // first undone by reversing the gradient; then each element is
        // followed by s - 1 zeros (a concat with zeros on a new axis and a
        // reshape). A final pad (cropping where negative) places the
        // spread gradient at the slice's first position.
        auto inputType = typeOf(o.getInput());
        int64_t rank = inputType.getRank();
        Type f = inputType.getElementType();
        SmallVector<int64_t> pads(2 * rank);
        Value spread = grad;
        for (int64_t d = 0; d < rank; ++d) {
          int64_t stride = o.getStrides()[d], size = o.getSizes()[d];
          int64_t first = o.getOffsets()[d];
          if (stride < 0 && size > 0) {
            // Reverse: the slice read first, first + stride, ...
            spread = g.reverse(spread, d);
            first += (size - 1) * stride;
            stride = -stride;
          }
          if (stride > 1 && size > 0) {
            auto current = typeOf(spread);
            SmallVector<int64_t> column(current.getShape());
            column.insert(column.begin() + d + 1, 1);
            SmallVector<int64_t> gaps(column);
            gaps[d + 1] = stride - 1;
            Value columns = ReshapeOp::create(
                b, loc, RankedTensorType::get(column, f), spread);
            Value zeros = g.constant(RankedTensorType::get(gaps, f), 0.0,
                                     /*scalar=*/false);
            Value joined =
                ConcatOp::create(b, loc, ValueRange{columns, zeros}, d + 1);
            SmallVector<int64_t> flat(current.getShape());
            flat[d] *= stride;
            spread = ReshapeOp::create(b, loc, RankedTensorType::get(flat, f),
                                       joined);
          }
          pads[d] = first;
          pads[rank + d] =
              inputType.getDimSize(d) - first - typeOf(spread).getDimSize(d);
        }
        out[0] = PadOp::create(b, loc, spread, pads, PadMode::constant,
                               llvm::APFloat(0.0));
      })
      .Case([&](ReshapeOp o) {
        out[0] = ReshapeOp::create(b, loc, o.getInput().getType(), grad);
      })
      .Case([&](TransposeOp o) {
        ArrayRef<int64_t> perm = o.getPerm();
        SmallVector<int64_t> inverse(perm.size());
        for (auto [i, p] : llvm::enumerate(perm))
          inverse[p] = i;
        out[0] =
            TransposeOp::create(b, loc, grad, b.getDenseI64ArrayAttr(inverse));
      })
      .Case<ReduceSumOp, ReduceMeanOp>([&](auto o) {
        // Spread the gradient back over the reduced dimensions.
        auto inputType = typeOf(o.getInput());
        SmallVector<int64_t> kept(inputType.getShape());
        for (int64_t axis : o.getAxes())
          kept[axis] = 1;
        Value spread = ReshapeOp::create(
            b, loc, RankedTensorType::get(kept, inputType.getElementType()),
            grad);
        double scale = 1.0;
        if (isa<ReduceMeanOp>(o.getOperation()))
          for (int64_t axis : o.getAxes())
            scale /= double(inputType.getDimSize(axis));
        out[0] = MulOp::create(b, loc, spread,
                               g.constant(inputType, scale, /*scalar=*/false));
      })
      .Default([&](Operation *) { handled = false; });
  if (!handled)
    return failure();
  return out;
}

void AutodiffPass::runOnOperation() {
  ModuleOp module = getOperation();
  auto main = module.lookupSymbol<func::FuncOp>("main");
  if (!main || main.getNumResults() != 1) {
    mlir::emitError(module.getLoc())
        << "--pipe-autodiff needs a func.func @main with a single scalar "
           "result, the loss (run --pipe-prepare-training first)";
    return signalPassFailure();
  }
  Block &body = main.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  Value loss = ret.getOperand(0);

  // Trainable parameters in declaration order.
  llvm::MapVector<StringRef, SmallVector<Value>> uses;
  for (ParameterOp parameter : module.getOps<ParameterOp>())
    if (parameter.getTrainable())
      uses[parameter.getSymName()];
  // Values that depend on a trainable parameter.
  llvm::DenseSet<Value> active;
  for (Operation &op : body.without_terminator()) {
    if (auto ref = dyn_cast<ParamRefOp>(op)) {
      auto it = uses.find(ref.getName());
      if (it != uses.end()) {
        it->second.push_back(ref.getResult());
        active.insert(ref.getResult());
      }
      continue;
    }
    if (llvm::any_of(op.getOperands(),
                     [&](Value v) { return active.contains(v); }))
      active.insert(op.result_begin(), op.result_end());
  }

  OpBuilder builder(ret);
  GradientBuilder g(builder, main.getLoc());
  llvm::DenseMap<Value, Value> adjoint;
  auto accumulate = [&](Value value, Value grad) {
    Value &slot = adjoint[value];
    slot = slot ? AddOp::create(builder, g.loc, slot, grad).getResult() : grad;
  };
  accumulate(loss, g.constant(cast<RankedTensorType>(loss.getType()), 1.0));

  SmallVector<Operation *> ops;
  for (Operation &op : body.without_terminator())
    ops.push_back(&op);
  for (Operation *op : llvm::reverse(ops)) {
    if (isa<ParamRefOp, ConstantOp>(op) ||
        !llvm::any_of(op->getOperands(),
                      [&](Value v) { return active.contains(v); }))
      continue;
    SmallVector<Value> resultGrads;
    bool any = false;
    for (Value result : op->getResults()) {
      Value grad = adjoint.lookup(result);
      if (!grad)
        grad = g.constant(cast<RankedTensorType>(result.getType()), 0.0,
                          /*scalar=*/false);
      else
        any = true;
      resultGrads.push_back(grad);
    }
    if (!any)
      continue;
    g.loc = op->getLoc();
    FailureOr<SmallVector<Value>> grads = gradients(op, resultGrads, g);
    if (failed(grads)) {
      mlir::emitError(op->getLoc())
          << "no gradient for '" << op->getName()
          << "', which lies between a trainable parameter "
             "and the loss";
      return signalPassFailure();
    }
    for (auto [operand, grad] : llvm::zip(op->getOperands(), *grads))
      if (grad && active.contains(operand))
        accumulate(operand, grad);
  }

  // The loss, then one gradient per trainable parameter.
  g.loc = main.getLoc();
  SmallVector<Value> results = {loss};
  SmallVector<Type> types = {loss.getType()};
  SmallVector<DictionaryAttr> attrs = {main.getResultAttrDict(0)};
  for (auto &[name, refs] : uses) {
    auto parameter = module.lookupSymbol<ParameterOp>(name);
    auto type = cast<RankedTensorType>(parameter.getType());
    Value total;
    for (Value ref : refs)
      if (Value grad = adjoint.lookup(ref))
        total = total ? AddOp::create(builder, g.loc, total, grad).getResult()
                      : grad;
    if (!total)
      total = g.constant(type, 0.0, /*scalar=*/false);
    results.push_back(total);
    types.push_back(type);
    attrs.push_back(builder.getDictionaryAttr(
        {builder.getNamedAttr("pipe.name",
                              builder.getStringAttr("grad." + name.str())),
         builder.getNamedAttr("pipe.grad_of",
                              FlatSymbolRefAttr::get(parameter))}));
  }
  func::ReturnOp::create(builder, ret.getLoc(), results);
  ret.erase();
  main.setType(
      FunctionType::get(&getContext(), main.getArgumentTypes(), types));
  main.setAllResultAttrs(attrs);

  // Gradients of inputs and frozen parameters were built along the way and
  // are unused: erase them.
  SmallVector<Operation *> all;
  for (Operation &op : body.without_terminator())
    all.push_back(&op);
  for (Operation *op : llvm::reverse(all))
    if (op->use_empty() && isPure(op))
      op->erase();
}
