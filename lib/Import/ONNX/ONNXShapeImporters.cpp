//===- ONNXShapeImporters.cpp - shape and constant ONNX ops
//----------------===//
//
// Reshapes, data movement, and the constant-producing ops that static shapes
// fold at import (Shape, Size, Constant, ConstantOfShape, Range).
//
//===----------------------------------------------------------------------===//

#include "ONNXImporterImpl.h"
#include "pipe/Weights/ONNXModelLoader.h"

#include "mlir/IR/Verifier.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::pipe;

//===----------------------------------------------------------------------===//
// Shapes and data movement
//===----------------------------------------------------------------------===//

static LogicalResult importReshape(NodeContext &ctx) {
  RankedTensorType type = ctx.inputType(0);
  SmallVector<int64_t> shape;
  if (ctx.opset < 5) {
    auto given = ctx.getInts("shape");
    if (!given)
      return ctx.emitError() << "missing shape attribute";
    shape = *given;
  } else {
    FailureOr<SmallVector<int64_t>> given = ctx.constantInts(1, "shape");
    if (failed(given))
      return failure();
    shape = *given;
  }
  bool allowZero = ctx.getInt("allowzero", 0) != 0;
  int64_t known = 1, inferred = -1;
  for (auto [i, extent] : llvm::enumerate(shape)) {
    if (extent == 0 && !allowZero) {
      if (static_cast<int64_t>(i) >= type.getRank())
        return ctx.emitError()
               << "shape entry " << i << " copies a dimension the input lacks";
      extent = type.getDimSize(i);
    }
    if (extent == -1) {
      if (inferred >= 0)
        return ctx.emitError() << "shape has more than one -1";
      inferred = i;
      continue;
    }
    if (extent < 0)
      return ctx.emitError() << "shape entry " << extent << " is invalid";
    known *= extent;
  }
  if (inferred >= 0) {
    if (known == 0 || type.getNumElements() % known)
      return ctx.emitError()
             << "cannot reshape " << type << " to " << formatShape(shape);
    shape[inferred] = type.getNumElements() / known;
  }
  if (known * (inferred >= 0 ? shape[inferred] : 1) != type.getNumElements())
    return ctx.emitError() << "cannot reshape " << type << " to "
                           << formatShape(shape);
  ctx.results.push_back(ctx.reshape(ctx.input(0), shape));
  return success();
}

static LogicalResult importFlatten(NodeContext &ctx) {
  RankedTensorType type = ctx.inputType(0);
  int64_t rank = type.getRank();
  int64_t axis = ctx.getInt("axis", 1);
  if (axis < -rank || axis > rank)
    return ctx.emitError() << "axis " << axis << " is out of range";
  if (axis < 0)
    axis += rank;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d)
    (d < axis ? outer : inner) *= type.getDimSize(d);
  ctx.results.push_back(ctx.reshape(ctx.input(0), {outer, inner}));
  return success();
}

static LogicalResult importSqueeze(NodeContext &ctx) {
  RankedTensorType type = ctx.inputType(0);
  auto axes = axesFromAttrOrInput(ctx, 13, 1);
  if (failed(axes))
    return failure();
  SmallVector<bool> drop(type.getRank(), false);
  if (!*axes) {
    for (int64_t d = 0; d < type.getRank(); ++d)
      drop[d] = type.getDimSize(d) == 1;
  } else {
    for (int64_t axis : **axes) {
      FailureOr<int64_t> a = normalizeAxis(ctx, axis, type.getRank());
      if (failed(a))
        return failure();
      if (type.getDimSize(*a) != 1)
        return ctx.emitError() << "cannot squeeze axis " << *a << " of extent "
                               << type.getDimSize(*a);
      drop[*a] = true;
    }
  }
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (!drop[d])
      shape.push_back(type.getDimSize(d));
  ctx.results.push_back(ctx.reshape(ctx.input(0), shape));
  return success();
}

