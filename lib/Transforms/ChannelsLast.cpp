//===- ChannelsLast.cpp - NHWC convolutions and the ops between them ------===//
//
// Every 2-D float convolution reads and writes channels-last activations,
// between transposes; the transposes then sink through the ops that do not
// care about the layout (elementwise ops, batch normalization as a scale
// and shift, global average pooling, concatenation along the channels)
// until consecutive ones cancel. What remains are transposes where a
// channels-first op (pooling, a reshape into a classifier) or the graph's
// boundary needs them.
//
//===----------------------------------------------------------------------===//

#include "pipe/Dialect/Pipe/IR/PipeOps.h"
#include "pipe/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#define DEBUG_TYPE "pipe-channels-last"

namespace mlir {
namespace pipe {
#define GEN_PASS_DEF_CHANNELSLAST
#include "pipe/Transforms/Passes.h.inc"
} // namespace pipe
} // namespace mlir

using namespace mlir;
using namespace mlir::pipe;

/// NCHW -> NHWC and back.
static constexpr int64_t kToLast[] = {0, 2, 3, 1};
static constexpr int64_t kToFirst[] = {0, 3, 1, 2};

static Value transpose(PatternRewriter &rewriter, Location loc, Value value,
                       ArrayRef<int64_t> perm) {
  return TransposeOp::create(rewriter, loc, value,
                             rewriter.getDenseI64ArrayAttr(perm));
}

/// The channels-last value behind `value` when `value` is its transpose back
/// to channels first.
static Value channelsLastSource(Value value) {
  auto op = value.getDefiningOp<TransposeOp>();
  if (!op || !llvm::equal(op.getPerm(), kToFirst))
    return nullptr;
  return op.getInput();
}

namespace {
/// conv(x) on [N, C, H, W] -> to_first(conv_nhwc(to_last(x))).
struct ConvToChannelsLast : OpRewritePattern<ConvOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ConvOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType type = op.getType();
    if (op.getChannelsLast() || type.getRank() != 4 ||
        !type.getElementType().isF32())
      return rewriter.notifyMatchFailure(op, "not a 2-D float convolution");
    Location loc = op.getLoc();
    Value input = transpose(rewriter, loc, op.getInput(), kToLast);
    auto conv = ConvOp::create(
        rewriter, loc, input, op.getWeight(), op.getBias(), op.getStridesAttr(),
        op.getPadsAttr(), op.getDilationsAttr(), op.getGroupAttr(),
        rewriter.getUnitAttr(), ConvActivationAttr(), FloatAttr(), FloatAttr());
    rewriter.replaceOp(op, transpose(rewriter, loc, conv, kToFirst));
    return success();
  }
};

/// An elementwise op over channels-first transposes of channels-last
/// values: the op on those values, then one transpose. Operands smaller
/// than the result (per-channel terms, scalars) are moved to channels last
/// themselves, which is a reshape or a small copy.
struct SinkThroughElementwise : RewritePattern {
  SinkThroughElementwise(MLIRContext *context)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, context) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (!op->hasTrait<Pointwise>() || op->getNumResults() != 1)
      return failure();
    auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    if (!type || type.getRank() != 4)
      return failure();
    // At least one full-size operand must come from channels last; another
    // one that does not is transposed itself, which costs what the
    // transpose back would and lets the layout flow on (a residual add of
    // a block's input).
    auto isFull = [&](Value value) {
      return cast<RankedTensorType>(value.getType()).getShape() ==
             type.getShape();
    };
    if (llvm::none_of(op->getOperands(), [&](Value operand) {
          return isFull(operand) && channelsLastSource(operand);
        }))
      return rewriter.notifyMatchFailure(op, "no channels-last operand");
    Location loc = op->getLoc();
    SmallVector<Value> operands;
    for (Value operand : op->getOperands()) {
      auto operandType = cast<RankedTensorType>(operand.getType());
      if (isFull(operand)) {
        Value source = channelsLastSource(operand);
        operands.push_back(source ? source
                                  : transpose(rewriter, loc, operand, kToLast));
        continue;
      }
      if (operandType.getNumElements() == 1) {
        operands.push_back(operand);
        continue;
      }
      // A broadcast operand: to rank 4, then channels last.
      SmallVector<int64_t> shape(4 - operandType.getRank(), 1);
      llvm::append_range(shape, operandType.getShape());
      Value full = operand;
      if (operandType.getRank() != 4)
        full = ReshapeOp::create(
            rewriter, loc,
            RankedTensorType::get(shape, operandType.getElementType()),
            operand);
      operands.push_back(transpose(rewriter, loc, full, kToLast));
    }
    Operation *last = rewriter.clone(*op);
    last->setOperands(operands);
    last->getResult(0).setType(permutedType(type, kToLast));
    rewriter.replaceOp(op,
                       transpose(rewriter, loc, last->getResult(0), kToFirst));
    return success();
  }
};

/// An op of one channels-first input, which `rewriteLast` rewrites over
/// the channels-last value behind a transpose: the rewrite, then one
/// transpose back.
template <typename OpTy> struct SinkThroughUnary : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  virtual Value rewriteLast(OpTy op, Value source,
                            PatternRewriter &rewriter) const = 0;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    Value source = channelsLastSource(op.getInput());
    if (!source)
      return rewriter.notifyMatchFailure(op, "input not channels last");
    Value last = rewriteLast(op, source, rewriter);
    rewriter.replaceOp(op, transpose(rewriter, op.getLoc(), last, kToFirst));
    return success();
  }
};

/// Inference batch normalization: its scale and shift per channel, along
/// the last axis.
struct SinkThroughBatchNorm : SinkThroughUnary<BatchNormOp> {
  using SinkThroughUnary::SinkThroughUnary;

