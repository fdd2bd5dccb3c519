//===- CudaDevice.cu - a GPU as a stage's device --------------------------===//

#include "Cuda.h"
#include "CudaRuntime.h"

#include <algorithm>

using namespace pipe_rt;
using namespace pipe_rt::cuda;

namespace {
cudaStream_t stream = nullptr;
std::string firstErrorText;
unsigned long long *indexSlot = nullptr;

template <typename T>
__global__ void addInto(T *sum, const T *addend, int64_t count) {
  for (int64_t i : GridStride(count))
    sum[i] += addend[i];
}

template <typename T>
__global__ void scaleBy(T *data, int64_t count, T factor) {
  for (int64_t i : GridStride(count))
    data[i] *= factor;
}

class CudaDevice : public Device {
public:
  bool isHost() const override { return false; }

  void *allocate(int64_t bytes) override {
    void *data = nullptr;
    cudaError_t status = cudaMalloc(&data, size_t(bytes));
    if (status != cudaSuccess) {
      error = "the GPU has no " + std::to_string(bytes) +
              " bytes free: " + cudaGetErrorString(status);
      cudaGetLastError();
      return nullptr;
    }
    return data;
  }
  void release(void *data) override {
    // Work queued on the buffer finishes first.
    cudaStreamSynchronize(stream);
    cudaFree(data);
  }

  void copyIn(void *to, const void *from, int64_t bytes) override {
    noteError(cudaMemcpyAsync(to, from, size_t(bytes), cudaMemcpyHostToDevice,
                              stream),
              "copying to the GPU");
  }
  void copyOut(void *to, const void *from, int64_t bytes) override {
    cudaError_t status = cudaMemcpyAsync(to, from, size_t(bytes),
                                         cudaMemcpyDeviceToHost, stream);
    if (status == cudaSuccess)
      status = cudaStreamSynchronize(stream);
    noteError(status, "copying from the GPU");
  }
  void zero(void *data, int64_t bytes) override {
    noteError(cudaMemsetAsync(data, 0, size_t(bytes), stream), "clearing");
  }

  void accumulate(DType dtype, void *sum, const void *addend,
                  int64_t count) override {
    if (dtype == DType::F64)
      addInto<<<gridFor(count), kBlock, 0, stream>>>(
          static_cast<double *>(sum), static_cast<const double *>(addend),
          count);
    else
      addInto<<<gridFor(count), kBlock, 0, stream>>>(
          static_cast<float *>(sum), static_cast<const float *>(addend), count);
    checkLaunch("addInto");
  }
  void scale(DType dtype, void *data, int64_t count, double factor) override {
    if (dtype == DType::F64)
      scaleBy<<<gridFor(count), kBlock, 0, stream>>>(
          static_cast<double *>(data), count, factor);
    else
      scaleBy<<<gridFor(count), kBlock, 0, stream>>>(
          static_cast<float *>(data), count, static_cast<float>(factor));
    checkLaunch("scaleBy");
  }

  std::string synchronize() override {
    noteError(cudaStreamSynchronize(stream), "running the stage's kernels");
    return firstError();
  }
  std::string lastError() const override { return error; }

private:
  std::string error;
};
} // namespace

cudaStream_t pipe_rt::cuda::computeStream() { return stream; }

void pipe_rt::cuda::noteError(cudaError_t status, const char *what) {
  if (status == cudaSuccess)
    return;
  cudaGetLastError();
  if (firstErrorText.empty())
    firstErrorText =
        std::string("CUDA error ") + what + ": " + cudaGetErrorString(status);
}

void pipe_rt::cuda::noteFailure(const std::string &message) {
  if (firstErrorText.empty())
    firstErrorText = message;
}

std::string pipe_rt::cuda::firstError() { return firstErrorText; }

unsigned pipe_rt::cuda::gridFor(int64_t count) {
  static int blocksPerGPU = [] {
    int device = 0, processors = 1;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&processors, cudaDevAttrMultiProcessorCount, device);
    return 8 * processors;
  }();
  int64_t needed = (count + kBlock - 1) / kBlock;
  return unsigned(
      std::max<int64_t>(1, std::min<int64_t>(needed, blocksPerGPU)));
}

