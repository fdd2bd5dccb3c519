//===- StageEmitter.cpp - C++ source of a stage's functions ---------------===//
//
// Turns a function of a stage into C++: elementwise runs become fused steps
// (the target's), every other op a call into the target's kernels, reshapes
// are free aliases, and every intermediate buffer has a fixed offset in one
// arena from the static memory plan.
//
//===----------------------------------------------------------------------===//

#include "pipe/Target/Common/StageEmitter.h"
#include "pipe/Target/Common/ElementwiseFusion.h"
#include "pipe/Target/Common/MemoryPlan.h"

#include "pipe/Dialect/Pipe/IR/PipeOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>

using namespace mlir;
using namespace mlir::pipe;

static RankedTensorType tensorType(Value value) {
  return cast<RankedTensorType>(value.getType());
}

static int64_t byteSize(Value value) { return tensorBytes(value.getType()); }

/// The little-endian bytes of a constant, one byte per bool.
static FailureOr<std::string> elementBytes(ElementsAttr attr) {
  std::string bytes;
  Type element = attr.getElementType();
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(attr)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return failure();
    ArrayRef<char> data = blob->getData();
    return std::string(data.begin(), data.end());
  }
  auto dense = dyn_cast<DenseElementsAttr>(attr);
  if (!dense)
    return failure();
  if (element.isInteger(1)) {
    for (bool value : dense.getValues<bool>())
      bytes.push_back(value ? 1 : 0);
    return bytes;
  }
  unsigned width = element.getIntOrFloatBitWidth() / 8;
  auto append = [&](const APInt &bits) {
    uint64_t word = bits.getZExtValue();
    bytes.append(reinterpret_cast<const char *>(&word), width);
  };
  if (isa<FloatType>(element)) {
    for (const APFloat &value : dense.getValues<APFloat>())
      append(value.bitcastToAPInt());
  } else {
    for (const APInt &value : dense.getValues<APInt>())
      append(value);
  }
  return bytes;
}

std::string mlir::pipe::cppString(StringRef text) {
  std::string literal = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      literal += '\\';
      literal += c;
    } else if (c < 0x20 || c >= 0x7f) {
      char octal[8];
      std::snprintf(octal, sizeof(octal), "\\%03o", unsigned(c));
      literal += octal;
    } else {
      literal += c;
    }
  }
  return literal + "\"";
}

int64_t StageEmitter::addWeights(const std::string &bytes) {
  artifacts.weights.resize(llvm::alignTo(artifacts.weights.size(), 64), 0);
  int64_t offset = artifacts.weights.size();
  artifacts.weights += bytes;
  return offset;
}

std::string StageEmitter::shapeOf(Value value) {
  return ints(tensorType(value).getShape());
}

std::string StageEmitter::rankOf(Value value) {
  return std::to_string(tensorType(value).getRank());
}

std::string StageEmitter::elementOf(Value value) {
  return cppElementType(tensorType(value).getElementType());
}

std::string StageEmitter::input(Value value) {
  return "reinterpret_cast<const " + elementOf(value) + " *>(" +
         pointer(value) + ")";
}

std::string StageEmitter::output(Value value) {
  return "reinterpret_cast<" + elementOf(value) + " *>(" + pointer(value) + ")";
}

Value StageEmitter::root(Value value) {
  while (auto reshape = value.getDefiningOp<ReshapeOp>())
    value = reshape.getInput();
  return value;
}

std::string StageEmitter::hostElement(Value value,
                                      const std::string &flatIndex) {
  return input(value) + "[" + flatIndex + "]";
}

std::string StageEmitter::ints(ArrayRef<int64_t> values) {
  std::vector<int64_t> key(values.begin(), values.end());
  auto it = intArrays.find(key);
  if (it != intArrays.end())
    return it->second;
  std::string name = "kInts" + std::to_string(intArrays.size());
  declStream << "const int64_t " << name << "[] = {";
  if (values.empty())
    declStream << "0";
  llvm::interleaveComma(values, declStream);
  declStream << "};\n";
  intArrays[key] = name;
  return name;
}

