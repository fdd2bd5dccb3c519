//===- Optimizer.cpp - the optimizer step as @update ----------------------===//
//
// Builds @update, which applies one torch.optim step to every parameter
// @main returns a gradient for. Its state lives in new zero-initialized,
// non-trainable parameters, so the targets keep it with the weights.
//
//===----------------------------------------------------------------------===//

#include "pipe/Dialect/Pipe/IR/PipeOps.h"
#include "pipe/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#define DEBUG_TYPE "pipe-optimizer"

namespace mlir {
namespace pipe {
#define GEN_PASS_DEF_OPTIMIZER
#include "pipe/Transforms/Passes.h.inc"
} // namespace pipe
} // namespace mlir

using namespace mlir;
using namespace mlir::pipe;

namespace {
struct OptimizerPass : public pipe::impl::OptimizerBase<OptimizerPass> {
  using OptimizerBase::OptimizerBase;

  void runOnOperation() override;

  /// Checks the options against what torch.optim accepts and fills in
  /// its defaults.
  LogicalResult resolveOptions(Location loc);

  /// Declares the zero-initialized state parameter `opt.<name>.<suffix>`
  /// after `after` (the parameter or its previous state).
  FailureOr<ParameterOp> addState(ParameterOp parameter, StringRef suffix,
                                  Operation *after);

  double lrValue = 0, decayValue = 0;
  bool adam = false, decoupled = false;
};
} // namespace

LogicalResult OptimizerPass::resolveOptions(Location loc) {
  adam = optimizer == "adam" || optimizer == "adamw";
  decoupled = optimizer == "adamw";
  if (!adam && optimizer != "sgd")
    return emitError(loc) << "unknown optimizer '" << optimizer
                          << "' (known: sgd, adam, adamw)";
  lrValue = lr < 0 ? (adam ? 1e-3 : 1e-2) : lr;
  decayValue = weightDecay < 0 ? (decoupled ? 1e-2 : 0.0) : weightDecay;
  // -1 leaves lr and weight-decay to PyTorch's defaults; other negative
  // values (and NaN) are errors.
  if (!(lr >= 0 || lr == -1.0))
    return emitError(loc) << "the learning rate must not be negative";
  if (!(weightDecay >= 0 || weightDecay == -1.0))
    return emitError(loc) << "the weight decay must not be negative";
  if (adam && (beta1 < 0 || beta1 >= 1 || beta2 < 0 || beta2 >= 1))
    return emitError(loc) << "the betas must be in [0, 1), not " << beta1
                          << " and " << beta2;
  if (adam && eps < 0)
    return emitError(loc) << "eps must not be negative";
  if (!adam && (momentum < 0 || dampening < 0))
    return emitError(loc) << "momentum and dampening must not be negative";
  if (!adam && nesterov && (momentum == 0 || dampening != 0))
    return emitError(loc)
           << "Nesterov momentum needs a momentum and zero dampening";
  if (adam && (momentum != 0 || nesterov))
    return emitError(loc) << "momentum and Nesterov are options of SGD; "
                          << optimizer << " has beta1 and beta2";
  return success();
}

FailureOr<ParameterOp> OptimizerPass::addState(ParameterOp parameter,
                                               StringRef suffix,
                                               Operation *after) {
  ModuleOp module = getOperation();
  std::string name = ("opt." + parameter.getSymName() + "." + suffix).str();
  if (module.lookupSymbol(name))
    return parameter.emitError("the optimizer state '")
           << name << "' clashes with an existing symbol";
  RankedTensorType type = parameter.getTensorType();
  auto zero =
      DenseElementsAttr::get(type, FloatAttr::get(type.getElementType(), 0.0));
  OpBuilder builder(parameter);
  builder.setInsertionPointAfter(after);
  return ParameterOp::create(builder, parameter.getLoc(), name, type,
                             /*trainable=*/false, zero);
}

