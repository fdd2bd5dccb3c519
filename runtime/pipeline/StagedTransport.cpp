//===- StagedTransport.cpp - host-staged transfers for device stages ------===//

#include "Device.h"
#include "Transport.h"

using namespace pipe_rt;

namespace {
class StagedTransport : public Transport {
public:
  StagedTransport(std::unique_ptr<Transport> inner, Device &device)
      : inner(std::move(inner)), device(device) {}

  int rank() const override { return inner->rank(); }
  int size() const override { return inner->size(); }

  std::string exchange(const std::vector<Message> &group) override {
    std::vector<Message> staged = group;
    std::vector<std::vector<char>> sendCopies, receiveCopies;
    for (Message &message : staged) {
      std::vector<char> copy = take(message.bytes);
      if (message.send)
        device.copyOut(copy.data(), message.data, message.bytes);
      message.data = copy.data();
      (message.send ? sendCopies : receiveCopies).push_back(std::move(copy));
    }
    std::string error = inner->exchange(staged);
    if (!error.empty())
      return error;
    // The last group's sends have completed; this group's are in flight.
    for (std::vector<char> &copy : sendsInFlight)
      spare.push_back(std::move(copy));
    sendsInFlight = std::move(sendCopies);
    size_t next = 0;
    for (const Message &message : group)
      if (!message.send) {
        std::vector<char> &copy = receiveCopies[next++];
        device.copyIn(message.data, copy.data(), message.bytes);
        spare.push_back(std::move(copy));
      }
    return "";
  }

  std::string finishSends() override {
    std::string error = inner->finishSends();
    for (std::vector<char> &copy : sendsInFlight)
      spare.push_back(std::move(copy));
    sendsInFlight.clear();
    return error;
  }

  int64_t maxOverStages(int64_t value) override {
    return inner->maxOverStages(value);
  }

  std::string gather(const std::vector<char> &bytes, int root,
                     std::vector<std::vector<char>> &gathered) override {
    return inner->gather(bytes, root, gathered);
  }

private:
  /// A host buffer of `bytes`, reusing a spare one of that size.
  std::vector<char> take(size_t bytes) {
    for (size_t i = 0; i < spare.size(); ++i)
      if (spare[i].size() == bytes) {
        std::vector<char> copy = std::move(spare[i]);
        spare.erase(spare.begin() + i);
        return copy;
      }
    return std::vector<char>(bytes);
  }

  std::unique_ptr<Transport> inner;
  Device &device;
  std::vector<std::vector<char>> sendsInFlight, spare;
};
} // namespace

std::unique_ptr<Transport>
pipe_rt::createStagedTransport(std::unique_ptr<Transport> inner,
                               Device &device) {
  return std::make_unique<StagedTransport>(std::move(inner), device);
}
