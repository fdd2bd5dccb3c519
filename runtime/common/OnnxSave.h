//===- OnnxSave.h - write a trained model back to ONNX ----------*- C++ -*-===//
//
// Part of the pipe runtime, linked only by training programs (it needs
// libonnx and protobuf). `OUT/run --save-onnx FILE` uses it.
//
//===----------------------------------------------------------------------===//

#ifndef PIPE_RUNTIME_COMMON_ONNXSAVE_H
#define PIPE_RUNTIME_COMMON_ONNXSAVE_H

#include <cstddef>
#include <string>
#include <vector>

namespace pipe_rt {

/// The new contents of one initializer: little-endian elements of the
/// initializer's own type and shape.
struct InitializerData {
  std::string name;
  const void *data;
  size_t bytes;
};

/// Reads the ONNX model `source`, replaces the data of the initializers
/// named in `initializers` (each must exist, with the same number of
/// bytes), checks the result with onnx::checker, and writes it to `path`
/// atomically (a temporary file renamed over `path`). Returns an empty
/// string on success, else one line saying what went wrong.
std::string saveTrainedOnnx(const std::string &source, const std::string &path,
                            const std::vector<InitializerData> &initializers);

} // namespace pipe_rt

#endif // PIPE_RUNTIME_COMMON_ONNXSAVE_H