void OptimizerPass::runOnOperation() {
  ModuleOp module = getOperation();
  auto main = module.lookupSymbol<func::FuncOp>("main");
  if (!main) {
    mlir::emitError(module.getLoc(), "the module has no func.func @main");
    return signalPassFailure();
  }
  if (failed(resolveOptions(main.getLoc())))
    return signalPassFailure();
  if (module.lookupSymbol("update")) {
    mlir::emitError(module.getLoc(), "the module already has an @update");
    return signalPassFailure();
  }

  SmallVector<ParameterOp> trained;
  for (unsigned i = 0, e = main.getNumResults(); i < e; ++i) {
    auto of = main.getResultAttrOfType<FlatSymbolRefAttr>(i, "pipe.grad_of");
    if (!of)
      continue;
    auto parameter = module.lookupSymbol<ParameterOp>(of.getAttr());
    if (!parameter || parameter.getType() != main.getResultTypes()[i]) {
      main.emitError("result ") << i << " is the gradient of '" << of.getValue()
                                << "', which is no parameter of its type";
      return signalPassFailure();
    }
    trained.push_back(parameter);
  }
  if (trained.empty()) {
    main.emitError("@main returns no gradients; run --pipe-autodiff first");
    return signalPassFailure();
  }

  MLIRContext *context = &getContext();
  OpBuilder builder(context);
  auto stepType = RankedTensorType::get({}, builder.getI64Type());
  SmallVector<Type> argTypes;
  SmallVector<DictionaryAttr> argAttrs;
  for (ParameterOp parameter : trained) {
    argTypes.push_back(parameter.getType());
    argAttrs.push_back(builder.getDictionaryAttr(builder.getNamedAttr(
        "pipe.name", builder.getStringAttr("grad." + parameter.getSymName()))));
  }
  argTypes.push_back(stepType);
  argAttrs.push_back(builder.getDictionaryAttr(
      builder.getNamedAttr("pipe.name", builder.getStringAttr("step"))));

  builder.setInsertionPointAfter(main);
  auto update = func::FuncOp::create(builder, main.getLoc(), "update",
                                     builder.getFunctionType(argTypes, {}));
  update.setAllArgAttrs(argAttrs);
  Block *body = update.addEntryBlock();
  builder.setInsertionPointToStart(body);
  Value step = body->getArguments().back();

  SmallVector<Value> results;
  SmallVector<DictionaryAttr> resultAttrs;
  auto assign = [&](Value value, ParameterOp target) {
    results.push_back(value);
    resultAttrs.push_back(builder.getDictionaryAttr(
        builder.getNamedAttr("pipe.assign", FlatSymbolRefAttr::get(target))));
  };
  auto read = [&](ParameterOp parameter) {
    return ParamRefOp::create(builder, parameter.getLoc(), parameter.getType(),
                              parameter.getSymName())
        .getResult();
  };
  for (auto [index, parameter] : llvm::enumerate(trained)) {
    Value grad = body->getArgument(index);
    Location loc = parameter.getLoc();
    if (adam) {
      FailureOr<ParameterOp> expAvg = addState(parameter, "exp_avg", parameter);
      if (failed(expAvg))
        return signalPassFailure();
      FailureOr<ParameterOp> expAvgSq =
          addState(parameter, "exp_avg_sq", *expAvg);
      if (failed(expAvgSq))
        return signalPassFailure();
      auto op = AdamUpdateOp::create(
          builder, loc, parameter.getType(), parameter.getType(),
          parameter.getType(), read(parameter), grad, read(*expAvg),
          read(*expAvgSq), step, builder.getF64FloatAttr(lrValue),
          builder.getF64FloatAttr(beta1), builder.getF64FloatAttr(beta2),
          builder.getF64FloatAttr(eps), builder.getF64FloatAttr(decayValue),
          decoupled ? builder.getUnitAttr() : UnitAttr());
      assign(op.getNewParam(), parameter);
      assign(op.getNewExpAvg(), *expAvg);
      assign(op.getNewExpAvgSq(), *expAvgSq);
      continue;
    }
    Value buffer;
    ParameterOp bufferParameter;
    if (momentum != 0) {
      FailureOr<ParameterOp> state =
          addState(parameter, "momentum_buffer", parameter);
      if (failed(state))
        return signalPassFailure();
      bufferParameter = *state;
      buffer = read(bufferParameter);
    }
    auto op = SGDUpdateOp::create(
        builder, loc, read(parameter), grad, step, buffer,
        builder.getF64FloatAttr(lrValue), builder.getF64FloatAttr(momentum),
        builder.getF64FloatAttr(dampening), builder.getF64FloatAttr(decayValue),
        nesterov ? builder.getUnitAttr() : UnitAttr());
    assign(op.getNewParam(), parameter);
    if (buffer)
      assign(op.getNewMomentumBuffer(), bufferParameter);
  }
  func::ReturnOp::create(builder, main.getLoc(), results);
  SmallVector<Type> resultTypes;
  for (Value value : results)
    resultTypes.push_back(value.getType());
  update.setType(builder.getFunctionType(argTypes, resultTypes));
  update.setAllResultAttrs(resultAttrs);
}
