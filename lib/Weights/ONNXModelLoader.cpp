//===- ONNXModelLoader.cpp - read and check ONNX models -------------------===//

#include "pipe/Weights/ONNXModelLoader.h"

#include "onnx/checker.h"
#include "onnx/defs/schema.h"
#include "onnx/shape_inference/implementation.h"
#include "onnx/version_converter/convert.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CrashRecoveryContext.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <google/protobuf/io/coded_stream.h>

using namespace mlir::pipe;

static std::string readExternalBytes(const onnx::TensorProto &tensor,
                                     llvm::StringRef modelDir,
                                     std::string *bytes);
static std::string checkInlineSize(const onnx::TensorProto &tensor);

int64_t mlir::pipe::getDefaultOpset(const onnx::ModelProto &model) {
  for (const onnx::OperatorSetIdProto &opset : model.opset_import())
    if (opset.domain().empty() || opset.domain() == "ai.onnx")
      return opset.version();
  return -1;
}

int64_t mlir::pipe::getMaxKnownOpset() {
  const auto &map =
      onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  auto it = map.find(onnx::ONNX_DOMAIN);
  return it == map.end() ? 0 : it->second.second;
}

/// Runs ONNX's strict shape inference as one more check of the model. It
/// works on a copy without the large initializer data (inference reads only
/// their types and shapes), and its results are dropped: pipe infers types
/// itself. ONNX 1.12's inference crashes on some malformed models; such a
/// crash is contained, and the importer's own verifiers report the problem.
static std::string runShapeInference(const onnx::ModelProto &model,
                                     llvm::StringRef path) {
  onnx::ModelProto copy;
  copy.set_ir_version(model.ir_version());
  *copy.mutable_opset_import() = model.opset_import();
  onnx::GraphProto &graph = *copy.mutable_graph();
  for (const onnx::NodeProto &node : model.graph().node())
    *graph.add_node() = node;
  *graph.mutable_input() = model.graph().input();
  *graph.mutable_output() = model.graph().output();
  *graph.mutable_value_info() = model.graph().value_info();
  for (const onnx::TensorProto &tensor : model.graph().initializer()) {
    onnx::TensorProto *light = graph.add_initializer();
    if (tensor.raw_data().size() <= 4096 &&
        tensor.data_location() != onnx::TensorProto::EXTERNAL) {
      *light = tensor;
      continue;
    }
    light->set_name(tensor.name());
    light->set_data_type(tensor.data_type());
    *light->mutable_dims() = tensor.dims();
  }

  std::string error;
  llvm::CrashRecoveryContext::Enable();
  llvm::CrashRecoveryContext recovery;
  recovery.RunSafely([&] {
    try {
      onnx::ShapeInferenceOptions options{/*check_type=*/true,
                                          /*error_mode=*/1,
                                          /*enable_data_propagation=*/false};
      onnx::shape_inference::InferShapes(
          copy, onnx::OpSchemaRegistry::Instance(), options);
    } catch (const std::exception &exception) {
      error = "ONNX shape inference rejects '" + path.str() +
              "': " + llvm::StringRef(exception.what()).trim().str();
    }
  });
  return error;
}

/// The shape of value `name` as shape inference left it (graph inputs,
/// outputs and intermediate values) or an initializer's: its extents, 0
/// where unknown; none where even the rank is.
static std::optional<std::vector<int64_t>>
shapeOf(const onnx::GraphProto &graph, const std::string &name) {
  for (const auto *infos :
       {&graph.input(), &graph.value_info(), &graph.output()})
    for (const onnx::ValueInfoProto &info : *infos)
      if (info.name() == name && info.type().tensor_type().has_shape()) {
        std::vector<int64_t> shape;
        for (const auto &dim : info.type().tensor_type().shape().dim())
          shape.push_back(dim.has_dim_value() ? dim.dim_value() : 0);
        return shape;
      }
  for (const onnx::TensorProto &tensor : graph.initializer())
    if (tensor.name() == name)
      return std::vector<int64_t>(tensor.dims().begin(), tensor.dims().end());
  return std::nullopt;
}

/// Whether `node` has attribute `name`, and its integer value.
static std::optional<int64_t> intAttribute(const onnx::NodeProto &node,
                                           const std::string &name) {
  for (const onnx::AttributeProto &attr : node.attribute())
    if (attr.name() == name)
      return attr.i();
  return std::nullopt;
}