std::string StageEmitter::pointer(Value value) {
  auto it = pointers.find(root(value));
  assert(it != pointers.end() && "value without storage");
  return it->second;
}

LogicalResult
StageEmitter::assignStorage(ArrayRef<SmallVector<Operation *>> steps) {
  // Arguments are the microbatch's inputs.
  for (BlockArgument arg : main.getArguments())
    pointers[arg] = "in[" + std::to_string(arg.getArgNumber()) + "]";

  // Parameters and constants live in the weights blob.
  for (Operation &op : main.getBody().front()) {
    if (auto ref = dyn_cast<ParamRefOp>(op)) {
      FailureOr<int64_t> offset =
          parameterOffset(ref, ref.getName(), tensorType(ref));
      if (failed(offset))
        return failure();
      pointers[ref] = "(weights + " + std::to_string(*offset) + ")";
    } else if (auto constant = dyn_cast<ConstantOp>(op)) {
      FailureOr<std::string> bytes = elementBytes(constant.getValue());
      if (failed(bytes))
        return constant.emitError("constant data is not available");
      if (static_cast<int64_t>(bytes->size()) != byteSize(constant)) {
        // A splat: repeat its one element.
        std::string full;
        for (int64_t i = 0, e = tensorType(constant).getNumElements(); i < e;
             ++i)
          full += *bytes;
        bytes = full;
      }
      pointers[constant] =
          "(weights + " + std::to_string(addWeights(*bytes)) + ")";
    }
  }

  // Every other result that steps materialize gets an arena buffer, live
  // from the step that writes it to the last step that reads it (through
  // reshapes, which alias their input).
  llvm::DenseMap<Value, BufferRequest> requests;
  SmallVector<Value> order;
  int64_t end = steps.size();
  for (auto [index, step] : llvm::enumerate(steps)) {
    SmallVector<Value> results;
    if (isElementwise(step.front()))
      results.push_back(step.back()->getResult(0));
    else if (!isa<ReshapeOp, ConstantOp, ParamRefOp>(step.front()))
      llvm::append_range(results, step.front()->getResults());
    for (Value result : results) {
      requests[result] = {result, byteSize(result), (int64_t)index,
                          (int64_t)index};
      order.push_back(result);
    }
    for (Operation *op : step)
      for (Value operand : op->getOperands()) {
        auto it = requests.find(root(operand));
        if (it != requests.end())
          it->second.lastStep = std::max<int64_t>(it->second.lastStep, index);
      }
  }
  for (Value result : main.getBody().front().getTerminator()->getOperands()) {
    auto it = requests.find(root(result));
    if (it != requests.end())
      it->second.lastStep = end;
  }
  SmallVector<BufferRequest> list;
  for (Value value : order)
    list.push_back(requests[value]);
  MemoryPlan plan = planMemory(list);
  artifacts.arenaBytes = std::max(artifacts.arenaBytes, plan.peakBytes);
  artifacts.arenaBytesWithoutReuse =
      std::max(artifacts.arenaBytesWithoutReuse, plan.totalBytes);
  for (Value value : order)
    pointers[value] = "(arena + " + std::to_string(plan.offsets[value]) + ")";
  return success();
}

FailureOr<int64_t> StageEmitter::parameterOffset(Operation *user,
                                                 StringRef symbol,
                                                 RankedTensorType type) {
  auto known = artifacts.parameterIndex.find(symbol);
  if (known != artifacts.parameterIndex.end())
    return artifacts.parameters[known->second].offset;
  auto it = parameterData.find(symbol);
  if (it == parameterData.end())
    return user->emitError("no data for parameter '") << symbol << "'";
  if (static_cast<int64_t>(it->second.size()) != tensorBytes(type))
    return user->emitError("parameter '")
           << symbol << "' has " << it->second.size()
           << " bytes of data, its type needs " << tensorBytes(type);
  auto parameter = SymbolTable::lookupNearestSymbolFrom<ParameterOp>(
      user, StringAttr::get(user->getContext(), symbol));
  artifacts.parameterBytes += it->second.size();
  WeightEntry entry{symbol.str(), addWeights(it->second), type,
                    parameter && parameter.getTrainable()};
  artifacts.parameterIndex[symbol] = artifacts.parameters.size();
  artifacts.parameters.push_back(entry);
  return entry.offset;
}

