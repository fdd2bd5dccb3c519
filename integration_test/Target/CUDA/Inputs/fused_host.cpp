// Runs every fused step of a CUDA stage's fused.h on the host.
//
//   fused_host WEIGHTS.bin OUT_DIR IN0.npy IN1.npy ...
//
// fused.h (given with -include) lists its steps; each operand pointer is
// `in[k]` (the k-th .npy's data) or `(weights + N)`. Writes each step's
// result as OUT_DIR/<step>.bin and prints one line per step. A step that
// reads a buffer of the arena is skipped (its input is not at hand).

#include "Npy.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

using namespace pipe_rt;

int main(int argc, char **argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: fused_host WEIGHTS OUT_DIR INPUTS...\n");
    return 2;
  }
  std::ifstream weightsFile(argv[1], std::ios::binary);
  std::vector<char> weights((std::istreambuf_iterator<char>(weightsFile)),
                            std::istreambuf_iterator<char>());
  std::vector<NpyArray> inputs(argc - 3);
  for (int i = 3; i < argc; ++i)
    if (std::string error = readNpy(argv[i], inputs[i - 3]); !error.empty()) {
      std::fprintf(stderr, "fused_host: %s\n", error.c_str());
      return 1;
    }
  for (const FusedStepInfo *step = kFusedSteps; step->name; ++step) {
    std::vector<const void *> operands;
    for (int k = 0; k < step->operands; ++k) {
      const char *pointer = step->operandPointers[k];
      unsigned index = 0;
      long offset = 0;
      if (std::sscanf(pointer, "in[%u]", &index) == 1 && index < inputs.size())
        operands.push_back(inputs[index].data.data());
      else if (std::sscanf(pointer, "(weights + %ld)", &offset) == 1)
        operands.push_back(weights.data() + offset);
      else
        break;
    }
    if (int(operands.size()) != step->operands) {
      std::printf("skipped %s\n", step->name);
      continue;
    }
    // Results are at most 8 bytes an element.
    std::vector<char> result(step->count * 8);
    step->host(operands.data(), result.data());
    std::string path = std::string(argv[2]) + "/" + step->name + ".bin";
    std::FILE *file = std::fopen(path.c_str(), "wb");
    std::fwrite(result.data(), 1, result.size(), file);
    std::fclose(file);
    std::printf("ran %s\n", step->name);
  }
  return 0;
}
