//===- CUDAStageEmitter.cpp - the CUDA target's stage functions -----------===//
//
// What the CUDA target adds to the shared StageEmitter. A fused step is a
// kernel: its arithmetic is one __host__ __device__ function per step in
// the stage's fused.h (so the CPU can run it too), called by a grid-stride
// kernel. MatMul and Gemm are cuBLASLt call sites, described here and
// planned at start-up. Copies are stream-ordered device copies.
//
//===----------------------------------------------------------------------===//

#include "pipe/Target/CUDA/CUDATarget.h"
#include "pipe/Target/CUDA/GemmShape.h"

#include "pipe/Dialect/Pipe/IR/PipeOps.h"
#include "pipe/Target/Common/ElementwiseFusion.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::pipe;

static RankedTensorType typeOf(Value value) {
  return cast<RankedTensorType>(value.getType());
}

/// The most dimensions a tensor passed to a runtime kernel may have
/// (kMaxRank in runtime/cuda/Cuda.h).
static constexpr int64_t kMaxKernelRank = 8;

namespace {
class CUDAStageEmitter : public StageEmitter {
public:
  CUDAStageEmitter(func::FuncOp main, StringRef name,
                   const llvm::StringMap<std::string> &parameterData,
                   StageArtifacts &artifacts, CUDAStageArtifacts &cuda)
      : StageEmitter(main, name, parameterData, artifacts), cuda(cuda) {}

protected:
  StringRef targetName() const override { return "the CUDA target"; }
  LogicalResult emitFusedStep(ArrayRef<Operation *> ops) override;

  std::string copyStatement(const std::string &to, const std::string &from,
                            int64_t bytes, bool overlapping) override {
    // The sources of assigned results never overlap their parameters:
    // those in the weights were copied aside first.
    return "  kernels::copy(" + to + ", " + from + ", " +
           std::to_string(bytes) + ");\n";
  }

  std::pair<std::string, std::string> copyAside(const std::string &from,
                                                int64_t bytes) override {
    std::string staged = "staged" + std::to_string(fresh());
    return {"  kernels::Scratch " + staged + "(" + std::to_string(bytes) +
                ");\n  kernels::copy(" + staged + ".data(), " + from + ", " +
                std::to_string(bytes) + ");\n",
            staged + ".data()"};
  }

  std::string hostElement(Value value, const std::string &flatIndex) override {
    return "kernels::fetch(" + input(value) + ", " + flatIndex + ")";
  }

  FailureOr<std::optional<std::string>> targetCall(Operation *op) override;

private:
  /// The GEMM call site of `op`'s product, declared among the function's
  /// data; its C++ name.
  FailureOr<std::string> gemmSite(Operation *op, const GemmShape &shape,
                                  bool transA, bool transB, bool bias);

  CUDAStageArtifacts &cuda;
};
} // namespace

