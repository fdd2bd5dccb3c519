//===- MemoryPlan.cpp - static buffer assignment for a stage --------------===//

#include "pipe/Target/Common/MemoryPlan.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::pipe;

MemoryPlan mlir::pipe::planMemory(ArrayRef<BufferRequest> requests,
                                  int64_t alignment) {
  MemoryPlan plan;
  SmallVector<const BufferRequest *> order;
  for (const BufferRequest &request : requests) {
    order.push_back(&request);
    plan.totalBytes += llvm::alignTo(request.bytes, alignment);
  }
  // Largest first keeps fragmentation low (the usual greedy-by-size
  // heuristic of static memory planners); ties go in program order.
  llvm::stable_sort(order, [](const BufferRequest *a, const BufferRequest *b) {
    return a->bytes > b->bytes;
  });

  struct Placed {
    int64_t offset, end, firstStep, lastStep;
  };
  SmallVector<Placed> placed;
  for (const BufferRequest *request : order) {
    int64_t size =
        llvm::alignTo(std::max<int64_t>(request->bytes, 1), alignment);
    // Buffers alive at the same time as this one, by offset.
    SmallVector<Placed> overlapping;
    for (const Placed &other : placed)
      if (other.firstStep <= request->lastStep &&
          request->firstStep <= other.lastStep)
        overlapping.push_back(other);
    llvm::sort(overlapping, [](const Placed &a, const Placed &b) {
      return a.offset < b.offset;
    });
    int64_t offset = 0;
    for (const Placed &other : overlapping) {
      if (offset + size <= other.offset)
        break;
      offset = std::max(offset, other.end);
    }
    placed.push_back(
        {offset, offset + size, request->firstStep, request->lastStep});
    plan.offsets[request->value] = offset;
    plan.peakBytes = std::max(plan.peakBytes, offset + size);
  }
  return plan;
}
