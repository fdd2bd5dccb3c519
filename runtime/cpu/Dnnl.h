//===- Dnnl.h - what the runtime's oneDNN files share -----------*- C++ -*-===//
//
// Internal to runtime/cpu: the one oneDNN engine and stream that every
// primitive of the process runs on (DnnlConv.cpp, DnnlMatmul.cpp,
// DnnlPool.cpp), and the key of a float in a call site's key.
//
//===----------------------------------------------------------------------===//

#ifndef PIPE_RUNTIME_CPU_DNNL_H
#define PIPE_RUNTIME_CPU_DNNL_H

#include <oneapi/dnnl/dnnl.hpp>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <unordered_map>

namespace pipe_rt {
namespace cpu {

dnnl::engine &cpuEngine();
dnnl::stream &cpuStream();

/// `value`'s bits in hex: two floats share a key only when they are equal.
inline std::string floatKey(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  char text[16];
  std::snprintf(text, sizeof(text), "%08x", bits);
  return text;
}

/// Runs `primitive` on `args` and waits for it.
inline void run(const dnnl::primitive &primitive,
                const std::unordered_map<int, dnnl::memory> &args) {
  primitive.execute(cpuStream(), args);
  cpuStream().wait();
}

} // namespace cpu
} // namespace pipe_rt

#endif // PIPE_RUNTIME_CPU_DNNL_H
