//===- FoldBatchNorm.cpp - fold inference batch norm into convolutions ----===//
//
// conv followed by batch_norm, for inference, becomes one conv with scaled
// weights and a shifted bias, computed at compile time from the known
// values of the parameters and constants involved.
//
//===----------------------------------------------------------------------===//

#include "pipe/Dialect/Pipe/IR/PipeOps.h"
#include "pipe/Transforms/Passes.h"
#include "pipe/Weights/ONNXWeights.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"

#include <cmath>
#include <cstring>

#define DEBUG_TYPE "pipe-fold-batch-norm"

namespace mlir {
namespace pipe {
#define GEN_PASS_DEF_FOLDBATCHNORM
#include "pipe/Transforms/Passes.h.inc"
} // namespace pipe
} // namespace mlir

using namespace mlir;
using namespace mlir::pipe;

namespace {
/// Where a known value's data comes from.
struct Source {
  ElementsAttr elements; // inline or resource data, or
  ExternalAttr external; // an initializer of an ONNX file.
};
} // namespace

/// The source of `value` when it is a constant or a parameter with an
/// initial value.
static std::optional<Source>
sourceOf(Value value, SymbolTableCollection &symbols,
         const llvm::DenseSet<StringAttr> &assigned) {
  if (!value)
    return std::nullopt;
  if (auto constant = value.getDefiningOp<ConstantOp>())
    return Source{constant.getValue(), {}};
  auto ref = value.getDefiningOp<ParamRefOp>();
  // A parameter that a function writes back is not a known value.
  if (!ref || assigned.contains(ref.getNameAttr().getAttr()))
    return std::nullopt;
  auto parameter =
      symbols.lookupNearestSymbolFrom<ParameterOp>(ref, ref.getNameAttr());
  if (!parameter || !parameter.getInitialValueAttr())
    return std::nullopt;
  Attribute initial = parameter.getInitialValueAttr();
  if (auto external = dyn_cast<ExternalAttr>(initial))
    return Source{{}, external};
  if (auto elements = dyn_cast<ElementsAttr>(initial))
    return Source{elements, {}};
  return std::nullopt;
}

/// `bytes` of float or double elements as doubles.
static SmallVector<double> toDoubles(StringRef bytes, Type element) {
  SmallVector<double> values;
  if (element.isF32()) {
    values.resize(bytes.size() / sizeof(float));
    for (size_t i = 0; i < values.size(); ++i) {
      float x;
      std::memcpy(&x, bytes.data() + i * sizeof(float), sizeof(float));
      values[i] = x;
    }
  } else {
    values.resize(bytes.size() / sizeof(double));
    std::memcpy(values.data(), bytes.data(), values.size() * sizeof(double));
  }
  return values;
}

static std::string fromDoubles(ArrayRef<double> values, Type element) {
  std::string bytes;
  for (double value : values) {
    if (element.isF32()) {
      float x = static_cast<float>(value);
      bytes.append(reinterpret_cast<const char *>(&x), sizeof(float));
    } else {
      bytes.append(reinterpret_cast<const char *>(&value), sizeof(double));
    }
  }
  return bytes;
}

/// The values of `elements`, splats expanded; nullopt for other kinds.
static std::optional<SmallVector<double>> valuesOf(ElementsAttr elements) {
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(elements)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return std::nullopt;
    ArrayRef<char> data = blob->getData();
    return toDoubles(StringRef(data.data(), data.size()),
                     elements.getElementType());
  }
  auto dense = dyn_cast<DenseElementsAttr>(elements);
  if (!dense)
    return std::nullopt;
  SmallVector<double> values;
  for (const APFloat &value : dense.getValues<APFloat>())
    values.push_back(value.convertToDouble());
  return values;
}

namespace {
struct FoldBatchNormPass
    : public pipe::impl::FoldBatchNormBase<FoldBatchNormPass> {
  using FoldBatchNormBase::FoldBatchNormBase;

  void runOnOperation() override;
};
} // namespace

