//===- PipeNNOps.cpp - contraction, conv, pool, norm and loss ops ---------===//

#include "pipe/Dialect/Pipe/IR/PipeOps.h"

using namespace mlir;
using namespace mlir::pipe;

LogicalResult mlir::pipe::checkAxis(std::optional<Location> loc, int64_t axis,
                                    int64_t rank) {
  if (axis < 0 || axis >= rank)
    return emitOptionalError(loc, "axis ", axis, " is out of range for a rank-",
                             rank, " tensor");
  return success();
}

LogicalResult mlir::pipe::verifyAxis(Operation *op, int64_t axis,
                                     int64_t rank) {
  if (axis < 0 || axis >= rank)
    return op->emitOpError("axis ")
           << axis << " is out of range for a rank-" << rank << " tensor";
  return success();
}

static RankedTensorType tensorOf(Type type) {
  return cast<RankedTensorType>(type);
}

//===----------------------------------------------------------------------===//
// MatMulOp
//===----------------------------------------------------------------------===//

LogicalResult MatMulOp::inferReturnTypes(MLIRContext *context,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  if (failed(requireStaticShapes(loc, adaptor.getOperands())))
    return failure();
  RankedTensorType lhs = tensorOf(adaptor.getLhs().getType());
  RankedTensorType rhs = tensorOf(adaptor.getRhs().getType());
  if (lhs.getElementType() != rhs.getElementType())
    return emitOptionalError(
        loc, "operand element types differ: ", lhs.getElementType(), " vs ",
        rhs.getElementType());
  if (lhs.getRank() == 0 || rhs.getRank() == 0)
    return emitOptionalError(loc, "operands must have rank at least 1");
  // numpy promotion: a 1-D lhs is a row vector, a 1-D rhs a column vector.
  SmallVector<int64_t> a(lhs.getShape()), b(rhs.getShape());
  bool lhsVector = a.size() == 1, rhsVector = b.size() == 1;
  if (lhsVector)
    a.insert(a.begin(), 1);
  if (rhsVector)
    b.push_back(1);
  int64_t k = a.back(), kb = b[b.size() - 2];
  if (k != kb)
    return emitOptionalError(
        loc, "contracting dimensions differ: ", formatShape(lhs.getShape()),
        " x ", formatShape(rhs.getShape()));
  FailureOr<SmallVector<int64_t>> batch = broadcastShapes(
      {ArrayRef<int64_t>(a).drop_back(2), ArrayRef<int64_t>(b).drop_back(2)});
  if (failed(batch))
    return emitOptionalError(
        loc, "batch dimensions of ", formatShape(lhs.getShape()), " and ",
        formatShape(rhs.getShape()), " are not broadcast-compatible");
  SmallVector<int64_t> shape = *batch;
  if (!lhsVector)
    shape.push_back(a[a.size() - 2]);
  if (!rhsVector)
    shape.push_back(b.back());
  types.push_back(RankedTensorType::get(shape, lhs.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// GemmOp
//===----------------------------------------------------------------------===//

LogicalResult GemmOp::inferReturnTypes(MLIRContext *context,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  if (failed(requireStaticShapes(loc, adaptor.getOperands())))
    return failure();
  RankedTensorType a = tensorOf(adaptor.getA().getType());
  RankedTensorType b = tensorOf(adaptor.getB().getType());
  if (a.getRank() != 2 || b.getRank() != 2)
    return emitOptionalError(loc, "A and B must be matrices, got ",
                             formatShape(a.getShape()), " and ",
                             formatShape(b.getShape()));
  bool transA = static_cast<bool>(adaptor.getTransAAttr());
  bool transB = static_cast<bool>(adaptor.getTransBAttr());
  int64_t m = a.getDimSize(transA ? 1 : 0), k = a.getDimSize(transA ? 0 : 1);
  int64_t kb = b.getDimSize(transB ? 1 : 0), n = b.getDimSize(transB ? 0 : 1);
  if (k != kb)
    return emitOptionalError(loc, "contracting dimensions differ: ", k, " vs ",
                             kb);
  types.push_back(RankedTensorType::get({m, n}, a.getElementType()));
  return success();
}

LogicalResult GemmOp::verify() {
  SmallVector<Value> values = {getA(), getB()};
  if (getC())
    values.push_back(getC());
  if (failed(verifySameElementType(*this, values)))
    return failure();
  if (!getC())
    return success();
  ArrayRef<int64_t> shape = getType().getShape();
  FailureOr<SmallVector<int64_t>> broadcast =
      broadcastShapes({shape, getC().getType().getShape()});
  if (failed(broadcast) || ArrayRef<int64_t>(*broadcast) != shape)
    return emitOpError("C of shape ")
           << formatShape(getC().getType().getShape())
           << " does not broadcast to the result shape " << formatShape(shape);
  return success();
}

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

/// The spatial attributes shared by convolutions and pooling.
struct WindowAttrs {
  ArrayRef<int64_t> kernel, strides, pads, dilations;
  bool ceilMode = false;
};

/// Checks the window attributes against `spatialRank` and computes the
/// output extents of a sliding window over `input` (spatial axes only).
static FailureOr<SmallVector<int64_t>>
inferWindowExtents(std::optional<Location> loc, ArrayRef<int64_t> spatial,
                   const WindowAttrs &window) {
  size_t n = spatial.size();
  auto check = [&](ArrayRef<int64_t> values, StringRef name,
                   size_t expected) -> LogicalResult {
    if (values.size() != expected)
      return emitOptionalError(loc, name, " has ", values.size(),
                               " entries, expected ", expected);
    return success();
  };
  if (failed(check(window.kernel, "kernel", n)) ||
      failed(check(window.strides, "strides", n)) ||
      failed(check(window.pads, "pads", 2 * n)) ||
      failed(check(window.dilations, "dilations", n)))
    return failure();
  SmallVector<int64_t> out;
  for (size_t i = 0; i < n; ++i) {
    if (window.strides[i] <= 0 || window.dilations[i] <= 0 ||
        window.kernel[i] <= 0)
      return emitOptionalError(loc, "kernel, strides and dilations must be "
                                    "positive");
    if (window.pads[i] < 0 || window.pads[n + i] < 0)
      return emitOptionalError(loc, "pads must be non-negative");
    int64_t span = window.dilations[i] * (window.kernel[i] - 1) + 1;
    int64_t padded = spatial[i] + window.pads[i] + window.pads[n + i];
    if (padded < span)
      return emitOptionalError(loc, "window of extent ", span,
                               " does not fit padded spatial axis ", i,
                               " of extent ", padded);
    int64_t room = padded - span;
    int64_t extent =
        (window.ceilMode ? llvm::divideCeil(room, window.strides[i])
                         : room / window.strides[i]) +
        1;
    // With ceil_mode the last window must start inside the input or the
    // begin padding.
    if (window.ceilMode &&
        (extent - 1) * window.strides[i] >= spatial[i] + window.pads[i])
      --extent;
    out.push_back(extent);
  }
  return out;
}

/// The output type of a convolution of `input` by `weight`, or an error
/// at `loc`.
static FailureOr<RankedTensorType>
inferConvOutput(std::optional<Location> loc, RankedTensorType input,
                RankedTensorType weight, ArrayRef<int64_t> strides,
                ArrayRef<int64_t> pads, ArrayRef<int64_t> dilations,
                int64_t group) {
  if (input.getRank() < 3 || weight.getRank() != input.getRank())
    return emitOptionalError(loc, "input ", formatShape(input.getShape()),
                             " and weight ", formatShape(weight.getShape()),
                             " must have the same rank, at least 3");
  int64_t channels = input.getDimSize(1), filters = weight.getDimSize(0);
  if (group <= 0 || channels % group || filters % group)
    return emitOptionalError(loc, "group ", group,
                             " must divide the input channels ", channels,
                             " and the filters ", filters);
  if (weight.getDimSize(1) != channels / group)
    return emitOptionalError(loc, "weight has ", weight.getDimSize(1),
                             " input channels, expected ", channels / group);
  WindowAttrs window{weight.getShape().drop_front(2), strides, pads, dilations};
  FailureOr<SmallVector<int64_t>> extents =
      inferWindowExtents(loc, input.getShape().drop_front(2), window);
  if (failed(extents))
    return failure();
  SmallVector<int64_t> shape = {input.getDimSize(0), filters};
  shape.append(*extents);
  return RankedTensorType::get(shape, input.getElementType());
}

LogicalResult ConvOp::inferReturnTypes(MLIRContext *context,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  if (failed(requireStaticShapes(loc, adaptor.getOperands())))
    return failure();
  RankedTensorType weight = tensorOf(adaptor.getWeight().getType());
  RankedTensorType input = tensorOf(adaptor.getInput().getType());
  // Channels last: the same convolution, with the channels moved.
  int64_t rank = input.getRank();
  SmallVector<int64_t> toFirst, toLast;
  if (adaptor.getChannelsLast() && rank >= 3) {
    toFirst.push_back(0);
    toFirst.push_back(rank - 1);
    toLast.push_back(0);
    for (int64_t d = 1; d < rank - 1; ++d) {
      toFirst.push_back(d);
      toLast.push_back(d + 1);
    }
    toLast.push_back(1);
    input = permutedType(input, toFirst);
  }
  FailureOr<RankedTensorType> output = inferConvOutput(
      loc, input, weight, adaptor.getStrides(), adaptor.getPads(),
      adaptor.getDilations(), adaptor.getGroup());
  if (failed(output))
    return failure();
  if (!toLast.empty())
    output = permutedType(*output, toLast);
  if (Value bias = adaptor.getBias()) {
    RankedTensorType biasType = tensorOf(bias.getType());
    if (biasType.getRank() != 1 ||
        biasType.getDimSize(0) != weight.getDimSize(0))
      return emitOptionalError(loc, "bias must have shape [",
                               weight.getDimSize(0), "]");
  }
  types.push_back(*output);
  return success();
}

LogicalResult ConvOp::verify() {
  std::optional<ConvActivation> activation = getActivation();
  if (activation && !getChannelsLast())
    return emitOpError("a fused activation needs channels_last");
  bool clip = activation == ConvActivation::clip;
  if (clip != (getActivationMin() && getActivationMax()) ||
      (!clip && (getActivationMin() || getActivationMax())))
    return emitOpError("activation_min and activation_max go with a clip "
                       "activation, both");
  return success();
}

LogicalResult ConvWeightGradOp::verify() {
  // The weight is right when the convolution it belongs to reads the input
  // into the gradient's shape.
  RankedTensorType input = getInput().getType(), grad = getGrad().getType();
  RankedTensorType weight = getType();
  if (input.getElementType() != weight.getElementType() ||
      grad.getElementType() != weight.getElementType())
    return emitOpError("input, gradient and result element types differ");
  FailureOr<RankedTensorType> output =
      inferConvOutput(getLoc(), input, weight, getStrides(), getPads(),
                      getDilations(), getGroup());
  if (failed(output))
    return failure();
  if (*output != grad)
    return emitOpError("gradient type ")
           << grad << " is not the output " << *output
           << " of a convolution of " << input << " by " << weight;
  return success();
}

LogicalResult ConvTransposeOp::inferReturnTypes(MLIRContext *context,
                                                std::optional<Location> loc,
                                                Adaptor adaptor,
                                                SmallVectorImpl<Type> &types) {
  if (failed(requireStaticShapes(loc, adaptor.getOperands())))
    return failure();
  RankedTensorType input = tensorOf(adaptor.getInput().getType());
  RankedTensorType weight = tensorOf(adaptor.getWeight().getType());
  if (input.getRank() < 3 || weight.getRank() != input.getRank())
    return emitOptionalError(loc, "input ", formatShape(input.getShape()),
                             " and weight ", formatShape(weight.getShape()),
                             " must have the same rank, at least 3");
  int64_t group = adaptor.getGroup();
  int64_t channels = input.getDimSize(1);
  if (group <= 0 || channels % group || weight.getDimSize(0) != channels)
    return emitOptionalError(loc, "weight must have ", channels,
                             " input channels divisible by group ", group);
  int64_t filters = weight.getDimSize(1) * group;
  size_t n = input.getRank() - 2;
  ArrayRef<int64_t> strides = adaptor.getStrides(), pads = adaptor.getPads(),
                    dilations = adaptor.getDilations(),
                    outputPadding = adaptor.getOutputPadding();
  if (strides.size() != n || dilations.size() != n || pads.size() != 2 * n ||
      outputPadding.size() != n)
    return emitOptionalError(loc, "strides, dilations and output_padding need ",
                             n, " entries and pads ", 2 * n);
  for (size_t i = 0; i < n; ++i) {
    if (strides[i] <= 0 || dilations[i] <= 0)
      return emitOptionalError(loc, "strides and dilations must be positive");
    if (pads[i] < 0 || pads[n + i] < 0)
      return emitOptionalError(loc, "pads must be non-negative");
    if (outputPadding[i] < 0 ||
        outputPadding[i] >= std::max(strides[i], dilations[i]))
      return emitOptionalError(loc, "output_padding ", outputPadding[i],
                               " of spatial axis ", i,
                               " must lie in [0, max(stride, dilation))");
  }
  if (Value bias = adaptor.getBias()) {
    RankedTensorType biasType = tensorOf(bias.getType());
    if (biasType.getRank() != 1 || biasType.getDimSize(0) != filters)
      return emitOptionalError(loc, "bias must have shape [", filters, "]");
  }
  SmallVector<int64_t> shape = {input.getDimSize(0), filters};
  for (size_t i = 0; i < n; ++i) {
    int64_t extent = strides[i] * (input.getDimSize(2 + i) - 1) +
                     outputPadding[i] +
                     dilations[i] * (weight.getDimSize(2 + i) - 1) + 1 -
                     pads[i] - pads[n + i];
    if (extent <= 0)
      return emitOptionalError(loc, "output spatial axis ", i,
                               " would have extent ", extent);
    shape.push_back(extent);
  }
  types.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

/// Infers the result of a pooling op over `input` with `window`.
static LogicalResult inferPoolResult(std::optional<Location> loc, Type type,
                                     const WindowAttrs &window,
                                     SmallVectorImpl<Type> &types) {
  RankedTensorType input = tensorOf(type);
  if (input.getRank() < 3)
    return emitOptionalError(loc, "input must have rank at least 3, got ",
                             formatShape(input.getShape()));
  FailureOr<SmallVector<int64_t>> extents =
      inferWindowExtents(loc, input.getShape().drop_front(2), window);
  if (failed(extents))
    return failure();
  SmallVector<int64_t> shape(input.getShape().take_front(2));
  shape.append(*extents);
  types.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

LogicalResult MaxPoolOp::inferReturnTypes(MLIRContext *context,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  if (failed(requireStaticShapes(loc, adaptor.getOperands())))
    return failure();
  WindowAttrs window{adaptor.getKernelShape(), adaptor.getStrides(),
                     adaptor.getPads(), adaptor.getDilations(),
                     static_cast<bool>(adaptor.getCeilModeAttr())};
  return inferPoolResult(loc, adaptor.getInput().getType(), window, types);
}

LogicalResult AveragePoolOp::inferReturnTypes(MLIRContext *context,
                                              std::optional<Location> loc,
                                              Adaptor adaptor,
                                              SmallVectorImpl<Type> &types) {
  if (failed(requireStaticShapes(loc, adaptor.getOperands())))
    return failure();
  SmallVector<int64_t> dilations(adaptor.getKernelShape().size(), 1);
  WindowAttrs window{adaptor.getKernelShape(), adaptor.getStrides(),
                     adaptor.getPads(), dilations,
                     static_cast<bool>(adaptor.getCeilModeAttr())};
  return inferPoolResult(loc, adaptor.getInput().getType(), window, types);
}

LogicalResult GlobalAveragePoolOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  if (failed(requireStaticShapes(loc, adaptor.getOperands())))
    return failure();
  RankedTensorType input = tensorOf(adaptor.getInput().getType());
  if (input.getRank() < 3)
    return emitOptionalError(loc, "input must have rank at least 3, got ",
                             formatShape(input.getShape()));
  SmallVector<int64_t> shape(input.getRank(), 1);
  shape[0] = input.getDimSize(0);
  shape[1] = input.getDimSize(1);
  types.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

/// Checks that `param` is a vector over the channels (axis 1) of `input`.
static LogicalResult verifyChannelParam(Operation *op, RankedTensorType input,
                                        RankedTensorType param) {
  if (input.getRank() < 2)
    return op->emitOpError("input must have rank at least 2, got ")
           << formatShape(input.getShape());
  if (param.getRank() != 1 || param.getDimSize(0) != input.getDimSize(1))
    return op->emitOpError("per-channel operands must have shape [")
           << input.getDimSize(1) << "], got " << formatShape(param.getShape());
  if (param.getElementType() != input.getElementType())
    return op->emitOpError("per-channel operands must have element type ")
           << input.getElementType();
  return success();
}

template <typename NormOp>
static LogicalResult inferSameAsInput(typename NormOp::Adaptor adaptor,
                                      SmallVectorImpl<Type> &types,
                                      unsigned copies = 1) {
  types.push_back(adaptor.getInput().getType());
  for (unsigned i = 1; i < copies; ++i)
    types.push_back(adaptor.getScale().getType());
  return success();
}

LogicalResult BatchNormOp::inferReturnTypes(MLIRContext *context,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  if (failed(requireStaticShapes(loc, adaptor.getOperands())))
    return failure();
  return inferSameAsInput<BatchNormOp>(adaptor, types);
}

LogicalResult BatchNormOp::verify() {
  return verifyChannelParam(*this, getInput().getType(), getScale().getType());
}

LogicalResult BatchNormTrainOp::inferReturnTypes(MLIRContext *context,
                                                 std::optional<Location> loc,
                                                 Adaptor adaptor,
                                                 SmallVectorImpl<Type> &types) {
  if (failed(requireStaticShapes(loc, adaptor.getOperands())))
    return failure();
  return inferSameAsInput<BatchNormTrainOp>(adaptor, types, /*copies=*/3);
}

LogicalResult BatchNormTrainOp::verify() {
  float momentum = getMomentum().convertToFloat();
  if (!(momentum >= 0 && momentum <= 1))
    return emitOpError("momentum must lie in [0, 1]");
  return verifyChannelParam(*this, getInput().getType(), getScale().getType());
}

LogicalResult BatchNormTrainGradOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  if (failed(requireStaticShapes(loc, adaptor.getOperands())))
    return failure();
  return inferSameAsInput<BatchNormTrainGradOp>(adaptor, types, /*copies=*/3);
}

LogicalResult BatchNormTrainGradOp::verify() {
  return verifyChannelParam(*this, getInput().getType(), getScale().getType());
}

LogicalResult InstanceNormOp::inferReturnTypes(MLIRContext *context,
                                               std::optional<Location> loc,
                                               Adaptor adaptor,
                                               SmallVectorImpl<Type> &types) {
  if (failed(requireStaticShapes(loc, adaptor.getOperands())))
    return failure();
  return inferSameAsInput<InstanceNormOp>(adaptor, types);
}

LogicalResult InstanceNormOp::verify() {
  if (getInput().getType().getRank() < 3)
    return emitOpError("input must have rank at least 3");
  return verifyChannelParam(*this, getInput().getType(), getScale().getType());
}

LogicalResult LayerNormOp::inferReturnTypes(MLIRContext *context,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  if (failed(requireStaticShapes(loc, adaptor.getOperands())))
    return failure();
  return inferSameAsInput<LayerNormOp>(adaptor, types);
}

LogicalResult LayerNormOp::verify() {
  RankedTensorType input = getInput().getType();
  int64_t axis = getAxis();
  if (failed(verifyAxis(*this, axis, input.getRank())))
    return failure();
  ArrayRef<int64_t> normalized = input.getShape().drop_front(axis);
  SmallVector<Value> params = {getScale()};
  if (getBias())
    params.push_back(getBias());
  for (Value param : params) {
    ArrayRef<int64_t> shape =
        cast<RankedTensorType>(param.getType()).getShape();
    FailureOr<SmallVector<int64_t>> broadcast =
        broadcastShapes({normalized, shape});
    if (failed(broadcast) || ArrayRef<int64_t>(*broadcast) != normalized)
      return emitOpError("scale and bias must broadcast to the normalized "
                         "shape ")
             << formatShape(normalized) << ", got " << formatShape(shape);
  }
  params.push_back(getInput());
  return verifySameElementType(*this, params);
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

/// Infers the result of reducing `type` over `axes`.
static LogicalResult inferReduceResult(std::optional<Location> loc, Type type,
                                       ArrayRef<int64_t> axes, bool keepDims,
                                       SmallVectorImpl<Type> &types) {
  RankedTensorType input = tensorOf(type);
  for (auto [i, axis] : llvm::enumerate(axes)) {
    if (failed(checkAxis(loc, axis, input.getRank())))
      return failure();
    if (i > 0 && axes[i - 1] >= axis)
      return emitOptionalError(loc, "axes must be strictly increasing");
  }
  SmallVector<int64_t> shape;
  for (auto [i, extent] : llvm::enumerate(input.getShape())) {
    if (!llvm::is_contained(axes, static_cast<int64_t>(i)))
      shape.push_back(extent);
    else if (keepDims)
      shape.push_back(1);
  }
  types.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

#define PIPE_REDUCE_INFER(OpTy)                                                \
  LogicalResult OpTy::inferReturnTypes(                                        \
      MLIRContext *context, std::optional<Location> loc, Adaptor adaptor,      \
      SmallVectorImpl<Type> &types) {                                          \
    if (failed(requireStaticShapes(loc, adaptor.getOperands())))               \
      return failure();                                                        \
    return inferReduceResult(                                                  \
        loc, adaptor.getInput().getType(), adaptor.getAxes(),                  \
        static_cast<bool>(adaptor.getKeepdimsAttr()), types);                  \
  }
PIPE_REDUCE_INFER(ReduceMeanOp)
PIPE_REDUCE_INFER(ReduceSumOp)
PIPE_REDUCE_INFER(ReduceMaxOp)
#undef PIPE_REDUCE_INFER

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

LogicalResult mlir::pipe::inferLossResult(std::optional<Location> loc,
                                          RankedTensorType scores,
                                          Reduction reduction,
                                          SmallVectorImpl<Type> &types) {
  if (scores.getRank() < 2)
    return emitOptionalError(loc, "scores must have rank at least 2, got ",
                             formatShape(scores.getShape()));
  SmallVector<int64_t> shape;
  if (reduction == Reduction::none) {
    shape.push_back(scores.getDimSize(0));
    llvm::append_range(shape, scores.getShape().drop_front(2));
  }
  types.push_back(RankedTensorType::get(shape, scores.getElementType()));
  return success();
}

LogicalResult mlir::pipe::verifyLoss(Operation *op, RankedTensorType scores,
                                     RankedTensorType labels,
                                     RankedTensorType weight) {
  SmallVector<int64_t> expected = {scores.getDimSize(0)};
  llvm::append_range(expected, scores.getShape().drop_front(2));
  if (labels.getShape() != ArrayRef<int64_t>(expected))
    return op->emitOpError("labels must have shape ")
           << formatShape(expected) << ", got "
           << formatShape(labels.getShape());
  if (weight &&
      (weight.getRank() != 1 || weight.getDimSize(0) != scores.getDimSize(1)))
    return op->emitOpError("weight must have shape [")
           << scores.getDimSize(1) << "], got "
           << formatShape(weight.getShape());
  return success();
}

//===----------------------------------------------------------------------===//
// Pooling gradients
//===----------------------------------------------------------------------===//

/// Checks that pooling `input` with `kernel`, `strides`, `pads` and
/// `dilations` (in floor or ceil mode) gives `grad`'s shape.
static LogicalResult verifyPoolGrad(Operation *op, Type input, Type grad,
                                    ArrayRef<int64_t> kernel,
                                    ArrayRef<int64_t> strides,
                                    ArrayRef<int64_t> pads,
                                    ArrayRef<int64_t> dilations) {
  for (bool ceil : {false, true}) {
    SmallVector<Type> pooled;
    WindowAttrs window{kernel, strides, pads, dilations, ceil};
    if (failed(inferPoolResult(op->getLoc(), input, window, pooled)))
      return failure();
    if (pooled.front() == grad)
      return success();
  }
  return op->emitOpError("gradient type ")
         << grad << " is not the pooled shape of " << input;
}

LogicalResult MaxPoolGradOp::verify() {
  return verifyPoolGrad(*this, getInput().getType(), getGrad().getType(),
                        getKernelShape(), getStrides(), getPads(),
                        getDilations());
}

LogicalResult AveragePoolGradOp::verify() {
  if (getOutput().getType().getElementType() !=
      getGrad().getType().getElementType())
    return emitOpError("result and gradient element types differ");
  SmallVector<int64_t> dilations(getKernelShape().size(), 1);
  return verifyPoolGrad(*this, getOutput().getType(), getGrad().getType(),
                        getKernelShape(), getStrides(), getPads(), dilations);
}

//===----------------------------------------------------------------------===//
// CostOpInterface
//===----------------------------------------------------------------------===//

// Contractions: two operations per multiply-add.

int64_t MatMulOp::getFlops() {
  auto lhs = cast<RankedTensorType>(getLhs().getType());
  return saturatingProduct(
      {2, tensorElements(getResult()), lhs.getShape().back()});
}
bool MatMulOp::isContraction() { return true; }

int64_t GemmOp::getFlops() {
  auto a = cast<RankedTensorType>(getA().getType());
  int64_t k = a.getDimSize(getTransA() ? 0 : 1);
  int64_t flops = saturatingProduct({2, tensorElements(getResult()), k});
  return getC() ? saturatingSum(flops, tensorElements(getResult())) : flops;
}
bool GemmOp::isContraction() { return true; }

/// The weights a convolution multiplies per element of `perElementOf`'s
/// leading dimension: no output channels, no work (and no division by
/// zero).
static int64_t weightsPer(Value weight) {
  auto w = cast<RankedTensorType>(weight.getType());
  return w.getDimSize(0) ? w.getNumElements() / w.getDimSize(0) : 0;
}

int64_t ConvOp::getFlops() {
  return saturatingProduct(
      {2, tensorElements(getResult()), weightsPer(getWeight())});
}
bool ConvOp::isContraction() { return true; }

int64_t ConvWeightGradOp::getFlops() {
  return saturatingProduct(
      {2, tensorElements(getGrad()), weightsPer(getResult())});
}
bool ConvWeightGradOp::isContraction() { return true; }

int64_t ConvTransposeOp::getFlops() {
  return saturatingProduct(
      {2, tensorElements(getInput()), weightsPer(getWeight())});
}
bool ConvTransposeOp::isContraction() { return true; }

// Pooling: one operation per window element of each result.

/// The results of a pooling op times its window.
static int64_t windowFlops(Value result, ArrayRef<int64_t> kernelShape) {
  int64_t flops = tensorElements(result);
  for (int64_t k : kernelShape)
    flops = saturatingProduct({flops, k});
  return flops;
}

int64_t MaxPoolOp::getFlops() {
  return windowFlops(getResult(), getKernelShape());
}
int64_t AveragePoolOp::getFlops() {
  return windowFlops(getResult(), getKernelShape());
}

// Normalizations, softmax and the losses built on it: about five passes over
// the input (max or mean, exp or centre, sum or variance, scale, shift).

static int64_t fivePasses(Operation *op) {
  return saturatingProduct({5, tensorElements(op->getOperand(0))});
}

int64_t SoftmaxOp::getFlops() { return fivePasses(*this); }
int64_t LogSoftmaxOp::getFlops() { return fivePasses(*this); }
int64_t LayerNormOp::getFlops() { return fivePasses(*this); }
int64_t BatchNormOp::getFlops() { return fivePasses(*this); }
int64_t BatchNormTrainOp::getFlops() { return fivePasses(*this); }
int64_t BatchNormTrainGradOp::getFlops() {
  return saturatingProduct({10, tensorElements(getInput())});
}
int64_t InstanceNormOp::getFlops() { return fivePasses(*this); }
int64_t SoftmaxCrossEntropyLossOp::getFlops() { return fivePasses(*this); }
int64_t NegativeLogLikelihoodLossOp::getFlops() { return fivePasses(*this); }

// Reductions: one operation per input element.

int64_t ReduceMeanOp::getFlops() { return tensorElements(getOperand()); }
int64_t ReduceSumOp::getFlops() { return tensorElements(getOperand()); }
int64_t ReduceMaxOp::getFlops() { return tensorElements(getOperand()); }
int64_t GlobalAveragePoolOp::getFlops() { return tensorElements(getOperand()); }