static LogicalResult importUnsqueeze(NodeContext &ctx) {
  RankedTensorType type = ctx.inputType(0);
  auto axes = axesFromAttrOrInput(ctx, 13, 1);
  if (failed(axes))
    return failure();
  if (!*axes)
    return ctx.emitError() << "missing axes";
  int64_t rank = type.getRank() + (*axes)->size();
  SmallVector<bool> inserted(rank, false);
  for (int64_t axis : **axes) {
    FailureOr<int64_t> a = normalizeAxis(ctx, axis, rank);
    if (failed(a))
      return failure();
    if (inserted[*a])
      return ctx.emitError() << "axis " << *a << " is repeated";
    inserted[*a] = true;
  }
  SmallVector<int64_t> shape;
  unsigned next = 0;
  for (int64_t d = 0; d < rank; ++d)
    shape.push_back(inserted[d] ? 1 : type.getDimSize(next++));
  ctx.results.push_back(ctx.reshape(ctx.input(0), shape));
  return success();
}

static LogicalResult importTranspose(NodeContext &ctx) {
  int64_t rank = ctx.inputType(0).getRank();
  SmallVector<int64_t> perm;
  if (auto given = ctx.getInts("perm")) {
    perm = *given;
  } else {
    for (int64_t d = rank - 1; d >= 0; --d)
      perm.push_back(d);
  }
  Builder &b = ctx.builder;
  return setResult(ctx,
                   createValue<TransposeOp>(
                       ctx, ctx.input(0),
                       {b.getNamedAttr("perm", b.getDenseI64ArrayAttr(perm))}));
}

static LogicalResult importConcat(NodeContext &ctx) {
  FailureOr<int64_t> axis =
      normalizeAxis(ctx, ctx.getInt("axis", 0), ctx.inputType(0).getRank());
  if (failed(axis))
    return failure();
  SmallVector<Value> operands = ctx.presentInputs();
  Builder &b = ctx.builder;
  return setResult(
      ctx,
      createValue<ConcatOp>(
          ctx, operands, {b.getNamedAttr("axis", b.getI64IntegerAttr(*axis))}));
}

static LogicalResult importSplit(NodeContext &ctx) {
  RankedTensorType type = ctx.inputType(0);
  FailureOr<int64_t> axis =
      normalizeAxis(ctx, ctx.getInt("axis", 0), type.getRank());
  if (failed(axis))
    return failure();
  int64_t extent = type.getDimSize(*axis);
  SmallVector<int64_t> sizes;
  if (ctx.opset < 13) {
    if (auto given = ctx.getInts("split"))
      sizes = *given;
  } else if (ctx.input(1)) {
    FailureOr<SmallVector<int64_t>> given = ctx.constantInts(1, "split");
    if (failed(given))
      return failure();
    sizes = *given;
  }
  if (sizes.empty()) {
    int64_t pieces = ctx.opset >= 18 && ctx.attribute("num_outputs")
                         ? ctx.getInt("num_outputs", 1)
                         : ctx.node.output_size();
    if (pieces <= 0)
      return ctx.emitError() << "num_outputs must be positive";
    // Opset 18: the last piece is smaller when the extent does not divide.
    int64_t size = llvm::divideCeil(extent, pieces);
    if (ctx.opset < 18 && extent % pieces)
      return ctx.emitError() << "cannot split extent " << extent << " into "
                             << pieces << " equal pieces";
    for (int64_t i = 0, left = extent; i < pieces; ++i, left -= size)
      sizes.push_back(std::min(size, left));
  }
  if (static_cast<int64_t>(sizes.size()) != ctx.node.output_size())
    return ctx.emitError() << "split has " << sizes.size() << " pieces for "
                           << ctx.node.output_size() << " outputs";
  SmallVector<Type> types;
  for (int64_t size : sizes) {
    SmallVector<int64_t> shape(type.getShape());
    shape[*axis] = size;
    types.push_back(type.clone(shape));
  }
  auto op = SplitOp::create(ctx.builder, ctx.loc, types, ctx.input(0),
                            ctx.builder.getI64IntegerAttr(*axis));
  if (failed(mlir::verify(op))) {
    op->erase();
    return failure();
  }
  llvm::append_range(ctx.results, op.getResults());
  return success();
}

