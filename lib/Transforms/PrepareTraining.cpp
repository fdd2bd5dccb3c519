//===- PrepareTraining.cpp - pick the loss and the trainable parameters ---===//

#include "pipe/Dialect/Pipe/IR/PipeOps.h"
#include "pipe/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/GlobPattern.h"

#define DEBUG_TYPE "pipe-prepare-training"

namespace mlir {
namespace pipe {
#define GEN_PASS_DEF_PREPARETRAINING
#include "pipe/Transforms/Passes.h.inc"
} // namespace pipe
} // namespace mlir

using namespace mlir;
using namespace mlir::pipe;

/// The name of result `index` of `main`, or "#index".
static std::string resultName(func::FuncOp main, unsigned index) {
  if (auto name = main.getResultAttrOfType<StringAttr>(index, "pipe.name"))
    return name.str();
  return "#" + std::to_string(index);
}

static bool isScalarFloat(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.getRank() == 0 &&
         isa<FloatType>(tensor.getElementType());
}

namespace {
struct PrepareTrainingPass
    : public pipe::impl::PrepareTrainingBase<PrepareTrainingPass> {
  using PrepareTrainingBase::PrepareTrainingBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto main = module.lookupSymbol<func::FuncOp>("main");
    if (!main) {
      mlir::emitError(module.getLoc(),
                      "the module has no func.func @main to train");
      return signalPassFailure();
    }
    std::optional<unsigned> lossIndex = findLoss(main);
    if (!lossIndex)
      return signalPassFailure();
    keepOnlyLoss(main, *lossIndex);
    if (failed(applyFreeze(module)))
      return signalPassFailure();
  }

  /// The index of the loss among @main's results, or none after an error.
  std::optional<unsigned> findLoss(func::FuncOp main) {
    unsigned numResults = main.getNumResults();
    SmallVector<std::string> described;
    for (unsigned i = 0; i < numResults; ++i) {
      std::string text;
      llvm::raw_string_ostream os(text);
      os << "'" << resultName(main, i) << "' (" << main.getResultTypes()[i]
         << ")";
      described.push_back(text);
    }
    std::string outputs = llvm::join(described, ", ");
    if (!loss.empty()) {
      for (unsigned i = 0; i < numResults; ++i) {
        if (resultName(main, i) != loss)
          continue;
        if (!isScalarFloat(main.getResultTypes()[i])) {
          mlir::emitError(main.getLoc())
              << "the loss '" << loss
              << "' must be a floating-point scalar, but it is "
              << main.getResultTypes()[i];
          return std::nullopt;
        }
        return i;
      }
      mlir::emitError(main.getLoc())
          << "the model has no output '" << loss
          << "' to train on; its outputs are " << outputs;
      return std::nullopt;
    }
    SmallVector<unsigned> scalars;
    for (unsigned i = 0; i < numResults; ++i)
      if (isScalarFloat(main.getResultTypes()[i]))
        scalars.push_back(i);
    if (scalars.empty()) {
      mlir::emitError(main.getLoc())
          << "training needs a scalar loss, but the model has "
             "no scalar floating-point output; its outputs are "
          << outputs;
      return std::nullopt;
    }
    if (scalars.size() > 1) {
      SmallVector<std::string> names;
      for (unsigned i : scalars)
        names.push_back("'" + resultName(main, i) + "'");
      mlir::emitError(main.getLoc())
          << "the model has several scalar outputs (" << llvm::join(names, ", ")
          << "); name the loss with --loss";
      return std::nullopt;
    }
    return scalars.front();
  }

