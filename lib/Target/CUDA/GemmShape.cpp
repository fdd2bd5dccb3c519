//===- GemmShape.cpp - a numpy matmul as one GEMM call site ---------------===//

#include "pipe/Target/CUDA/GemmShape.h"

#include "llvm/ADT/SmallVector.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::pipe;

std::optional<GemmShape>
mlir::pipe::matmulGemmShape(llvm::ArrayRef<int64_t> a,
                            llvm::ArrayRef<int64_t> b,
                            llvm::ArrayRef<int64_t> y) {
  // 1-D operands: a [K] is a row [1, K], b [K] a column [K, 1].
  GemmShape shape;
  int64_t ra = a.size(), rb = b.size();
  shape.m = ra >= 2 ? a[ra - 2] : 1;
  shape.k = a.back();
  shape.n = rb >= 2 ? b.back() : 1;
  int64_t yBatch = y.size() - (ra >= 2) - (rb >= 2);
  int64_t aBatch = std::max<int64_t>(ra - 2, 0);
  int64_t bBatch = std::max<int64_t>(rb - 2, 0);
  // Each batch dimension of Y, innermost first, with the operands'
  // strides along it (0 where one broadcasts).
  llvm::SmallVector<GemmBatch> dims(yBatch);
  int64_t sa = shape.m * shape.k, sb = shape.k * shape.n,
          sy = shape.m * shape.n;
  for (int64_t d = yBatch - 1; d >= 0; --d) {
    int64_t da = d - (yBatch - aBatch), db = d - (yBatch - bBatch);
    int64_t ea = da >= 0 ? a[da] : 1, eb = db >= 0 ? b[db] : 1;
    dims[d] = {y[d], ea == 1 ? 0 : sa, eb == 1 ? 0 : sb, sy};
    sa *= ea;
    sb *= eb;
    sy *= y[d];
  }
  // Dimensions of extent 1 go; neighbours every operand walks
  // contiguously (or not at all) merge.
  llvm::SmallVector<GemmBatch> merged;
  for (const GemmBatch &dim : dims) {
    if (dim.count == 1)
      continue;
    if (!merged.empty()) {
      GemmBatch &last = merged.back();
      auto joins = [&](int64_t outer, int64_t inner) {
        return outer == inner * dim.count;
      };
      if (joins(last.a, dim.a) && joins(last.b, dim.b) &&
          joins(last.y, dim.y)) {
        last = {last.count * dim.count, dim.a, dim.b, dim.y};
        continue;
      }
    }
    merged.push_back(dim);
  }
  if (merged.size() > 2)
    return std::nullopt;
  if (!merged.empty())
    shape.inner = merged.back();
  if (merged.size() == 2)
    shape.outer = merged.front();
  return shape;
}
