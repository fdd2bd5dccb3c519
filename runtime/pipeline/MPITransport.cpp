//===- MPITransport.cpp - tensors between pipeline stages over MPI --------===//

#include "Transport.h"
#include "Device.h"

#include <mpi.h>

#include <climits>

using namespace pipe_rt;

namespace {
class MPITransport : public Transport {
public:
  MPITransport() {
    MPI_Comm_rank(MPI_COMM_WORLD, &rankValue);
    MPI_Comm_size(MPI_COMM_WORLD, &sizeValue);
  }
  ~MPITransport() override { MPI_Finalize(); }

  int rank() const override { return rankValue; }
  int size() const override { return sizeValue; }

  std::string exchange(const std::vector<Message> &group) override {
    for (const Message &message : group)
      if (message.bytes > size_t(INT_MAX))
        return "a message of " + std::to_string(message.bytes) +
               " bytes is past MPI's 2 GiB per message";
    // Waited on now: this group's receives and the last group's sends.
    std::vector<MPI_Request> waited = std::move(sendsInFlight);
    std::vector<Message> waitedMessages = std::move(sendMessages);
    sendsInFlight.clear();
    sendMessages.clear();
    for (const Message &message : group) {
      int count = static_cast<int>(message.bytes);
      MPI_Request request;
      int status = message.send
                       ? MPI_Isend(message.data, count, MPI_BYTE, message.peer,
                                   kTag, MPI_COMM_WORLD, &request)
                       : MPI_Irecv(message.data, count, MPI_BYTE, message.peer,
                                   kTag, MPI_COMM_WORLD, &request);
      if (status != MPI_SUCCESS)
        return describe(status, message);
      (message.send ? sendsInFlight : waited).push_back(request);
      (message.send ? sendMessages : waitedMessages).push_back(message);
    }
    return waitAll(waited, waitedMessages);
  }

  /// An empty group waits for the last group's sends alone.
  std::string finishSends() override { return exchange({}); }

  int64_t maxOverStages(int64_t value) override {
    long long in = value, out = 0;
    MPI_Allreduce(&in, &out, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    return out;
  }

  std::string gather(const std::vector<char> &bytes, int root,
                     std::vector<std::vector<char>> &gathered) override {
    if (bytes.size() > size_t(INT_MAX))
      return "gathering more than 2 GiB from one stage";
    int count = static_cast<int>(bytes.size());
    std::vector<int> counts(sizeValue), offsets(sizeValue);
    MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, root,
               MPI_COMM_WORLD);
    std::vector<char> all;
    if (rankValue == root) {
      long long total = 0;
      for (int i = 0; i < sizeValue; ++i) {
        offsets[i] = static_cast<int>(total);
        total += counts[i];
      }
      if (total > INT_MAX)
        return "gathering more than 2 GiB of trained parameters";
      all.resize(total);
    }
    MPI_Gatherv(bytes.data(), count, MPI_BYTE, all.data(), counts.data(),
                offsets.data(), MPI_BYTE, root, MPI_COMM_WORLD);
    if (rankValue == root) {
      gathered.resize(sizeValue);
      for (int i = 0; i < sizeValue; ++i)
        gathered[i].assign(all.begin() + offsets[i],
                           all.begin() + offsets[i] + counts[i]);
    }
    return "";
  }

private:
  static constexpr int kTag = 0;

  /// Waits for `requests`, the transfers of `messages`.
  std::string waitAll(std::vector<MPI_Request> &requests,
                      const std::vector<Message> &messages) {
    if (requests.empty())
      return "";
    std::vector<MPI_Status> statuses(requests.size());
    int status = MPI_Waitall(static_cast<int>(requests.size()),
                             requests.data(), statuses.data());
    if (status == MPI_SUCCESS)
      return "";
    // The transfer that failed, where MPI says which.
    if (status == MPI_ERR_IN_STATUS)
      for (size_t i = 0; i < requests.size(); ++i)
        if (statuses[i].MPI_ERROR != MPI_SUCCESS &&
            statuses[i].MPI_ERROR != MPI_ERR_PENDING)
          return describe(statuses[i].MPI_ERROR, messages[i]);
    return describe(status, messages.front());
  }

  std::string describe(int status, const Message &message) {
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(status, text, &length);
    return std::string("MPI ") + (message.send ? "send to" : "receive from") +
           " stage " + std::to_string(message.peer) +
           " failed: " + std::string(text, length);
  }

  int rankValue = 0, sizeValue = 1;
  /// The sends of the last group, not yet waited on.
  std::vector<MPI_Request> sendsInFlight;
  std::vector<Message> sendMessages;
};
} // namespace

std::unique_ptr<Transport>
pipe_rt::createMPITransport(int &argc, char **&argv, const StageTable &table,
                            Device &device, std::string &error) {
  int provided = 0;
  if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) !=
      MPI_SUCCESS) {
    error = "MPI_Init failed";
    return nullptr;
  }
  // Errors come back as codes, to be reported with the stage.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  std::unique_ptr<Transport> transport = std::make_unique<MPITransport>();
  // MPI reads and writes host memory: a stage on a GPU stages its tensors.
  if (!device.isHost())
    return createStagedTransport(std::move(transport), device);
  return transport;
}