/// Before opset 7, a binary op with `broadcast` aligned its second operand
/// at `axis`, and PRelu applied a one-dimensional slope [C] along axis 1;
/// numpy broadcasting, which the version converter assumes, aligns with
/// the last axes. Unsqueezing such an operand with trailing ones to reach
/// the first's last axis keeps the meaning across the conversion.
static std::string alignLegacyBroadcasts(onnx::GraphProto &graph) {
  static const llvm::StringSet<> binary = {"Add",   "Sub",     "Mul", "Div",
                                           "Pow",   "And",     "Or",  "Xor",
                                           "Equal", "Greater", "Less"};
  std::vector<onnx::NodeProto> nodes(graph.node().begin(), graph.node().end());
  graph.clear_node();
  // The names every value has, so that the new ones are fresh.
  llvm::StringSet<> names;
  for (const onnx::NodeProto &node : nodes)
    for (const std::string &output : node.output())
      names.insert(output);
  for (const auto *infos : {&graph.input(), &graph.output()})
    for (const onnx::ValueInfoProto &info : *infos)
      names.insert(info.name());
  for (const onnx::TensorProto &tensor : graph.initializer())
    names.insert(tensor.name());
  for (onnx::NodeProto &node : nodes) {
    std::optional<std::vector<int64_t>> lhs, rhs;
    if (node.input_size() == 2 && !node.input(1).empty()) {
      lhs = shapeOf(graph, node.input(0));
      rhs = shapeOf(graph, node.input(1));
    }
    int lhsRank = lhs ? static_cast<int>(lhs->size()) : -1;
    int rhsRank = rhs ? static_cast<int>(rhs->size()) : -1;
    int axis = -1;
    if (binary.contains(node.op_type()) &&
        intAttribute(node, "broadcast").value_or(0)) {
      std::optional<int64_t> given = intAttribute(node, "axis");
      if (given && (lhsRank < 0 || rhsRank < 0))
        return node.op_type() + " node '" + node.name() +
               "' broadcasts along axis " + std::to_string(*given) +
               ", but shape inference leaves the rank of its operands "
               "unknown";
      axis = given.value_or(lhsRank - rhsRank);
    }
    // A one-dimensional slope of several values runs along the channels,
    // whether or not their number is known.
    else if (node.op_type() == "PRelu" && rhsRank == 1 && lhsRank > 2 &&
             (*rhs)[0] > 1 && ((*lhs)[1] == 0 || (*lhs)[1] == (*rhs)[0]))
      axis = 1;
    if (lhsRank >= 0 && rhsRank >= 0 && axis >= 0 && axis + rhsRank < lhsRank) {
      std::string name = node.input(1) + ".aligned";
      for (int fresh = 1; names.contains(name); ++fresh)
        name = node.input(1) + ".aligned" + std::to_string(fresh);
      names.insert(name);
      onnx::NodeProto *unsqueeze = graph.add_node();
      unsqueeze->set_op_type("Unsqueeze");
      unsqueeze->set_name(name);
      unsqueeze->add_input(node.input(1));
      unsqueeze->add_output(name);
      onnx::AttributeProto *axes = unsqueeze->add_attribute();
      axes->set_name("axes");
      axes->set_type(onnx::AttributeProto::INTS);
      for (int d = rhsRank; d < lhsRank - axis; ++d)
        axes->add_ints(d);
      node.set_input(1, name);
      auto *attrs = node.mutable_attribute();
      for (int i = attrs->size() - 1; i >= 0; --i)
        if (attrs->Get(i).name() == "axis")
          attrs->DeleteSubrange(i, 1);
    }
    *graph.add_node() = node;
  }
  return "";
}

