//===- ONNXWeights.h - the weights of an ONNX model -------------*- C++ -*-===//
//
// What a target reads of a model it compiles: its initializers' bytes. A
// library of its own (PipeWeights), so that targets link no importer.
//
//===----------------------------------------------------------------------===//

#ifndef PIPE_WEIGHTS_ONNXWEIGHTS_H
#define PIPE_WEIGHTS_ONNXWEIGHTS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace mlir {
namespace pipe {

/// Reads the raw little-endian bytes of the initializers `names` of the ONNX
/// model at `path` (from the model or its external-data files) into
/// `bytes`, keyed by name. Returns an empty string on success, else the
/// error.
std::string readONNXInitializers(llvm::StringRef path,
                                 llvm::ArrayRef<std::string> names,
                                 llvm::StringMap<std::string> &bytes);

} // namespace pipe
} // namespace mlir

#endif // PIPE_WEIGHTS_ONNXWEIGHTS_H
