//===- ProgramFiles.h - files of a CPU program ------------------*- C++ -*-===//
//
// What the single-stage program (CPUProgram.cpp) and the pipeline
// (PipelineProgram.cpp) write alike: parameters, their index, files.
//
//===----------------------------------------------------------------------===//

#ifndef PIPE_LIB_TARGET_CPU_PROGRAMFILES_H
#define PIPE_LIB_TARGET_CPU_PROGRAMFILES_H

#include "StageEmitter.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/StringMap.h"

#include <string>

namespace mlir {
namespace pipe {

/// The runtime's DType name of `element` ("F32", "I64", ...); empty for
/// types the runtime cannot read or write.
std::string dtypeOf(Type element);

/// Writes `contents` to `path`; an error at `loc` if it cannot.
LogicalResult writeFile(Location loc, StringRef path, StringRef contents);

/// Reads the data of every parameter the functions in `scope` (a module or
/// a pipe.stage) read or assign. `sourceModel` is set to the ONNX file all
/// trainable ones come from, if there is one.
LogicalResult readParameters(Operation *scope,
                             llvm::StringMap<std::string> &data,
                             std::string &sourceModel);

/// stage<k>/weights.json: where each parameter lives in weights.bin.
std::string weightsIndex(const StageArtifacts &stage);

/// What a stage's code tells its driver of an argument or result of one of
/// its functions (runtime/pipeline/StageTable.h's Port): its kind
/// (PortKind's name), its name, index and peer, and its type.
struct PortSpec {
  std::string kind, name;
  int64_t index = 0, peer = 0;
  RankedTensorType type;
};

/// Writes `ports` as the initializer of a std::vector<Port>.
LogicalResult writePortTable(llvm::raw_ostream &os, Location loc,
                             ArrayRef<PortSpec> ports);

/// The flags and include folders every stage program is compiled with,
/// and what it links after its driver's library: the runtime's libraries,
/// OpenBLAS, oneDNN and ONNX.
SmallVector<std::string> stageCompileFlags();
SmallVector<std::string> runtimeLinkArgs();

/// Fails unless `outDir` is missing, empty, or an earlier output of ours
/// (it has a plan.json): a program never clobbers anything else.
LogicalResult checkOutputFolder(Location loc, StringRef outDir);

/// The sibling of `outDir` a program is written into before it moves into
/// place, emptied.
std::string temporaryFolder(StringRef outDir);

/// Finishes the program written into `temporary`: the launcher `run`
/// (executable), a copy of `sourceModel` as model.onnx where it is not
/// empty, the executables (`compile`), and then `temporary` moved to
/// `outDir`.
LogicalResult finishProgram(Location loc, StringRef temporary, StringRef outDir,
                            StringRef launcher, StringRef sourceModel,
                            llvm::function_ref<LogicalResult()> compile);

} // namespace pipe
} // namespace mlir

#endif // PIPE_LIB_TARGET_CPU_PROGRAMFILES_H
