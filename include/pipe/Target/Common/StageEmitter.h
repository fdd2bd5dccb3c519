//===- StageEmitter.h - C++ source of a stage's functions -------*- C++ -*-===//
//
// What the CPU and CUDA targets share when they write a stage's function:
// its steps (ElementwiseFusion.h), its static memory plan (MemoryPlan.h),
// its weights blob, and a call into the target's kernels for every op that
// is not fused. The generated code names those kernels `kernels::` (an
// alias of pipe_rt::cpu or pipe_rt::cuda), and their enums and options
// `pipe_rt::` (runtime/common/KernelTypes.h), so that one call serves both.
// A target says how a fused step and a copy are written, and may take over
// any op.
//
//===----------------------------------------------------------------------===//

#ifndef PIPE_TARGET_COMMON_STAGEEMITTER_H
#define PIPE_TARGET_COMMON_STAGEEMITTER_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
namespace pipe {

/// Where a parameter lives in the weights blob.
struct WeightEntry {
  std::string name;
  int64_t offset = 0;
  RankedTensorType type;
  bool trainable = false;
};

/// What emitting a stage produced besides its source. Several functions
/// of one stage (the microbatch and the optimizer update) share it: they
/// share the weights blob, each parameter once, and one arena.
struct StageArtifacts {
  /// The C++ source of the stage's functions.
  std::string source;
  /// Declarations the functions' source needs before it, at namespace
  /// scope (the CUDA target's kernels).
  std::string preamble;
  /// Parameters and constants, each 64-byte aligned at the offset the
  /// source refers to.
  std::string weights;
  /// The parameters in `weights`, in the order they were added.
  std::vector<WeightEntry> parameters;
  llvm::StringMap<size_t> parameterIndex;
  /// Peak bytes of the activation arena under the static memory plan (the
  /// largest of the functions'), and what the same buffers would take
  /// without reuse.
  int64_t arenaBytes = 0, arenaBytesWithoutReuse = 0;
  int64_t parameterBytes = 0;
  int64_t numOps = 0, numKernelCalls = 0, numFusedLoops = 0;
  int64_t flops = 0;
};

/// `text` as a C++ string literal, quotes included.
std::string cppString(StringRef text);

/// Writes one function of a stage. Subclasses are the targets.
class StageEmitter {
public:
  StageEmitter(func::FuncOp main, StringRef name,
               const llvm::StringMap<std::string> &parameterData,
               StageArtifacts &artifacts)
      : main(main), name(name), parameterData(parameterData),
        artifacts(artifacts) {}
  virtual ~StageEmitter() = default;

  /// Emits `main` (pipe graph ops on static shapes) as the C++ function
  ///
  ///   bool NAME(char *arena, char *weights, const void *const *in,
  ///             void *const *out, int64_t microbatch, std::string &error);
  ///
  /// into the artifacts. Its pointers are in the target's memory. `in` and
  /// `out` point at its arguments and results. A result with a
  /// `pipe.assign = @parameter` attribute is written over that parameter
  /// in `weights` instead. `microbatch` numbers the rows of the inputs in
  /// error messages. `parameterData` holds the bytes of every parameter
  /// the function reads, keyed by symbol name. Reports unsupported ops and
  /// types through diagnostics.
  LogicalResult run();

protected:
  /// The target's name in messages ("the CPU target").
  virtual StringRef targetName() const = 0;
  /// Writes the step of fused elementwise `ops` into `os`.
  virtual LogicalResult emitFusedStep(ArrayRef<Operation *> ops) = 0;
  /// The statement that copies `bytes` from `from` to `to`, which may
  /// overlap when `overlapping`.
  virtual std::string copyStatement(const std::string &to,
                                    const std::string &from, int64_t bytes,
                                    bool overlapping) = 0;
  /// Statements that copy `bytes` from `from` aside into a buffer they
  /// declare, and the buffer's pointer expression.
  virtual std::pair<std::string, std::string> copyAside(const std::string &from,
                                                        int64_t bytes) = 0;
  /// The expression of element `flatIndex` of `value`, read on the host.
  virtual std::string hostElement(Value value, const std::string &flatIndex);
  /// Statements after a function has assigned parameters.
  virtual std::string afterAssign() { return ""; }
  /// The call a target writes for `op` instead of the shared one, or
  /// nullopt for the shared one; failure for an op it does not run.
  virtual FailureOr<std::optional<std::string>> targetCall(Operation *op) {
    return std::optional<std::string>();
  }

  /// Names a static int64 array holding `values`, shared between uses.
  std::string ints(ArrayRef<int64_t> values);
  std::string shapeOf(Value value);
  std::string rankOf(Value value);
  /// The C++ element type of `value`.
  std::string elementOf(Value value);
  /// A C++ expression for the data pointer of `value`.
  std::string pointer(Value value);
  /// `pointer(value)` cast to `const T *` and `T *`.
  std::string input(Value value);
  std::string output(Value value);
  /// `value` through the reshapes that alias it.
  Value root(Value value);
  /// A fresh number for names in the generated code.
  int64_t fresh() { return tempCounter++; }

  func::FuncOp main;
  std::string name;
  const llvm::StringMap<std::string> &parameterData;
  StageArtifacts &artifacts;
  /// Declarations before the function (its constant arrays) and its body.
  std::string decls;
  llvm::raw_string_ostream declStream{decls};
  std::string body;
  llvm::raw_string_ostream os{body};

private:
  /// Appends `bytes` to the weights blob, 64-byte aligned; returns its
  /// offset.
  int64_t addWeights(const std::string &bytes);
  /// The offset of parameter `symbol` in the weights blob, adding its data
  /// on first use.
  FailureOr<int64_t> parameterOffset(Operation *user, StringRef symbol,
                                     RankedTensorType type);
  /// A C++ statement that reports an out-of-range label or index: the
  /// input it comes from (when it is one of the function's arguments, read
  /// through reshapes) and its row in the input file.
  std::string rangeError(Value labels, const std::string &flatIndex,
                         const std::string &what, int64_t low, int64_t limit);
  LogicalResult assignStorage(ArrayRef<SmallVector<Operation *>> steps);
  LogicalResult emitKernel(Operation *op);

  llvm::DenseMap<Value, std::string> pointers;
  std::map<std::vector<int64_t>, std::string> intArrays;
  int64_t tempCounter = 0;
};

} // namespace pipe
} // namespace mlir

#endif // PIPE_TARGET_COMMON_STAGEEMITTER_H
