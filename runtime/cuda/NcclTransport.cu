//===- NcclTransport.cu - tensors between GPU stages over NCCL ------------===//
//
// A CUDA stage's transport. Its NCCL peers (StageTable::ncclPeers, CUDA
// stages on other GPUs, which the compiler chose) each share a two-rank
// communicator with it; every other peer is reached over MPI, staged
// through host memory. NCCL refuses two ranks of one communicator on one
// GPU, so stages that share a GPU are never NCCL peers.
//
// - Bootstrap: for each pair, in one global order (by lower stage, then
//   higher), the lower stage makes the ncclUniqueId and sends it over MPI;
//   both then join the communicator. The global order keeps the blocking
//   joins free of cycles.
// - A group's NCCL sends and receives are posted as one NCCL group on the
//   communication stream, after the compute stream's work so far (an
//   event), and the compute stream's later work waits for the group (an
//   event). The MPI part of the group is posted meanwhile.
// - The host waits for the group as the transport contract says, polling:
//   an asynchronous NCCL error, or no progress within the timeout
//   ($PIPE_TRANSFER_TIMEOUT_S, 600 s by default), aborts the communicators
//   and fails, naming the peers, instead of hanging.
//
//===----------------------------------------------------------------------===//

#include "Cuda.h"
#include "CudaRuntime.h"
#include "StageTable.h"

#include <mpi.h>
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <thread>

using namespace pipe_rt;
using namespace pipe_rt::cuda;

namespace {
class NcclTransport : public Transport {
public:
  NcclTransport(std::unique_ptr<Transport> mpi, int rank)
      : mpi(std::move(mpi)), me(rank) {
    if (const char *text = std::getenv("PIPE_TRANSFER_TIMEOUT_S"))
      timeoutSeconds = std::max(1.0, std::atof(text));
  }
  ~NcclTransport() override {
    for (auto &[peer, comm] : comms)
      ncclCommDestroy(comm);
    if (ready)
      cudaEventDestroy(ready);
    if (done)
      cudaEventDestroy(done);
    if (stream)
      cudaStreamDestroy(stream);
  }

  /// Joins a communicator with every NCCL peer; an error names the peer.
  std::string connect(std::vector<int> peers);

  int rank() const override { return mpi->rank(); }
  int size() const override { return mpi->size(); }

  std::string exchange(const std::vector<Message> &group) override {
    std::vector<Message> overNccl, overMpi;
    for (const Message &message : group)
      (comms.count(message.peer) ? overNccl : overMpi).push_back(message);
    if (!overNccl.empty()) {
      // After what the compute stream has written.
      cudaEventRecord(ready, computeStream());
      cudaStreamWaitEvent(stream, ready, 0);
      ncclResult_t result = ncclGroupStart();
      for (const Message &message : overNccl) {
        if (result != ncclSuccess)
          break;
        ncclComm_t comm = comms[message.peer];
        int peer = message.peer < me ? 0 : 1;
        result = message.send ? ncclSend(message.data, message.bytes, ncclInt8,
                                         peer, comm, stream)
                              : ncclRecv(message.data, message.bytes, ncclInt8,
                                         peer, comm, stream);
      }
      ncclResult_t ended = ncclGroupEnd();
      if (result == ncclSuccess)
        result = ended;
      if (result != ncclSuccess)
        return failed(overNccl, std::string("posting failed: ") +
                                    ncclGetErrorString(result));
      cudaEventRecord(done, stream);
    }
    // The MPI part, and the last group's MPI sends.
    std::string error = mpi->exchange(overMpi);
    if (!error.empty() || overNccl.empty())
      return error;
    if (std::string waited = waitFor(overNccl); !waited.empty())
      return waited;
    // Kernels that read what arrived run after it.
    cudaStreamWaitEvent(computeStream(), done, 0);
    return "";
  }

  std::string finishSends() override { return mpi->finishSends(); }

  int64_t maxOverStages(int64_t value) override {
    return mpi->maxOverStages(value);
  }

