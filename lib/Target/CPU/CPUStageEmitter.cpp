//===- CPUStageEmitter.cpp - the CPU target's stage functions -------------===//
//
// What the CPU target adds to the shared StageEmitter: fused steps as
// OpenMP loops (FusedLoop.cpp), host copies, and the kernels that keep a
// parameter in their own layout told when parameters change.
//
//===----------------------------------------------------------------------===//

#include "FusedLoop.h"
#include "StageEmitter.h"

using namespace mlir;
using namespace mlir::pipe;

namespace {
class CPUStageEmitter : public StageEmitter {
public:
  using StageEmitter::StageEmitter;

protected:
  StringRef targetName() const override { return "the CPU target"; }

  LogicalResult emitFusedStep(ArrayRef<Operation *> ops) override {
    FailureOr<std::string> loop = fusedLoopSource(
        ops, [&](Value value) { return input(value); },
        [&](Value value) { return output(value); });
    if (failed(loop))
      return failure();
    os << *loop;
    ++artifacts.numFusedLoops;
    return success();
  }

  std::string copyStatement(const std::string &to, const std::string &from,
                            int64_t bytes, bool overlapping) override {
    return "  std::" + std::string(overlapping ? "memmove" : "memcpy") + "(" +
           to + ", " + from + ", " + std::to_string(bytes) + ");\n";
  }

  std::pair<std::string, std::string> copyAside(const std::string &from,
                                                int64_t bytes) override {
    std::string staged = "staged" + std::to_string(fresh());
    return {"  std::vector<char> " + staged + "(" + from + ", " + from + " + " +
                std::to_string(bytes) + ");\n",
            staged + ".data()"};
  }

  // Kernels that keep a parameter in their own layout read it again.
  std::string afterAssign() override {
    return "  kernels::parametersChanged();\n";
  }
};
} // namespace

LogicalResult
mlir::pipe::emitStage(func::FuncOp func, StringRef name,
                      const llvm::StringMap<std::string> &parameterData,
                      StageArtifacts &artifacts) {
  return CPUStageEmitter(func, name, parameterData, artifacts).run();
}
