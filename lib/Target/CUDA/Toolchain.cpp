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
#include "llvm/Config/llvm-config.h"
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

/// The CUDA 12 root for clang, and the version its version.json names;
/// empty where there is none.
static std::pair<std::string, std::string>
findCUDA12Root(const CUDAToolchainOptions &options) {
  std::string root = options.cuda12Root;
  if (root.empty())
    if (std::optional<std::string> fromEnv =
            llvm::sys::Process::GetEnv("PIPE_CUDA12_ROOT"))
      root = *fromEnv;
  if (root.empty())
    root = PIPE_CUDA12_ROOT;
  auto json = llvm::MemoryBuffer::getFile(root + "/version.json");
  if (!json || !llvm::sys::fs::can_execute(root + "/bin/ptxas"))
    return {};
  // {"cuda": {"name": "CUDA SDK", "version": "12.9.1"}}
  StringRef text = (*json)->getBuffer();
  size_t at = text.find("\"version\"");
  std::string version;
  if (at != StringRef::npos) {
    StringRef rest = text.drop_front(at + 9).ltrim(" \t:\"");
    version = rest.take_while([](char c) { return c != '"'; }).str();
  }
  if (!StringRef(version).starts_with("12."))
    return {};
  return {root, version};
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
  int number = 0;
  bool numbered =
      arch.starts_with("sm_") && !arch.drop_front(3).getAsInteger(10, number);
  std::string nvcc = findNvcc(options);
  const NvccInfo *info = nvcc.empty() ? nullptr : &describeNvcc(nvcc);
  if (info && numbered && info->archs.count(number)) {
    CUDAToolchain toolchain;
    toolchain.compiler = nvcc;
    toolchain.name = "nvcc " + info->version;
    toolchain.root =
        llvm::sys::path::parent_path(llvm::sys::path::parent_path(nvcc)).str();
    return toolchain;
  }
  // Volta, which CUDA 13 dropped: clang against a CUDA 12 root.
  bool volta = numbered && number >= 70 && number < 75;
  auto [root, version] = findCUDA12Root(options);
  bool clang = llvm::sys::fs::can_execute(PIPE_CLANG);
  if (volta && !root.empty() && clang) {
    CUDAToolchain toolchain;
    toolchain.compiler = PIPE_CLANG;
    toolchain.name =
        "clang " + std::to_string(LLVM_VERSION_MAJOR) + " + CUDA " + version;
    toolchain.root = root;
    toolchain.clang = true;
    return toolchain;
  }
  if (volta)
    return emitError(loc)
           << where()
           << ": CUDA 13 dropped Volta, so it needs CUDA 12: a CUDA 12 nvcc "
              "(--nvcc), or clang ("
           << (clang ? "found" : "missing: " PIPE_CLANG)
           << ") against a CUDA 12 root ("
           << (root.empty() ? "missing: scripts/install-deps.sh assembles "
                              "one in .cuda12/root; --cuda12-root names "
                              "another"
                            : "found")
           << ")";
  if (!info)
    return emitError(loc) << where() << ", a GPU, and no nvcc was found"
                          << (options.nvcc.empty()
                                  ? " (looked in $CUDA_PATH/bin, " PIPE_NVCC
                                    " and PATH)"
                                  : " at '" + options.nvcc + "'")
                          << "; install the CUDA toolkit, give --nvcc, or "
                             "emulate the GPU on the CPU with --target=cpu";
  return emitError(loc) << where() << ", and the CUDA "
                        << (info->version.empty() ? "" : info->version + " ")
                        << "nvcc at '" << nvcc << "' cannot build " << arch
                        << " (give the device's compute_capability in the "
                           "cluster file, another nvcc with --nvcc, or "
                           "emulate the GPU on the CPU with --target=cpu); it "
                           "builds "
                        << llvm::join(llvm::map_range(info->archs,
                                                      [](int number) {
                                                        return "sm_" +
                                                               std::to_string(
                                                                   number);
                                                      }),
                                      ", ");
}

std::vector<std::string>
mlir::pipe::cudaCompileCommand(const CUDAToolchain &toolchain, StringRef arch,
                               StringRef source, StringRef binary) {
  std::string number = arch.drop_front(3).str();
  std::vector<std::string> command = {toolchain.compiler};
  if (toolchain.clang)
    // Machine code for `arch` alone, no PTX; the classic offload driver,
    // which needs no clang-linker-wrapper.
    command.insert(command.end(),
                   {"--no-offload-new-driver", "-x", "cuda",
                    "--cuda-path=" + toolchain.root,
                    "--ptxas-path=" + toolchain.root + "/bin/ptxas",
                    "--cuda-gpu-arch=" + arch.str(),
                    "--no-cuda-include-ptx=all", "-Wno-unknown-cuda-version",
                    "-fopenmp=libgomp"});
  else
    command.insert(command.end(),
                   {"--expt-relaxed-constexpr", "-gencode",
                    "arch=compute_" + number + ",code=sm_" + number,
                    "-Xcompiler", "-fopenmp"});
  command.insert(command.end(),
                 {"-std=c++17", "-O3", "-I" PIPE_RUNTIME_SOURCE_DIR "/cuda",
                  "-I" PIPE_RUNTIME_SOURCE_DIR "/common",
                  "-I" PIPE_RUNTIME_SOURCE_DIR "/pipeline"});
  for (StringRef dir : llvm::split(StringRef(PIPE_MPI_INCLUDE_DIRS), '|'))
    if (!dir.empty())
      command.push_back(("-I" + dir).str());
  command.push_back(source.str());
  for (const char *file : kRuntimeSources)
    command.push_back(std::string(PIPE_RUNTIME_SOURCE_DIR "/cuda/") + file);
  // What follows is linked, not compiled as CUDA.
  if (toolchain.clang)
    command.insert(command.end(),
                   {"-x", "none", "-L" + toolchain.root + "/lib64",
                    "-Wl,-rpath," + toolchain.root + "/lib64"});
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