std::string StageEmitter::rangeError(Value labels, const std::string &flatIndex,
                                     const std::string &what, int64_t low,
                                     int64_t limit) {
  std::string value =
      "static_cast<int64_t>(" + hostElement(labels, flatIndex) + ")";
  auto arg = dyn_cast<BlockArgument>(root(labels));
  auto argName =
      arg ? main.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "pipe.name")
          : StringAttr();
  if (!argName || tensorType(arg).getRank() == 0)
    return llvm::formatv("error = \"{0} \" + std::to_string({1}) + \" at "
                         "flat index \" + std::to_string({2}) + \" is out of "
                         "range [{4}, {3})\";",
                         what, value, flatIndex, limit, low)
        .str();
  RankedTensorType type = tensorType(arg);
  int64_t rows = type.getDimSize(0);
  int64_t perRow = rows ? type.getNumElements() / rows : 1;
  return llvm::formatv(
             "error = \"{0} \" + std::to_string({1}) + \" in row \" + "
             "std::to_string(microbatch * {2} + {3} / {4}) + \" of input "
             "'{5}' is out of range [{7}, {6})\";",
             what, value, rows, flatIndex, perRow, argName.getValue(), limit,
             low)
      .str();
}

//===----------------------------------------------------------------------===//
// Kernel calls
//===----------------------------------------------------------------------===//

