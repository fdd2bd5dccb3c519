//===- PipeStructureOps.cpp - parameters, stages, transfers, recompute ----===//

#include "pipe/Dialect/Pipe/IR/PipeOps.h"

#include "llvm/ADT/DenseMap.h"

using namespace mlir;
using namespace mlir::pipe;

//===----------------------------------------------------------------------===//
// ParameterOp and ParamRefOp
//===----------------------------------------------------------------------===//

LogicalResult ParameterOp::verify() {
  auto elements = dyn_cast_if_present<ElementsAttr>(getInitialValueAttr());
  if (!elements)
    return success();
  Type valueType = elements.getType();
  if (valueType != getType())
    return emitOpError("initial value of type ")
           << valueType << " does not match the parameter type " << getType();
  return success();
}

LogicalResult ParamRefOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto parameter =
      symbolTable.lookupNearestSymbolFrom<ParameterOp>(*this, getNameAttr());
  if (!parameter)
    return emitOpError("'") << getName() << "' does not name a pipe.parameter";
  if (parameter.getType() != getType())
    return emitOpError("type ")
           << getType() << " does not match the type " << parameter.getType()
           << " of parameter '" << getName() << "'";
  return success();
}

//===----------------------------------------------------------------------===//
// StageOp
//===----------------------------------------------------------------------===//

void StageOp::build(OpBuilder &builder, OperationState &state, StringRef name,
                    int64_t index, StringRef device) {
  state.addAttribute(getSymNameAttrName(state.name),
                     builder.getStringAttr(name));
  state.addAttribute(getIndexAttrName(state.name),
                     builder.getI64IntegerAttr(index));
  state.addAttribute(getDeviceAttrName(state.name),
                     builder.getStringAttr(device));
  state.addRegion()->emplaceBlock();
}

RegionKind StageOp::getRegionKind(unsigned index) { return RegionKind::Graph; }

namespace {
/// The transfers of one stage, keyed by (peer, channel).
struct StageTransfers {
  llvm::DenseMap<std::pair<int64_t, int64_t>, SmallVector<SendOp, 1>> sends;
  llvm::DenseMap<std::pair<int64_t, int64_t>, SmallVector<RecvOp, 1>> recvs;

  explicit StageTransfers(StageOp stage) {
    // Transfers of stages nested inside this one are theirs, not ours.
    stage.getBody().walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa<StageOp>(op))
        return WalkResult::skip();
      if (auto send = dyn_cast<SendOp>(op))
        sends[{send.getPeer(), send.getChannel()}].push_back(send);
      else if (auto recv = dyn_cast<RecvOp>(op))
        recvs[{recv.getPeer(), recv.getChannel()}].push_back(recv);
      return WalkResult::advance();
    });
  }
};
} // namespace

