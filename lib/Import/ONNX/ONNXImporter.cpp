//===- ONNXImporter.cpp - import an ONNX graph into the pipe dialect ------===//
//
// Graph-level import: initializers become parameters or constants, graph
// inputs become arguments of `func.func @main`, and every node goes through
// the handler table of ONNXOpHandlers.cpp.
//
//===----------------------------------------------------------------------===//

#include "pipe/Import/ONNX/ImportONNX.h"

#include "ONNXImporterImpl.h"
#include "pipe/Weights/ONNXModelLoader.h"

#include "onnx/defs/schema.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace mlir::pipe;

/// The newest opset of the default domain whose ops the importers know
/// (docs/import.md); a newer one may change what an op means.
static constexpr int64_t kMaxOpset = 21;

/// No device pipe targets holds a tensor this large (1 TiB): a shape past
/// it is a mistake in the model or in --input-shape, found at import
/// rather than when a stage fails to allocate.
static constexpr int64_t kMaxTensorBytes = int64_t(1) << 40;

/// The bytes of `type`, saturating at INT64_MAX.
static int64_t byteSize(RankedTensorType type) {
  int64_t bytes = llvm::divideCeil(type.getElementTypeBitWidth(), 8);
  for (int64_t extent : type.getShape())
    bytes = saturatingProduct({bytes, std::max<int64_t>(extent, 0)});
  return bytes;
}

Type mlir::pipe::convertONNXElementType(MLIRContext *context,
                                        int32_t dataType) {
  Builder b(context);
  switch (dataType) {
  case onnx::TensorProto::FLOAT:
    return b.getF32Type();
  case onnx::TensorProto::DOUBLE:
    return b.getF64Type();
  case onnx::TensorProto::FLOAT16:
    return b.getF16Type();
  case onnx::TensorProto::BFLOAT16:
    return b.getBF16Type();
  case onnx::TensorProto::INT64:
    return b.getI64Type();
  case onnx::TensorProto::INT32:
    return b.getI32Type();
  case onnx::TensorProto::INT16:
    return b.getI16Type();
  case onnx::TensorProto::INT8:
    return b.getI8Type();
  case onnx::TensorProto::UINT8:
    return IntegerType::get(context, 8, IntegerType::Unsigned);
  case onnx::TensorProto::UINT16:
    return IntegerType::get(context, 16, IntegerType::Unsigned);
  case onnx::TensorProto::UINT32:
    return IntegerType::get(context, 32, IntegerType::Unsigned);
  case onnx::TensorProto::UINT64:
    return IntegerType::get(context, 64, IntegerType::Unsigned);
  case onnx::TensorProto::BOOL:
    return b.getI1Type();
  default:
    return {};
  }
}

static std::string dataTypeName(int32_t dataType) {
  return onnx::TensorProto::DataType_Name(
      static_cast<onnx::TensorProto::DataType>(dataType));
}

/// Describes an ONNX value type for diagnostics, e.g. `FLOAT[N, 3]`.
static std::string describeType(const onnx::TypeProto &type) {
  if (!type.has_tensor_type())
    return "a non-tensor value";
  const onnx::TypeProto_Tensor &tensor = type.tensor_type();
  std::string text = dataTypeName(tensor.elem_type());
  if (!tensor.has_shape())
    return text + " of unknown rank";
  text += "[";
  for (auto [i, dim] : llvm::enumerate(tensor.shape().dim())) {
    if (i)
      text += ", ";
    text += dim.has_dim_value()   ? std::to_string(dim.dim_value())
            : dim.has_dim_param() ? dim.dim_param()
                                  : "?";
  }
  return text + "]";
}

