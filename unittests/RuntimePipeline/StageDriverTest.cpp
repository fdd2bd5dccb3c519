//===- StageDriverTest.cpp - the stage driver and the MPI transport -------===//
//
// Each test runs in a process of its own (one lit test per case), as one
// MPI rank started without mpirun (a singleton).
//
//===----------------------------------------------------------------------===//

#include "StageDriver.h"
#include "Device.h"
#include "Transport.h"

#include "gtest/gtest.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

using namespace pipe_rt;

namespace {

/// OpenMPI refuses root unless told; the tests run as whoever CI is.
void allowRoot() {
  setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
  setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
}

std::string temporaryFolder() {
  char path[] = "/tmp/pipe-stage-driver-XXXXXX";
  return mkdtemp(path) ? path : "";
}

/// A device whose memory is not the host's, as a GPU's is not: its
/// buffers are host memory, recorded, and whatever the driver hands the
/// functions must be one of them.
class SeparateDevice : public Device {
public:
  static std::set<const void *> &allocations() {
    static std::set<const void *> live;
    return live;
  }
  static int copies;
  static bool owns(const void *data) { return allocations().count(data); }

  bool isHost() const override { return false; }
  void *allocate(int64_t bytes) override {
    void *data = std::malloc(bytes);
    allocations().insert(data);
    return data;
  }
  void release(void *data) override {
    allocations().erase(data);
    std::free(data);
  }
  void copyIn(void *to, const void *from, int64_t bytes) override {
    EXPECT_TRUE(owns(to));
    EXPECT_FALSE(owns(from));
    ++copies;
    std::memcpy(to, from, bytes);
  }
  void copyOut(void *to, const void *from, int64_t bytes) override {
    EXPECT_FALSE(owns(to));
    EXPECT_TRUE(owns(from));
    ++copies;
    std::memcpy(to, from, bytes);
  }
  void zero(void *data, int64_t bytes) override { std::memset(data, 0, bytes); }
  void accumulate(DType, void *sum, const void *addend,
                  int64_t count) override {
    for (int64_t e = 0; e < count; ++e)
      static_cast<float *>(sum)[e] += static_cast<const float *>(addend)[e];
  }
  void scale(DType, void *data, int64_t count, double factor) override {
    for (int64_t e = 0; e < count; ++e)
      static_cast<float *>(data)[e] *= static_cast<float>(factor);
  }
  std::string synchronize() override { return ""; }
  std::string lastError() const override { return ""; }
};
int SeparateDevice::copies = 0;

std::unique_ptr<Device> createSeparateDevice(const StageTable &,
                                             std::string &) {
  return std::make_unique<SeparateDevice>();
}

/// Whether the toy functions' pointers are device memory where they must
/// be: false on the host device.
bool onSeparateDevice = false;
void expectDeviceMemory(const void *data) {
  if (onSeparateDevice) {
    EXPECT_TRUE(SeparateDevice::owns(data));
  }
}

/// The toy stage's forward pass: loss = x . w, and its gradient with
/// respect to w, x (the weights hold w, two floats).
bool forward(char *, char *weights, const void *const *in, void *const *out,
             int64_t, std::string &) {
  for (const void *data : {in[0], static_cast<const void *>(out[0]),
                           static_cast<const void *>(out[1])})
    expectDeviceMemory(data);
  expectDeviceMemory(weights);
  const float *x = static_cast<const float *>(in[0]);
  const float *w = reinterpret_cast<const float *>(weights);
  *static_cast<float *>(out[0]) = x[0] * w[0] + x[1] * w[1];
  float *grad = static_cast<float *>(out[1]);
  grad[0] = x[0];
  grad[1] = x[1];
  return true;
}

/// SGD with lr 0.1 on w, written over the weights.
bool update(char *, char *weights, const void *const *in, void *const *,
            int64_t, std::string &) {
  expectDeviceMemory(in[0]);
  // The step number is a host scalar on every device.
  EXPECT_FALSE(SeparateDevice::owns(in[1]));
  EXPECT_GE(*static_cast<const int64_t *>(in[1]), 1);
  const float *grad = static_cast<const float *>(in[0]);
  float *w = reinterpret_cast<float *>(weights);
  w[0] -= 0.1f * grad[0];
  w[1] -= 0.1f * grad[1];
  return true;
}

/// Writes a float32 .npy file of `shape`.
void writeNpy(const std::string &path, const std::vector<int64_t> &shape,
              const std::vector<float> &values) {
  NpyArray array;
  array.dtype = DType::F32;
  array.shape = shape;
  array.data.assign(reinterpret_cast<const char *>(values.data()),
                    reinterpret_cast<const char *>(values.data()) +
                        values.size() * sizeof(float));
  ASSERT_EQ(pipe_rt::writeNpy(path, array), "");
}

/// A one-stage training program of two microbatches runs its steps, sums
/// the gradients over them, averages them for the update and reports the
/// mean loss of each step before its update.
void trainToyStage(DeviceFactory createDevice) {
  allowRoot();
  std::string folder = temporaryFolder();
  ASSERT_FALSE(folder.empty());
  writeNpy(folder + "/x.npy", {2, 2}, {1, 2, 3, 4});
  {
    std::ofstream weights(folder + "/weights.bin", std::ios::binary);
    float w[2] = {1, 1};
    weights.write(reinterpret_cast<const char *>(w), sizeof(w));
  }
  StageTable table;
  table.device = "c0";
  table.kind = "cpu";
  table.training = true;
  table.microbatches = 2;
  table.forward.run = forward;
  table.forward.args = {{PortKind::Input, "x", 0, 0, DType::F32, {1, 2}}};
  table.forward.results = {
      {PortKind::Loss, "loss", 0, 0, DType::F32, {}},
      {PortKind::Gradient, "grad.w", 0, 0, DType::F32, {2}}};
  table.update.run = update;
  table.update.args = {{PortKind::Gradient, "grad.w", 0, 0, DType::F32, {2}},
                       {PortKind::Step, "step", 0, 0, DType::I64, {}}};
  table.program = {{false, StepPhase::Forward, 0, 0},
                   {false, StepPhase::Forward, 1, 0},
                   {false, StepPhase::Update, 0, 0}};
  table.weightBytes = 8;
  std::string metrics = folder + "/metrics.jsonl";
  std::vector<std::string> args = {
      "stage0",  "--inputs", folder,      "--weights", folder + "/weights.bin",
      "--steps", "2",        "--metrics", metrics};
  // argv ends in a null pointer, as main's does.
  std::vector<char *> argv;
  for (std::string &arg : args)
    argv.push_back(arg.data());
  argv.push_back(nullptr);
  ASSERT_EQ(
      runStage(table, argv.size() - 1, argv.data(), nullptr, createDevice), 0);

  // Step 1: losses 1 + 2 = 3 and 3 + 4 = 7; the mean gradient (2, 3) takes
  // w to (0.8, 0.7). Step 2: losses 2.2 and 5.2.
  std::ifstream file(metrics);
  std::string line;
  std::vector<double> losses;
  while (std::getline(file, line)) {
    size_t at = line.find("\"loss\": ");
    ASSERT_NE(at, std::string::npos) << line;
    losses.push_back(std::atof(line.c_str() + at + 8));
  }
  ASSERT_EQ(losses.size(), 2u);
  EXPECT_NEAR(losses[0], 5.0, 1e-6);
  EXPECT_NEAR(losses[1], 3.7, 1e-6);
}

TEST(StageDriver, TrainsAStage) { trainToyStage(nullptr); }

/// On a device whose memory is not the host's, the functions see device
/// memory only: the inputs, the step number and the loss go through
/// copies, and the losses are the same.
TEST(StageDriver, TrainsAStageOnADevice) {
  onSeparateDevice = true;
  SeparateDevice::copies = 0;
  trainToyStage(createSeparateDevice);
  // Per step: 2 input rows and 2 losses; the weights once.
  EXPECT_EQ(SeparateDevice::copies, 2 * 4 + 1);
  EXPECT_TRUE(SeparateDevice::allocations().empty());
  onSeparateDevice = false;
}

/// The MPI transport moves a group's bytes, here from the one rank to
/// itself, and its collectives work on one stage.
TEST(MPITransport, OneRankExchangesWithItself) {
  // A transport that waited for a group's sends before returning would
  // hang below: the alarm ends the test instead.
  alarm(120);
  allowRoot();
  int argc = 1;
  char name[] = "test";
  char *names[] = {name, nullptr};
  char **argv = names;
  std::string error;
  std::unique_ptr<Device> host = createHostDevice();
  std::unique_ptr<Transport> transport =
      createMPITransport(argc, argv, StageTable(), *host, error);
  ASSERT_TRUE(transport) << error;
  ASSERT_EQ(transport->size(), 1);
  std::vector<float> sent = {1.5f, -2.0f, 3.25f}, received(3, 0.0f);
  EXPECT_EQ(transport->exchange(
                {{true, 0, sent.data(), sent.size() * sizeof(float)},
                 {false, 0, received.data(), received.size() * sizeof(float)}}),
            "");
  EXPECT_EQ(received, sent);
  EXPECT_EQ(transport->finishSends(), "");
  // A group's sends are waited on with the next group: a send of 4 MiB,
  // past what MPI sends before its receive is posted, returns at once, and
  // the next group's receive completes it.
  std::vector<float> large(1 << 20), into(1 << 20, 0.0f);
  for (size_t i = 0; i < large.size(); ++i)
    large[i] = float(i);
  EXPECT_EQ(transport->exchange(
                {{true, 0, large.data(), large.size() * sizeof(float)}}),
            "");
  EXPECT_EQ(transport->exchange(
                {{false, 0, into.data(), into.size() * sizeof(float)}}),
            "");
  EXPECT_EQ(into, large);
  EXPECT_EQ(transport->finishSends(), "");
  EXPECT_EQ(transport->maxOverStages(42), 42);
  std::vector<std::vector<char>> gathered;
  EXPECT_EQ(transport->gather({'a', 'b'}, 0, gathered), "");
  ASSERT_EQ(gathered.size(), 1u);
  EXPECT_EQ(std::string(gathered[0].begin(), gathered[0].end()), "ab");

  // A stage on a device that is not the host moves its tensors through
  // host copies (createMPITransport wraps its transport so for such a
  // device): the bytes arrive in device memory.
  SeparateDevice device;
  SeparateDevice::copies = 0;
  transport = createStagedTransport(std::move(transport), device);
  size_t bytes = 3 * sizeof(float);
  float *deviceSent = static_cast<float *>(device.allocate(bytes));
  float *deviceReceived = static_cast<float *>(device.allocate(bytes));
  float values[3] = {1.5f, -2.0f, 3.25f};
  std::memcpy(deviceSent, values, bytes);
  std::memset(deviceReceived, 0, bytes);
  EXPECT_EQ(transport->exchange({{true, 0, deviceSent, bytes}}), "");
  // The send's host copy was taken when it was posted.
  deviceSent[0] = 99.0f;
  EXPECT_EQ(transport->exchange({{false, 0, deviceReceived, bytes}}), "");
  EXPECT_EQ(transport->finishSends(), "");
  EXPECT_EQ(std::memcmp(deviceReceived, values, bytes), 0);
  EXPECT_EQ(SeparateDevice::copies, 2);
  device.release(deviceSent);
  device.release(deviceReceived);
}

} // namespace