LogicalResult CUDAStageEmitter::emitFusedStep(ArrayRef<Operation *> ops) {
  Value result = ops.back()->getResult(0);
  ArrayRef<int64_t> shape = typeOf(result).getShape();
  int64_t count = typeOf(result).getNumElements();
  SmallVector<int64_t> resultStrides = rowMajorStrides(shape);
  SmallVector<Value> external = fusedStepOperands(ops, /*skipScalars=*/false);

  std::string stepName =
      llvm::formatv("{0}_fused{1}", name, artifacts.numFusedLoops).str();
  std::string params, hostArgs, launchArgs, pointerNames, body;
  llvm::DenseMap<Value, std::string> scalars;
  int64_t next = 0;
  for (auto [index, operand] : llvm::enumerate(external)) {
    std::string element = cppElementType(typeOf(operand).getElementType());
    std::string param = "p" + std::to_string(index);
    params += "const " + element + " *__restrict__ " + param + ", ";
    hostArgs += llvm::formatv("static_cast<const {0} *>(operands[{1}]), ",
                              element, index)
                    .str();
    launchArgs += input(operand) + ", ";
    pointerNames += cppString(pointer(operand)) + ", ";
    // The operand's element of result element i (numpy broadcasting).
    RankedTensorType type = typeOf(operand);
    std::string at;
    if (type.getNumElements() == 1) {
      at = "0";
    } else if (type.getShape() == shape) {
      at = "i";
    } else {
      SmallVector<int64_t> strides = broadcastStrides(shape, type.getShape());
      SmallVector<std::string> terms;
      for (unsigned d = 0; d < shape.size(); ++d)
        if (strides[d] != 0)
          terms.push_back(llvm::formatv("(i / {0} % {1}) * {2}",
                                        resultStrides[d], shape[d], strides[d])
                              .str());
      at = terms.empty() ? "0" : llvm::join(terms, " + ");
    }
    std::string scalar = "v" + std::to_string(next++);
    body += "    const " + element + " " + scalar + " = " + param + "[" + at +
            "];\n";
    scalars[operand] = scalar;
  }
  for (Operation *op : ops) {
    SmallVector<std::string> operands;
    for (Value operand : op->getOperands())
      operands.push_back(scalars.lookup(operand));
    FailureOr<std::string> expression = scalarExpression(op, operands);
    if (failed(expression))
      return op->emitError("unsupported element type for the CUDA target");
    std::string scalar = "v" + std::to_string(next++);
    body += "    const " +
            cppElementType(typeOf(op->getResult(0)).getElementType()) + " " +
            scalar + " = " + *expression + ";\n";
    scalars[op->getResult(0)] = scalar;
  }
  std::string resultElement = cppElementType(typeOf(result).getElementType());

  // fused.h: the step's arithmetic, for the GPU and the host.
  llvm::raw_string_ostream header(cuda.fusedHeader);
  header << "struct " << stepName << " {\n"
         << "  static constexpr int64_t kCount = " << count << ";\n"
         << "  static constexpr int kOperands = " << external.size() << ";\n"
         << "  static constexpr const char *kOperandPointers[] = {"
         << pointerNames << "nullptr};\n"
         << "  PIPE_HOST_DEVICE static void element(int64_t i, " << params
         << resultElement << " *__restrict__ dst) {\n"
         << body << "    dst[i] = " << scalars[result] << ";\n  }\n"
         << "  static void host(const void *const *operands, void *result) {\n"
         << "    (void)operands;\n"
         << "    for (int64_t i = 0; i < kCount; ++i)\n"
         << "      element(i, " << hostArgs << "static_cast<" << resultElement
         << " *>(result));\n  }\n};\n\n";
  cuda.fusedSteps.push_back(stepName);

  // The kernel, among the function's data, and its launch.
  std::string kernel = "fused" + std::to_string(artifacts.numFusedLoops);
  declStream << "__global__ void " << kernel << "(" << params << resultElement
             << " *__restrict__ dst) {\n"
             << "  for (int64_t i : kernels::GridStride(" << stepName
             << "::kCount))\n"
             << "    " << stepName << "::element(i, ";
  for (size_t i = 0; i < external.size(); ++i)
    declStream << "p" << i << ", ";
  declStream << "dst);\n}\n";
  if (count > 0)
    os << "  " << kernel << "<<<kernels::gridFor(" << count
       << "), kernels::kBlock, 0, kernels::computeStream()>>>(" << launchArgs
       << output(result) << ");\n  kernels::checkLaunch(\"" << stepName
       << "\");\n";
  ++artifacts.numFusedLoops;
  return success();
}

FailureOr<std::string> CUDAStageEmitter::gemmSite(Operation *op,
                                                  const GemmShape &shape,
                                                  bool transA, bool transB,
                                                  bool bias) {
  const GemmBatch &inner = shape.inner, &outer = shape.outer;
  Type element = typeOf(op->getResult(0)).getElementType();
  if (!element.isF32() && !element.isF64())
    return op->emitError("the CUDA target multiplies f32 and f64 matrices, "
                         "not ")
           << element;
  std::string site = "kGemm" + std::to_string(fresh());
  std::string label = name + ":" + op->getName().getStringRef().str();
  if (auto loc = dyn_cast<NameLoc>(op->getLoc()))
    label = name + ":" + loc.getName().str();
  declStream << llvm::formatv(
      "kernels::GemmSite {0} = {{{1}, kernels::GemmElement::{2}, {3}, {4}, "
      "{5}, {6}, {7}, {8}, {9}, {10}, {11}, {12}, {13}, {14}, {15}, "
      "kernels::Epilogue::{16}};\n",
      site, cppString(label), element.isF32() ? "F32" : "F64", shape.m, shape.n,
      shape.k, transA ? "true" : "false", transB ? "true" : "false",
      inner.count, inner.a, inner.b, inner.y, outer.count, outer.a, outer.b,
      outer.y, bias ? "Bias" : "None");
  cuda.gemmSites.push_back(name + "Data::" + site);
  return site;
}