namespace {
/// Imports one ONNX graph.
class GraphImporter {
public:
  GraphImporter(MLIRContext *context, StringRef path,
                const onnx::ModelProto &model, const ImportONNXOptions &options)
      : context(context), path(path), model(model), graph(model.graph()),
        options(options), builder(context),
        fileLoc(FileLineColLoc::get(context, path, 0, 0)),
        opset(getDefaultOpset(model)) {
    modelDir = llvm::sys::path::parent_path(path).str();
    // Parameters refer to the model by absolute path, so the IR stays valid
    // from any working directory.
    llvm::SmallString<256> absolute(path);
    llvm::sys::fs::make_absolute(absolute);
    llvm::sys::path::remove_dots(absolute, /*remove_dot_dot=*/true);
    absolutePath = absolute.str().str();
  }

  OwningOpRef<ModuleOp> run();

private:
  InFlightDiagnostic emitError() { return mlir::emitError(fileLoc); }
  LogicalResult checkSupportedOps();
  /// `type`, or an error naming the `role` `name` when no device could
  /// hold it.
  FailureOr<RankedTensorType> checkSize(RankedTensorType type, StringRef role,
                                        StringRef name);
  FailureOr<RankedTensorType> importValueType(const onnx::ValueInfoProto &info,
                                              bool isInput);
  FailureOr<Value> importInitializer(const onnx::TensorProto &tensor);
  DenseElementsAttr resolveConstant(Value value);
  /// A constant of `value` in place of `result`, which a node computed from
  /// constants (named `name`); erases the ops that computed it.
  Value foldedConstant(Value result, DenseElementsAttr value, StringRef name);
  LogicalResult importNode(const onnx::NodeProto &node, unsigned index);
  Location nodeLocation(const onnx::NodeProto &node, unsigned index);
  void eraseFoldedInitializers(func::FuncOp function);

  MLIRContext *context;
  std::string path, modelDir, absolutePath;
  const onnx::ModelProto &model;
  const onnx::GraphProto &graph;
  const ImportONNXOptions &options;
  OpBuilder builder;
  Location fileLoc;
  int64_t opset;

  ModuleOp module;
  llvm::StringMap<Value> values;
  llvm::StringMap<const onnx::TensorProto *> initializers;
  llvm::StringSet<> usedNames;
  /// What defines each value so far: a graph input, an initializer or a
  /// node, in words.
  llvm::StringMap<std::string> definedBy;
  /// The names the model gives its nodes.
  llvm::StringSet<> nodeNames;
};
} // namespace

/// One error for every op type without an importer, in order of first use,
/// each with the nodes that use it (the first three, then how many more).
LogicalResult GraphImporter::checkSupportedOps() {
  constexpr size_t kNodesNamed = 3;
  SmallVector<std::string> unsupported;
  llvm::StringMap<SmallVector<std::string>> users;
  for (auto [index, node] : llvm::enumerate(graph.node())) {
    bool defaultDomain = node.domain().empty() || node.domain() == "ai.onnx";
    if (defaultDomain && lookupNodeImporter(node.op_type()))
      continue;
    std::string type =
        defaultDomain ? node.op_type() : node.domain() + "." + node.op_type();
    auto [it, inserted] = users.try_emplace(type);
    if (inserted)
      unsupported.push_back(type);
    it->second.push_back(
        cast<NameLoc>(nodeLocation(node, index)).getName().str());
  }
  if (unsupported.empty())
    return success();
  InFlightDiagnostic diag = emitError();
  diag << "unsupported ONNX op" << (unsupported.size() > 1 ? "s" : "") << ": ";
  llvm::interleaveComma(unsupported, diag, [&](const std::string &type) {
    ArrayRef<std::string> nodes = users[type];
    diag << type << " (node" << (nodes.size() > 1 ? "s " : " ");
    llvm::interleaveComma(
        nodes.take_front(kNodesNamed), diag,
        [&](const std::string &n) { diag << "'" << n << "'"; });
    if (nodes.size() > kNodesNamed)
      diag << " and " << nodes.size() - kNodesNamed << " more";
    diag << ")";
  });
  return diag;
}

