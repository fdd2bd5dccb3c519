//===- ONNXWeights.cpp - the weights of an ONNX model ---------------------===//

#include "pipe/Weights/ONNXWeights.h"
#include "pipe/Weights/ONNXModelLoader.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Path.h"

using namespace llvm;

std::string
mlir::pipe::readONNXInitializers(StringRef path, ArrayRef<std::string> names,
                                 llvm::StringMap<std::string> &bytes) {
  onnx::ModelProto model;
  if (std::string error = loadONNXModel(path, /*check=*/false, model);
      !error.empty())
    return error;
  std::string modelDir = llvm::sys::path::parent_path(path).str();
  llvm::StringSet<> wanted;
  for (const std::string &name : names)
    wanted.insert(name);
  for (const onnx::TensorProto &tensor : model.graph().initializer()) {
    if (!wanted.count(tensor.name()))
      continue;
    if (std::string error =
            readTensorBytes(tensor, modelDir, bytes[tensor.name()]);
        !error.empty())
      return error;
  }
  for (const std::string &name : names)
    if (!bytes.count(name))
      return "'" + path.str() + "' has no initializer '" + name + "'";
  return "";
}
