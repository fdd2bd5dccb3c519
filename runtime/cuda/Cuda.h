//===- Cuda.h - what the CUDA runtime's sources share -----------*- C++ -*-===//
//
// Part of the pipe runtime, CUDA side. Every source here is compiled with
// the stage that uses it, for that stage's GPU architecture alone (nvcc
// -gencode, or clang for sm_70), so the runtime holds machine code for no
// other GPU.
//
// A stage runs on one GPU with one compute stream: every kernel and copy
// of its functions goes on that stream, in program order, and the host
// waits only where it reads a result (the loss, an index check, outputs).
//
//===----------------------------------------------------------------------===//

#ifndef PIPE_RUNTIME_CUDA_CUDA_H
#define PIPE_RUNTIME_CUDA_CUDA_H

#include <cuda_runtime.h>

#include <cstdint>
#include <limits>
#include <string>

namespace pipe_rt {
namespace cuda {

/// The stage's compute stream.
cudaStream_t computeStream();

/// Records the first CUDA error of the stage; the driver reports it at the
/// next synchronization (CudaDevice).
void noteError(cudaError_t status, const char *what);
/// Records a failure that is not a CUDA error code (cuBLASLt's, NCCL's).
void noteFailure(const std::string &message);
/// The first error noted, or an empty string.
std::string firstError();

/// Threads per block of the elementwise and data-movement kernels.
constexpr int kBlock = 256;

/// Blocks for a grid-stride loop over `count` items: enough to fill the
/// GPU a few times over, never more than the items need.
unsigned gridFor(int64_t count);

/// Launch-error check after a kernel launch.
inline void checkLaunch(const char *kernel) {
  cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess)
    noteError(status, kernel);
}

/// A grid-stride loop over [0, count): `for (int64_t i : GridStride(n))`.
struct GridStride {
  struct Iterator {
    int64_t at, step;
    __device__ int64_t operator*() const { return at; }
    __device__ Iterator &operator++() {
      at += step;
      return *this;
    }
    __device__ bool operator!=(const Iterator &end) const {
      return at < end.at;
    }
  };
  int64_t count;
  __device__ explicit GridStride(int64_t count) : count(count) {}
  __device__ Iterator begin() const {
    return {int64_t(blockIdx.x) * blockDim.x + threadIdx.x,
            int64_t(gridDim.x) * blockDim.x};
  }
  __device__ Iterator end() const { return {count, 0}; }
};

/// `combine` of `value` over the block's threads (blockDim.x a multiple
/// of 32, at most 1024), in every thread: within each warp, then over the
/// warps' results, which `shared` (32 values) holds. `identity` changes
/// nothing it is combined with.
template <typename T, typename Combine>
__device__ T blockReduce(T value, T *shared, T identity, Combine combine) {
  for (int offset = 16; offset > 0; offset /= 2)
    value = combine(value, __shfl_xor_sync(0xffffffffu, value, offset));
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  __syncthreads();
  if (lane == 0)
    shared[warp] = value;
  __syncthreads();
  int warps = blockDim.x / 32;
  value = lane < warps ? shared[lane] : identity;
  for (int offset = 16; offset > 0; offset /= 2)
    value = combine(value, __shfl_xor_sync(0xffffffffu, value, offset));
  return value;
}

/// The sum of `value` over the block's threads.
template <typename T> __device__ T blockSum(T value, T *shared) {
  return blockReduce(value, shared, T(0), [](T a, T b) { return a + b; });
}

/// The largest `value` over the block's threads, NaN if any is NaN.
template <typename T> __device__ T blockMax(T value, T *shared) {
  T lowest = std::numeric_limits<T>::has_infinity
                 ? -std::numeric_limits<T>::infinity()
                 : std::numeric_limits<T>::lowest();
  return blockReduce(value, shared, lowest,
                     [](T a, T b) { return (a != a || a > b) ? a : b; });
}

/// Device scratch memory, stream-ordered: freed after the work before its
/// end on the compute stream.
class Scratch {
public:
  explicit Scratch(int64_t bytes);
  ~Scratch();
  Scratch(const Scratch &) = delete;
  Scratch &operator=(const Scratch &) = delete;
  char *data() const { return pointer; }

private:
  char *pointer = nullptr;
};

/// Copies on the compute stream: device to device.
void copy(void *to, const void *from, int64_t bytes);

/// Element `index` of device array `data`, read on the host (waits for
/// the stream).
template <typename T> T fetch(const T *data, int64_t index) {
  T value{};
  cudaError_t status = cudaMemcpyAsync(&value, data + index, sizeof(T),
                                       cudaMemcpyDeviceToHost, computeStream());
  if (status == cudaSuccess)
    status = cudaStreamSynchronize(computeStream());
  if (status != cudaSuccess)
    noteError(status, "reading an element");
  return value;
}

/// Out-of-range labels and indices: a kernel that meets one records the
/// smallest flat position in the stage's slot (device memory, kNoIndexError
/// when there is none) with atomicMin.
constexpr unsigned long long kNoIndexError = ~0ull;
unsigned long long *indexErrorSlot();
/// Waits for the stream and reads the slot: false, with *bad set and the
/// slot reset, if a kernel recorded a position.
bool readIndexError(int64_t *bad);

/// Up to this many dimensions in the index arithmetic of kernels.
constexpr int kMaxRank = 8;

/// A shape and per-dimension strides, passed to kernels by value.
struct Layout {
  int rank = 0;
  int64_t dims[kMaxRank] = {};
  int64_t strides[kMaxRank] = {};

  /// The offset of flat (row-major over `dims`) index `index`.
  __host__ __device__ int64_t offsetOf(int64_t index) const {
    int64_t offset = 0;
    for (int d = rank - 1; d >= 0; --d) {
      offset += (index % dims[d]) * strides[d];
      index /= dims[d];
    }
    return offset;
  }
};

/// The row-major strides of `shape`, and the layout of `shape` read
/// through numpy broadcasting from an operand of shape `from` (stride 0
/// on broadcast dimensions).
Layout rowMajor(const int64_t *shape, int rank);
Layout broadcastLayout(const int64_t *shape, int rank, const int64_t *from,
                       int fromRank);

} // namespace cuda
} // namespace pipe_rt

#endif // PIPE_RUNTIME_CUDA_CUDA_H