FailureOr<RankedTensorType>
GraphImporter::importValueType(const onnx::ValueInfoProto &info, bool isInput) {
  const char *role = isInput ? "graph input" : "graph output";
  if (!info.type().has_tensor_type())
    return emitError() << role << " '" << info.name() << "' is not a tensor";
  const onnx::TypeProto_Tensor &tensor = info.type().tensor_type();
  Type element = convertONNXElementType(context, tensor.elem_type());
  if (!element)
    return emitError() << role << " '" << info.name()
                       << "' has unsupported element type "
                       << dataTypeName(tensor.elem_type());

  auto override = options.inputShapes.find(info.name());
  if (isInput && override != options.inputShapes.end()) {
    if (tensor.has_shape() && static_cast<size_t>(tensor.shape().dim_size()) !=
                                  override->second.size())
      return emitError() << "--input-shape gives " << override->second.size()
                         << " dimension"
                         << (override->second.size() == 1 ? "" : "s")
                         << " for graph input '" << info.name() << "' of rank "
                         << tensor.shape().dim_size();
    for (auto [i, extent] : llvm::enumerate(override->second)) {
      if (!tensor.has_shape())
        break;
      const onnx::TensorShapeProto_Dimension &dim = tensor.shape().dim(i);
      if (dim.has_dim_value() && dim.dim_value() != extent)
        return emitError() << "--input-shape gives extent " << extent
                           << " for dimension " << i << " of graph input '"
                           << info.name() << "', which the model fixes to "
                           << dim.dim_value();
    }
    return checkSize(RankedTensorType::get(override->second, element), role,
                     info.name());
  }
  if (!tensor.has_shape())
    return emitError() << role << " '" << info.name()
                       << "' has an unknown rank; give its shape with "
                          "--input-shape "
                       << info.name() << "=d0,d1,...";
  SmallVector<int64_t> shape;
  for (auto [i, dim] : llvm::enumerate(tensor.shape().dim())) {
    if (dim.has_dim_value() && dim.dim_value() >= 0) {
      shape.push_back(dim.dim_value());
      continue;
    }
    if (!isInput) {
      shape.push_back(ShapedType::kDynamic);
      continue;
    }
    InFlightDiagnostic diag = emitError();
    diag << "graph input '" << info.name() << "' has symbolic dimension " << i;
    if (dim.has_dim_param())
      diag << " ('" << dim.dim_param() << "')";
    diag << "; give its shape with --input-shape " << info.name()
         << "=d0,d1,...";
    return diag;
  }
  return checkSize(RankedTensorType::get(shape, element), role, info.name());
}

FailureOr<RankedTensorType> GraphImporter::checkSize(RankedTensorType type,
                                                     StringRef role,
                                                     StringRef name) {
  if (type.hasStaticShape() && byteSize(type) > kMaxTensorBytes)
    return emitError() << role << " '" << name << "' of type " << type
                       << " needs " << formatBytes(byteSize(type))
                       << ", more than any device holds ("
                       << formatBytes(kMaxTensorBytes) << ")";
  return type;
}

FailureOr<Value>
GraphImporter::importInitializer(const onnx::TensorProto &tensor) {
  Type element = convertONNXElementType(context, tensor.data_type());
  if (!element)
    return emitError() << "initializer '" << tensor.name()
                       << "' has unsupported data type "
                       << dataTypeName(tensor.data_type());
  auto type = RankedTensorType::get(
      SmallVector<int64_t>(tensor.dims().begin(), tensor.dims().end()),
      element);
  Location loc = NameLoc::get(builder.getStringAttr(tensor.name()), fileLoc);

  // Floating-point initializers are the model's parameters; their data
  // stays in the model file (the loader checked any external data).
  if (isa<FloatType>(element)) {
    // Parameters go before @main, so the IR reads top-down.
    {
      OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPoint(builder.getInsertionBlock()->getParentOp());
      ParameterOp::create(
          builder, loc, tensor.name(), type,
          /*trainable=*/true,
          ExternalAttr::get(context, builder.getStringAttr(absolutePath),
                            builder.getStringAttr(tensor.name())));
    }
    return ParamRefOp::create(builder, loc, type, tensor.name()).getResult();
  }

  std::string bytes;
  if (std::string error = readTensorBytes(tensor, modelDir, bytes);
      !error.empty())
    return emitError() << error;
  return ConstantOp::create(builder, loc,
                            elementsFromBytes(type, tensor.name(), bytes))
      .getResult();
}

