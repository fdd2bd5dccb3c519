//===- ONNXImporterImpl.h - state shared by the ONNX importer ---*- C++ -*-===//

#ifndef PIPE_LIB_IMPORT_ONNX_ONNXIMPORTERIMPL_H
#define PIPE_LIB_IMPORT_ONNX_ONNXIMPORTERIMPL_H

#include "pipe/Dialect/Pipe/IR/PipeOps.h"

#include "mlir/IR/Builders.h"
#include "onnx/onnx_pb.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <functional>
#include <optional>

namespace mlir {
namespace pipe {

/// The MLIR element type of an ONNX tensor data type, or null.
Type convertONNXElementType(MLIRContext *context, int32_t dataType);

/// Everything a handler needs to import one ONNX node.
class NodeContext {
public:
  NodeContext(const onnx::NodeProto &node, int64_t opset, OpBuilder &builder,
              Location loc, SmallVector<Value> inputs)
      : node(node), opset(opset), builder(builder), loc(loc),
        inputs(std::move(inputs)) {}

  const onnx::NodeProto &node;
  /// The default-domain opset of the model.
  const int64_t opset;
  OpBuilder &builder;
  const Location loc;

  /// Input `i`, or null when absent or empty (an omitted optional input).
  Value input(unsigned i) const {
    return i < inputs.size() ? inputs[i] : Value();
  }
  unsigned numInputs() const { return inputs.size(); }
  /// The inputs that are present, in order (omitted optional inputs left
  /// out); for ops whose optional inputs are trailing.
  SmallVector<Value> presentInputs() const {
    return llvm::to_vector(
        llvm::make_filter_range(inputs, [](Value v) { return bool(v); }));
  }
  RankedTensorType inputType(unsigned i) const {
    return cast<RankedTensorType>(input(i).getType());
  }
  /// Whether output `i` exists and is used by the graph.
  bool outputUsed(unsigned i) const;

  /// Emits an error naming the node and its op type.
  InFlightDiagnostic emitError() const;

  /// The attribute `name`, or null. An attribute of another type than
  /// `type` is reported once and makes the node fail to import.
  const onnx::AttributeProto *attribute(StringRef name) const;
  const onnx::AttributeProto *
  typedAttribute(StringRef name,
                 onnx::AttributeProto::AttributeType type) const;
  /// Whether an attribute had the wrong type (already reported).
  mutable bool badAttribute = false;
  /// The attributes the op's importer asked for: one it never asks for
  /// would be ignored.
  mutable llvm::StringSet<> askedFor;
  int64_t getInt(StringRef name, int64_t defaultValue) const;
  float getFloat(StringRef name, float defaultValue) const;
  std::string getString(StringRef name, StringRef defaultValue) const;
  std::optional<SmallVector<int64_t>> getInts(StringRef name) const;

  /// The value of input `i` when it is a constant, else null.
  DenseElementsAttr constantInput(unsigned i) const;
  /// The value of `value` when it is computed from constants only (through
  /// the ops' folders), else null.
  DenseElementsAttr constantValue(Value value) const;
  /// Input `i` as a list of integers; emits an error naming `what` when it
  /// is not a constant.
  FailureOr<SmallVector<int64_t>> constantInts(unsigned i, StringRef what);
  /// Input `i` as one float; emits an error naming `what` when it is not a
  /// constant scalar.
  FailureOr<double> constantScalar(unsigned i, StringRef what);

  /// Creates a constant.
  Value constant(DenseElementsAttr value);
  Value i64Constant(ArrayRef<int64_t> values, ArrayRef<int64_t> shape);
  Value reshape(Value value, ArrayRef<int64_t> shape);

