//===- OnnxSave.cpp - write a trained model back to ONNX ------------------===//

#include "OnnxSave.h"

#include "onnx/checker.h"
#include "onnx/onnx_pb.h"

#include <cstdio>
#include <fstream>
#include <map>
#include <unistd.h>

namespace pipe_rt {

/// Bytes per element of the floating-point ONNX types the CPU target
/// trains in; 0 for the others.
static size_t floatBytes(int32_t type) {
  return type == onnx::TensorProto::FLOAT    ? 4
         : type == onnx::TensorProto::DOUBLE ? 8
                                             : 0;
}

std::string saveTrainedOnnx(const std::string &source, const std::string &path,
                            const std::vector<InitializerData> &initializers) {
  onnx::ModelProto model;
  {
    std::ifstream in(source, std::ios::binary);
    if (!in)
      return "cannot open the source model '" + source + "'";
    if (!model.ParseFromIstream(&in))
      return "the source model '" + source + "' is not a valid ONNX file";
  }
  std::map<std::string, onnx::TensorProto *> byName;
  for (onnx::TensorProto &tensor :
       *model.mutable_graph()->mutable_initializer())
    byName[tensor.name()] = &tensor;
  for (const InitializerData &update : initializers) {
    auto it = byName.find(update.name);
    if (it == byName.end())
      return "the model has no initializer '" + update.name + "'";
    onnx::TensorProto &tensor = *it->second;
    size_t count = 1;
    for (int64_t dim : tensor.dims())
      count *= static_cast<size_t>(dim);
    if (!floatBytes(tensor.data_type()))
      return "initializer '" + update.name + "' is not float32 or float64";
    if (count * floatBytes(tensor.data_type()) != update.bytes)
      return "initializer '" + update.name + "' holds " +
             std::to_string(count) + " elements, not the " +
             std::to_string(update.bytes) + " bytes trained";
    // Keep the type, shape and name; the data is inline and raw from now.
    tensor.clear_float_data();
    tensor.clear_double_data();
    tensor.clear_int32_data();
    tensor.clear_int64_data();
    tensor.clear_uint64_data();
    tensor.clear_external_data();
    tensor.clear_data_location();
    tensor.set_raw_data(update.data, update.bytes);
  }
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception &error) {
    return std::string("the trained model fails onnx.checker: ") + error.what();
  }
  std::string temporary = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out || !model.SerializeToOstream(&out) || !out.flush()) {
      std::remove(temporary.c_str());
      return "cannot write '" + path + "'";
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    return "cannot write '" + path + "'";
  }
  return "";
}

} // namespace pipe_rt
