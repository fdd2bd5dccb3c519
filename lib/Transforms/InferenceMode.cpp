//===- InferenceMode.cpp - rewrite training-mode ops for inference --------===//

#include "pipe/Dialect/Pipe/IR/PipeOps.h"
#include "pipe/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"

#define DEBUG_TYPE "pipe-inference-mode"

namespace mlir {
namespace pipe {
#define GEN_PASS_DEF_INFERENCEMODE
#include "pipe/Transforms/Passes.h.inc"
} // namespace pipe
} // namespace mlir

using namespace mlir;
using namespace mlir::pipe;

namespace {
struct InferenceModePass
    : public pipe::impl::InferenceModeBase<InferenceModePass> {
  using InferenceModeBase::InferenceModeBase;

  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    bool failedStrict = false;
    getOperation()->walk([&](Operation *op) {
      if (auto dropout = dyn_cast<DropoutOp>(op)) {
        rewriter.replaceOp(dropout, dropout.getInput());
        return;
      }
      auto norm = dyn_cast<BatchNormTrainOp>(op);
      if (!norm)
        return;
      if (!norm.getRunningMean().use_empty() ||
          !norm.getRunningVariance().use_empty()) {
        if (strict) {
          norm.emitError("batch normalization in training mode updates "
                         "running statistics that are used; it has no "
                         "inference form");
          failedStrict = true;
        }
        return;
      }
      rewriter.setInsertionPoint(norm);
      auto replacement =
          BatchNormOp::create(rewriter, norm.getLoc(), norm.getInput(),
                              norm.getScale(), norm.getBias(), norm.getMean(),
                              norm.getVariance(), norm.getEpsilonAttr());
      rewriter.replaceOp(
          norm, {replacement.getResult(), norm.getMean(), norm.getVariance()});
    });
    if (failedStrict)
      signalPassFailure();
  }
};
} // namespace
