//===- NcclTransport.cu - tensors between GPU stages over NCCL ------------===//
//
// A CUDA stage's transport. Its NCCL peers (StageTable::ncclPeers, CUDA
// stages on other GPUs, which the compiler chose) each share a two-rank
// communicator with it; every other peer is reached over MPI, staged
// through host memory. NCCL refuses two ranks of one communicator on one
// GPU, so stages that share a GPU are never NCCL peers.
//
// - Bootstrap: for each pair, in one global order (by lower stage, then
//   higher), the two stages first compare their GPUs over MPI: a pair that
//   turns out to share one (two "hosts" of the cluster file run on one
//   machine) stays on MPI. Otherwise the lower stage makes the
//   ncclUniqueId and sends it over MPI, both join the communicator, and a
//   byte each way connects the pair, so that no later group blocks on
//   NCCL's lazy connection. The global order keeps the blocking joins free
//   of cycles.
// - A group's NCCL sends and receives are posted as one NCCL group, each
//   communicator on a stream of its own (no peer's transfer waits behind
//   another's on one stream), after the compute stream's work so far (an
//   event); the compute stream's later work waits for all of them (events).
//   The MPI part of the group is posted meanwhile.
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
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <thread>

using namespace pipe_rt;
using namespace pipe_rt::cuda;

namespace {
/// This process's GPU, as a pair compares it: host name and PCI address.
struct GpuIdentity {
  char host[64] = {};
  int domain = 0, bus = 0, device = 0;

  bool operator==(const GpuIdentity &other) const {
    return std::strncmp(host, other.host, sizeof(host)) == 0 &&
           domain == other.domain && bus == other.bus && device == other.device;
  }
};

GpuIdentity thisGpu() {
  GpuIdentity identity;
  gethostname(identity.host, sizeof(identity.host) - 1);
  int gpu = 0;
  cudaGetDevice(&gpu);
  cudaDeviceProp properties;
  if (cudaGetDeviceProperties(&properties, gpu) == cudaSuccess) {
    identity.domain = properties.pciDomainID;
    identity.bus = properties.pciBusID;
    identity.device = properties.pciDeviceID;
  }
  return identity;
}

class NcclTransport : public Transport {
public:
  NcclTransport(std::unique_ptr<Transport> mpi, int rank)
      : mpi(std::move(mpi)), me(rank) {
    if (const char *text = std::getenv("PIPE_TRANSFER_TIMEOUT_S"))
      timeoutSeconds = std::max(1.0, std::atof(text));
  }
  ~NcclTransport() override {
    for (auto &[peer, link] : links) {
      ncclCommDestroy(link.comm);
      release(link);
    }
    if (ready)
      cudaEventDestroy(ready);
  }

  /// Joins a communicator with every NCCL peer; an error names the peer.
  std::string connect(std::vector<int> peers);

  int rank() const override { return mpi->rank(); }
  int size() const override { return mpi->size(); }

