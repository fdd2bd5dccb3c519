//===- GemmShape.h - a numpy matmul as one GEMM call site -------*- C++ -*-===//
//
// How the CUDA target runs a pipe.matmul (numpy matmul: 1-D promotion and
// broadcasting batch dimensions) as one cuBLASLt call site
// (runtime/cuda/Gemm.h): m, n, k, and at most two levels of batches, the
// inner one a strided batch, the outer one a loop.
//
//===----------------------------------------------------------------------===//

#ifndef PIPE_TARGET_CUDA_GEMMSHAPE_H
#define PIPE_TARGET_CUDA_GEMMSHAPE_H

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <optional>

namespace mlir {
namespace pipe {

/// One level of batches: how many, and how far apart (in elements) A, B
/// and Y are from one to the next; 0 where an operand is shared.
struct GemmBatch {
  int64_t count = 1, a = 0, b = 0, y = 0;
};

/// Product (o, i) of a site multiplies A[m,k] at o * outer.a + i * inner.a
/// by B[k,n] at o * outer.b + i * inner.b into Y[m,n] at
/// o * outer.y + i * inner.y.
struct GemmShape {
  int64_t m = 1, n = 1, k = 1;
  GemmBatch inner, outer;
};

/// The site of a matmul of shapes `a` and `b` with result shape `y`, or
/// nullopt where its batch dimensions need more than two levels (they
/// merge where every operand walks them contiguously, or not at all).
std::optional<GemmShape> matmulGemmShape(llvm::ArrayRef<int64_t> a,
                                         llvm::ArrayRef<int64_t> b,
                                         llvm::ArrayRef<int64_t> y);

} // namespace pipe
} // namespace mlir

#endif // PIPE_TARGET_CUDA_GEMMSHAPE_H