LogicalResult StageOp::verifyRegions() {
  int64_t self = getIndex();
  if (self < 0)
    return emitOpError("stage index must be non-negative, got ") << self;
  if (getDevice().empty())
    return emitOpError("stage ") << self << " names no device";

  // Index the sibling stages, so transfers between visible stages can be
  // paired.
  llvm::DenseMap<int64_t, StageOp> siblings;
  if (Block *block = (*this)->getBlock()) {
    for (auto sibling : block->getOps<StageOp>()) {
      if (sibling == *this)
        continue;
      if (sibling.getIndex() == self)
        return emitOpError("stage index ")
               << self << " is also used by stage @" << sibling.getSymName();
      siblings[sibling.getIndex()] = sibling;
    }
  }

  StageTransfers own(*this);
  for (auto &[key, sends] : own.sends) {
    auto [peer, channel] = key;
    if (sends.size() > 1)
      return sends[1].emitOpError("channel ")
             << channel << " to stage " << peer << " is already used";
  }
  for (auto &[key, recvs] : own.recvs) {
    auto [peer, channel] = key;
    if (recvs.size() > 1)
      return recvs[1].emitOpError("channel ")
             << channel << " from stage " << peer << " is already used";
  }
  if (siblings.empty())
    return success();

  for (auto &[key, sends] : own.sends) {
    auto [peer, channel] = key;
    SendOp send = sends.front();
    auto it = siblings.find(peer);
    if (it == siblings.end())
      return send.emitOpError("sends to stage ")
             << peer << ", which is not a stage of this pipeline";
    StageTransfers other(it->second);
    auto match = other.recvs.find({self, channel});
    if (match == other.recvs.end())
      return send.emitOpError("has no matching pipe.recv from stage ")
             << self << " on channel " << channel << " in stage " << peer;
    RecvOp recv = match->second.front();
    if (recv.getType() != send.getValue().getType())
      return send.emitOpError("sends ")
             << send.getValue().getType() << " but stage " << peer
             << " receives " << recv.getType() << " on channel " << channel;
    if (recv.getPhase() != send.getPhase())
      return send.emitOpError("phase ")
             << stringifyPhase(send.getPhase()) << " differs from the "
             << stringifyPhase(recv.getPhase()) << " phase of its pipe.recv";
  }
  for (auto &[key, recvs] : own.recvs) {
    auto [peer, channel] = key;
    RecvOp recv = recvs.front();
    auto it = siblings.find(peer);
    if (it == siblings.end())
      return recv.emitOpError("receives from stage ")
             << peer << ", which is not a stage of this pipeline";
    StageTransfers other(it->second);
    if (!other.sends.count({self, channel}))
      return recv.emitOpError("has no matching pipe.send to stage ")
             << self << " on channel " << channel << " in stage " << peer;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// SendOp and RecvOp
//===----------------------------------------------------------------------===//

/// Checks the attributes a send or recv share.
static LogicalResult verifyTransfer(Operation *op, int64_t peer,
                                    int64_t channel) {
  if (peer < 0)
    return op->emitOpError("peer stage must be non-negative, got ") << peer;
  if (channel < 0)
    return op->emitOpError("channel must be non-negative, got ") << channel;
  if (auto stage = op->getParentOfType<StageOp>())
    if (stage.getIndex() == peer)
      return op->emitOpError("stage ") << peer << " cannot transfer to itself";
  return success();
}

LogicalResult SendOp::verify() {
  return verifyTransfer(*this, getPeer(), getChannel());
}

LogicalResult RecvOp::verify() {
  return verifyTransfer(*this, getPeer(), getChannel());
}

//===----------------------------------------------------------------------===//
// RecomputeOp
//===----------------------------------------------------------------------===//

LogicalResult RecomputeOp::verify() {
  Block &body = getBody().front();
  if (body.getArgumentTypes() != getInputs().getTypes())
    return emitOpError("region arguments must match the operand types");
  auto yield = cast<YieldOp>(body.getTerminator());
  if (yield.getValues().getTypes() != getOutputs().getTypes())
    return emitOpError("yielded types must match the result types");
  return success();
}

//===----------------------------------------------------------------------===//
// Optimizer updates
//===----------------------------------------------------------------------===//

LogicalResult SGDUpdateOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location>,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  types.push_back(adaptor.getParam().getType());
  if (adaptor.getMomentumBuffer())
    types.push_back(adaptor.getMomentumBuffer().getType());
  return success();
}

LogicalResult SGDUpdateOp::verify() {
  double momentum = getMomentum().convertToDouble();
  if (getLr().convertToDouble() < 0 || momentum < 0 ||
      getWeightDecay().convertToDouble() < 0)
    return emitOpError("lr, momentum and weight_decay must not be negative");
  if ((momentum != 0) != static_cast<bool>(getMomentumBuffer()))
    return emitOpError("has a momentum buffer exactly when momentum is not "
                       "zero");
  if (getMomentumBuffer() &&
      getMomentumBuffer().getType() != getParam().getType())
    return emitOpError("momentum buffer type ")
           << getMomentumBuffer().getType()
           << " differs from the parameter type " << getParam().getType();
  if (getNesterov() && (momentum == 0 || getDampening().convertToDouble() != 0))
    return emitOpError("nesterov needs a momentum and zero dampening");
  return success();
}

LogicalResult AdamUpdateOp::verify() {
  double beta1 = getBeta1().convertToDouble(),
         beta2 = getBeta2().convertToDouble();
  if (getLr().convertToDouble() < 0 || getEps().convertToDouble() < 0 ||
      getWeightDecay().convertToDouble() < 0)
    return emitOpError("lr, eps and weight_decay must not be negative");
  if (beta1 < 0 || beta1 >= 1 || beta2 < 0 || beta2 >= 1)
    return emitOpError("betas must be in [0, 1)");
  return success();
}

//===----------------------------------------------------------------------===//
// CostOpInterface
//===----------------------------------------------------------------------===//

// Parameters are resident: the ops that read them count them.
int64_t ParamRefOp::getFlops() { return 0; }
int64_t ParamRefOp::getBytesRead() { return 0; }
int64_t ParamRefOp::getBytesWritten() { return 0; }