static LogicalResult importSlice(NodeContext &ctx) {
  RankedTensorType type = ctx.inputType(0);
  int64_t rank = type.getRank();
  SmallVector<int64_t> starts, ends, axes, steps;
  if (ctx.opset < 10) {
    auto s = ctx.getInts("starts"), e = ctx.getInts("ends");
    if (!s || !e)
      return ctx.emitError() << "missing starts or ends";
    starts = *s;
    ends = *e;
    if (auto a = ctx.getInts("axes"))
      axes = *a;
  } else {
    // One error: the first input that is not a constant.
    auto s = ctx.constantInts(1, "starts");
    if (failed(s))
      return failure();
    auto e = ctx.constantInts(2, "ends");
    if (failed(e))
      return failure();
    starts = *s;
    ends = *e;
    if (ctx.input(3)) {
      auto a = ctx.constantInts(3, "axes");
      if (failed(a))
        return failure();
      axes = *a;
    }
    if (ctx.input(4)) {
      auto st = ctx.constantInts(4, "steps");
      if (failed(st))
        return failure();
      steps = *st;
    }
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i)
      axes.push_back(i);
  if (steps.empty())
    steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size())
    return ctx.emitError() << "starts, ends, axes and steps differ in length";

  SmallVector<int64_t> offsets(rank, 0), sizes(type.getShape()),
      strides(rank, 1);
  for (size_t i = 0; i < starts.size(); ++i) {
    FailureOr<int64_t> axis = normalizeAxis(ctx, axes[i], rank);
    if (failed(axis))
      return failure();
    int64_t extent = type.getDimSize(*axis), step = steps[i];
    if (step == 0)
      return ctx.emitError() << "step of axis " << *axis << " is zero";
    // ONNX clamps starts and ends into range, by the direction of the step.
    auto clampIndex = [&](int64_t index, int64_t low, int64_t high) {
      if (index < 0)
        index += extent;
      return std::clamp(index, low, high);
    };
    int64_t start, end;
    if (step > 0) {
      start = clampIndex(starts[i], 0, extent);
      end = clampIndex(ends[i], 0, extent);
    } else {
      start = clampIndex(starts[i], -1, extent - 1);
      end = clampIndex(ends[i], -1, extent - 1);
    }
    int64_t count =
        step > 0 ? llvm::divideCeil(std::max<int64_t>(0, end - start), step)
                 : llvm::divideCeil(std::max<int64_t>(0, start - end), -step);
    offsets[*axis] = count ? start : 0;
    sizes[*axis] = count;
    strides[*axis] = step;
  }
  Builder &b = ctx.builder;
  return setResult(
      ctx, createValue<SliceOp>(
               ctx, ctx.input(0),
               {b.getNamedAttr("offsets", b.getDenseI64ArrayAttr(offsets)),
                b.getNamedAttr("sizes", b.getDenseI64ArrayAttr(sizes)),
                b.getNamedAttr("strides", b.getDenseI64ArrayAttr(strides))}));
}

static LogicalResult importGather(NodeContext &ctx) {
  FailureOr<int64_t> axis =
      normalizeAxis(ctx, ctx.getInt("axis", 0), ctx.inputType(0).getRank());
  if (failed(axis))
    return failure();
  Builder &b = ctx.builder;
  return setResult(ctx,
                   createValue<GatherOp>(
                       ctx, {ctx.input(0), ctx.input(1)},
                       {b.getNamedAttr("axis", b.getI64IntegerAttr(*axis))}));
}

static LogicalResult importExpand(NodeContext &ctx) {
  FailureOr<SmallVector<int64_t>> shape = ctx.constantInts(1, "shape");
  if (failed(shape))
    return failure();
  RankedTensorType type = ctx.inputType(0);
  FailureOr<SmallVector<int64_t>> result =
      broadcastShapes({type.getShape(), *shape});
  if (failed(result))
    return ctx.emitError() << "cannot expand " << type << " to "
                           << formatShape(*shape);
  auto resultType = type.clone(*result);
  if (resultType == type) {
    ctx.results.push_back(ctx.input(0));
    return success();
  }
  ctx.results.push_back(
      ExpandOp::create(ctx.builder, ctx.loc, resultType, ctx.input(0)));
  return success();
}

