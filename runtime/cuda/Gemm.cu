//===- Gemm.cu - matrix products through cuBLASLt call sites --------------===//

#include "Cuda.h"
#include "Gemm.h"

#include <cublasLt.h>

#include <numeric>

using namespace pipe_rt;
using namespace pipe_rt::cuda;

namespace pipe_rt {
namespace cuda {
/// A site's cuBLASLt objects: the operation, the layouts of its operands
/// in cuBLASLt's order (B^T, A^T, Y^T) and the heuristic's algorithm.
struct Plan {
  cublasLtMatmulDesc_t operation = nullptr;
  cublasLtMatrixLayout_t first = nullptr, second = nullptr, result = nullptr;
  cublasLtMatmulAlgo_t algorithm;
};
} // namespace cuda
} // namespace pipe_rt

namespace {
cublasLtHandle_t handle = nullptr;
void *workspace = nullptr;
/// cuBLASLt's workspace, shared by every site of the stage (they run in
/// order on one stream): 32 MiB, what Hopper's kernels may ask for.
constexpr size_t kWorkspaceBytes = size_t(32) << 20;

/// cuBLAS's name of `status` (cublasGetStatusName is in libcublas, which
/// stages do not link).
const char *statusName(cublasStatus_t status) {
  switch (status) {
  case CUBLAS_STATUS_SUCCESS:
    return "CUBLAS_STATUS_SUCCESS";
  case CUBLAS_STATUS_NOT_INITIALIZED:
    return "CUBLAS_STATUS_NOT_INITIALIZED";
  case CUBLAS_STATUS_ALLOC_FAILED:
    return "CUBLAS_STATUS_ALLOC_FAILED";
  case CUBLAS_STATUS_INVALID_VALUE:
    return "CUBLAS_STATUS_INVALID_VALUE";
  case CUBLAS_STATUS_ARCH_MISMATCH:
    return "CUBLAS_STATUS_ARCH_MISMATCH";
  case CUBLAS_STATUS_EXECUTION_FAILED:
    return "CUBLAS_STATUS_EXECUTION_FAILED";
  case CUBLAS_STATUS_NOT_SUPPORTED:
    return "CUBLAS_STATUS_NOT_SUPPORTED";
  case CUBLAS_STATUS_INTERNAL_ERROR:
    return "CUBLAS_STATUS_INTERNAL_ERROR";
  default:
    return "cuBLAS error";
  }
}

/// The largest power of two, up to the buffers' 64 bytes, that divides
/// every offset (in bytes) a site's operand is read at.
uint32_t alignmentOf(int64_t elementBytes, int64_t stride, int64_t outer) {
  int64_t g = 64;
  for (int64_t step : {stride, outer})
    if (step)
      g = std::gcd(g, step * elementBytes);
  return uint32_t(g & -g);
}

/// Makes the layout of a column-major rows x cols matrix with leading
/// dimension `ld`, `batch` of them `stride` elements apart.
cublasStatus_t makeLayout(cublasLtMatrixLayout_t &layout, cudaDataType type,
                          int64_t rows, int64_t cols, int64_t ld, int64_t batch,
                          int64_t stride) {
  cublasStatus_t status =
      cublasLtMatrixLayoutCreate(&layout, type, rows, cols, ld);
  if (status != CUBLAS_STATUS_SUCCESS || batch == 1)
    return status;
  int32_t count = int32_t(batch);
  status = cublasLtMatrixLayoutSetAttribute(
      layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count));
  if (status != CUBLAS_STATUS_SUCCESS)
    return status;
  return cublasLtMatrixLayoutSetAttribute(
      layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
      sizeof(stride));
}

