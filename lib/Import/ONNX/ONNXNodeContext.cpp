//===- ONNXNodeContext.cpp - what every ONNX op importer uses -------------===//
//
// NodeContext, the helpers shared by the importers of each op family, and
// the lookup of an op type's importer.
//
//===----------------------------------------------------------------------===//

#include "ONNXImporterImpl.h"

using namespace mlir;
using namespace mlir::pipe;

//===----------------------------------------------------------------------===//
// NodeContext
//===----------------------------------------------------------------------===//

bool NodeContext::outputUsed(unsigned i) const {
  return i < static_cast<unsigned>(node.output_size()) &&
         !node.output(i).empty() && usedNames &&
         usedNames->count(node.output(i));
}

InFlightDiagnostic NodeContext::emitError() const {
  return mlir::emitError(loc)
         << node.op_type() << " node '" << displayName << "': ";
}

const onnx::AttributeProto *NodeContext::attribute(StringRef name) const {
  askedFor.insert(name);
  for (const onnx::AttributeProto &attr : node.attribute())
    if (attr.name() == name)
      return &attr;
  return nullptr;
}

const onnx::AttributeProto *
NodeContext::typedAttribute(StringRef name,
                            onnx::AttributeProto::AttributeType type) const {
  const onnx::AttributeProto *attr = attribute(name);
  if (!attr || attr->type() == type)
    return attr;
  if (!badAttribute)
    emitError() << "attribute '" << name << "' must be of type "
                << onnx::AttributeProto::AttributeType_Name(type) << ", got "
                << onnx::AttributeProto::AttributeType_Name(attr->type());
  badAttribute = true;
  return nullptr;
}

int64_t NodeContext::getInt(StringRef name, int64_t defaultValue) const {
  const onnx::AttributeProto *attr =
      typedAttribute(name, onnx::AttributeProto::INT);
  return attr ? attr->i() : defaultValue;
}

float NodeContext::getFloat(StringRef name, float defaultValue) const {
  const onnx::AttributeProto *attr =
      typedAttribute(name, onnx::AttributeProto::FLOAT);
  return attr ? attr->f() : defaultValue;
}

std::string NodeContext::getString(StringRef name,
                                   StringRef defaultValue) const {
  const onnx::AttributeProto *attr =
      typedAttribute(name, onnx::AttributeProto::STRING);
  return attr ? attr->s() : defaultValue.str();
}

std::optional<SmallVector<int64_t>> NodeContext::getInts(StringRef name) const {
  const onnx::AttributeProto *attr =
      typedAttribute(name, onnx::AttributeProto::INTS);
  if (!attr)
    return std::nullopt;
  return SmallVector<int64_t>(attr->ints().begin(), attr->ints().end());
}

/// Evaluates `value` when it only depends on constants, through the ops'
/// folders: the shape arithmetic of exported models (Shape -> Gather ->
/// Concat -> ...) feeds the shape inputs of later nodes.
static DenseElementsAttr
evaluateConstant(Value value,
                 const std::function<DenseElementsAttr(Value)> &resolve,
                 unsigned depth = 0) {
  if (!value || depth > 64)
    return {};
  Operation *op = value.getDefiningOp();
  if (!op)
    return {};
  if (auto constant = dyn_cast<ConstantOp>(op))
    return dyn_cast<DenseElementsAttr>(constant.getValue());
  if (isa<ParamRefOp>(op))
    return resolve ? resolve(value) : DenseElementsAttr();
  SmallVector<Attribute> operands;
  for (Value operand : op->getOperands()) {
    DenseElementsAttr attr = evaluateConstant(operand, resolve, depth + 1);
    if (!attr)
      return {};
    operands.push_back(attr);
  }
  SmallVector<OpFoldResult> results;
  if (failed(op->fold(operands, results)) || results.empty())
    return {};
  OpFoldResult result = results[cast<OpResult>(value).getResultNumber()];
  if (auto attr = dyn_cast<Attribute>(result))
    return dyn_cast<DenseElementsAttr>(attr);
  Value folded = cast<Value>(result);
  return folded == value ? DenseElementsAttr()
                         : evaluateConstant(folded, resolve, depth + 1);
}

DenseElementsAttr NodeContext::constantInput(unsigned i) const {
  return evaluateConstant(input(i), resolveConstant);
}

DenseElementsAttr NodeContext::constantValue(Value value) const {
  return evaluateConstant(value, resolveConstant);
}

FailureOr<SmallVector<int64_t>> NodeContext::constantInts(unsigned i,
                                                          StringRef what) {
  DenseElementsAttr attr = constantInput(i);
  if (!attr || !isa<IntegerType>(attr.getElementType()))
    return emitError() << what
                       << " must be a constant integer tensor (shapes are "
                          "static)";
  SmallVector<int64_t> values;
  for (const APInt &value : attr.getValues<APInt>())
    values.push_back(value.getSExtValue());
  return values;
}