FailureOr<std::optional<std::string>>
CUDAStageEmitter::targetCall(Operation *op) {
  auto fmt = [](const char *pattern, auto &&...args) {
    return llvm::formatv(pattern, args...).str();
  };
  if (auto matmul = dyn_cast<MatMulOp>(op)) {
    // numpy matmul: 1-D operands are a row (lhs) or a column (rhs); batch
    // dimensions broadcast.
    std::optional<GemmShape> shape = matmulGemmShape(
        typeOf(matmul.getLhs()).getShape(), typeOf(matmul.getRhs()).getShape(),
        typeOf(matmul).getShape());
    if (!shape)
      return op->emitError("the CUDA target runs a matrix product over at "
                           "most two levels of batch dimensions that "
                           "broadcast apart");
    FailureOr<std::string> site = gemmSite(op, *shape, false, false, false);
    if (failed(site))
      return failure();
    return std::optional<std::string>(fmt(
        "kernels::gemm({0}, {1}, {2}, nullptr, {3}, 1.0, 0.0)", *site,
        pointer(matmul.getLhs()), pointer(matmul.getRhs()), pointer(matmul)));
  }
  if (auto gemm = dyn_cast<GemmOp>(op)) {
    RankedTensorType a = typeOf(gemm.getA());
    int64_t m = typeOf(gemm).getDimSize(0), n = typeOf(gemm).getDimSize(1);
    int64_t k = a.getDimSize(gemm.getTransA() ? 0 : 1);
    double alpha = gemm.getAlpha().convertToDouble();
    double beta = gemm.getBeta().convertToDouble();
    Value c = gemm.getC();
    // A bias of n elements added once is cuBLASLt's epilogue; any other C
    // is first broadcast into Y, which the product then adds to.
    bool bias = c && beta == 1.0 && typeOf(c).getNumElements() == n &&
                typeOf(c).getRank() >= 1 && typeOf(c).getShape().back() == n &&
                typeOf(gemm).getElementType().isF32();
    FailureOr<std::string> site =
        gemmSite(op, GemmShape{m, n, k, {}, {}}, gemm.getTransA(),
                 gemm.getTransB(), bias);
    if (failed(site))
      return failure();
    std::string call;
    if (c && !bias)
      call = fmt("kernels::broadcastTo({0}, {1}, {2}, {3}, {4}, {5}, {6});\n  ",
                 pointer(c), shapeOf(c), rankOf(c), shapeOf(gemm), rankOf(gemm),
                 typeOf(gemm).getElementTypeBitWidth() / 8, pointer(gemm));
    call += fmt("kernels::gemm({0}, {1}, {2}, {3}, {4}, {5:e17}, {6:e17})",
                *site, pointer(gemm.getA()), pointer(gemm.getB()),
                bias ? pointer(c) : "nullptr", pointer(gemm), alpha,
                c && !bias ? beta : 0.0);
    return std::optional<std::string>(call);
  }
  if (isa<ConvOp, ConvTransposeOp, ConvWeightGradOp, MaxPoolOp, AveragePoolOp,
          MaxPoolGradOp, AveragePoolGradOp, GlobalAveragePoolOp, BatchNormOp,
          BatchNormTrainOp, BatchNormTrainGradOp, InstanceNormOp>(op))
    return op->emitError("'")
           << op->getName() << "' is not supported by the CUDA target yet";
  // The runtime's kernels take shapes of up to kMaxRank dimensions
  // (runtime/cuda/Cuda.h).
  for (Type type :
       llvm::concat<Type>(op->getOperandTypes(), op->getResultTypes()))
    if (auto tensor = dyn_cast<RankedTensorType>(type);
        tensor && tensor.getRank() > kMaxKernelRank)
      return op->emitError("the CUDA target's kernels take tensors of up to ")
             << kMaxKernelRank << " dimensions; this op has one of "
             << tensor.getRank();
  return std::optional<std::string>();
}

LogicalResult
mlir::pipe::emitCUDAStage(func::FuncOp func, StringRef name,
                          const llvm::StringMap<std::string> &parameterData,
                          StageArtifacts &artifacts, CUDAStageArtifacts &cuda) {
  return CUDAStageEmitter(func, name, parameterData, artifacts, cuda).run();
}