  std::string exchange(const std::vector<Message> &group) override {
    std::vector<Message> overNccl, overMpi;
    std::vector<int> peers;
    for (const Message &message : group) {
      bool nccl = links.count(message.peer) != 0;
      (nccl ? overNccl : overMpi).push_back(message);
      if (nccl &&
          std::find(peers.begin(), peers.end(), message.peer) == peers.end())
        peers.push_back(message.peer);
    }
    if (!overNccl.empty()) {
      // After what the compute stream has written.
      cudaEventRecord(ready, computeStream());
      for (int peer : peers)
        cudaStreamWaitEvent(links[peer].stream, ready, 0);
      ncclResult_t result = ncclGroupStart();
      for (const Message &message : overNccl) {
        if (result != ncclSuccess)
          break;
        Link &link = links[message.peer];
        int peer = message.peer < me ? 0 : 1;
        result = message.send ? ncclSend(message.data, message.bytes, ncclInt8,
                                         peer, link.comm, link.stream)
                              : ncclRecv(message.data, message.bytes, ncclInt8,
                                         peer, link.comm, link.stream);
      }
      ncclResult_t ended = ncclGroupEnd();
      if (result == ncclSuccess)
        result = ended;
      if (result != ncclSuccess)
        return failed(overNccl, std::string("posting failed: ") +
                                    ncclGetErrorString(result));
      for (int peer : peers)
        cudaEventRecord(links[peer].done, links[peer].stream);
    }
    // The MPI part, and the last group's MPI sends.
    std::string error = mpi->exchange(overMpi);
    if (!error.empty() || overNccl.empty())
      return error;
    if (std::string waited = waitFor(overNccl, peers); !waited.empty())
      return waited;
    // Kernels that read what arrived run after it.
    for (int peer : peers)
      cudaStreamWaitEvent(computeStream(), links[peer].done, 0);
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
  /// A NCCL peer: the pair's communicator, its stream, and the event of
  /// its last group.
  struct Link {
    ncclComm_t comm = nullptr;
    cudaStream_t stream = nullptr;
    cudaEvent_t done = nullptr;
  };

  static void release(Link &link) {
    if (link.done)
      cudaEventDestroy(link.done);
    if (link.stream)
      cudaStreamDestroy(link.stream);
  }

  /// Waits for the NCCL group of `messages` with `peers`: an error, naming
  /// them, on an asynchronous NCCL error or past the timeout.
  std::string waitFor(const std::vector<Message> &messages,
                      const std::vector<int> &peers) {
    auto start = std::chrono::steady_clock::now();
    auto pause = std::chrono::microseconds(20);
    while (true) {
      cudaError_t status = cudaSuccess;
      for (int peer : peers)
        if (status == cudaSuccess)
          status = cudaEventQuery(links[peer].done);
      if (status == cudaSuccess)
        return "";
      if (status != cudaErrorNotReady)
        return failed(messages, cudaGetErrorString(status));
      for (auto &[peer, link] : links) {
        ncclResult_t async = ncclSuccess;
        ncclCommGetAsyncError(link.comm, &async);
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
    for (auto &[peer, link] : links) {
      ncclCommAbort(link.comm);
      release(link);
    }
    links.clear();
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
  std::map<int, Link> links;
  cudaEvent_t ready = nullptr;
};

std::string NcclTransport::connect(std::vector<int> peers) {
  std::sort(peers.begin(), peers.end());
  peers.erase(std::unique(peers.begin(), peers.end()), peers.end());
  if (peers.empty())
    return "";
  if (cudaEventCreateWithFlags(&ready, cudaEventDisableTiming) != cudaSuccess)
    return "cannot make the communication events";
  GpuIdentity mine = thisGpu();
  // Pairs in one global order: the lower peers first, then the higher,
  // each in order.
  for (int peer : peers) {
    GpuIdentity theirs;
    MPI_Sendrecv(&mine, sizeof(mine), MPI_BYTE, peer, 1, &theirs,
                 sizeof(theirs), MPI_BYTE, peer, 1, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    // NCCL refuses two ranks on one GPU: such a pair stays on MPI.
    if (mine == theirs)
      continue;
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
    Link link;
    if (cudaStreamCreateWithFlags(&link.stream, cudaStreamNonBlocking) !=
            cudaSuccess ||
        cudaEventCreateWithFlags(&link.done, cudaEventDisableTiming) !=
            cudaSuccess) {
      release(link);
      return "cannot make the stream of the transfers with stage " +
             std::to_string(peer);
    }
    ncclResult_t result =
        ncclCommInitRank(&link.comm, 2, id, me < peer ? 0 : 1);
    if (result != ncclSuccess) {
      release(link);
      return "NCCL cannot connect to stage " + std::to_string(peer) + ": " +
             ncclGetErrorString(result);
    }
    links[peer] = link;
    // A byte each way: NCCL connects a pair on its first transfer.
    Scratch bytes(2);
    int other = me < peer ? 1 : 0;
    result = ncclGroupStart();
    if (result == ncclSuccess)
      result =
          ncclSend(bytes.data(), 1, ncclInt8, other, link.comm, link.stream);
    if (result == ncclSuccess)
      result = ncclRecv(bytes.data() + 1, 1, ncclInt8, other, link.comm,
                        link.stream);
    ncclResult_t ended = ncclGroupEnd();
    if (result == ncclSuccess)
      result = ended;
    if (result == ncclSuccess &&
        cudaStreamSynchronize(link.stream) != cudaSuccess)
      result = ncclUnhandledCudaError;
    if (result != ncclSuccess)
      return "NCCL cannot reach stage " + std::to_string(peer) + ": " +
             ncclGetErrorString(result);
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