FailureOr<double> NodeContext::constantScalar(unsigned i, StringRef what) {
  DenseElementsAttr attr = constantInput(i);
  if (!attr || attr.getNumElements() != 1)
    return emitError() << what << " must be a constant scalar";
  if (isa<FloatType>(attr.getElementType()))
    return (*attr.getValues<APFloat>().begin()).convertToDouble();
  return static_cast<double>((*attr.getValues<APInt>().begin()).getSExtValue());
}

Value NodeContext::constant(DenseElementsAttr value) {
  return ConstantOp::create(builder, loc, value);
}

Value NodeContext::i64Constant(ArrayRef<int64_t> values,
                               ArrayRef<int64_t> shape) {
  auto type = RankedTensorType::get(shape, builder.getI64Type());
  return constant(DenseElementsAttr::get(type, values));
}

Value NodeContext::reshape(Value value, ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getShape() == shape)
    return value;
  return ReshapeOp::create(
      builder, loc, RankedTensorType::get(shape, type.getElementType()), value);
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// Normalizes a possibly negative axis of a rank-`rank` tensor.
FailureOr<int64_t> mlir::pipe::normalizeAxis(NodeContext &ctx, int64_t axis,
                                             int64_t rank) {
  if (axis < -rank || axis >= std::max<int64_t>(rank, 1))
    return ctx.emitError() << "axis " << axis << " is out of range for rank "
                           << rank;
  return axis < 0 ? axis + rank : axis;
}

LogicalResult mlir::pipe::setResult(NodeContext &ctx, FailureOr<Value> value) {
  if (failed(value))
    return failure();
  ctx.results.push_back(*value);
  return success();
}

/// Resolves ONNX `auto_pad` and `pads` into explicit begin/end pads.
FailureOr<SmallVector<int64_t>>
mlir::pipe::resolvePads(NodeContext &ctx, ArrayRef<int64_t> spatial,
                        ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
                        ArrayRef<int64_t> dilations) {
  size_t n = spatial.size();
  std::string autoPad = ctx.getString("auto_pad", "NOTSET");
  SmallVector<int64_t> pads(2 * n, 0);
  if (autoPad == "NOTSET") {
    if (auto given = ctx.getInts("pads")) {
      if (given->size() != 2 * n)
        return ctx.emitError() << "pads has " << given->size()
                               << " entries, expected " << 2 * n;
      pads = *given;
    }
    return pads;
  }
  if (autoPad == "VALID")
    return pads;
  if (autoPad != "SAME_UPPER" && autoPad != "SAME_LOWER")
    return ctx.emitError() << "unsupported attribute value: auto_pad '"
                           << autoPad << "'";
  for (size_t i = 0; i < n; ++i) {
    int64_t out = llvm::divideCeil(spatial[i], strides[i]);
    int64_t total = std::max<int64_t>(0, (out - 1) * strides[i] +
                                             dilations[i] * (kernel[i] - 1) +
                                             1 - spatial[i]);
    int64_t small = total / 2, large = total - small;
    pads[i] = autoPad == "SAME_UPPER" ? small : large;
    pads[n + i] = autoPad == "SAME_UPPER" ? large : small;
  }
  return pads;
}

/// An integer list attribute with a default of `n` copies of `fill`.
FailureOr<SmallVector<int64_t>>
mlir::pipe::intsOr(NodeContext &ctx, StringRef name, size_t n, int64_t fill) {
  auto values = ctx.getInts(name);
  if (!values)
    return SmallVector<int64_t>(n, fill);
  if (values->size() != n)
    return ctx.emitError() << name << " has " << values->size()
                           << " entries, expected " << n;
  return *values;
}

/// Reads axes from the attribute (older opsets) or input `inputIndex`.
FailureOr<std::optional<SmallVector<int64_t>>>
mlir::pipe::axesFromAttrOrInput(NodeContext &ctx, int64_t inputSince,
                                unsigned inputIndex) {
  if (ctx.opset < inputSince)
    return ctx.getInts("axes");
  if (!ctx.input(inputIndex))
    return std::optional<SmallVector<int64_t>>();
  FailureOr<SmallVector<int64_t>> axes = ctx.constantInts(inputIndex, "axes");
  if (failed(axes))
    return failure();
  return std::optional<SmallVector<int64_t>>(*axes);
}

//===----------------------------------------------------------------------===//
// Lookup
//===----------------------------------------------------------------------===//

const NodeImporter *mlir::pipe::lookupNodeImporter(StringRef opType) {
  static const NodeImporterTable table = [] {
    NodeImporterTable table;
    addElementwiseImporters(table);
    addNNImporters(table);
    addShapeImporters(table);
    return table;
  }();
  auto it = table.find(opType);
  return it == table.end() ? nullptr : &it->second;
}