DenseElementsAttr GraphImporter::resolveConstant(Value value) {
  auto ref = value.getDefiningOp<ParamRefOp>();
  if (!ref)
    return {};
  auto it = initializers.find(ref.getName());
  if (it == initializers.end())
    return {};
  std::string bytes;
  if (!readTensorBytes(*it->second, modelDir, bytes).empty())
    return {};
  auto type = cast<RankedTensorType>(ref.getType());
  if (type.getNumElements() > kMaxInlineElements)
    return {};
  return dyn_cast<DenseElementsAttr>(elementsFromBytes(type, "", bytes));
}

/// `loc("<node name>"("<op type>"))`. The model file is left out on
/// purpose: MLIR's diagnostic handlers print the innermost file location
/// instead of the names, and every diagnostic must name the node.
Location GraphImporter::nodeLocation(const onnx::NodeProto &node,
                                     unsigned index) {
  std::string name = node.name();
  if (name.empty()) {
    // Named after its op type and place, unlike every named node.
    name = node.op_type() + "_" + std::to_string(index);
    while (nodeNames.contains(name))
      name += "_";
  }
  return NameLoc::get(builder.getStringAttr(name),
                      NameLoc::get(builder.getStringAttr(node.op_type())));
}

/// Whether `attr` of `node` holds the default value that the op's schema
/// at `opset` gives it.
static bool isSchemaDefault(const onnx::NodeProto &node,
                            const onnx::AttributeProto &attr, int64_t opset) {
  const onnx::OpSchema *schema = onnx::OpSchemaRegistry::Schema(
      node.op_type(), static_cast<int>(opset), node.domain());
  if (!schema)
    return false;
  auto it = schema->attributes().find(attr.name());
  if (it == schema->attributes().end() || !it->second.default_value.has_type())
    return false;
  onnx::AttributeProto value = attr, expected = it->second.default_value;
  value.clear_name();
  value.clear_doc_string();
  expected.clear_name();
  expected.clear_doc_string();
  return value.SerializeAsString() == expected.SerializeAsString();
}