  Value rewriteLast(BatchNormOp op, Value source,
                    PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type element = op.getScale().getType().getElementType();
    auto epsilon = ConstantOp::create(
        rewriter, loc,
        DenseElementsAttr::get(
            RankedTensorType::get({}, element),
            rewriter.getFloatAttr(element, op.getEpsilon().convertToDouble())));
    // s = scale / sqrt(var + epsilon); y = x * s + (bias - mean * s).
    Value sigma = SqrtOp::create(
        rewriter, loc, AddOp::create(rewriter, loc, op.getVariance(), epsilon));
    Value scale = DivOp::create(rewriter, loc, op.getScale(), sigma);
    Value shift =
        SubOp::create(rewriter, loc, op.getBias(),
                      MulOp::create(rewriter, loc, op.getMean(), scale));
    return AddOp::create(rewriter, loc,
                         MulOp::create(rewriter, loc, source, scale), shift);
  }
};

/// Global average pooling: a mean over the spatial axes.
struct SinkThroughGlobalAveragePool : SinkThroughUnary<GlobalAveragePoolOp> {
  using SinkThroughUnary::SinkThroughUnary;

  Value rewriteLast(GlobalAveragePoolOp op, Value source,
                    PatternRewriter &rewriter) const override {
    return ReduceMeanOp::create(rewriter, op.getLoc(), source,
                                rewriter.getDenseI64ArrayAttr({1, 2}),
                                rewriter.getUnitAttr());
  }
};

/// Concatenation of channels-last values along the channels.
struct SinkThroughConcat : OpRewritePattern<ConcatOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ConcatOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getType().getRank() != 4 || op.getAxis() != 1)
      return rewriter.notifyMatchFailure(op, "not along the channels");
    SmallVector<Value> sources;
    for (Value input : op.getInputs()) {
      Value source = channelsLastSource(input);
      if (!source)
        return rewriter.notifyMatchFailure(op, "an input not channels last");
      sources.push_back(source);
    }
    Location loc = op.getLoc();
    Value concat = ConcatOp::create(rewriter, loc, sources, 3);
    rewriter.replaceOp(op, transpose(rewriter, loc, concat, kToFirst));
    return success();
  }
};

/// ReLU, clip between finite bounds or SiLU (x * sigmoid(x)) of a
/// channels-last convolution that nothing else reads: the convolution's
/// fused activation.
struct FuseActivation : RewritePattern {
  FuseActivation(MLIRContext *context)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, context) {}

  static ConvOp fusable(Value value, unsigned uses) {
    auto conv = value.getDefiningOp<ConvOp>();
    if (!conv || !conv.getChannelsLast() || conv.getActivation() ||
        !llvm::hasNItems(conv->getUses(), uses))
      return nullptr;
    return conv;
  }

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    ConvOp conv;
    ConvActivation activation;
    FloatAttr low, high;
    if (auto relu = dyn_cast<ReluOp>(op)) {
      conv = fusable(relu.getInput(), 1);
      activation = ConvActivation::relu;
    } else if (auto clip = dyn_cast<ClipOp>(op)) {
      // Both bounds, finite (ReLU6): oneDNN's clip saturates where pipe's
      // leaves an infinity past a missing bound.
      if (!clip.getMin() || !clip.getMax() || !clip.getMin()->isFinite() ||
          !clip.getMax()->isFinite())
        return rewriter.notifyMatchFailure(op, "a clip without both bounds");
      conv = fusable(clip.getInput(), 1);
      activation = ConvActivation::clip;
      low = rewriter.getF32FloatAttr(clip.getMin()->convertToDouble());
      high = rewriter.getF32FloatAttr(clip.getMax()->convertToDouble());
    } else if (auto mul = dyn_cast<MulOp>(op)) {
      // x * sigmoid(x), either way round.
      for (auto [x, s] : {std::pair(mul.getLhs(), mul.getRhs()),
                          std::pair(mul.getRhs(), mul.getLhs())}) {
        auto sigmoid = s.getDefiningOp<SigmoidOp>();
        if (sigmoid && sigmoid.getInput() == x && sigmoid->hasOneUse())
          conv = fusable(x, 2);
        if (conv)
          break;
      }
      activation = ConvActivation::silu;
    }
    if (!conv || conv.getType() != op->getResult(0).getType() ||
        !conv.getType().getElementType().isF32())
      return rewriter.notifyMatchFailure(op, "no convolution to fuse into");
    rewriter.modifyOpInPlace(conv, [&] {
      conv.setActivation(activation);
      if (low) {
        conv.setActivationMinAttr(low);
        conv.setActivationMaxAttr(high);
      }
    });
    rewriter.replaceOp(op, conv.getResult());
    return success();
  }
};

struct ChannelsLastPass
    : public pipe::impl::ChannelsLastBase<ChannelsLastPass> {
  using ChannelsLastBase::ChannelsLastBase;

  void runOnOperation() override {
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    patterns
        .add<ConvToChannelsLast, SinkThroughElementwise, SinkThroughBatchNorm,
             SinkThroughGlobalAveragePool, SinkThroughConcat, FuseActivation>(
            context);
    TransposeOp::getCanonicalizationPatterns(patterns, context);
    // Transposes travel one op per rewrite, through networks hundreds of
    // ops deep. Stopping short of a fixed point leaves valid IR, only more
    // transposes.
    GreedyRewriteConfig config;
    config.setMaxIterations(64);
    (void)applyPatternsGreedily(getOperation(), std::move(patterns), config);
  }
};
} // namespace
