//===- UpdateStatistics.cpp - write running statistics back ---------------===//
//
// Training-mode batch normalization updates its running mean and variance
// on every forward pass. This pass returns the updated values from @main,
// marked with the parameter each one overwrites.
//
//===----------------------------------------------------------------------===//

#include "pipe/Dialect/Pipe/IR/PipeOps.h"
#include "pipe/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#define DEBUG_TYPE "pipe-update-statistics"

namespace mlir {
namespace pipe {
#define GEN_PASS_DEF_UPDATESTATISTICS
#include "pipe/Transforms/Passes.h.inc"
} // namespace pipe
} // namespace mlir

using namespace mlir;
using namespace mlir::pipe;

namespace {
struct UpdateStatisticsPass
    : public pipe::impl::UpdateStatisticsBase<UpdateStatisticsPass> {
  void runOnOperation() override {
    auto main = getOperation().lookupSymbol<func::FuncOp>("main");
    if (!main)
      return;
    auto ret = cast<func::ReturnOp>(main.getBody().front().getTerminator());
    SmallVector<Value> results(ret.getOperands());
    SmallVector<DictionaryAttr> attrs;
    for (unsigned i = 0, e = main.getNumResults(); i < e; ++i)
      attrs.push_back(main.getResultAttrDict(i));
    OpBuilder builder(&getContext());
    ModuleOp module = getOperation();
    llvm::StringMap<Operation *> writer;
    for (unsigned i = 0, e = main.getNumResults(); i < e; ++i)
      if (auto assigned =
              main.getResultAttrOfType<FlatSymbolRefAttr>(i, "pipe.assign"))
        writer[assigned.getValue()] = main;
    bool changed = false;
    WalkResult walk = main.walk([&](BatchNormTrainOp op) {
      auto mean = op.getMean().getDefiningOp<ParamRefOp>();
      auto variance = op.getVariance().getDefiningOp<ParamRefOp>();
      if (!mean || !variance)
        return WalkResult::advance();
      for (auto [value, ref, what] :
           {std::tuple<Value, ParamRefOp, StringRef>{op.getRunningMean(), mean,
                                                     "running mean"},
            {op.getRunningVariance(), variance, "running variance"}}) {
        if (llvm::is_contained(results, value))
          continue;
        auto parameter = module.lookupSymbol<ParameterOp>(ref.getNameAttr());
        if (parameter && parameter.getTrainable()) {
          op.emitError("parameter '")
              << ref.getName() << "' is both trained and the " << what
              << " of this batch normalization";
          return WalkResult::interrupt();
        }
        // Two writers would each start from the old value, and one
        // update would be lost.
        auto [it, inserted] = writer.try_emplace(ref.getName(), op);
        if (!inserted) {
          op.emitError("parameter '")
              << ref.getName() << "' is the " << what
              << " of this batch normalization and is updated elsewhere too";
          return WalkResult::interrupt();
        }
        results.push_back(value);
        attrs.push_back(builder.getDictionaryAttr(
            builder.getNamedAttr("pipe.assign", ref.getNameAttr())));
        changed = true;
      }
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();
    if (!changed)
      return;
    builder.setInsertionPoint(ret);
    func::ReturnOp::create(builder, ret.getLoc(), results);
    ret.erase();
    SmallVector<Type> types;
    for (Value value : results)
      types.push_back(value.getType());
    main.setType(builder.getFunctionType(main.getArgumentTypes(), types));
    main.setAllResultAttrs(attrs);
  }
};
} // namespace
