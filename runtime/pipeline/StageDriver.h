//===- StageDriver.h - run one pipeline stage -------------------*- C++ -*-===//
//
// Part of the pipe runtime: the main() of every pipeline stage. It reads
// the stage's weights and inputs (all checked before any work), runs the
// stage's program of steps with its compute functions, moves tensors to
// and from the other stages through the transport, and for training sums
// the gradients over the step's microbatches, applies the update, reports
// the loss and saves the trained model.
//
//   stageK [--inputs DIR] [--outputs DIR] [--weights FILE] [--steps N]
//          [--metrics FILE] [--save-onnx FILE] [--model FILE]
//          [--threads N] [--trace FILE] [--bench N]
//          [--check-inputs [--check-device]]
//
// `--check-inputs` checks the inputs and exits without starting MPI, so
// the launcher rejects bad inputs before any process starts; with
// `--check-device` (the launcher's on one host) it also starts the stage's
// device, so a missing GPU fails there too. `--trace`
// writes the measured timeline of every stage (its steps, and its waits for
// transfers on a track of their own) as one Chrome trace, in the format of
// the planner's simulated timeline. `--bench N` (inference) times N more
// runs over all microbatches and prints their median.
//
//===----------------------------------------------------------------------===//

#ifndef PIPE_RUNTIME_PIPELINE_STAGEDRIVER_H
#define PIPE_RUNTIME_PIPELINE_STAGEDRIVER_H

#include "Device.h"
#include "StageTable.h"
#include "Transport.h"

namespace pipe_rt {

/// Runs the stage `table` describes; returns the process's exit status. A
/// pipeline of several stages makes its transport with `createTransport`
/// (createMPITransport); one of a single stage needs none.
/// Its tensors live on the device `createDevice` makes (the host when it is
/// null).
int runStage(const StageTable &table, int argc, char **argv,
             TransportFactory createTransport = nullptr,
             DeviceFactory createDevice = nullptr);

} // namespace pipe_rt

#endif // PIPE_RUNTIME_PIPELINE_STAGEDRIVER_H