LogicalResult StageEmitter::emitKernel(Operation *op) {
  ++artifacts.numKernelCalls;
  FailureOr<std::optional<std::string>> special = targetCall(op);
  if (failed(special))
    return failure();
  if (*special) {
    os << "  " << **special << ";\n";
    return success();
  }
  auto fmt = [](const char *pattern, auto &&...args) {
    return llvm::formatv(pattern, args...).str();
  };
  auto bool_ = [](bool b) { return b ? "true" : "false"; };
  // A missing optional operand: a null pointer of the result's element
  // type, so template arguments still deduce.
  auto optional = [&](Value v) {
    return v ? input(v)
             : "static_cast<const " + elementOf(op->getResult(0)) +
                   " *>(nullptr)";
  };
  auto floatOf = [&](Value v, double x) {
    return fmt("static_cast<{0}>({1:e17})", elementOf(v), x);
  };
  auto elementSize = [&](Value v) {
    Type t = tensorType(v).getElementType();
    return std::to_string(t.isInteger(1) ? 1 : t.getIntOrFloatBitWidth() / 8);
  };
  using namespace std::string_literals;
  std::optional<std::string> call =
      llvm::TypeSwitch<Operation *, std::optional<std::string>>(op)
          .Case([&](MatMulOp o) {
            return fmt(
                "kernels::matmul({0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}, {8})",
                input(o.getLhs()), shapeOf(o.getLhs()), rankOf(o.getLhs()),
                input(o.getRhs()), shapeOf(o.getRhs()), rankOf(o.getRhs()),
                output(o), shapeOf(o), rankOf(o));
          })
          .Case([&](GemmOp o) {
            RankedTensorType a = tensorType(o.getA());
            int64_t m = tensorType(o).getDimSize(0),
                    n = tensorType(o).getDimSize(1);
            int64_t k = a.getDimSize(o.getTransA() ? 0 : 1);
            return fmt(
                "kernels::gemm({0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}, {8}, "
                "{9}, {10}, {11}, {12})",
                input(o.getA()), input(o.getB()), optional(o.getC()),
                o.getC() ? shapeOf(o.getC()) : "nullptr"s,
                o.getC() ? rankOf(o.getC()) : "0"s, output(o), m, n, k,
                bool_(o.getTransA()), bool_(o.getTransB()),
                floatOf(o, o.getAlpha().convertToDouble()),
                floatOf(o, o.getBeta().convertToDouble()));
          })
          .Case([&](ConvOp o) {
            // A weight that is a parameter may be kept in the kernel's
            // layout until parameters change.
            bool parameter = isa_and_present<ParamRefOp, ConstantOp>(
                root(o.getWeight()).getDefiningOp());
            // A fused activation: its runtime code and clip bounds.
            std::string activation;
            if (std::optional<ConvActivation> kind = o.getActivation()) {
              const char *code =
                  *kind == ConvActivation::relu   ? "pipe_rt::kRelu"
                  : *kind == ConvActivation::clip ? "pipe_rt::kClip"
                                                  : "pipe_rt::kSilu";
              activation = fmt(
                  ", {0}, {1:e9}f, {2:e9}f", code,
                  o.getActivationMin() ? o.getActivationMin()->convertToDouble()
                                       : 0.0,
                  o.getActivationMax() ? o.getActivationMax()->convertToDouble()
                                       : 0.0);
            }
            return fmt("kernels::{13}({0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}, "
                       "{8}, {9}, {10}, {11}, {12}{14})",
                       input(o.getInput()), shapeOf(o.getInput()),
                       input(o.getWeight()), shapeOf(o.getWeight()),
                       optional(o.getBias()), output(o), shapeOf(o),
                       tensorType(o).getRank() - 2, ints(o.getStrides()),
                       ints(o.getPads()), ints(o.getDilations()), o.getGroup(),
                       bool_(parameter),
                       o.getChannelsLast() ? "convChannelsLast" : "conv",
                       activation);
          })
          .Case([&](ConvTransposeOp o) {
            return fmt(
                "kernels::convTranspose({0}, {1}, {2}, {3}, {4}, {5}, {6}, "
                "{7}, {8}, {9}, {10}, {11})",
                input(o.getInput()), shapeOf(o.getInput()),
                input(o.getWeight()), shapeOf(o.getWeight()),
                optional(o.getBias()), output(o), shapeOf(o),
                tensorType(o).getRank() - 2, ints(o.getStrides()),
                ints(o.getPads()), ints(o.getDilations()), o.getGroup());
          })
          .Case([&](ConvWeightGradOp o) {
            return fmt(
                "kernels::convWeightGrad({0}, {1}, {2}, {3}, {4}, {5}, {6}, "
                "{7}, {8}, {9}, {10})",
                input(o.getInput()), shapeOf(o.getInput()), input(o.getGrad()),
                shapeOf(o.getGrad()), output(o), shapeOf(o),
                tensorType(o).getRank() - 2, ints(o.getStrides()),
                ints(o.getPads()), ints(o.getDilations()), o.getGroup());
          })
          .Case([&](MaxPoolOp o) {
            return fmt(
                "kernels::maxPool({0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}, {8})",
                input(o.getInput()), shapeOf(o.getInput()), output(o),
                shapeOf(o), tensorType(o).getRank() - 2,
                ints(o.getKernelShape()), ints(o.getStrides()),
                ints(o.getPads()), ints(o.getDilations()));
          })
          .Case([&](AveragePoolOp o) {
            return fmt(
                "kernels::averagePool({0}, {1}, {2}, {3}, {4}, {5}, {6}, "
                "{7}, {8})",
                input(o.getInput()), shapeOf(o.getInput()), output(o),
                shapeOf(o), tensorType(o).getRank() - 2,
                ints(o.getKernelShape()), ints(o.getStrides()),
                ints(o.getPads()), bool_(o.getCountIncludePad()));
          })
          .Case([&](MaxPoolGradOp o) {
            return fmt(
                "kernels::maxPoolGrad({0}, {1}, {2}, {3}, {4}, {5}, {6}, "
                "{7}, {8}, {9})",
                input(o.getInput()), shapeOf(o.getInput()), input(o.getGrad()),
                shapeOf(o.getGrad()), tensorType(o).getRank() - 2,
                ints(o.getKernelShape()), ints(o.getStrides()),
                ints(o.getPads()), ints(o.getDilations()), output(o));
          })
          .Case([&](AveragePoolGradOp o) {
            return fmt("kernels::averagePoolGrad({0}, {1}, {2}, {3}, {4}, {5}, "
                       "{6}, {7}, {8})",
                       input(o.getGrad()), shapeOf(o.getGrad()), output(o),
                       shapeOf(o), tensorType(o).getRank() - 2,
                       ints(o.getKernelShape()), ints(o.getStrides()),
                       ints(o.getPads()), bool_(o.getCountIncludePad()));
          })
          .Case([&](GlobalAveragePoolOp o) {
            return fmt("kernels::globalAveragePool({0}, {1}, {2}, {3})",
                       input(o.getInput()), shapeOf(o.getInput()),
                       rankOf(o.getInput()), output(o));
          })
          .Case([&](BatchNormOp o) {
            return fmt(
                "kernels::batchNorm({0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}, "
                "{8})",
                input(o.getInput()), shapeOf(o.getInput()),
                rankOf(o.getInput()), input(o.getScale()), input(o.getBias()),
                input(o.getMean()), input(o.getVariance()),
                floatOf(o, o.getEpsilon().convertToDouble()), output(o));
          })
          .Case([&](BatchNormTrainOp o) {
            return fmt(
                "kernels::batchNormTrain({0}, {1}, {2}, {3}, {4}, {5}, {6}, "
                "{7}, {8}, {9}, {10}, {11})",
                input(o.getInput()), shapeOf(o.getInput()),
                rankOf(o.getInput()), input(o.getScale()), input(o.getBias()),
                input(o.getMean()), input(o.getVariance()),
                floatOf(o.getOutput(), o.getEpsilon().convertToDouble()),
                floatOf(o.getOutput(), o.getMomentum().convertToDouble()),
                output(o.getOutput()), output(o.getRunningMean()),
                output(o.getRunningVariance()));
          })
          .Case([&](BatchNormTrainGradOp o) {
            return fmt(
                "kernels::batchNormTrainGrad({0}, {1}, {2}, {3}, {4}, {5}, "
                "{6}, {7}, {8})",
                input(o.getInput()), shapeOf(o.getInput()),
                rankOf(o.getInput()), input(o.getScale()),
                input(o.getOutputGrad()),
                floatOf(o.getInputGrad(), o.getEpsilon().convertToDouble()),
                output(o.getInputGrad()), output(o.getScaleGrad()),
                output(o.getBiasGrad()));
          })
          .Case([&](LayerNormOp o) {
            Value bias = o.getBias();
            return fmt(
                "kernels::layerNorm({0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}, "
                "{8}, {9}, {10}, {11})",
                input(o.getInput()), shapeOf(o.getInput()),
                rankOf(o.getInput()), o.getAxis(), input(o.getScale()),
                shapeOf(o.getScale()), rankOf(o.getScale()), optional(bias),
                bias ? shapeOf(bias) : "nullptr"s, bias ? rankOf(bias) : "0"s,
                floatOf(o, o.getEpsilon().convertToDouble()), output(o));
          })
          .Case([&](InstanceNormOp o) {
            return fmt(
                "kernels::instanceNorm({0}, {1}, {2}, {3}, {4}, {5}, {6})",
                input(o.getInput()), shapeOf(o.getInput()),
                rankOf(o.getInput()), input(o.getScale()), input(o.getBias()),
                floatOf(o, o.getEpsilon().convertToDouble()), output(o));
          })
          .Case<SoftmaxOp, LogSoftmaxOp>([&](auto o) {
            ArrayRef<int64_t> shape = tensorType(o).getShape();
            int64_t axis = o.getAxis(), outer = 1, inner = 1;
            for (int64_t d = 0; d < (int64_t)shape.size(); ++d)
              if (d < axis)
                outer *= shape[d];
              else if (d > axis)
                inner *= shape[d];
            return fmt("kernels::softmax({0}, {1}, {2}, {3}, {4}, {5})",
                       input(o.getInput()), output(o), outer, shape[axis],
                       inner, bool_(isa<LogSoftmaxOp>(o.getOperation())));
          })
          .Case<ReduceMeanOp, ReduceSumOp, ReduceMaxOp>([&](auto o) {
            const char *kind = isa<ReduceMeanOp>(o.getOperation())  ? "Mean"
                               : isa<ReduceSumOp>(o.getOperation()) ? "Sum"
                                                                    : "Max";
            int64_t rank = tensorType(o.getInput()).getRank();
            std::string mask = "kMask" + std::to_string(tempCounter++);
            declStream << "const bool " << mask << "[] = {";
            for (int64_t d = 0; d < std::max<int64_t>(rank, 1); ++d)
              declStream << (d ? ", " : "")
                         << bool_(llvm::is_contained(o.getAxes(), d));
            declStream << "};\n";
            return fmt("kernels::reduce(pipe_rt::ReduceKind::{0}, {1}, {2}, "
                       "{3}, {4}, {5})",
                       kind, input(o.getInput()), shapeOf(o.getInput()), rank,
                       mask, output(o));
          })
          .Case<SoftmaxCrossEntropyLossOp,
                NegativeLogLikelihoodLossOp>([&](auto o)
                                                 -> std::optional<std::string> {
            const char *fn = isa<SoftmaxCrossEntropyLossOp>(o.getOperation())
                                 ? "softmaxCrossEntropy"
                                 : "nllLoss";
            const char *reduction = o.getReduction() == Reduction::none ? "None"
                                    : o.getReduction() == Reduction::sum
                                        ? "Sum"
                                        : "Mean";
            std::optional<int64_t> ignore = o.getIgnoreIndex();
            std::string bad = "bad" + std::to_string(tempCounter++);
            int64_t classes = tensorType(o.getInput()).getDimSize(1);
            return fmt(
                "int64_t {9} = -1;\n  if (!kernels::{0}({1}, {2}, {3}, {4}, "
                "{5}, pipe_rt::LossReduction::{6}, {7}, {8}, {10}, &{9})) {{\n"
                "    {11}\n    return false;\n  }",
                fn, input(o.getInput()), shapeOf(o.getInput()),
                rankOf(o.getInput()), input(o.getLabels()),
                optional(o.getWeight()), reduction, bool_(ignore.has_value()),
                ignore.value_or(0), bad, output(o),
                rangeError(o.getLabels(), bad, "label", 0, classes));
          })
          .Case([&](TransposeOp o) {
            return fmt("kernels::transpose({0}, {1}, {2}, {3}, {4}, {5})",
                       pointer(o.getInput()), shapeOf(o.getInput()),
                       rankOf(o.getInput()), ints(o.getPerm()), elementSize(o),
                       pointer(o));
          })
          .Case([&](SliceOp o) {
            return fmt("kernels::slice({0}, {1}, {2}, {3}, {4}, {5}, {6}, {7})",
                       pointer(o.getInput()), shapeOf(o.getInput()),
                       rankOf(o.getInput()), ints(o.getOffsets()),
                       ints(o.getSizes()), ints(o.getStrides()), elementSize(o),
                       pointer(o));
          })
          .Case([&](GatherOp o) -> std::optional<std::string> {
            std::string bad = "bad" + std::to_string(tempCounter++);
            int64_t extent = tensorType(o.getData()).getDimSize(o.getAxis());
            return fmt(
                "int64_t {0} = -1;\n  if (!kernels::gather({1}, {2}, {3}, "
                "{4}, {5}, {6}, {7}, {8}, &{0})) {{\n"
                "    {9}\n    return false;\n  }",
                bad, pointer(o.getData()), shapeOf(o.getData()),
                rankOf(o.getData()), o.getAxis(), input(o.getIndices()),
                tensorType(o.getIndices()).getNumElements(), elementSize(o),
                pointer(o),
                rangeError(o.getIndices(), bad, "gather index", -extent,
                           extent));
          })
          .Case([&](SGDUpdateOp o) {
            Value buffer = o.getMomentumBuffer();
            return fmt(
                "kernels::sgdUpdate({0}, {1}, {2}, {3}, *{4}, "
                "pipe_rt::SGDOptions{{{5:e17}, {6:e17}, {7:e17}, {8:e17}, "
                "{9}}, "
                "{10}, {11})",
                input(o.getParam()), input(o.getGrad()), optional(buffer),
                tensorType(o.getParam()).getNumElements(), input(o.getStep()),
                o.getLr().convertToDouble(), o.getMomentum().convertToDouble(),
                o.getDampening().convertToDouble(),
                o.getWeightDecay().convertToDouble(), bool_(o.getNesterov()),
                output(o.getNewParam()),
                buffer ? output(o.getNewMomentumBuffer())
                       : "static_cast<" + elementOf(o.getParam()) +
                             " *>(nullptr)");
          })
          .Case([&](AdamUpdateOp o) {
            return fmt(
                "kernels::adamUpdate({0}, {1}, {2}, {3}, {4}, *{5}, "
                "pipe_rt::AdamOptions{{{6:e17}, {7:e17}, {8:e17}, {9:e17}, "
                "{10:e17}, {11}}, {12}, {13}, {14})",
                input(o.getParam()), input(o.getGrad()), input(o.getExpAvg()),
                input(o.getExpAvgSq()),
                tensorType(o.getParam()).getNumElements(), input(o.getStep()),
                o.getLr().convertToDouble(), o.getBeta1().convertToDouble(),
                o.getBeta2().convertToDouble(), o.getEps().convertToDouble(),
                o.getWeightDecay().convertToDouble(), bool_(o.getDecoupled()),
                output(o.getNewParam()), output(o.getNewExpAvg()),
                output(o.getNewExpAvgSq()));
          })
          .Case([&](ConcatOp o) {
            std::string name = "concat" + std::to_string(tempCounter++);
            std::string inputs, shapes;
            for (Value v : o.getInputs()) {
              inputs += (inputs.empty() ? "" : ", ") + pointer(v);
              shapes += (shapes.empty() ? "" : ", ") + shapeOf(v);
            }
            return fmt(
                "const void *{0}In[] = {{{1}};\n  const int64_t *{0}Shapes[] "
                "= {{{2}};\n  kernels::concat({0}In, {0}Shapes, {3}, {4}, {5}, "
                "{6}, {7})",
                name, inputs, shapes, o.getInputs().size(), rankOf(o),
                o.getAxis(), elementSize(o), pointer(o));
          })
          .Case([&](SplitOp o) {
            std::string name = "split" + std::to_string(tempCounter++);
            std::string outputs;
            SmallVector<int64_t> sizes;
            for (Value v : o.getOutputs()) {
              outputs += (outputs.empty() ? "" : ", ") + pointer(v);
              sizes.push_back(tensorType(v).getDimSize(o.getAxis()));
            }
            return fmt("void *const {0}Out[] = {{{1}};\n  kernels::split({2}, "
                       "{3}, {4}, "
                       "{5}, {6}, {7}, {8}, {0}Out)",
                       name, outputs, pointer(o.getInput()),
                       shapeOf(o.getInput()), rankOf(o.getInput()), o.getAxis(),
                       ints(sizes), sizes.size(), elementSize(o.getInput()));
          })
          .Case([&](ExpandOp o) {
            return fmt(
                "kernels::broadcastTo({0}, {1}, {2}, {3}, {4}, {5}, {6})",
                pointer(o.getInput()), shapeOf(o.getInput()),
                rankOf(o.getInput()), shapeOf(o), rankOf(o), elementSize(o),
                pointer(o));
          })
          .Case([&](TileOp o) {
            return fmt("kernels::tile({0}, {1}, {2}, {3}, {4}, {5})",
                       pointer(o.getInput()), shapeOf(o.getInput()),
                       rankOf(o.getInput()), ints(o.getRepeats()),
                       elementSize(o), pointer(o));
          })
          .Case([&](PadOp o) {
            const char *mode = o.getMode() == PadMode::constant  ? "Constant"
                               : o.getMode() == PadMode::reflect ? "Reflect"
                                                                 : "Edge";
            std::string name = "padValue" + std::to_string(tempCounter++);
            double value = o.getValue().convertToDouble();
            return fmt("const {0} {1} = static_cast<{0}>({2:e17});\n  "
                       "kernels::pad({3}, "
                       "{4}, {5}, {6}, pipe_rt::PadMode::{7}, &{1}, {8}, {9})",
                       elementOf(o), name, value, pointer(o.getInput()),
                       shapeOf(o.getInput()), rankOf(o.getInput()),
                       ints(o.getPads()), mode, elementSize(o), pointer(o));
          })
          .Case([&](TriluOp o) {
            return fmt("kernels::trilu({0}, {1}, {2}, {3}, {4}, {5}, {6})",
                       pointer(o.getInput()), shapeOf(o.getInput()),
                       rankOf(o.getInput()), o.getK(), bool_(o.getUpper()),
                       elementSize(o), pointer(o));
          })
          .Default([](Operation *) { return std::nullopt; });
  if (!call)
    return op->emitError("'") << op->getName() << "' is not supported by "
                              << targetName() << " yet";
  os << "  " << *call << ";\n";
  return success();
}