LogicalResult GraphImporter::importNode(const onnx::NodeProto &node,
                                        unsigned index) {
  Location loc = nodeLocation(node, index);
  SmallVector<Value> inputs;
  for (const std::string &name : node.input()) {
    if (name.empty()) {
      inputs.push_back(Value());
      continue;
    }
    auto it = values.find(name);
    if (it == values.end())
      return mlir::emitError(loc)
             << node.op_type() << " node '"
             << cast<NameLoc>(loc).getName().str() << "' reads '" << name
             << "', which no earlier node, input or initializer "
             << "defines";
    inputs.push_back(it->second);
  }
  NodeContext nodeContext(node, opset, builder, loc, std::move(inputs));
  nodeContext.displayName = cast<NameLoc>(loc).getName().str();
  nodeContext.usedNames = &usedNames;
  nodeContext.resolveConstant = [this](Value v) { return resolveConstant(v); };
  // The checker enforces arity where it knows the opset; check it here too,
  // so that handlers may rely on their required inputs.
  const NodeImporter *importer = lookupNodeImporter(node.op_type());
  unsigned numInputs = node.input_size(), numOutputs = node.output_size();
  if (numInputs < importer->minInputs || numInputs > importer->maxInputs) {
    InFlightDiagnostic diag = nodeContext.emitError();
    diag << "takes ";
    if (importer->minInputs == importer->maxInputs)
      diag << importer->minInputs;
    else if (importer->maxInputs == ~0u)
      diag << "at least " << importer->minInputs;
    else
      diag << importer->minInputs << " to " << importer->maxInputs;
    return diag << " input" << (importer->maxInputs == 1 ? "" : "s") << ", got "
                << numInputs;
  }
  for (unsigned i = 0; i < importer->minInputs; ++i)
    if (!nodeContext.input(i))
      return nodeContext.emitError() << "required input " << i << " is empty";
  if (numOutputs < 1 || numOutputs > importer->maxOutputs)
    return nodeContext.emitError()
           << "has " << numOutputs << " outputs, expected 1"
           << (importer->maxOutputs == 1 ? ""
               : importer->maxOutputs == ~0u
                   ? " or more"
                   : " to " + std::to_string(importer->maxOutputs));
  // Every value has one definition (the checker's rule, which it does not
  // enforce past the opsets it knows).
  for (const std::string &name : node.output())
    if (!name.empty() && definedBy.count(name))
      return nodeContext.emitError()
             << "writes '" << name << "', which " << definedBy.lookup(name)
             << " defines already";
  if (failed(importer->handler(nodeContext)) || nodeContext.badAttribute)
    return failure();
  // An attribute the importer never read would be ignored, and the node
  // would mean something else (past opset 17 the checker does not catch
  // an attribute the op does not have). One that spells out the schema's
  // default means nothing else.
  for (const onnx::AttributeProto &attr : node.attribute())
    if (!nodeContext.askedFor.contains(attr.name()) &&
        !isSchemaDefault(node, attr, opset))
      return nodeContext.emitError() << "has attribute '" << attr.name()
                                     << "', which pipe does not read for "
                                     << node.op_type() << " at opset " << opset;
  for (const std::string &name : node.output())
    if (!name.empty())
      definedBy[name] = "node '" + cast<NameLoc>(loc).getName().str() + "'";
  // A node that reads constants only is evaluated now: exporters leave
  // such subgraphs (a class token's Expand shape, computed by Equal ->
  // Where), which later nodes may read as shapes and no target should
  // compute at run time. Trainable parameters are never constants.
  bool foldable =
      node.input_size() > 0 &&
      llvm::all_of(nodeContext.presentInputs(), [](Value input) {
        Operation *op = input.getDefiningOp();
        return isa_and_present<ConstantOp>(op) ||
               (isa_and_present<ParamRefOp>(op) &&
                !isa<FloatType>(
                    cast<RankedTensorType>(input.getType()).getElementType()));
      });
  for (auto [i, name] : llvm::enumerate(node.output())) {
    if (name.empty())
      continue;
    Value result =
        i < nodeContext.results.size() ? nodeContext.results[i] : Value();
    if (!result) {
      if (nodeContext.outputUsed(i))
        return nodeContext.emitError()
               << "output " << i << " ('" << name << "') is not supported";
      continue;
    }
    auto type = cast<RankedTensorType>(result.getType());
    if (byteSize(type) > kMaxTensorBytes)
      return nodeContext.emitError()
             << "output " << i << " ('" << name << "') of type " << type
             << " needs " << formatBytes(byteSize(type))
             << ", more than any device holds (" << formatBytes(kMaxTensorBytes)
             << ")";
    if (foldable && !result.getDefiningOp<ConstantOp>())
      if (DenseElementsAttr value = nodeContext.constantValue(result))
        result = foldedConstant(result, value, name);
    values[name] = result;
  }
  return success();
}

Value GraphImporter::foldedConstant(Value result, DenseElementsAttr value,
                                    StringRef name) {
  Operation *producer = result.getDefiningOp();
  ElementsAttr elements = value;
  // Large results go out of line, like large initializers.
  if (!value.isSplat() && !value.getElementType().isInteger(1) &&
      value.getNumElements() > kMaxInlineElements) {
    ArrayRef<char> raw = value.getRawData();
    elements = elementsFromBytes(cast<RankedTensorType>(value.getType()), name,
                                 std::string(raw.data(), raw.size()));
  }
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointAfter(producer);
  Value folded =
      ConstantOp::create(builder, producer->getLoc(), elements).getResult();
  // The node's ops that computed it are dead. Its inputs, constants that
  // other nodes may name, stay (unused ones are erased at the end).
  SmallVector<Operation *> worklist = {producer};
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (!op->use_empty() || !isPure(op) || isa<ParamRefOp, ConstantOp>(op))
      continue;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        worklist.push_back(def);
    op->erase();
  }
  return folded;
}

