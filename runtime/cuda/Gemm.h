//===- Gemm.h - matrix products through cuBLASLt call sites -----*- C++ -*-===//
//
// Part of the pipe runtime, CUDA side. Every MatMul and Gemm of a stage is
// one call site: the compiler writes its static description, and at
// start-up (prepareGemms) the runtime builds its cuBLASLt descriptors and
// layouts and asks the heuristic for an algorithm once. A site the
// heuristic has no algorithm for fails start-up, naming the site.
//
// Tensors are row-major; cuBLASLt's matrices column-major. A row-major
// Y[m,n] = A[m,k] B[k,n] is the column-major Y^T[n,m] = B^T A^T, so a
// site hands cuBLASLt B before A with m and n swapped: no data moves.
//
//===----------------------------------------------------------------------===//

#ifndef PIPE_RUNTIME_CUDA_GEMM_H
#define PIPE_RUNTIME_CUDA_GEMM_H

#include <cstdint>
#include <string>

namespace pipe_rt {
namespace cuda {

/// What cuBLASLt adds after the product (its epilogue).
enum class Epilogue {
  /// Y = alpha * A B + beta * Y.
  None,
  /// Y = alpha * A B + bias[n], the bias broadcast over the rows.
  Bias,
  /// The same, then max(., 0) or GELU (tanh approximation).
  BiasRelu,
  BiasGelu,
};

enum class GemmElement { F32, F64 };

/// One matrix product of a stage: `outer` x `batch` products of
/// op(A)[m,k] op(B)[k,n] into Y[m,n], where op transposes A ([k,m] in
/// memory) or B ([n,k]) when asked. Product (o, b) reads A at
/// o * outerA + b * strideA elements, B likewise, and writes Y at
/// o * outerY + b * strideY; a stride of 0 shares an operand.
struct GemmSite {
  const char *name;
  GemmElement element;
  int64_t m, n, k;
  bool transA, transB;
  int64_t batch, strideA, strideB, strideY;
  int64_t outer, outerA, outerB, outerY;
  Epilogue epilogue;
  /// The cuBLASLt objects (made by prepareGemms).
  struct Plan *plan = nullptr;
};

/// Builds the plans of `count` sites; false with `error` naming the site
/// that has none.
bool prepareGemms(GemmSite *const *sites, int count, std::string &error);

/// Runs a prepared site on the compute stream. `bias` is the Bias
/// epilogue's vector of n elements (null otherwise); `beta` scales what Y
/// holds before (the None epilogue only).
void gemm(const GemmSite &site, const void *a, const void *b, const void *bias,
          void *y, double alpha, double beta);

} // namespace cuda
} // namespace pipe_rt

#endif // PIPE_RUNTIME_CUDA_GEMM_H