pipe_rt::cuda::Scratch::Scratch(int64_t bytes) {
  noteError(cudaMallocAsync(reinterpret_cast<void **>(&pointer),
                            size_t(std::max<int64_t>(bytes, 1)), stream),
            "allocating scratch memory");
}

pipe_rt::cuda::Scratch::~Scratch() {
  if (pointer)
    cudaFreeAsync(pointer, stream);
}

void pipe_rt::cuda::copy(void *to, const void *from, int64_t bytes) {
  noteError(cudaMemcpyAsync(to, from, size_t(bytes), cudaMemcpyDeviceToDevice,
                            stream),
            "copying on the GPU");
}

unsigned long long *pipe_rt::cuda::indexErrorSlot() { return indexSlot; }

bool pipe_rt::cuda::readIndexError(int64_t *bad) {
  unsigned long long value = fetch(indexSlot, 0);
  if (value == kNoIndexError)
    return true;
  *bad = int64_t(value);
  noteError(cudaMemsetAsync(indexSlot, 0xff, sizeof(*indexSlot), stream),
            "resetting the index check");
  return false;
}

Layout pipe_rt::cuda::rowMajor(const int64_t *shape, int rank) {
  Layout layout;
  layout.rank = rank;
  int64_t stride = 1;
  for (int d = rank - 1; d >= 0; --d) {
    layout.dims[d] = shape[d];
    layout.strides[d] = stride;
    stride *= shape[d];
  }
  return layout;
}

Layout pipe_rt::cuda::broadcastLayout(const int64_t *shape, int rank,
                                      const int64_t *from, int fromRank) {
  Layout source = rowMajor(from, fromRank), layout;
  layout.rank = rank;
  for (int d = 0; d < rank; ++d) {
    int f = d - (rank - fromRank);
    layout.dims[d] = shape[d];
    layout.strides[d] = f >= 0 && from[f] != 1 ? source.strides[f] : 0;
  }
  return layout;
}

std::unique_ptr<Device> pipe_rt::cuda::createDevice(const StageTable &table,
                                                    std::string &error) {
  int gpu = table.gpu, count = 0;
  cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    error = std::string("no usable CUDA GPU on this host: ") +
            cudaGetErrorString(status);
    return nullptr;
  }
  if (gpu < 0 || gpu >= count) {
    error = "the plan puts this stage on GPU " + std::to_string(gpu) +
            ", and this host has " + std::to_string(count);
    return nullptr;
  }
  // Machine code for sm_XY runs on GPUs of major X and minor Y or later.
  cudaDeviceProp properties;
  if ((status = cudaGetDeviceProperties(&properties, gpu)) != cudaSuccess) {
    error = "cannot query GPU " + std::to_string(gpu) + ": " +
            cudaGetErrorString(status);
    return nullptr;
  }
  if (properties.major != table.arch / 10 ||
      properties.minor < table.arch % 10) {
    error = "this stage is built for sm_" + std::to_string(table.arch) + " (" +
            table.kind + "), and GPU " + std::to_string(gpu) +
            " of this host is " + properties.name + " (sm_" +
            std::to_string(properties.major * 10 + properties.minor) +
            "); give the device's \"gpu\" in the cluster file";
    return nullptr;
  }
  if ((status = cudaSetDevice(gpu)) != cudaSuccess ||
      (status = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking)) !=
          cudaSuccess ||
      (status = cudaMalloc(reinterpret_cast<void **>(&indexSlot),
                           sizeof(*indexSlot))) != cudaSuccess ||
      (status = cudaMemsetAsync(indexSlot, 0xff, sizeof(*indexSlot), stream)) !=
          cudaSuccess ||
      (status = cudaStreamSynchronize(stream)) != cudaSuccess) {
    error = "cannot start GPU " + std::to_string(gpu) + ": " +
            cudaGetErrorString(status);
    return nullptr;
  }
  return std::make_unique<CudaDevice>();
}