/// Models of opsets 1 to 6, PyTorch's early exports (`broadcast`
/// attributes, BatchNormalization's `is_test`, channel-wise PRelu), are
/// converted to opset 9 by ONNX's own version converter. Its adapters
/// need shapes, so ONNX shape inference runs first, and again after the
/// broadcasts are aligned.
static std::string upgradeLegacyModel(onnx::ModelProto &model,
                                      llvm::StringRef path) {
  int64_t opset = getDefaultOpset(model);
  // An op the opset does not define is the importer's to report.
  for (const onnx::NodeProto &node : model.graph().node())
    if ((node.domain().empty() || node.domain() == "ai.onnx") &&
        !onnx::OpSchemaRegistry::Schema(node.op_type(),
                                        static_cast<int>(opset)))
      return "";
  std::string error, unaligned;
  llvm::CrashRecoveryContext::Enable();
  llvm::CrashRecoveryContext recovery;
  bool finished = recovery.RunSafely([&] {
    try {
      onnx::shape_inference::InferShapes(model);
      unaligned = alignLegacyBroadcasts(*model.mutable_graph());
      if (!unaligned.empty())
        return;
      onnx::shape_inference::InferShapes(model);
      model = onnx::version_conversion::ConvertVersion(model, 9);
    } catch (const std::exception &exception) {
      error = llvm::StringRef(exception.what()).trim().str();
    }
  });
  if (!unaligned.empty())
    return "'" + path.str() + "' is a model of opset " + std::to_string(opset) +
           ", which pipe converts to opset 9: " + unaligned;
  if (!finished || !error.empty())
    return "'" + path.str() + "' is a model of opset " + std::to_string(opset) +
           ", which ONNX's version converter cannot bring to opset 9" +
           (error.empty() ? std::string() : ": " + error);
  return "";
}

std::string mlir::pipe::loadONNXModel(llvm::StringRef path, bool check,
                                      onnx::ModelProto &model) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (std::error_code error = buffer.getError())
    return "cannot open '" + path.str() + "': " + error.message();
  llvm::StringRef bytes = (*buffer)->getBuffer();
  if (bytes.empty())
    return "'" + path.str() + "' is empty, not an ONNX model";

  google::protobuf::io::CodedInputStream stream(
      reinterpret_cast<const uint8_t *>(bytes.data()),
      static_cast<int>(std::min<size_t>(bytes.size(), INT32_MAX)));
  stream.SetTotalBytesLimit(INT32_MAX);
  if (!model.ParseFromCodedStream(&stream) || !stream.ConsumedEntireMessage())
    return "'" + path.str() +
           "' is not a valid ONNX model: the protobuf does not parse "
           "(truncated or corrupt file?)";
  if (!model.has_graph())
    return "'" + path.str() + "' is not a valid ONNX model: it has no graph";
  // One version per domain: which one an op follows would be a guess.
  llvm::StringSet<> domains;
  for (const onnx::OperatorSetIdProto &opset : model.opset_import()) {
    std::string domain = opset.domain() == "ai.onnx" ? "" : opset.domain();
    if (!domains.insert(domain).second)
      return std::string("the model imports two opsets of the ") +
             (domain.empty() ? std::string("default ONNX")
                             : "'" + domain + "'") +
             " domain";
  }
  // The data of every inline initializer fits its shape; the checker does
  // not check it, and the planner reads only shapes.
  for (const onnx::TensorProto &tensor : model.graph().initializer())
    if (tensor.data_location() != onnx::TensorProto::EXTERNAL)
      if (std::string error = checkInlineSize(tensor); !error.empty())
        return error;
  // Check external data ourselves, always: the checker's messages about it
  // are vague, and its in-memory form resolves paths against the working
  // directory. Its path form resolves them against the model's folder.
  std::string modelDir = llvm::sys::path::parent_path(path).str();
  bool external = false;
  for (const onnx::TensorProto &tensor : model.graph().initializer()) {
    if (tensor.data_location() != onnx::TensorProto::EXTERNAL)
      continue;
    external = true;
    if (std::string error = readExternalBytes(tensor, modelDir, nullptr);
        !error.empty())
      return error;
  }

  // A model without the default domain only holds ops of other domains;
  // the importer reports them as unsupported.
  int64_t opset = getDefaultOpset(model);
  if (opset >= 1 && opset < 7) {
    if (std::string error = upgradeLegacyModel(model, path); !error.empty())
      return error;
    opset = getDefaultOpset(model);
  }
  if (!check || opset < 0 || opset > getMaxKnownOpset())
    return "";
  try {
    if (external)
      onnx::checker::check_model(path.str());
    else
      onnx::checker::check_model(model);
  } catch (const std::exception &error) {
    return "the ONNX checker rejects '" + path.str() +
           "': " + llvm::StringRef(error.what()).trim().str();
  }
  return runShapeInference(model, path);
}

