//===- HostDevice.cpp - the host as a stage's device ----------------------===//

#include "Device.h"

#include <cstdlib>
#include <cstring>

using namespace pipe_rt;

namespace {
template <typename T>
void addInto(void *sum, const void *addend, int64_t count) {
  auto *to = static_cast<T *>(sum);
  const auto *from = static_cast<const T *>(addend);
#pragma omp parallel for if (count > 32768)
  for (int64_t e = 0; e < count; ++e)
    to[e] += from[e];
}

template <typename T> void scaleBy(void *data, int64_t count, T factor) {
  auto *to = static_cast<T *>(data);
#pragma omp parallel for if (count > 32768)
  for (int64_t e = 0; e < count; ++e)
    to[e] *= factor;
}

class HostDevice : public Device {
public:
  bool isHost() const override { return true; }

  void *allocate(int64_t bytes) override {
    // aligned_alloc wants a multiple of the alignment.
    size_t rounded = (size_t(bytes) + 63) / 64 * 64;
    void *data = std::aligned_alloc(64, rounded);
    if (!data)
      error = "the host has no " + std::to_string(bytes) + " bytes free";
    return data;
  }
  void release(void *data) override { std::free(data); }

  void copyIn(void *to, const void *from, int64_t bytes) override {
    std::memcpy(to, from, bytes);
  }
  void copyOut(void *to, const void *from, int64_t bytes) override {
    std::memcpy(to, from, bytes);
  }
  void zero(void *data, int64_t bytes) override { std::memset(data, 0, bytes); }

  void accumulate(DType dtype, void *sum, const void *addend,
                  int64_t count) override {
    if (dtype == DType::F64)
      addInto<double>(sum, addend, count);
    else
      addInto<float>(sum, addend, count);
  }
  void scale(DType dtype, void *data, int64_t count, double factor) override {
    if (dtype == DType::F64)
      scaleBy<double>(data, count, factor);
    else
      scaleBy<float>(data, count, static_cast<float>(factor));
  }

  std::string synchronize() override { return ""; }
  std::string lastError() const override { return error; }

private:
  std::string error;
};
} // namespace

std::unique_ptr<Device> pipe_rt::createHostDevice() {
  return std::make_unique<HostDevice>();
}
