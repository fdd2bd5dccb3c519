//===- Transport.h - tensors between pipeline stages ------------*- C++ -*-===//
//
// Part of the pipe runtime. The transport's contract is NCCL's, so that a
// schedule proven for one holds for the other:
// - messages between a pair of stages match in order, per direction, with
//   no tags;
// - a send may block until its receive is posted;
// - the sends and receives that must progress together are posted as one
//   group, and completion is waited on.
//
// The caller waits for a group's receives when it posts the group, and for
// its sends when it posts the next one (or finishes the sends): a stage
// computes while the results of its last step travel. Waiting later for
// a send only removes orderings from the schedule --pipe-verify-schedule
// proves, in which each group completes whole before the stage goes on;
// every transfer still waits for the same posts, so a proven schedule
// still completes.
//
//===----------------------------------------------------------------------===//

#ifndef PIPE_RUNTIME_PIPELINE_TRANSPORT_H
#define PIPE_RUNTIME_PIPELINE_TRANSPORT_H

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace pipe_rt {

class Device;
struct StageTable;

/// One send or receive of a group.
struct Message {
  bool send = false;
  int peer = 0;
  void *data = nullptr;
  size_t bytes = 0;
};

/// Moves tensors between the stages of one pipeline.
class Transport {
public:
  virtual ~Transport() = default;

  /// This stage's index and the number of stages.
  virtual int rank() const = 0;
  virtual int size() const = 0;

  /// Posts `group` and waits until its receives and the sends of the
  /// group before have completed. Its own sends may still be in flight:
  /// their bytes must stay as they are until the next exchange or
  /// finishSends returns. Returns an empty string, or what failed.
  virtual std::string exchange(const std::vector<Message> &group) = 0;

  /// Waits until every send posted has completed.
  virtual std::string finishSends() = 0;

  /// The largest of `value` over the stages.
  virtual int64_t maxOverStages(int64_t value) = 0;

  /// Gathers `bytes` of every stage at stage `root`, in stage order
  /// (`gathered` is filled at `root` only).
  virtual std::string gather(const std::vector<char> &bytes, int root,
                             std::vector<std::vector<char>> &gathered) = 0;
};

/// The MPI transport, over MPI_COMM_WORLD: point-to-point messages of one
/// tag, so MPI's non-overtaking rule keeps each direction in order.
/// Initializes MPI; the transport's end finalizes it (MPITransport.cpp, in
/// its own library, which only pipelines of several stages link).
/// For a stage whose device is not the host, it stages its messages
/// through host memory (createStagedTransport).
std::unique_ptr<Transport> createMPITransport(int &argc, char **&argv,
                                              const StageTable &table,
                                              Device &device,
                                              std::string &error);

/// How a stage's main() makes its transport for the stage `table`
/// describes. The messages' data is in the memory of `device`, the
/// stage's.
using TransportFactory = std::unique_ptr<Transport> (*)(int &argc, char **&argv,
                                                        const StageTable &table,
                                                        Device &device,
                                                        std::string &error);

/// `inner`, which moves host memory, for a stage whose tensors live on
/// `device`: each group's sends are copied to the host before they are
/// posted, and its receives to the device once they arrive. Host copies
/// of sends stay until the sends complete.
std::unique_ptr<Transport>
createStagedTransport(std::unique_ptr<Transport> inner, Device &device);

/// The transport of a pipeline of one stage, which has no peers.
std::unique_ptr<Transport> createLocalTransport();

} // namespace pipe_rt

#endif // PIPE_RUNTIME_PIPELINE_TRANSPORT_H
