//===- ShapeUtil.h - shape arithmetic shared by the CPU kernels -*- C++ -*-===//

#ifndef PIPE_RUNTIME_CPU_SHAPEUTIL_H
#define PIPE_RUNTIME_CPU_SHAPEUTIL_H

#include <cstdint>

namespace pipe_rt {
namespace cpu {

/// The product of `count` extents (1 for none).
inline int64_t product(const int64_t *values, int count) {
  int64_t result = 1;
  for (int i = 0; i < count; ++i)
    result *= values[i];
  return result;
}

/// a / b rounded up, for non-negative a and positive b.
inline int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

} // namespace cpu
} // namespace pipe_rt

#endif // PIPE_RUNTIME_CPU_SHAPEUTIL_H