  /// Creates `OpTy` with result types inferred from the operands and
  /// attributes. On an inference error, emits it at the node and fails
  /// instead of aborting.
  template <typename OpTy>
  FailureOr<OpTy> create(ValueRange operands,
                         ArrayRef<NamedAttribute> attributes = {}) {
    MLIRContext *context = builder.getContext();
    DictionaryAttr dictionary = DictionaryAttr::get(context, attributes);
    typename OpTy::Properties properties;
    if (failed(OpTy::setPropertiesFromAttr(properties, dictionary,
                                           [&] { return emitError(); })))
      return failure();
    SmallVector<Type> types;
    if (failed(OpTy::inferReturnTypes(context, loc, operands, dictionary,
                                      OpaqueProperties(&properties),
                                      RegionRange(), types)))
      return failure();
    OperationState state(loc, OpTy::getOperationName());
    state.addOperands(operands);
    state.addAttributes(attributes);
    state.addTypes(types);
    return cast<OpTy>(builder.create(state));
  }

  /// The node's name, or `<OpType>_<index>` when it has none.
  std::string displayName;

  /// Results of the node, in output order; handlers fill it.
  SmallVector<Value> results;

private:
  SmallVector<Value> inputs;

public:
  /// Names of graph values that some node or graph output reads.
  const llvm::StringSet<> *usedNames = nullptr;
  /// Resolves values that are not pipe.constant results (initializers held
  /// as parameters) to their constant value, or null.
  std::function<DenseElementsAttr(Value)> resolveConstant;
};

/// Imports one node into `context.results`. Fails after emitting an error.
using NodeHandler = LogicalResult (*)(NodeContext &context);

/// How to import one ONNX op type: its handler, and the number of inputs
/// and outputs it takes across the supported opsets (the checker enforces
/// the exact per-opset counts where it knows the opset).
struct NodeImporter {
  NodeHandler handler = nullptr;
  unsigned minInputs = 1, maxInputs = 1;
  unsigned maxOutputs = 1;
};

/// The importer of an ONNX op type of the default domain, or null.
const NodeImporter *lookupNodeImporter(StringRef opType);

//===----------------------------------------------------------------------===//
// Helpers shared by the importers of each op family
//===----------------------------------------------------------------------===//

/// Normalizes a possibly negative axis of a rank-`rank` tensor.
FailureOr<int64_t> normalizeAxis(NodeContext &ctx, int64_t axis, int64_t rank);

/// Appends `value` to the node's results, or fails.
LogicalResult setResult(NodeContext &ctx, FailureOr<Value> value);

/// Creates `OpTy` with inferred result types and returns its one result.
template <typename OpTy>
FailureOr<Value> createValue(NodeContext &ctx, ValueRange operands,
                             ArrayRef<NamedAttribute> attrs = {}) {
  FailureOr<OpTy> op = ctx.create<OpTy>(operands, attrs);
  if (failed(op))
    return failure();
  return op->getResult();
}

/// Resolves ONNX `auto_pad` and `pads` into explicit begin/end pads.
FailureOr<SmallVector<int64_t>> resolvePads(NodeContext &ctx,
                                            ArrayRef<int64_t> spatial,
                                            ArrayRef<int64_t> kernel,
                                            ArrayRef<int64_t> strides,
                                            ArrayRef<int64_t> dilations);

/// An integer list attribute with a default of `n` copies of `fill`.
FailureOr<SmallVector<int64_t>> intsOr(NodeContext &ctx, StringRef name,
                                       size_t n, int64_t fill);

/// Reads axes from the attribute (before opset `inputSince`) or from input
/// `inputIndex`.
FailureOr<std::optional<SmallVector<int64_t>>>
axesFromAttrOrInput(NodeContext &ctx, int64_t inputSince, unsigned inputIndex);

/// The op types of each family, with their importers.
using NodeImporterTable = llvm::StringMap<NodeImporter>;
void addElementwiseImporters(NodeImporterTable &table);
void addNNImporters(NodeImporterTable &table);
void addShapeImporters(NodeImporterTable &table);

/// Marks a table entry's input or output count as unbounded.
constexpr unsigned kVariadic = ~0u;

} // namespace pipe
} // namespace mlir

#endif // PIPE_LIB_IMPORT_ONNX_ONNXIMPORTERIMPL_H