static LogicalResult importTile(NodeContext &ctx) {
  FailureOr<SmallVector<int64_t>> repeats = ctx.constantInts(1, "repeats");
  if (failed(repeats))
    return failure();
  Builder &b = ctx.builder;
  return setResult(
      ctx, createValue<TileOp>(
               ctx, ctx.input(0),
               {b.getNamedAttr("repeats", b.getDenseI64ArrayAttr(*repeats))}));
}

static LogicalResult importPad(NodeContext &ctx) {
  int64_t rank = ctx.inputType(0).getRank();
  std::string modeName = ctx.getString("mode", "constant");
  std::optional<PadMode> mode = symbolizePadMode(modeName);
  if (!mode)
    return ctx.emitError() << "unsupported attribute value: mode '" << modeName
                           << "'";
  SmallVector<int64_t> pads;
  double value = 0.0;
  if (ctx.opset < 11) {
    auto given = ctx.getInts(ctx.opset < 2 ? "paddings" : "pads");
    if (!given)
      return ctx.emitError() << "missing pads";
    pads = *given;
    value = ctx.getFloat("value", 0.0f);
  } else {
    FailureOr<SmallVector<int64_t>> given = ctx.constantInts(1, "pads");
    if (failed(given))
      return failure();
    pads = *given;
    if (ctx.input(2)) {
      FailureOr<double> v = ctx.constantScalar(2, "constant_value");
      if (failed(v))
        return failure();
      value = *v;
    }
    if (ctx.input(3)) {
      // Opset 18: pads apply to the listed axes only.
      FailureOr<SmallVector<int64_t>> axes = ctx.constantInts(3, "axes");
      if (failed(axes))
        return failure();
      if (pads.size() != 2 * axes->size())
        return ctx.emitError() << "pads needs two entries per axis";
      SmallVector<int64_t> full(2 * rank, 0);
      for (auto [i, axis] : llvm::enumerate(*axes)) {
        FailureOr<int64_t> a = normalizeAxis(ctx, axis, rank);
        if (failed(a))
          return failure();
        full[*a] = pads[i];
        full[rank + *a] = pads[axes->size() + i];
      }
      pads = full;
    }
  }
  Builder &b = ctx.builder;
  return setResult(
      ctx, createValue<PadOp>(
               ctx, ctx.input(0),
               {b.getNamedAttr("pads", b.getDenseI64ArrayAttr(pads)),
                b.getNamedAttr("mode", PadModeAttr::get(b.getContext(), *mode)),
                b.getNamedAttr("value", b.getF64FloatAttr(value))}));
}

static LogicalResult importTrilu(NodeContext &ctx) {
  int64_t k = 0;
  if (ctx.input(1)) {
    FailureOr<SmallVector<int64_t>> given = ctx.constantInts(1, "k");
    if (failed(given))
      return failure();
    if (given->size() != 1)
      return ctx.emitError() << "k must be a scalar";
    k = given->front();
  }
  Builder &b = ctx.builder;
  SmallVector<NamedAttribute> attrs = {
      b.getNamedAttr("k", b.getI64IntegerAttr(k))};
  if (ctx.getInt("upper", 1))
    attrs.push_back(b.getNamedAttr("upper", b.getUnitAttr()));
  return setResult(ctx, createValue<TriluOp>(ctx, ctx.input(0), attrs));
}

//===----------------------------------------------------------------------===//
// Constants (static shapes fold them at import)
//===----------------------------------------------------------------------===//

