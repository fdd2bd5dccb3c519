//===- FusedLoop.cpp - C++ loops of fused elementwise ops -----------------===//
//
// One OpenMP loop per run of fused elementwise ops (groupSteps): flat over
// the result, or as rows and contiguous runs where an operand broadcasts.
//
//===----------------------------------------------------------------------===//

#include "FusedLoop.h"

#include "pipe/Target/Common/ElementwiseFusion.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::pipe;

/// Below this many rows, a fused loop's threads share each row instead.
static constexpr int64_t kMinParallelRows = 64;
/// Loops over at most this many elements run on one thread.
static constexpr int64_t kMinParallelElements = 32768;

static RankedTensorType typeOf(Value value) {
  return cast<RankedTensorType>(value.getType());
}

static std::string elementOf(Value value) {
  return cppElementType(typeOf(value).getElementType());
}

FailureOr<std::string>
mlir::pipe::fusedLoopSource(ArrayRef<Operation *> ops,
                            function_ref<std::string(Value)> input,
                            function_ref<std::string(Value)> output) {
  std::string source;
  llvm::raw_string_ostream os(source);
  Value result = ops.back()->getResult(0);
  ArrayRef<int64_t> shape = typeOf(result).getShape();
  int64_t count = typeOf(result).getNumElements();
  SmallVector<int64_t> resultStrides = rowMajorStrides(shape);
  // Operands read as rows; scalars are loaded where they are used.
  SmallVector<Value> external = fusedStepOperands(ops, /*skipScalars=*/true);
  SmallVector<ArrayRef<int64_t>> operandShapes;
  for (Value operand : external)
    operandShapes.push_back(typeOf(operand).getShape());
  BroadcastLoop loop = splitBroadcastLoop(shape, operandShapes);
  bool nested = loop.outer > 1;

  // Scalars of the loop body: values computed inside the run, or loaded
  // from operands defined outside it. A broadcast operand's row offset is
  // computed once per row of a nested loop.
  llvm::DenseMap<Value, std::string> scalars;
  std::string bases, loads, computes;
  llvm::raw_string_ostream baseOs(bases), loadOs(loads), computeOs(computes);
  int64_t next = 0;
  auto load = [&](Value value) -> std::string {
    auto it = scalars.find(value);
    if (it != scalars.end())
      return it->second;
    std::string name = "v" + std::to_string(next++);
    RankedTensorType type = typeOf(value);
    std::string index;
    if (type.getNumElements() == 1) {
      index = "0";
    } else if (type.getShape() == shape) {
      index = "i";
    } else {
      SmallVector<int64_t> strides = broadcastStrides(shape, type.getShape());
      unsigned split = nested ? loop.splitDim : shape.size();
      SmallVector<std::string> terms;
      for (unsigned d = 0; d < split; ++d)
        if (strides[d] != 0)
          terms.push_back(llvm::formatv("({0} / {1} % {2}) * {3}",
                                        nested ? "o" : "i",
                                        nested ? resultStrides[d] / loop.inner
                                               : resultStrides[d],
                                        shape[d], strides[d])
                              .str());
      std::string base = terms.empty() ? "0" : llvm::join(terms, " + ");
      if (!nested) {
        index = base;
      } else {
        if (!terms.empty()) {
          std::string baseName = "b" + std::to_string(next++);
          baseOs << "      const int64_t " << baseName << " = " << base
                 << ";\n";
          base = baseName;
        }
        bool contiguous =
            llvm::any_of(ArrayRef(strides).drop_front(loop.splitDim),
                         [](int64_t stride) { return stride != 0; });
        index = !contiguous ? base : terms.empty() ? "j" : base + " + j";
      }
    }
    loadOs << "      const " << elementOf(value) << " " << name << " = "
           << input(value) << "[" << index << "];\n";
    scalars[value] = name;
    return name;
  };

  for (Operation *op : ops) {
    SmallVector<std::string> operands;
    for (Value operand : op->getOperands())
      operands.push_back(load(operand));
    FailureOr<std::string> expression = scalarExpression(op, operands);
    if (failed(expression))
      return op->emitError("unsupported element type for the CPU target");
    std::string name = "v" + std::to_string(next++);
    computeOs << "      const " << elementOf(op->getResult(0)) << " " << name
              << " = " << *expression << ";\n";
    scalars[op->getResult(0)] = name;
  }
  os << "  {\n    " << elementOf(result) << " *dst = " << output(result)
     << ";\n";
  // Small loops run on the calling thread: no parallel region at all
  // (an inactive one still costs a runtime call per row).
  std::string parallel =
      count > kMinParallelElements ? "#pragma omp parallel for\n" : "";
  std::string body =
      loads + computes + "      dst[i] = " + scalars[result] + ";\n";
  if (!nested) {
    os << parallel << "    for (int64_t i = 0; i < " << count << "; ++i) {\n"
       << body << "    }\n  }\n";
  } else {
    // The inner body, indented one level deeper. Threads share the rows, or
    // each row where there are too few rows to go round.
    std::string inner;
    for (StringRef line : llvm::split(StringRef(body).drop_back(), '\n'))
      inner += "  " + line.str() + "\n";
    bool fewRows = loop.outer < kMinParallelRows;
    os << (fewRows ? "" : parallel) << "    for (int64_t o = 0; o < "
       << loop.outer << "; ++o) {\n"
       << bases << (fewRows ? parallel : "") << "      for (int64_t j = 0; j < "
       << loop.inner << "; ++j) {\n"
       << "        const int64_t i = o * " << loop.inner << " + j;\n"
       << inner << "      }\n    }\n  }\n";
  }
  return source;
}
