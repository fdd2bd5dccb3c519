//===- StageTable.h - what a generated stage gives the driver ---*- C++ -*-===//
//
// Part of the pipe runtime. A pipeline stage's generated code holds only
// its model: its compute functions (forward, backward, update) and these
// tables, which say what each function reads and writes and in what order
// the stage runs them. The stage driver (StageDriver.h) does the rest.
//
//===----------------------------------------------------------------------===//

#ifndef PIPE_RUNTIME_PIPELINE_STAGETABLE_H
#define PIPE_RUNTIME_PIPELINE_STAGETABLE_H

#include "Npy.h"

#include <cstdint>
#include <string>
#include <vector>

namespace pipe_rt {

/// A compute function: `in` and `out` point at its arguments and results;
/// results that update parameters are written into `weights` directly.
/// Returns false and sets `error` on bad data (a label out of range).
using StageFunction = bool (*)(char *arena, char *weights,
                               const void *const *in, void *const *out,
                               int64_t microbatch, std::string &error);

/// What an argument or result of a compute function is.
enum class PortKind {
  /// A graph input (argument), read from `--inputs`.
  Input,
  /// A graph output (result, inference), written to `--outputs`.
  Output,
  /// The loss (a result of the forward pass of the stage that computes it).
  Loss,
  /// A value the forward pass keeps for the backward pass of the same
  /// microbatch (`index` numbers it).
  Stash,
  /// A tensor received from stage `peer` (argument) or sent to it (result),
  /// the `index`-th transfer of that kind of the function.
  Recv,
  Send,
  /// A parameter's gradient (`name` is "grad.<parameter>"): a result of the
  /// backward pass, summed over the microbatches, and an argument of the
  /// update, averaged.
  Gradient,
  /// The step number (update argument, int64 scalar, from 1), in host
  /// memory on every device: the update's kernels take it by value.
  Step,
};

/// One argument or result.
struct Port {
  PortKind kind;
  /// The graph input or output, or the gradient; empty otherwise.
  const char *name;
  int index;
  int peer;
  DType dtype;
  std::vector<int64_t> shape;

  int64_t bytes() const;
};

/// One function of the stage; `run` is null where the stage has none.
struct FunctionTable {
  StageFunction run = nullptr;
  std::vector<Port> args, results;
};

/// Phases of a stage's steps (as the compiler's Phase enum).
enum class StepPhase { Forward = 0, Backward = 1, Update = 2 };

/// An entry of the stage's program: run a step, or post the `send`-th send
/// of an earlier step with the next step's receives.
struct ProgramEntry {
  bool post;
  StepPhase phase;
  int64_t microbatch;
  int send;
};

/// A parameter the stage writes back with `--save-onnx`.
struct SavedParameter {
  const char *name;
  int64_t offset, bytes;
};

/// Everything the driver needs to run one stage.
struct StageTable {
  int index = 0, numStages = 1;
  /// The device of the cluster it stands for, and its kind (for messages).
  const char *device = "", *kind = "";
  /// A CUDA stage's GPU: its index on the stage's host, and the
  /// architecture the stage's code is built for (80 for sm_80).
  int gpu = 0, arch = 0;
  /// The stages it exchanges tensors with over NCCL (CUDA stages on other
  /// GPUs); every other peer is reached over MPI.
  std::vector<int> ncclPeers;
  bool training = false;
  /// Microbatches per training step (the program's).
  int64_t microbatches = 1;
  FunctionTable forward, backward, update;
  std::vector<ProgramEntry> program;
  int64_t weightBytes = 0, arenaBytes = 0;
  /// The parameters this stage owns and saves.
  std::vector<SavedParameter> saved;
  /// What the stage's code sets up once its device exists, before any
  /// step (the CUDA target's cuBLASLt plans); false with `error` set if it
  /// cannot. Null for nothing.
  bool (*prepare)(std::string &error) = nullptr;
};

} // namespace pipe_rt

#endif // PIPE_RUNTIME_PIPELINE_STAGETABLE_H