void FoldBatchNormPass::runOnOperation() {
  ModuleOp module = getOperation();
  SymbolTableCollection symbols;
  llvm::DenseSet<StringAttr> assigned;
  module.walk([&](func::FuncOp func) {
    for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
      if (auto target =
              func.getResultAttrOfType<FlatSymbolRefAttr>(i, kAssignAttrName))
        assigned.insert(target.getAttr());
  });

  // The pairs to fold, and the initializers they read from ONNX files.
  struct Candidate {
    BatchNormOp norm;
    ConvOp conv;
    SmallVector<Source> sources; // weight, bias, scale, shift, mean, variance
  };
  SmallVector<Candidate> candidates;
  llvm::StringMap<SmallVector<std::string>> keysByFile;
  llvm::StringMap<Location> firstUse;
  module.walk([&](BatchNormOp norm) {
    auto conv = norm.getInput().getDefiningOp<ConvOp>();
    if (!conv || !conv->hasOneUse() || conv.getChannelsLast())
      return;
    Type element = conv.getType().getElementType();
    if ((!element.isF32() && !element.isF64()) ||
        cast<RankedTensorType>(conv.getWeight().getType()).getDimSize(0) == 0)
      return;
    Candidate candidate{norm, conv, {}};
    Value operands[] = {conv.getWeight(), conv.getBias(), norm.getScale(),
                        norm.getBias(),   norm.getMean(), norm.getVariance()};
    for (auto [i, operand] : llvm::enumerate(operands)) {
      // No bias: zeros.
      if (i == 1 && !operand) {
        candidate.sources.push_back(Source{});
        continue;
      }
      std::optional<Source> source = sourceOf(operand, symbols, assigned);
      if (!source)
        return;
      candidate.sources.push_back(*source);
    }
    for (const Source &source : candidate.sources) {
      if (!source.external)
        continue;
      StringRef file = source.external.getFile().getValue();
      keysByFile[file].push_back(source.external.getKey().str());
      firstUse.try_emplace(file, conv.getLoc());
    }
    candidates.push_back(std::move(candidate));
  });
  if (candidates.empty())
    return;

  llvm::StringMap<llvm::StringMap<std::string>> fileBytes;
  for (auto &entry : keysByFile) {
    if (std::string error = readONNXInitializers(
            entry.getKey(), entry.getValue(), fileBytes[entry.getKey()]);
        !error.empty()) {
      emitError(firstUse.at(entry.getKey()),
                "cannot read the weights to fold batch normalization: ")
          << error;
      return signalPassFailure();
    }
  }
  auto values = [&](const Source &source,
                    Type element) -> std::optional<SmallVector<double>> {
    if (source.elements)
      return valuesOf(source.elements);
    return toDoubles(fileBytes[source.external.getFile().getValue()]
                              [source.external.getKey().getValue()],
                     element);
  };

  OpBuilder builder(&getContext());
  for (Candidate &candidate : candidates) {
    ConvOp conv = candidate.conv;
    BatchNormOp norm = candidate.norm;
    auto weightType = cast<RankedTensorType>(conv.getWeight().getType());
    Type element = weightType.getElementType();
    int64_t channels = weightType.getDimSize(0);
    SmallVector<SmallVector<double>> data;
    bool known = true;
    for (auto [i, source] : llvm::enumerate(candidate.sources)) {
      if (i == 1 && !source.elements && !source.external) {
        data.push_back(SmallVector<double>(channels, 0.0));
        continue;
      }
      std::optional<SmallVector<double>> v = values(source, element);
      int64_t expected = i == 0 ? weightType.getNumElements() : channels;
      if (!v || (int64_t)v->size() != expected) {
        known = false;
        break;
      }
      data.push_back(std::move(*v));
    }
    if (!known)
      continue;
    const SmallVector<double> &weight = data[0], &bias = data[1],
                              &scale = data[2], &shift = data[3],
                              &mean = data[4], &variance = data[5];
    double epsilon = norm.getEpsilon().convertToDouble();
    int64_t perChannel = weightType.getNumElements() / channels;
    SmallVector<double> newWeight(weight.size()), newBias(channels);
    for (int64_t c = 0; c < channels; ++c) {
      double s = scale[c] / std::sqrt(variance[c] + epsilon);
      for (int64_t i = 0; i < perChannel; ++i)
        newWeight[c * perChannel + i] = weight[c * perChannel + i] * s;
      newBias[c] = (bias[c] - mean[c]) * s + shift[c];
    }

    builder.setInsertionPoint(conv);
    auto biasType = RankedTensorType::get({channels}, element);
    Value w =
        ConstantOp::create(builder, conv.getLoc(),
                           elementsFromBytes(weightType, "folded_weight",
                                             fromDoubles(newWeight, element)));
    Value b =
        ConstantOp::create(builder, conv.getLoc(),
                           elementsFromBytes(biasType, "folded_bias",
                                             fromDoubles(newBias, element)));
    auto folded = ConvOp::create(builder, norm.getLoc(), conv.getInput(), w, b,
                                 conv.getStridesAttr(), conv.getPadsAttr(),
                                 conv.getDilationsAttr(), conv.getGroupAttr());
    norm.getResult().replaceAllUsesWith(folded.getResult());
    norm.erase();
    conv.erase();
  }
}