static LogicalResult importShape(NodeContext &ctx) {
  ArrayRef<int64_t> shape = ctx.inputType(0).getShape();
  int64_t rank = shape.size();
  int64_t start = ctx.getInt("start", 0), end = ctx.getInt("end", rank);
  start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
  end = std::clamp<int64_t>(end < 0 ? end + rank : end, 0, rank);
  SmallVector<int64_t> dims(shape.begin() + start,
                            shape.begin() + std::max(start, end));
  ctx.results.push_back(
      ctx.i64Constant(dims, {static_cast<int64_t>(dims.size())}));
  return success();
}

static LogicalResult importSize(NodeContext &ctx) {
  ctx.results.push_back(
      ctx.i64Constant({ctx.inputType(0).getNumElements()}, {}));
  return success();
}

/// Builds an elements attribute from an ONNX TensorProto attribute value.
static FailureOr<DenseElementsAttr>
tensorAttribute(NodeContext &ctx, const onnx::TensorProto &tensor) {
  Type element =
      convertONNXElementType(ctx.builder.getContext(), tensor.data_type());
  if (!element)
    return ctx.emitError() << "unsupported tensor data type "
                           << tensor.data_type();
  auto type = RankedTensorType::get(
      SmallVector<int64_t>(tensor.dims().begin(), tensor.dims().end()),
      element);
  std::string bytes;
  if (std::string error = readTensorBytes(tensor, /*modelDir=*/"", bytes);
      !error.empty())
    return ctx.emitError() << error;
  if (element.isInteger(1)) {
    SmallVector<bool> values;
    for (char byte : bytes)
      values.push_back(byte != 0);
    return DenseElementsAttr::get(type, values);
  }
  ArrayRef<char> raw(bytes.data(), bytes.size());
  bool splat = false;
  if (!DenseElementsAttr::isValidRawBuffer(type, raw, splat))
    return ctx.emitError() << "tensor data does not match its shape";
  return DenseElementsAttr::getFromRawBuffer(type, raw);
}

static LogicalResult importConstant(NodeContext &ctx) {
  Builder &b = ctx.builder;
  if (const onnx::AttributeProto *value = ctx.attribute("value")) {
    FailureOr<DenseElementsAttr> attr = tensorAttribute(ctx, value->t());
    if (failed(attr))
      return failure();
    ctx.results.push_back(ctx.constant(*attr));
    return success();
  }
  if (const onnx::AttributeProto *value = ctx.attribute("value_float")) {
    ctx.results.push_back(ctx.constant(DenseElementsAttr::get(
        RankedTensorType::get({}, b.getF32Type()), value->f())));
    return success();
  }
  if (const onnx::AttributeProto *value = ctx.attribute("value_floats")) {
    SmallVector<float> values(value->floats().begin(), value->floats().end());
    ctx.results.push_back(ctx.constant(DenseElementsAttr::get(
        RankedTensorType::get({static_cast<int64_t>(values.size())},
                              b.getF32Type()),
        ArrayRef<float>(values))));
    return success();
  }
  if (const onnx::AttributeProto *value = ctx.attribute("value_int")) {
    ctx.results.push_back(ctx.i64Constant({value->i()}, {}));
    return success();
  }
  if (const onnx::AttributeProto *value = ctx.attribute("value_ints")) {
    SmallVector<int64_t> values(value->ints().begin(), value->ints().end());
    ctx.results.push_back(
        ctx.i64Constant(values, {static_cast<int64_t>(values.size())}));
    return success();
  }
  return ctx.emitError() << "unsupported attribute: only value, value_float(s) "
                            "and value_int(s) are supported";
}

static LogicalResult importConstantOfShape(NodeContext &ctx) {
  FailureOr<SmallVector<int64_t>> shape = ctx.constantInts(0, "shape");
  if (failed(shape))
    return failure();
  DenseElementsAttr fill = DenseElementsAttr::get(
      RankedTensorType::get({1}, ctx.builder.getF32Type()), 0.0f);
  if (const onnx::AttributeProto *value = ctx.attribute("value")) {
    FailureOr<DenseElementsAttr> attr = tensorAttribute(ctx, value->t());
    if (failed(attr))
      return failure();
    if (attr->getNumElements() != 1)
      return ctx.emitError() << "value must hold one element";
    fill = *attr;
  }
  auto type = RankedTensorType::get(*shape, fill.getElementType());
  ctx.results.push_back(ctx.constant(
      SplatElementsAttr::get(type, *fill.getValues<Attribute>().begin())));
  return success();
}