cublasStatus_t buildPlan(GemmSite &site, Plan &plan) {
  bool f64 = site.element == GemmElement::F64;
  cudaDataType type = f64 ? CUDA_R_64F : CUDA_R_32F;
  // fp32 with TF32 off: the exact mode.
  cublasComputeType_t compute = f64 ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F;
  int64_t bytes = f64 ? 8 : 4;
  cublasStatus_t status =
      cublasLtMatmulDescCreate(&plan.operation, compute, type);
  auto set = [&](cublasLtMatmulDescAttributes_t attribute, const void *value,
                 size_t size) {
    if (status == CUBLAS_STATUS_SUCCESS)
      status = cublasLtMatmulDescSetAttribute(plan.operation, attribute, value,
                                              size);
  };
  // cuBLASLt's first operand is B^T, its second A^T (see Gemm.h).
  cublasOperation_t opFirst = site.transB ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t opSecond = site.transA ? CUBLAS_OP_T : CUBLAS_OP_N;
  set(CUBLASLT_MATMUL_DESC_TRANSA, &opFirst, sizeof(opFirst));
  set(CUBLASLT_MATMUL_DESC_TRANSB, &opSecond, sizeof(opSecond));
  cublasLtEpilogue_t epilogue =
      site.epilogue == Epilogue::Bias       ? CUBLASLT_EPILOGUE_BIAS
      : site.epilogue == Epilogue::BiasRelu ? CUBLASLT_EPILOGUE_RELU_BIAS
      : site.epilogue == Epilogue::BiasGelu ? CUBLASLT_EPILOGUE_GELU_BIAS
                                            : CUBLASLT_EPILOGUE_DEFAULT;
  set(CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue));
  if (status != CUBLAS_STATUS_SUCCESS)
    return status;
  int64_t n = site.n, m = site.m, k = site.k;
  status =
      site.transB
          ? makeLayout(plan.first, type, k, n, k, site.batch, site.strideB)
          : makeLayout(plan.first, type, n, k, n, site.batch, site.strideB);
  if (status == CUBLAS_STATUS_SUCCESS)
    status =
        site.transA
            ? makeLayout(plan.second, type, m, k, m, site.batch, site.strideA)
            : makeLayout(plan.second, type, k, m, k, site.batch, site.strideA);
  if (status == CUBLAS_STATUS_SUCCESS)
    status = makeLayout(plan.result, type, n, m, n, site.batch, site.strideY);
  if (status != CUBLAS_STATUS_SUCCESS)
    return status;

  cublasLtMatmulPreference_t preference = nullptr;
  status = cublasLtMatmulPreferenceCreate(&preference);
  auto prefer = [&](cublasLtMatmulPreferenceAttributes_t attribute,
                    const void *value, size_t size) {
    if (status == CUBLAS_STATUS_SUCCESS)
      status = cublasLtMatmulPreferenceSetAttribute(preference, attribute,
                                                    value, size);
  };
  size_t workspaceBytes = kWorkspaceBytes;
  prefer(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspaceBytes,
         sizeof(workspaceBytes));
  // Operands start on 64-byte boundaries of the arena or the weights;
  // batches and outer products may move them by less.
  uint32_t alignB = alignmentOf(bytes, site.strideB, site.outerB);
  uint32_t alignA = alignmentOf(bytes, site.strideA, site.outerA);
  uint32_t alignY = alignmentOf(bytes, site.strideY, site.outerY);
  prefer(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &alignB, sizeof(alignB));
  prefer(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &alignA, sizeof(alignA));
  prefer(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &alignY, sizeof(alignY));
  prefer(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &alignY, sizeof(alignY));
  cublasLtMatmulHeuristicResult_t result = {};
  int found = 0;
  if (status == CUBLAS_STATUS_SUCCESS)
    status = cublasLtMatmulAlgoGetHeuristic(
        handle, plan.operation, plan.first, plan.second, plan.result,
        plan.result, preference, 1, &result, &found);
  if (preference)
    cublasLtMatmulPreferenceDestroy(preference);
  if (status == CUBLAS_STATUS_SUCCESS && found == 0)
    return CUBLAS_STATUS_NOT_SUPPORTED;
  plan.algorithm = result.algo;
  return status;
}
} // namespace

bool pipe_rt::cuda::prepareGemms(GemmSite *const *sites, int count,
                                 std::string &error) {
  if (count == 0)
    return true;
  cublasStatus_t status = CUBLAS_STATUS_SUCCESS;
  if (!handle && (status = cublasLtCreate(&handle)) != CUBLAS_STATUS_SUCCESS) {
    error = std::string("cannot start cuBLASLt: ") + statusName(status);
    return false;
  }
  if (!workspace) {
    cudaError_t allocated = cudaMalloc(&workspace, kWorkspaceBytes);
    if (allocated != cudaSuccess) {
      error = std::string("cannot allocate cuBLASLt's workspace: ") +
              cudaGetErrorString(allocated);
      return false;
    }
  }
  for (int i = 0; i < count; ++i) {
    GemmSite &site = *sites[i];
    site.plan = new Plan();
    if ((status = buildPlan(site, *site.plan)) != CUBLAS_STATUS_SUCCESS) {
      error =
          std::string("cuBLASLt has no algorithm for the matrix product '") +
          site.name + "' (m " + std::to_string(site.m) + ", n " +
          std::to_string(site.n) + ", k " + std::to_string(site.k) +
          ", batch " + std::to_string(site.batch) + "): " + statusName(status);
      return false;
    }
  }
  return true;
}

void pipe_rt::cuda::gemm(const GemmSite &site, const void *a, const void *b,
                         const void *bias, void *y, double alpha, double beta) {
  const Plan &plan = *site.plan;
  if (bias) {
    cublasStatus_t status = cublasLtMatmulDescSetAttribute(
        plan.operation, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias));
    if (status != CUBLAS_STATUS_SUCCESS)
      noteFailure(std::string("cuBLASLt cannot set the bias of '") + site.name +
                  "': " + statusName(status));
  }
  bool f64 = site.element == GemmElement::F64;
  int64_t bytes = f64 ? 8 : 4;
  float alpha32 = float(alpha), beta32 = float(beta);
  const void *alphaValue = f64 ? static_cast<const void *>(&alpha)
                               : static_cast<const void *>(&alpha32);
  const void *betaValue = f64 ? static_cast<const void *>(&beta)
                              : static_cast<const void *>(&beta32);
  for (int64_t o = 0; o < site.outer; ++o) {
    const char *first = static_cast<const char *>(b) + o * site.outerB * bytes;
    const char *second = static_cast<const char *>(a) + o * site.outerA * bytes;
    char *result = static_cast<char *>(y) + o * site.outerY * bytes;
    cublasStatus_t status = cublasLtMatmul(
        handle, plan.operation, alphaValue, first, plan.first, second,
        plan.second, betaValue, result, plan.result, result, plan.result,
        &plan.algorithm, workspace, kWorkspaceBytes, computeStream());
    if (status != CUBLAS_STATUS_SUCCESS) {
      noteFailure(std::string("cuBLASLt failed in the matrix product '") +
                  site.name + "': " + statusName(status));
      return;
    }
  }
}