  /// Makes @main return only its loss and erases what no longer feeds it.
  void keepOnlyLoss(func::FuncOp main, unsigned lossIndex) {
    auto ret = cast<func::ReturnOp>(main.getBody().front().getTerminator());
    Value lossValue = ret.getOperand(lossIndex);
    DictionaryAttr attrs = main.getResultAttrDict(lossIndex);
    OpBuilder builder(ret);
    func::ReturnOp::create(builder, ret.getLoc(), lossValue);
    ret.erase();
    main.setType(FunctionType::get(main.getContext(), main.getArgumentTypes(),
                                   {lossValue.getType()}));
    main.setAllResultAttrs(ArrayRef<DictionaryAttr>{attrs});
    // Erase dead pure ops, last first.
    SmallVector<Operation *> ops;
    for (Operation &op : main.getBody().front().without_terminator())
      ops.push_back(&op);
    for (Operation *op : llvm::reverse(ops))
      if (op->use_empty() && isPure(op))
        op->erase();
  }

  /// The parameters that are only ever read as the running mean or
  /// variance of a batch normalization.
  static llvm::StringSet<> batchNormStatistics(ModuleOp module) {
    llvm::StringSet<> candidates, other;
    module.walk([&](ParamRefOp ref) {
      for (OpOperand &use : ref->getUses()) {
        bool statistic =
            isa<BatchNormOp, BatchNormTrainOp>(use.getOwner()) &&
            (use.getOperandNumber() == 3 || use.getOperandNumber() == 4);
        (statistic ? candidates : other).insert(ref.getName());
      }
    });
    llvm::StringSet<> statistics;
    for (const auto &name : candidates)
      if (!other.contains(name.getKey()))
        statistics.insert(name.getKey());
    return statistics;
  }

  LogicalResult applyFreeze(ModuleOp module) {
    SmallVector<llvm::GlobPattern> patterns;
    for (const std::string &text : freeze) {
      llvm::Expected<llvm::GlobPattern> pattern =
          llvm::GlobPattern::create(text);
      if (!pattern)
        return mlir::emitError(module.getLoc())
               << "--freeze: bad pattern '" << text
               << "': " << llvm::toString(pattern.takeError());
      patterns.push_back(std::move(*pattern));
    }
    SmallVector<bool> matched(patterns.size(), false),
        matchedStatistic(patterns.size(), false);
    unsigned trainable = 0;
    llvm::StringSet<> statistics = batchNormStatistics(module);
    // What keepOnlyLoss left reads only what feeds the loss.
    llvm::StringSet<> feedsLoss;
    module.walk([&](ParamRefOp ref) { feedsLoss.insert(ref.getName()); });
    for (auto parameter : module.getOps<ParameterOp>()) {
      if (!parameter.getTrainable())
        continue;
      // Running statistics are state, not weights (PyTorch's buffers).
      if (statistics.contains(parameter.getSymName())) {
        parameter.setTrainable(false);
        for (auto [index, pattern] : llvm::enumerate(patterns))
          if (pattern.match(parameter.getSymName()))
            matchedStatistic[index] = true;
        continue;
      }
      auto tensor = dyn_cast<RankedTensorType>(parameter.getType());
      if (!tensor || !isa<FloatType>(tensor.getElementType())) {
        parameter.setTrainable(false);
        continue;
      }
      bool frozen = false;
      for (auto [index, pattern] : llvm::enumerate(patterns))
        if (pattern.match(parameter.getSymName())) {
          matched[index] = true;
          frozen = true;
        }
      // A parameter that no longer feeds the loss gets no gradient, and
      // PyTorch's optimizers leave such a parameter as it is.
      if (frozen || !feedsLoss.contains(parameter.getSymName()))
        parameter.setTrainable(false);
      else
        ++trainable;
    }
    for (auto [index, text] : llvm::enumerate(freeze))
      if (!matched[index])
        return mlir::emitError(module.getLoc())
               << "--freeze: pattern '" << text << "' matches "
               << (matchedStatistic[index]
                       ? "only batch normalization statistics, which are "
                         "never trained"
                       : "no trainable parameter");
    if (!trainable)
      return mlir::emitError(module.getLoc())
             << "the model has no trainable parameter left to train";
    return success();
  }
};
} // namespace
