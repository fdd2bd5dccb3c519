//===- transport_bench.cpp - the pipeline transport's cost per message ----===//
//
// Two stages exchange messages through the runtime's MPI transport (stage 0
// sends, stage 1 receives, each message a group of its own, as a step's
// send and receive are) and, for reference, one process copies the same
// bytes with memcpy. Prints, per size, the median microseconds per message
// of both and the transport's bandwidth. Run with two ranks:
//
//   OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
//     mpirun --oversubscribe --bind-to none -np 2
//     build/bin/pipe-transport-bench
//
//===----------------------------------------------------------------------===//

#include "Device.h"
#include "StageTable.h"
#include "Transport.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

using namespace pipe_rt;
using Clock = std::chrono::steady_clock;

static double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

int main(int argc, char **argv) {
  std::string error;
  std::unique_ptr<Device> host = createHostDevice();
  std::unique_ptr<Transport> transport =
      createMPITransport(argc, argv, StageTable(), *host, error);
  if (!transport || transport->size() != 2) {
    std::fprintf(stderr, "transport_bench: run with two MPI ranks%s%s\n",
                 error.empty() ? "" : ": ", error.c_str());
    return 1;
  }
  int rank = transport->rank();
  if (rank == 0)
    std::printf("%10s %12s %12s %10s\n", "bytes", "transport us", "memcpy us",
                "GB/s");
  for (size_t bytes :
       {size_t(4) << 10, size_t(64) << 10, size_t(1) << 20, size_t(16) << 20}) {
    std::vector<char> data(bytes, 1), copy(bytes);
    int repeats = bytes >= (size_t(16) << 20) ? 20 : 200;
    std::vector<double> times;
    for (int r = 0; r < repeats + 5; ++r) {
      transport->maxOverStages(0); // both ranks start each message together
      auto start = Clock::now();
      Message message{rank == 0, 1 - rank, data.data(), bytes};
      if (std::string error = transport->exchange({message}); !error.empty()) {
        std::fprintf(stderr, "transport_bench: %s\n", error.c_str());
        return 1;
      }
      if (r >= 5)
        times.push_back(
            std::chrono::duration<double, std::micro>(Clock::now() - start)
                .count());
    }
    // The sender's last send is waited on here, before its bytes go.
    if (std::string error = transport->finishSends(); !error.empty()) {
      std::fprintf(stderr, "transport_bench: %s\n", error.c_str());
      return 1;
    }
    // The receiver's time covers the whole transfer.
    double transport = median(times);
    std::vector<double> copies;
    for (int r = 0; r < repeats; ++r) {
      auto start = Clock::now();
      std::memcpy(copy.data(), data.data(), bytes);
      copies.push_back(
          std::chrono::duration<double, std::micro>(Clock::now() - start)
              .count());
    }
    if (rank == 1) {
      std::printf("%10zu %12.2f %12.2f %10.2f\n", bytes, transport,
                  median(copies), bytes / transport / 1e3);
      std::fflush(stdout);
    }
  }
  return 0;
}
