//===- Toolchain.cpp - the compilers that build CUDA stages ---------------===//
//
// A CUDA stage is built by nvcc for its GPU's architecture alone
// (-gencode arch=compute_XY,code=sm_XY): the binary holds no machine code
// for any other GPU. Which architectures an nvcc builds is what its
// --list-gpu-arch says: CUDA 13 builds sm_75 and newer, and Volta (sm_70)
// needs a CUDA 12 toolkit.
//
//===----------------------------------------------------------------------===//

#include "pipe/Target/CUDA/CUDATarget.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"

#include <set>

using namespace mlir;
using namespace mlir::pipe;

/// The runtime's CUDA sources every stage compiles.
static const char *const kRuntimeSources[] = {
    "CudaDevice.cu", "DataMovement.cu", "Gemm.cu",   "NcclTransport.cu",
    "Norm.cu",       "Optimizer.cu",    "Reduce.cu",
};

/// Where nvcc is: the option, $CUDA_PATH, the build's, then PATH.
static std::string findNvcc(const CUDAToolchainOptions &options) {
  if (!options.nvcc.empty())
    return llvm::sys::fs::can_execute(options.nvcc) ? options.nvcc : "";
  if (std::optional<std::string> root = llvm::sys::Process::GetEnv("CUDA_PATH"))
    if (std::string nvcc = *root + "/bin/nvcc";
        llvm::sys::fs::can_execute(nvcc))
      return nvcc;
  if (llvm::sys::fs::can_execute(PIPE_NVCC))
    return PIPE_NVCC;
  llvm::ErrorOr<std::string> onPath = llvm::sys::findProgramByName("nvcc");
  return onPath ? *onPath : "";
}

/// What `command` prints, or nothing if it fails.
static std::string outputOf(ArrayRef<StringRef> command) {
  llvm::SmallString<128> file;
  if (llvm::sys::fs::createTemporaryFile("pipe-nvcc", "txt", file))
    return "";
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(file),
                                          StringRef(file)};
  int status = llvm::sys::ExecuteAndWait(command.front(), command, std::nullopt,
                                         redirects);
  auto buffer = llvm::MemoryBuffer::getFile(file);
  llvm::sys::fs::remove(file);
  return status == 0 && buffer ? (*buffer)->getBuffer().str() : "";
}

namespace {
/// What one nvcc is: its version and the architectures it builds (90 for
/// sm_90).
struct NvccInfo {
  std::string version;
  std::set<int> archs;
};
} // namespace

static const NvccInfo &describeNvcc(const std::string &nvcc) {
  static llvm::StringMap<NvccInfo> known;
  auto [it, inserted] = known.try_emplace(nvcc);
  if (!inserted)
    return it->second;
  NvccInfo &info = it->second;
  std::string archs = outputOf({nvcc, "--list-gpu-arch"});
  for (StringRef line : llvm::split(archs, '\n')) {
    StringRef arch = line.trim();
    int number = 0;
    if (arch.consume_front("compute_") && !arch.getAsInteger(10, number))
      info.archs.insert(number);
  }
  // "Cuda compilation tools, release 13.0, V13.0.88"
  std::string version = outputOf({nvcc, "--version"});
  size_t at = version.find("release ");
  if (at != std::string::npos)
    info.version = StringRef(version).substr(at + 8).split(',').first.str();
  return info;
}

FailureOr<CUDAToolchain>
mlir::pipe::findCUDAToolchain(Location loc, int64_t stage, StringRef device,
                              StringRef kind, StringRef arch,
                              const CUDAToolchainOptions &options) {
  auto where = [&] {
    return ("stage " + std::to_string(stage) + " runs on device '" + device +
            "' (" + kind + ", " + arch + ")")
        .str();
  };
  std::string nvcc = findNvcc(options);
  if (nvcc.empty())
    return emitError(loc) << where() << ", a GPU, and no nvcc was found"
                          << (options.nvcc.empty()
                                  ? " (looked in $CUDA_PATH/bin, " PIPE_NVCC
                                    " and PATH)"
                                  : " at '" + options.nvcc + "'")
                          << "; install the CUDA toolkit, give --nvcc, or "
                             "emulate the GPU on the CPU with --target=cpu";
  const NvccInfo &info = describeNvcc(nvcc);
  int number = 0;
  if (!arch.starts_with("sm_") || arch.drop_front(3).getAsInteger(10, number) ||
      !info.archs.count(number)) {
    InFlightDiagnostic diag =
        emitError(loc) << where() << ", and the CUDA "
                       << (info.version.empty() ? "" : info.version + " ")
                       << "nvcc at '" << nvcc << "' cannot build " << arch;
    if (arch == "sm_70")
      diag << ": CUDA 13 dropped Volta; a V100 stage needs a CUDA 12 nvcc "
              "(give it with --nvcc)";
    else
      diag << " (give the device's compute_capability in the cluster file, "
              "another nvcc with --nvcc, or emulate the GPU on the CPU with "
              "--target=cpu); it builds "
           << llvm::join(llvm::map_range(info.archs,
                                         [](int number) {
                                           return "sm_" +
                                                  std::to_string(number);
                                         }),
                         ", ");
    return diag;
  }
  CUDAToolchain toolchain;
  toolchain.compiler = nvcc;
  toolchain.name = "nvcc " + info.version;
  toolchain.root =
      llvm::sys::path::parent_path(llvm::sys::path::parent_path(nvcc)).str();
  return toolchain;
}

std::vector<std::string>
mlir::pipe::cudaCompileCommand(const CUDAToolchain &toolchain, StringRef arch,
                               StringRef source, StringRef binary) {
  std::string number = arch.drop_front(3).str();
  std::vector<std::string> command = {toolchain.compiler,
                                      "-std=c++17",
                                      "-O3",
                                      "--expt-relaxed-constexpr",
                                      "-gencode",
                                      "arch=compute_" + number + ",code=sm_" +
                                          number,
                                      "-Xcompiler",
                                      "-fopenmp",
                                      "-I" PIPE_RUNTIME_SOURCE_DIR "/cuda",
                                      "-I" PIPE_RUNTIME_SOURCE_DIR "/common",
                                      "-I" PIPE_RUNTIME_SOURCE_DIR "/pipeline",
                                      source.str()};
  for (const char *file : kRuntimeSources)
    command.push_back(std::string(PIPE_RUNTIME_SOURCE_DIR "/cuda/") + file);
  for (StringRef dir : llvm::split(StringRef(PIPE_MPI_INCLUDE_DIRS), '|'))
    if (!dir.empty())
      command.push_back(("-I" + dir).str());
  command.insert(command.end(),
                 {"-o", binary.str(), PIPE_RUNTIME_MPI_LIBRARY,
                  PIPE_RUNTIME_PIPELINE_LIBRARY, PIPE_RUNTIME_ONNX_LIBRARY,
                  PIPE_RUNTIME_COMMON_LIBRARY, "-lonnx", "-lonnx_proto",
                  "-lprotobuf", "-lcublasLt", "-lnccl", "-lcudart"});
  for (StringRef library : llvm::split(StringRef(PIPE_MPI_LIBRARIES), '|'))
    if (!library.empty())
      command.push_back(library.str());
  command.push_back("-lgomp");
  return command;
}