/// The most elements a Range may have: 16 Mi, 64 MiB of floats.
static constexpr int64_t kMaxRangeElements = int64_t(1) << 24;

static LogicalResult importRange(NodeContext &ctx) {
  DenseElementsAttr start = ctx.constantInput(0), limit = ctx.constantInput(1),
                    delta = ctx.constantInput(2);
  if (!start || !limit || !delta)
    return ctx.emitError() << "start, limit and delta must be constants "
                              "(shapes are static)";
  Type element = start.getElementType();
  auto scalar = [](DenseElementsAttr attr) -> double {
    if (isa<FloatType>(attr.getElementType()))
      return (*attr.getValues<APFloat>().begin()).convertToDouble();
    return static_cast<double>(
        (*attr.getValues<APInt>().begin()).getSExtValue());
  };
  double s = scalar(start), l = scalar(limit), d = scalar(delta);
  if (!std::isfinite(s) || !std::isfinite(l) || !std::isfinite(d))
    return ctx.emitError() << "start, limit and delta must be finite";
  if (d == 0)
    return ctx.emitError() << "delta is zero";
  // The range becomes a constant: one of more elements than this is
  // almost surely a mistake, and would take gigabytes to build.
  double elements = std::max(0.0, std::ceil((l - s) / d));
  if (elements > kMaxRangeElements)
    return ctx.emitError() << "has " << llvm::formatv("{0:e2}", elements)
                           << " elements; pipe folds ranges of up to "
                           << kMaxRangeElements << " into constants";
  int64_t count = static_cast<int64_t>(elements);
  auto type = RankedTensorType::get({count}, element);
  if (auto floatType = dyn_cast<FloatType>(element)) {
    SmallVector<APFloat> values;
    for (int64_t i = 0; i < count; ++i) {
      APFloat v(s + i * d);
      bool lost;
      v.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                &lost);
      values.push_back(v);
    }
    ctx.results.push_back(ctx.constant(DenseElementsAttr::get(type, values)));
  } else {
    SmallVector<APInt> values;
    for (int64_t i = 0; i < count; ++i)
      values.push_back(
          APInt(element.getIntOrFloatBitWidth(),
                static_cast<int64_t>(s) + i * static_cast<int64_t>(d),
                /*isSigned=*/true));
    ctx.results.push_back(ctx.constant(DenseElementsAttr::get(type, values)));
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

void mlir::pipe::addShapeImporters(NodeImporterTable &table) {
  // Op type -> {handler, min inputs, max inputs, max outputs}.
  table.insert({
      {"Reshape", {importReshape, 1, 2, 1}},
      {"Flatten", {importFlatten, 1, 1, 1}},
      {"Transpose", {importTranspose, 1, 1, 1}},
      {"Squeeze", {importSqueeze, 1, 2, 1}},
      {"Unsqueeze", {importUnsqueeze, 1, 2, 1}},
      {"Concat", {importConcat, 1, kVariadic, 1}},
      {"Split", {importSplit, 1, 2, kVariadic}},
      {"Slice", {importSlice, 1, 5, 1}},
      {"Gather", {importGather, 2, 2, 1}},
      {"Expand", {importExpand, 2, 2, 1}},
      {"Tile", {importTile, 2, 2, 1}},
      {"Pad", {importPad, 1, 4, 1}},
      {"Shape", {importShape, 1, 1, 1}},
      {"Size", {importSize, 1, 1, 1}},
      {"Constant", {importConstant, 0, 0, 1}},
      {"ConstantOfShape", {importConstantOfShape, 1, 1, 1}},
      {"Range", {importRange, 3, 3, 1}},
      {"Trilu", {importTrilu, 1, 2, 1}},
  });
}
