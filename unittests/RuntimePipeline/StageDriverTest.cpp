//===- StageDriverTest.cpp - the stage driver and the MPI transport -------===//
//
// Each test runs in a process of its own (one lit test per case), as one
// MPI rank started without mpirun (a singleton).
//
//===----------------------------------------------------------------------===//

#include "StageDriver.h"
#include "Transport.h"

#include "gtest/gtest.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
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

/// The toy stage's forward pass: loss = x . w, and its gradient with
/// respect to w, x (the weights hold w, two floats).
bool forward(char *, char *weights, const void *const *in, void *const *out,
             int64_t, std::string &) {
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
TEST(StageDriver, TrainsAStage) {
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
  ASSERT_EQ(runStage(table, argv.size() - 1, argv.data()), 0);

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
  std::unique_ptr<Transport> transport = createMPITransport(argc, argv, error);
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
}

} // namespace