/// Size in bytes of one element of an ONNX data type, or 0 if unsupported.
static size_t elementSize(int32_t dataType) {
  switch (dataType) {
  case onnx::TensorProto::FLOAT:
  case onnx::TensorProto::INT32:
  case onnx::TensorProto::UINT32:
    return 4;
  case onnx::TensorProto::DOUBLE:
  case onnx::TensorProto::INT64:
  case onnx::TensorProto::UINT64:
    return 8;
  case onnx::TensorProto::FLOAT16:
  case onnx::TensorProto::BFLOAT16:
  case onnx::TensorProto::INT16:
  case onnx::TensorProto::UINT16:
    return 2;
  case onnx::TensorProto::INT8:
  case onnx::TensorProto::UINT8:
  case onnx::TensorProto::BOOL:
    return 1;
  default:
    return 0;
  }
}

/// The bytes `tensor`'s shape needs at `size` bytes an element; none for a
/// negative dimension or a count past 2^64.
static std::optional<uint64_t> neededBytes(const onnx::TensorProto &tensor,
                                           uint64_t size) {
  bool overflow = false;
  uint64_t needed = size;
  for (int64_t dim : tensor.dims()) {
    if (dim < 0)
      return std::nullopt;
    needed = llvm::SaturatingMultiply(needed, uint64_t(dim), &overflow);
    if (overflow)
      return std::nullopt;
  }
  return needed;
}

/// Whether the inline data of `tensor` (raw, or in the typed field
/// readTensorBytes reads) has as many bytes as its shape needs; types
/// readTensorBytes does not read are left to the importer.
static std::string checkInlineSize(const onnx::TensorProto &tensor) {
  uint64_t size = elementSize(tensor.data_type());
  if (!size)
    return "";
  std::optional<uint64_t> needed = neededBytes(tensor, size);
  if (!needed)
    return "initializer '" + tensor.name() +
           "' has a negative dimension or a shape past 2^64 bytes";
  uint64_t held;
  if (tensor.has_raw_data()) {
    held = tensor.raw_data().size();
  } else {
    switch (tensor.data_type()) {
    case onnx::TensorProto::FLOAT:
      held = uint64_t(tensor.float_data_size()) * 4;
      break;
    case onnx::TensorProto::DOUBLE:
      held = uint64_t(tensor.double_data_size()) * 8;
      break;
    case onnx::TensorProto::INT64:
      held = uint64_t(tensor.int64_data_size()) * 8;
      break;
    case onnx::TensorProto::UINT64:
    case onnx::TensorProto::UINT32:
      held = uint64_t(tensor.uint64_data_size()) * size;
      break;
    default:
      held = uint64_t(tensor.int32_data_size()) * size;
      break;
    }
  }
  if (held != *needed)
    return "initializer '" + tensor.name() + "' holds " + std::to_string(held) +
           " bytes of data, its shape needs " + std::to_string(*needed);
  return "";
}

template <typename T, typename Field>
static void appendField(const Field &field, std::string &bytes) {
  for (auto value : field) {
    T converted = static_cast<T>(value);
    bytes.append(reinterpret_cast<const char *>(&converted), sizeof(T));
  }
}

