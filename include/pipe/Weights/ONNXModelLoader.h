//===- ONNXModelLoader.h - read and check ONNX models -----------*- C++ -*-===//
//
// The only code that touches ONNX's C++ library, which reports errors with
// exceptions. Every function here catches them and returns an error message.
//
//===----------------------------------------------------------------------===//

#ifndef PIPE_WEIGHTS_ONNXMODELLOADER_H
#define PIPE_WEIGHTS_ONNXMODELLOADER_H

#include "onnx/onnx_pb.h"

#include "llvm/ADT/StringRef.h"

#include <string>

namespace mlir {
namespace pipe {

/// The opset of the default ONNX domain that `model` imports, or -1.
int64_t getDefaultOpset(const onnx::ModelProto &model);

/// The highest default-domain opset the linked ONNX library knows.
int64_t getMaxKnownOpset();

/// Reads and parses the model at `path`. With `check`, runs the ONNX
/// checker and strict shape inference when the library knows the opset.
/// Returns an empty string on success, else the error.
std::string loadONNXModel(llvm::StringRef path, bool check,
                          onnx::ModelProto &model);

/// Reads the raw little-endian bytes of `tensor`: its raw_data, its typed
/// data fields, or its external data file under `modelDir`. External paths
/// must be relative and stay inside `modelDir`. Returns an empty string on
/// success, else the error.
std::string readTensorBytes(const onnx::TensorProto &tensor,
                            llvm::StringRef modelDir, std::string &bytes);

} // namespace pipe
} // namespace mlir

#endif // PIPE_WEIGHTS_ONNXMODELLOADER_H