/// Initializers that nodes read only as constant attributes (a Dropout
/// ratio, a Reshape shape) leave their reference unused: drop it, and the
/// parameter, which would otherwise count as a trainable weight.
void GraphImporter::eraseFoldedInitializers(func::FuncOp function) {
  llvm::StringSet<> referenced;
  for (Operation &op : llvm::make_early_inc_range(function.getOps())) {
    if (!isa<ParamRefOp, ConstantOp>(op))
      continue;
    if (op.use_empty())
      op.erase();
    else if (auto ref = dyn_cast<ParamRefOp>(op))
      referenced.insert(ref.getName());
  }
  for (auto parameter :
       llvm::make_early_inc_range(module.getOps<ParameterOp>()))
    if (!referenced.contains(parameter.getSymName()))
      parameter.erase();
}

OwningOpRef<ModuleOp> GraphImporter::run() {
  OwningOpRef<ModuleOp> owned = ModuleOp::create(fileLoc);
  module = *owned;
  if (!graph.name().empty())
    module.setSymName(graph.name());
  for (const onnx::NodeProto &node : graph.node())
    if (!node.name().empty())
      nodeNames.insert(node.name());
  if (failed(checkSupportedOps()))
    return {};
  if (opset < 0) {
    emitError() << "the model imports no opset of the default ONNX domain";
    return {};
  }
  if (opset > kMaxOpset) {
    emitError() << "the model imports opset " << opset
                << " of the default ONNX domain; pipe reads opsets up to "
                << kMaxOpset;
    return {};
  }

  for (const onnx::TensorProto &tensor : graph.initializer()) {
    if (!initializers.try_emplace(tensor.name(), &tensor).second) {
      emitError() << "two initializers are called '" << tensor.name() << "'";
      return {};
    }
    definedBy[tensor.name()] = "an initializer";
  }
  // A graph input may name an initializer (its default value), once.
  llvm::StringSet<> inputNames;
  for (const onnx::ValueInfoProto &input : graph.input()) {
    if (!inputNames.insert(input.name()).second) {
      emitError() << "two graph inputs are called '" << input.name() << "'";
      return {};
    }
    if (!initializers.count(input.name()))
      definedBy[input.name()] = "a graph input";
  }
  if (graph.sparse_initializer_size()) {
    emitError() << "sparse initializers are not supported";
    return {};
  }
  for (const onnx::NodeProto &node : graph.node())
    for (const std::string &name : node.input())
      usedNames.insert(name);
  for (const onnx::ValueInfoProto &output : graph.output())
    usedNames.insert(output.name());

  // Graph inputs that are not initializers are the arguments of @main.
  SmallVector<std::string> argNames;
  for (const onnx::ValueInfoProto &input : graph.input())
    if (!initializers.count(input.name()))
      argNames.push_back(input.name());
  for (const auto &entry : options.inputShapes) {
    StringRef name = entry.getKey();
    if (llvm::is_contained(argNames, name.str()))
      continue;
    if (initializers.count(name))
      emitError() << "--input-shape names '" << name
                  << "', an initializer: its shape is fixed by its data";
    else
      emitError() << "--input-shape names '" << name
                  << "', which is not a graph input";
    return {};
  }
  SmallVector<Type> argTypes;
  for (const onnx::ValueInfoProto &input : graph.input()) {
    if (initializers.count(input.name()))
      continue;
    FailureOr<RankedTensorType> type = importValueType(input, true);
    if (failed(type))
      return {};
    argTypes.push_back(*type);
  }

  builder.setInsertionPointToEnd(module.getBody());
  auto function = func::FuncOp::create(builder, fileLoc, "main",
                                       builder.getFunctionType(argTypes, {}));
  Block *entry = function.addEntryBlock();
  for (auto [i, name] : llvm::enumerate(argNames)) {
    function.setArgAttr(i, "pipe.name", builder.getStringAttr(name));
    values[name] = entry->getArgument(i);
  }

  // Parameters go before @main; constants and param_refs open its body.
  builder.setInsertionPointToStart(entry);
  for (const onnx::TensorProto &tensor : graph.initializer()) {
    if (!usedNames.count(tensor.name()))
      continue;
    OpBuilder::InsertionGuard guard(builder);
    FailureOr<Value> value = importInitializer(tensor);
    if (failed(value))
      return {};
    values[tensor.name()] = *value;
  }

  builder.setInsertionPointToEnd(entry);
  for (auto [index, node] : llvm::enumerate(graph.node()))
    if (failed(importNode(node, index)))
      return {};

  SmallVector<Value> results;
  for (const onnx::ValueInfoProto &output : graph.output()) {
    auto it = values.find(output.name());
    if (it == values.end()) {
      emitError() << "graph output '" << output.name()
                  << "' is not computed by any node";
      return {};
    }
    // The declared type may leave the element type, the rank or any
    // extent open; what it fixes must match what the graph computes.
    auto actual = cast<RankedTensorType>(it->second.getType());
    const onnx::TypeProto &declared = output.type();
    bool compatible = declared.has_tensor_type();
    if (compatible && declared.tensor_type().elem_type() != 0)
      compatible =
          convertONNXElementType(context, declared.tensor_type().elem_type()) ==
          actual.getElementType();
    if (compatible && declared.tensor_type().has_shape()) {
      const onnx::TensorShapeProto &shape = declared.tensor_type().shape();
      compatible = shape.dim_size() == actual.getRank();
      for (int64_t d = 0; compatible && d < actual.getRank(); ++d)
        compatible = !shape.dim(d).has_dim_value() ||
                     shape.dim(d).dim_value() == actual.getDimSize(d);
    }
    if (!compatible) {
      emitError() << "graph output '" << output.name() << "' is declared as "
                  << describeType(declared) << " but the graph computes "
                  << actual;
      return {};
    }
    results.push_back(it->second);
  }
  func::ReturnOp::create(builder, fileLoc, results);
  function.setType(
      builder.getFunctionType(argTypes, ValueRange(results).getTypes()));
  for (auto [i, output] : llvm::enumerate(graph.output()))
    function.setResultAttr(i, "pipe.name",
                           builder.getStringAttr(output.name()));
  eraseFoldedInitializers(function);

  if (failed(verify(module)))
    return {};
  return owned;
}

