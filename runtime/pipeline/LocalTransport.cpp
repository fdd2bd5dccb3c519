//===- LocalTransport.cpp - the transport of a one-stage pipeline ---------===//
//
// A pipeline of one stage has no peers: it needs no MPI, and its program
// never transfers a tensor.
//
//===----------------------------------------------------------------------===//

#include "Transport.h"

using namespace pipe_rt;

namespace {
class LocalTransport : public Transport {
public:
  int rank() const override { return 0; }
  int size() const override { return 1; }

  std::string exchange(const std::vector<Message> &group) override {
    if (!group.empty())
      return "a single stage has no stage to " +
             std::string(group.front().send ? "send to" : "receive from");
    return "";
  }

  std::string finishSends() override { return ""; }

  int64_t maxOverStages(int64_t value) override { return value; }

  std::string gather(const std::vector<char> &bytes, int root,
                     std::vector<std::vector<char>> &gathered) override {
    gathered = {bytes};
    return "";
  }
};
} // namespace

std::unique_ptr<Transport> pipe_rt::createLocalTransport() {
  return std::make_unique<LocalTransport>();
}
