//===- Npy.h - NumPy .npy files for stage inputs and outputs ----*- C++ -*-===//
//
// Part of the pipe runtime, which every generated stage program links
// against. Plain C++17 with no dependency on LLVM or MLIR.
//
// `OUT/run --inputs DIR` reads `DIR/<graph input>.npy` and `--outputs DIR`
// writes `DIR/<graph output>.npy`. Supported element types: float32,
// float64, bool and the signed and unsigned integers of 8 to 64 bits, in
// either byte order and in C or Fortran order; arrays are held
// little-endian in C order.
//
//===----------------------------------------------------------------------===//

#ifndef PIPE_RUNTIME_COMMON_NPY_H
#define PIPE_RUNTIME_COMMON_NPY_H

#include <cstdint>
#include <string>
#include <vector>

/// The runtime's namespace (`pipe` itself would clash with POSIX pipe()).
namespace pipe_rt {

/// Element types of arrays that cross the runtime's file boundary.
enum class DType { F32, F64, I64, I32, Bool, I16, I8, U64, U32, U16, U8 };

/// NumPy's name of `type` ("float32", ...).
const char *dtypeName(DType type);
/// Size in bytes of one element of `type`.
size_t dtypeSize(DType type);

/// A dense array in C order with little-endian elements.
struct NpyArray {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<char> data;

  int64_t numElements() const;
};

/// Formats a shape as `(2, 3)`, NumPy's way.
std::string formatShape(const std::vector<int64_t> &shape);

/// Reads the .npy file at `path`. Returns an empty string on success, else
/// one line naming the file and what is wrong with it.
std::string readNpy(const std::string &path, NpyArray &array);

/// Writes `array` to `path` atomically: a temporary file in the same folder
/// is renamed over `path` once complete, so readers never see a partial
/// file. Returns an empty string on success, else the error.
std::string writeNpy(const std::string &path, const NpyArray &array);

/// Checks `array`, read for the graph input `name` whose type is `dtype` and
/// `shape` (one microbatch, batch first), and returns how many microbatches
/// it holds: 1 when its shape equals `shape`, k when it stacks k*b rows along
/// axis 0 over the same trailing shape. Returns 0 and sets `error` (naming
/// the input) when the element type or shape does not fit.
int64_t countMicrobatches(const std::string &name, const NpyArray &array,
                          DType dtype, const std::vector<int64_t> &shape,
                          std::string &error);

} // namespace pipe_rt

#endif // PIPE_RUNTIME_COMMON_NPY_H