OwningOpRef<ModuleOp>
mlir::pipe::importONNXModel(StringRef path, MLIRContext *context,
                            const ImportONNXOptions &options) {
  context->loadDialect<PipeDialect, func::FuncDialect>();
  onnx::ModelProto model;
  if (std::string error = loadONNXModel(path, options.check, model);
      !error.empty()) {
    mlir::emitError(FileLineColLoc::get(context, path, 0, 0)) << error;
    return {};
  }
  return GraphImporter(context, path, model, options).run();
}

std::string mlir::pipe::parseInputShapeOption(StringRef spec,
                                              ImportONNXOptions &options) {
  auto [name, dims] = spec.split('=');
  if (name.empty() || !spec.contains('='))
    return "--input-shape expects NAME=d0,d1,..., got '" + spec.str() + "'";
  SmallVector<int64_t> shape;
  SmallVector<StringRef> parts;
  if (!dims.empty())
    dims.split(parts, ',');
  for (StringRef part : parts) {
    int64_t extent;
    if (part.trim().getAsInteger(10, extent) || extent < 0)
      return "--input-shape " + name.str() + ": '" + part.str() +
             "' is not a non-negative integer";
    shape.push_back(extent);
  }
  if (!options.inputShapes.try_emplace(name, shape).second)
    return "--input-shape gives the shape of '" + name.str() + "' twice";
  return "";
}