  std::string gather(const std::vector<char> &bytes, int root,
                     std::vector<std::vector<char>> &gathered) override {
    return mpi->gather(bytes, root, gathered);
  }

private:
  /// Waits for the NCCL group of `messages`: an error, naming their peers,
  /// on an asynchronous NCCL error or past the timeout.
  std::string waitFor(const std::vector<Message> &messages) {
    auto start = std::chrono::steady_clock::now();
    auto pause = std::chrono::microseconds(20);
    while (true) {
      cudaError_t status = cudaEventQuery(done);
      if (status == cudaSuccess)
        return "";
      if (status != cudaErrorNotReady)
        return failed(messages, cudaGetErrorString(status));
      for (auto &[peer, comm] : comms) {
        ncclResult_t async = ncclSuccess;
        ncclCommGetAsyncError(comm, &async);
        if (async != ncclSuccess && async != ncclInProgress)
          return failed(messages, ncclGetErrorString(async));
      }
      double waited = std::chrono::duration<double>(
                          std::chrono::steady_clock::now() - start)
                          .count();
      if (waited > timeoutSeconds)
        return failed(messages, "no progress in " +
                                    std::to_string(int(timeoutSeconds)) +
                                    " s (is the peer alive?)");
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::microseconds(2000));
    }
  }

  /// Aborts every communicator and says which transfers failed.
  std::string failed(const std::vector<Message> &messages,
                     const std::string &why) {
    for (auto &[peer, comm] : comms)
      ncclCommAbort(comm);
    comms.clear();
    std::string peers;
    for (const Message &message : messages) {
      std::string one = std::string(message.send ? "send to" : "receive from") +
                        " stage " + std::to_string(message.peer);
      if (peers.find(one) == std::string::npos)
        peers += (peers.empty() ? "" : ", ") + one;
    }
    return "NCCL " + peers + " failed: " + why;
  }

  std::unique_ptr<Transport> mpi;
  int me;
  double timeoutSeconds = 600;
  std::map<int, ncclComm_t> comms;
  cudaStream_t stream = nullptr;
  cudaEvent_t ready = nullptr, done = nullptr;
};

std::string NcclTransport::connect(std::vector<int> peers) {
  std::sort(peers.begin(), peers.end());
  peers.erase(std::unique(peers.begin(), peers.end()), peers.end());
  if (peers.empty())
    return "";
  if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) !=
          cudaSuccess ||
      cudaEventCreateWithFlags(&ready, cudaEventDisableTiming) != cudaSuccess ||
      cudaEventCreateWithFlags(&done, cudaEventDisableTiming) != cudaSuccess)
    return "cannot make the communication stream";
  // Pairs in one global order: with the lower peers first, then the
  // higher, each ordered by the peer.
  for (int peer : peers) {
    ncclUniqueId id;
    if (me < peer) {
      ncclResult_t result = ncclGetUniqueId(&id);
      if (result != ncclSuccess)
        return std::string("NCCL cannot make an id for stage ") +
               std::to_string(peer) + ": " + ncclGetErrorString(result);
      MPI_Send(&id, sizeof(id), MPI_BYTE, peer, 1, MPI_COMM_WORLD);
    } else {
      MPI_Recv(&id, sizeof(id), MPI_BYTE, peer, 1, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
    }
    ncclComm_t comm;
    ncclResult_t result = ncclCommInitRank(&comm, 2, id, me < peer ? 0 : 1);
    if (result != ncclSuccess)
      return "NCCL cannot connect to stage " + std::to_string(peer) + ": " +
             ncclGetErrorString(result);
    comms[peer] = comm;
  }
  return "";
}
} // namespace

std::unique_ptr<Transport>
pipe_rt::cuda::createTransport(int &argc, char **&argv, const StageTable &table,
                               Device &device, std::string &error) {
  std::unique_ptr<Transport> mpi =
      createMPITransport(argc, argv, table, device, error);
  if (!mpi)
    return nullptr;
  auto transport = std::make_unique<NcclTransport>(std::move(mpi), table.index);
  if (!(error = transport->connect(table.ncclPeers)).empty())
    return nullptr;
  return transport;
}