/// Checks the external data of `tensor` and, when `bytes` is given, reads it.
static std::string readExternalBytes(const onnx::TensorProto &tensor,
                                     llvm::StringRef modelDir,
                                     std::string *bytes) {
  std::string location;
  uint64_t offset = 0;
  int64_t length = -1;
  std::string what = "external data of initializer '" + tensor.name() + "'";
  for (const onnx::StringStringEntryProto &entry : tensor.external_data()) {
    llvm::StringRef value = entry.value();
    if (entry.key() == "location") {
      location = entry.value();
    } else if (entry.key() == "offset") {
      if (value.getAsInteger(10, offset))
        return what + " has offset '" + entry.value() +
               "', which is not a non-negative integer";
    } else if (entry.key() == "length") {
      if (value.getAsInteger(10, length) || length < 0)
        return what + " has length '" + entry.value() +
               "', which is not a non-negative integer";
    }
  }
  if (location.empty())
    return what + " names no location";
  if (llvm::sys::path::is_absolute(location))
    return what + " uses the absolute path '" + location +
           "'; only paths relative to the model's folder are allowed";
  for (llvm::StringRef part : llvm::make_range(llvm::sys::path::begin(location),
                                               llvm::sys::path::end(location)))
    if (part == "..")
      return what + " at '" + location + "' points outside the model's folder";

  llvm::SmallString<256> dir(modelDir.empty() ? "." : modelDir);
  llvm::SmallString<256> file(dir);
  llvm::sys::path::append(file, location);
  // Resolve symbolic links too: the real file must lie in the real folder.
  llvm::SmallString<256> realDir, realFile;
  if (std::error_code error = llvm::sys::fs::real_path(dir, realDir))
    return what + ": cannot open the folder '" + dir.str().str() +
           "': " + error.message();
  if (std::error_code error = llvm::sys::fs::real_path(file, realFile))
    return what + ": cannot open '" + file.str().str() +
           "': " + error.message();
  if (!llvm::StringRef(realFile).starts_with(realDir.str().str() + "/"))
    return what + " at '" + location + "' points outside the model's folder";

  uint64_t fileSize = 0;
  if (std::error_code error = llvm::sys::fs::file_size(realFile, fileSize))
    return what + ": cannot open '" + file.str().str() +
           "': " + error.message();
  if (offset > fileSize)
    return what + ": offset " + std::to_string(offset) +
           " is past the end of '" + location + "' (" +
           std::to_string(fileSize) + " bytes)";
  uint64_t available = fileSize - offset;
  uint64_t size = length < 0 ? available : static_cast<uint64_t>(length);
  if (size > available)
    return what + ": '" + location + "' holds " + std::to_string(available) +
           " bytes from offset " + std::to_string(offset) + ", " +
           std::to_string(size) + " needed";
  if (!bytes)
    return "";
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFileSlice(realFile, size, offset);
  if (std::error_code error = buffer.getError())
    return what + ": cannot read '" + file.str().str() +
           "': " + error.message();
  bytes->assign((*buffer)->getBufferStart(), size);
  return "";
}

std::string mlir::pipe::readTensorBytes(const onnx::TensorProto &tensor,
                                        llvm::StringRef modelDir,
                                        std::string &bytes) {
  size_t size = elementSize(tensor.data_type());
  if (!size)
    return "tensor '" + tensor.name() + "' has unsupported data type " +
           onnx::TensorProto::DataType_Name(
               static_cast<onnx::TensorProto::DataType>(tensor.data_type()));
  std::optional<uint64_t> needed = neededBytes(tensor, size);
  if (!needed)
    return "tensor '" + tensor.name() +
           "' has a negative dimension or a shape past 2^64 bytes";

  bytes.clear();
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) {
    if (std::string error = readExternalBytes(tensor, modelDir, &bytes);
        !error.empty())
      return error;
  } else if (tensor.has_raw_data()) {
    bytes = tensor.raw_data();
  } else {
    switch (tensor.data_type()) {
    case onnx::TensorProto::FLOAT:
      appendField<float>(tensor.float_data(), bytes);
      break;
    case onnx::TensorProto::DOUBLE:
      appendField<double>(tensor.double_data(), bytes);
      break;
    case onnx::TensorProto::INT64:
      appendField<int64_t>(tensor.int64_data(), bytes);
      break;
    case onnx::TensorProto::UINT64:
    case onnx::TensorProto::UINT32:
      if (size == 8)
        appendField<uint64_t>(tensor.uint64_data(), bytes);
      else
        appendField<uint32_t>(tensor.uint64_data(), bytes);
      break;
    case onnx::TensorProto::INT32:
      appendField<int32_t>(tensor.int32_data(), bytes);
      break;
    case onnx::TensorProto::INT16:
      appendField<int16_t>(tensor.int32_data(), bytes);
      break;
    case onnx::TensorProto::UINT16:
    case onnx::TensorProto::FLOAT16:
    case onnx::TensorProto::BFLOAT16:
      appendField<uint16_t>(tensor.int32_data(), bytes);
      break;
    case onnx::TensorProto::INT8:
      appendField<int8_t>(tensor.int32_data(), bytes);
      break;
    case onnx::TensorProto::UINT8:
    case onnx::TensorProto::BOOL:
      appendField<uint8_t>(tensor.int32_data(), bytes);
      break;
    default:
      break;
    }
  }
  if (bytes.size() != *needed)
    return "tensor '" + tensor.name() + "' holds " +
           std::to_string(bytes.size()) + " bytes, its shape needs " +
           std::to_string(*needed);
  return "";
}
