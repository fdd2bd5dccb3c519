//===- ImportONNX.h - import ONNX models into the pipe dialect --*- C++ -*-===//

#ifndef PIPE_IMPORT_ONNX_IMPORTONNX_H
#define PIPE_IMPORT_ONNX_IMPORTONNX_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringMap.h"

#include <string>

namespace mlir {
namespace pipe {

/// Options of ONNX import.
struct ImportONNXOptions {
  /// Static shapes for graph inputs whose shape has symbolic or unknown
  /// dimensions (`--input-shape NAME=d0,d1,...`).
  llvm::StringMap<SmallVector<int64_t>> inputShapes;
  /// Run onnx::checker and onnx::shape_inference where the linked ONNX
  /// library knows the model's opset.
  bool check = true;
};

/// Imports the ONNX model at `path` into a module with one `func.func @main`
/// and a `pipe.parameter` per floating-point initializer. Reports every
/// problem through the context's diagnostic engine and returns null on
/// failure.
OwningOpRef<ModuleOp> importONNXModel(llvm::StringRef path,
                                      MLIRContext *context,
                                      const ImportONNXOptions &options);

/// Parses `--input-shape` values of the form `NAME=d0,d1,...` into
/// `options`. Returns an error message on malformed input.
std::string parseInputShapeOption(llvm::StringRef spec,
                                  ImportONNXOptions &options);

} // namespace pipe
} // namespace mlir

#endif // PIPE_IMPORT_ONNX_IMPORTONNX_H
