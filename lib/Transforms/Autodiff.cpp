//===- Autodiff.cpp - reverse-mode gradients of the loss ------------------===//
//
// Walks @main backwards from the loss and applies each op's gradient rule
// (GradientOpInterface, implemented beside the ops in lib/Dialect/Pipe/IR).
//
//===----------------------------------------------------------------------===//

#include "pipe/Dialect/Pipe/IR/GradientBuilder.h"
#include "pipe/Dialect/Pipe/IR/PipeOps.h"
#include "pipe/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"

#define DEBUG_TYPE "pipe-autodiff"

namespace mlir {
namespace pipe {
#define GEN_PASS_DEF_AUTODIFF
#include "pipe/Transforms/Passes.h.inc"
} // namespace pipe
} // namespace mlir

using namespace mlir;
using namespace mlir::pipe;

namespace {
struct AutodiffPass : public pipe::impl::AutodiffBase<AutodiffPass> {
  void runOnOperation() override;
};
} // namespace

/// The gradients of `op`'s operands, given its results' adjoints, from
/// its GradientOpInterface rule; null for operands that need none. Fails
/// on ops without a rule.
static FailureOr<SmallVector<Value>>
gradients(Operation *op, ArrayRef<Value> resultGrads, GradientBuilder &g) {
  auto differentiable = dyn_cast<GradientOpInterface>(op);
  if (!differentiable)
    return failure();
  g.begin(op, resultGrads);
  if (failed(differentiable.buildGradients(g)))
    return failure();
  return llvm::to_vector(g.getOperandGrads());
}

void AutodiffPass::runOnOperation() {
  ModuleOp module = getOperation();
  auto main = module.lookupSymbol<func::FuncOp>("main");
  if (!main || main.getNumResults() != 1) {
    mlir::emitError(module.getLoc())
        << "--pipe-autodiff needs a func.func @main with a single scalar "
           "result, the loss (run --pipe-prepare-training first)";
    return signalPassFailure();
  }
  Block &body = main.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  Value loss = ret.getOperand(0);

  // Trainable parameters in declaration order.
  llvm::MapVector<StringRef, SmallVector<Value>> uses;
  for (ParameterOp parameter : module.getOps<ParameterOp>())
    if (parameter.getTrainable())
      uses[parameter.getSymName()];
  // Values that depend on a trainable parameter.
  llvm::DenseSet<Value> active;
  for (Operation &op : body.without_terminator()) {
    if (auto ref = dyn_cast<ParamRefOp>(op)) {
      auto it = uses.find(ref.getName());
      if (it != uses.end()) {
        it->second.push_back(ref.getResult());
        active.insert(ref.getResult());
      }
      continue;
    }
    if (llvm::any_of(op.getOperands(),
                     [&](Value v) { return active.contains(v); }))
      active.insert(op.result_begin(), op.result_end());
  }

  OpBuilder builder(ret);
  GradientBuilder g(builder, main.getLoc());
  llvm::DenseMap<Value, Value> adjoint;
  auto accumulate = [&](Value value, Value grad) {
    Value &slot = adjoint[value];
    slot = slot ? AddOp::create(builder, g.loc, slot, grad).getResult() : grad;
  };
  accumulate(loss, g.constant(cast<RankedTensorType>(loss.getType()), 1.0));

  SmallVector<Operation *> ops;
  for (Operation &op : body.without_terminator())
    ops.push_back(&op);
  for (Operation *op : llvm::reverse(ops)) {
    if (isa<ParamRefOp, ConstantOp>(op) ||
        !llvm::any_of(op->getOperands(),
                      [&](Value v) { return active.contains(v); }))
      continue;
    SmallVector<Value> resultGrads;
    bool any = false;
    for (Value result : op->getResults()) {
      Value grad = adjoint.lookup(result);
      if (!grad)
        grad = g.constant(cast<RankedTensorType>(result.getType()), 0.0,
                          /*scalar=*/false);
      else
        any = true;
      resultGrads.push_back(grad);
    }
    if (!any)
      continue;
    FailureOr<SmallVector<Value>> grads = gradients(op, resultGrads, g);
    if (failed(grads)) {
      mlir::emitError(op->getLoc())
          << "no gradient for '" << op->getName()
          << "', which lies between a trainable parameter "
             "and the loss";
      return signalPassFailure();
    }
    for (auto [operand, grad] : llvm::zip(op->getOperands(), *grads))
      if (grad && active.contains(operand))
        accumulate(operand, grad);
  }

  // The loss, then one gradient per trainable parameter.
  g.loc = main.getLoc();
  SmallVector<Value> results = {loss};
  SmallVector<Type> types = {loss.getType()};
  SmallVector<DictionaryAttr> attrs = {main.getResultAttrDict(0)};
  for (auto &[name, refs] : uses) {
    auto parameter = module.lookupSymbol<ParameterOp>(name);
    auto type = cast<RankedTensorType>(parameter.getType());
    Value total;
    for (Value ref : refs)
      if (Value grad = adjoint.lookup(ref))
        total = total ? AddOp::create(builder, g.loc, total, grad).getResult()
                      : grad;
    if (!total)
      total = g.constant(type, 0.0, /*scalar=*/false);
    results.push_back(total);
    types.push_back(type);
    attrs.push_back(builder.getDictionaryAttr(
        {builder.getNamedAttr("pipe.name",
                              builder.getStringAttr("grad." + name.str())),
         builder.getNamedAttr("pipe.grad_of",
                              FlatSymbolRefAttr::get(parameter))}));
  }
  func::ReturnOp::create(builder, ret.getLoc(), results);
  ret.erase();
  main.setType(
      FunctionType::get(&getContext(), main.getArgumentTypes(), types));
  main.setAllResultAttrs(attrs);

  // Gradients of inputs and frozen parameters were built along the way and
  // are unused: erase them.
  SmallVector<Operation *> all;
  for (Operation &op : body.without_terminator())
    all.push_back(&op);
  for (Operation *op : llvm::reverse(all))
    if (op->use_empty() && isPure(op))
      op->erase();
}
