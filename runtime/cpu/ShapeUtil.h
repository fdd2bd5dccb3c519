//===- ShapeUtil.h - shape arithmetic shared by the CPU kernels -*- C++ -*-===//

#ifndef PIPE_RUNTIME_CPU_SHAPEUTIL_H
#define PIPE_RUNTIME_CPU_SHAPEUTIL_H

#include <cstdint>
#include <vector>

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

/// The transpose permutation that moves a rank-`rank` tensor's channels
/// (axis 1) last: [0, 2, ..., rank - 1, 1].
inline std::vector<int64_t> channelsLastPerm(int rank) {
  std::vector<int64_t> perm = {0};
  for (int d = 2; d < rank; ++d)
    perm.push_back(d);
  perm.push_back(1);
  return perm;
}

/// Its inverse, which moves the channels from last back to axis 1:
/// [0, rank - 1, 1, ..., rank - 2].
inline std::vector<int64_t> channelsFirstPerm(int rank) {
  std::vector<int64_t> perm = {0, rank - 1};
  for (int d = 1; d < rank - 1; ++d)
    perm.push_back(d);
  return perm;
}

/// `shape` permuted by `perm`: result axis d is shape's axis perm[d].
inline std::vector<int64_t> permuted(const int64_t *shape,
                                     const std::vector<int64_t> &perm) {
  std::vector<int64_t> result;
  for (int64_t d : perm)
    result.push_back(shape[d]);
  return result;
}

} // namespace cpu
} // namespace pipe_rt

#endif // PIPE_RUNTIME_CPU_SHAPEUTIL_H
