//===- Dnnl.h - what the runtime's oneDNN files share -----------*- C++ -*-===//
//
// Internal to runtime/cpu: the one oneDNN engine and stream that every
// primitive of the process runs on (DnnlConv.cpp, DnnlPool.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef PIPE_RUNTIME_CPU_DNNL_H
#define PIPE_RUNTIME_CPU_DNNL_H

#include <oneapi/dnnl/dnnl.hpp>

#include <unordered_map>

namespace pipe_rt {
namespace cpu {

dnnl::engine &cpuEngine();
dnnl::stream &cpuStream();

/// Runs `primitive` on `args` and waits for it.
inline void run(const dnnl::primitive &primitive,
                const std::unordered_map<int, dnnl::memory> &args) {
  primitive.execute(cpuStream(), args);
  cpuStream().wait();
}

} // namespace cpu
} // namespace pipe_rt

#endif // PIPE_RUNTIME_CPU_DNNL_H