LogicalResult StageEmitter::run() {
  Block &block = main.getBody().front();
  SmallVector<Operation *> ops;
  for (Operation &op : block.without_terminator()) {
    ++artifacts.numOps;
    if (!isa<ConstantOp, ParamRefOp>(op))
      ops.push_back(&op);
  }
  SmallVector<SmallVector<Operation *>> steps = groupSteps(ops);
  for (Operation &op : block.without_terminator())
    for (Value value : op.getResults())
      if (cppElementType(tensorType(value).getElementType()).empty())
        return op.emitError("element type ")
               << tensorType(value).getElementType() << " is not supported by "
               << targetName();
  if (failed(assignStorage(steps)))
    return failure();

  for (const SmallVector<Operation *> &step : steps) {
    for (Operation *op : step)
      artifacts.flops = saturatingSum(artifacts.flops, opFlops(op));
    if (isa<ReshapeOp>(step.front()))
      continue;
    if (failed(isElementwise(step.front()) ? emitFusedStep(step)
                                           : emitKernel(step.front())))
      return failure();
  }
  // Results go to the output slots, or over the parameter they assign.
  // An assigned result that still lives in the weights (a parameter or a
  // constant, through reshapes) is copied aside first, so that no write
  // back changes what a later one reads.
  ValueRange returned = block.getTerminator()->getOperands();
  SmallVector<std::string> sources;
  for (auto [i, result] : llvm::enumerate(returned)) {
    sources.push_back(pointer(result));
    if (!main.getResultAttr(i, "pipe.assign") ||
        !isa_and_present<ParamRefOp, ConstantOp>(root(result).getDefiningOp()))
      continue;
    auto [statements, staged] = copyAside(sources.back(), byteSize(result));
    os << statements;
    sources.back() = staged;
  }
  bool assigns = false;
  for (auto [i, result] : llvm::enumerate(returned)) {
    auto assigned =
        main.getResultAttrOfType<FlatSymbolRefAttr>(i, "pipe.assign");
    if (!assigned) {
      os << copyStatement("out[" + std::to_string(i) + "]", sources[i],
                          byteSize(result), /*overlapping=*/false);
      continue;
    }
    FailureOr<int64_t> offset =
        parameterOffset(main, assigned.getValue(), tensorType(result));
    if (failed(offset))
      return failure();
    os << copyStatement("weights + " + std::to_string(*offset), sources[i],
                        byteSize(result), /*overlapping=*/true);
    assigns = true;
  }
  if (assigns)
    os << afterAssign();

  std::string &source = artifacts.source;
  llvm::raw_string_ostream src(source);
  src << "namespace {\nnamespace " << name << "Data {\n"
      << decls << "} // namespace " << name << "Data\n\n"
      << "bool " << name << "(char *arena, char *weights,\n"
      << "    const void *const *in, void *const *out, int64_t microbatch,\n"
      << "    std::string &error) {\n"
      << "  using namespace " << name << "Data;\n"
      << "  (void)microbatch;\n"
      << body << "  return true;\n}\n} // namespace\n\n";
  return success();
}
