//===- CPUProgram.cpp - write, compile and package a CPU program ----------===//
//
// `--emit=sources|binaries -o OUT` for the CPU target: OUT/stage0/main.cpp
// (from StageEmitter), OUT/stage0/weights.bin, OUT/stage0/stage0 (compiled
// with the system C++ compiler against runtime/), OUT/plan.json and the
// launcher OUT/run. Everything is written to a temporary folder first and
// renamed into place at the end, so a failure leaves no partial output.
//
//===----------------------------------------------------------------------===//

#include "pipe/Target/CPU/CPUTarget.h"

#include "StageEmitter.h"

#include "pipe/Dialect/Pipe/IR/PipeOps.h"
#include "pipe/Import/ONNX/ImportONNX.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <unistd.h>

using namespace mlir;
using namespace mlir::pipe;

/// What every stage program does around its microbatch function: read the
/// weights and inputs, check them before any work, run the microbatches,
/// write the outputs atomically.
static const char *const kStageMain = R"cpp(
namespace {
struct Port {
  const char *name;
  pipe_rt::DType dtype;
  std::vector<int64_t> shape;
};

[[noreturn]] void fail(const std::string &message) {
  std::fprintf(stderr, "stage 0 (cpu): error: %s\n", message.c_str());
  std::exit(1);
}

int64_t bytesOf(const Port &port) {
  int64_t count = 1;
  for (int64_t extent : port.shape)
    count *= extent;
  return count * static_cast<int64_t>(pipe_rt::dtypeSize(port.dtype));
}
} // namespace

int main(int argc, char **argv) {
  std::string inputs, outputs, weightsPath;
  long repeat = 0;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc)
        fail("missing value after " + arg);
      return argv[++i];
    };
    if (arg == "--inputs")
      inputs = value();
    else if (arg == "--outputs")
      outputs = value();
    else if (arg == "--weights")
      weightsPath = value();
    else if (arg == "--bench")
      repeat = std::atol(value().c_str());
    else
      fail("unknown argument '" + arg + "'");
  }
  if (inputs.empty() && kInputsCount > 0)
    fail("no --inputs folder given");
  if (outputs.empty())
    fail("no --outputs folder given");

  // Weights: one blob with 64-byte aligned tensors.
  std::vector<char> weightBytes;
  {
    std::FILE *file = std::fopen(weightsPath.c_str(), "rb");
    if (!file)
      fail("cannot open weights '" + weightsPath + "'");
    std::fseek(file, 0, SEEK_END);
    long size = std::ftell(file);
    std::fseek(file, 0, SEEK_SET);
    weightBytes.resize(size + 64);
    if (size != kWeightBytes ||
        std::fread(weightBytes.data() + 64, 1, size, file) != (size_t)size)
      fail("weights '" + weightsPath + "' do not match this program");
    std::fclose(file);
  }
  char *alignedWeights = weightBytes.data() + 64 -
                         reinterpret_cast<uintptr_t>(weightBytes.data()) % 64;
  std::memmove(alignedWeights, weightBytes.data() + 64, kWeightBytes);

  // Inputs: all read and checked before any work.
  std::vector<pipe_rt::NpyArray> arrays(kInputsCount);
  int64_t microbatches = -1;
  for (size_t i = 0; i < kInputsCount; ++i) {
    const Port &port = kInputs[i];
    std::string path = inputs + "/" + port.name + ".npy";
    if (std::string error = pipe_rt::readNpy(path, arrays[i]); !error.empty())
      fail("input '" + std::string(port.name) + "': " + error);
    std::string error;
    int64_t count = pipe_rt::countMicrobatches(port.name, arrays[i],
                                               port.dtype, port.shape, error);
    if (!count)
      fail(error);
    if (microbatches >= 0 && count != microbatches)
      fail("input '" + std::string(port.name) + "' holds " +
           std::to_string(count) + " microbatches, the inputs before it " +
           std::to_string(microbatches));
    microbatches = count;
  }
  if (microbatches < 0)
    microbatches = 1;

  std::vector<pipe_rt::NpyArray> results(kOutputsCount);
  for (size_t i = 0; i < kOutputsCount; ++i) {
    results[i].dtype = kOutputs[i].dtype;
    results[i].shape = kOutputs[i].shape;
    if (microbatches > 1) {
      if (results[i].shape.empty())
        results[i].shape = {microbatches};
      else
        results[i].shape[0] *= microbatches;
    }
    results[i].data.resize(bytesOf(kOutputs[i]) * microbatches);
  }

  std::vector<char> arenaBytes(kArenaBytes + 64);
  char *arena = arenaBytes.data() + 64 -
                reinterpret_cast<uintptr_t>(arenaBytes.data()) % 64;
  std::vector<const void *> in(kInputsCount + 1);
  std::vector<void *> out(kOutputsCount + 1);
  auto runAll = [&] {
    for (int64_t m = 0; m < microbatches; ++m) {
      for (size_t i = 0; i < kInputsCount; ++i)
        in[i] = arrays[i].data.data() + m * bytesOf(kInputs[i]);
      for (size_t i = 0; i < kOutputsCount; ++i)
        out[i] = results[i].data.data() + m * bytesOf(kOutputs[i]);
      std::string error;
      if (!runMicrobatch(arena, alignedWeights, in.data(), out.data(), error))
        fail("microbatch " + std::to_string(m) + ": " + error);
    }
  };
  runAll();
  // --bench N: time N more runs over all microbatches (after the warm-up
  // above) and print the median in milliseconds.
  if (repeat > 0) {
    std::vector<double> times;
    for (long r = 0; r < repeat; ++r) {
      auto start = std::chrono::steady_clock::now();
      runAll();
      times.push_back(std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - start)
                          .count());
    }
    std::sort(times.begin(), times.end());
    std::printf("median_ms %.4f\n", times[times.size() / 2]);
  }
  for (size_t i = 0; i < kOutputsCount; ++i) {
    std::string path = outputs + "/" + kOutputs[i].name + ".npy";
    if (std::string error = pipe_rt::writeNpy(path, results[i]); !error.empty())
      fail(error);
  }
  return 0;
}
)cpp";

/// The launcher OUT/run: one CPU stage, run directly.
static const char *const kLauncher = R"sh(#!/usr/bin/env bash
# Generated by pipe-opt. Runs the compiled pipeline in this folder.
#   run [--inputs DIR] [--outputs DIR] [--bench N]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
inputs="" outputs="" bench=""
while [ $# -gt 0 ]; do
  case "$1" in
    --inputs) inputs="$2"; shift 2 ;;
    --outputs) outputs="$2"; shift 2 ;;
    --bench) bench="$2"; shift 2 ;;
    --steps|--metrics|--save-onnx|--mpirun-args)
      echo "run: error: $1 needs a training pipeline (pipe-opt --train)" >&2; exit 2 ;;
    -h|--help) sed -n '2,3p' "$0"; exit 0 ;;
    *) echo "run: error: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
if [ -z "$outputs" ]; then echo "run: error: --outputs DIR is required" >&2; exit 2; fi
mkdir -p "$outputs"
exec "$here/stage0/stage0" --inputs "${inputs:-.}" --outputs "$outputs" \
  --weights "$here/stage0/weights.bin" ${bench:+--bench "$bench"}
)sh";

static std::string dtypeOf(Type element) {
  if (element.isF32())
    return "F32";
  if (element.isF64())
    return "F64";
  if (element.isInteger(1))
    return "Bool";
  auto integer = dyn_cast<IntegerType>(element);
  if (!integer)
    return "";
  switch (integer.getWidth()) {
  case 8:
  case 16:
  case 32:
  case 64:
    return (integer.isUnsigned() ? "U" : "I") +
           std::to_string(integer.getWidth());
  default:
    return "";
  }
}

/// The table of input or output ports of the stage program.
static LogicalResult writePorts(llvm::raw_ostream &os, const char *name,
                                func::FuncOp main, bool results) {
  os << "const Port " << name << "[] = {\n";
  unsigned count = results ? main.getNumResults() : main.getNumArguments();
  for (unsigned i = 0; i < count; ++i) {
    auto type = cast<RankedTensorType>(results ? main.getResultTypes()[i]
                                               : main.getArgumentTypes()[i]);
    auto attr = results ? main.getResultAttrOfType<StringAttr>(i, "pipe.name")
                        : main.getArgAttrOfType<StringAttr>(i, "pipe.name");
    std::string portName =
        attr ? attr.str() : (results ? "output" : "input") + std::to_string(i);
    std::string dtype = dtypeOf(type.getElementType());
    if (dtype.empty())
      return main.emitError("the CPU target cannot read or write ")
             << type.getElementType() << " tensors ('" << portName << "')";
    os << "    {\"" << portName << "\", pipe_rt::DType::" << dtype << ", {";
    llvm::interleaveComma(type.getShape(), os);
    os << "}},\n";
  }
  if (!count)
    os << "    {\"\", pipe_rt::DType::F32, {}}, // none: C++ arrays are not "
          "empty\n";
  os << "};\nconstexpr size_t " << name << "Count = " << count << ";\n";
  return success();
}

static LogicalResult writeFile(Location loc, StringRef path,
                               StringRef contents) {
  std::error_code error;
  llvm::raw_fd_ostream file(path, error);
  if (error)
    return emitError(loc) << "cannot write '" << path
                          << "': " << error.message();
  file << contents;
  return success();
}

/// Reads the data of every parameter `main` reads.
static LogicalResult readParameters(ModuleOp module, func::FuncOp main,
                                    llvm::StringMap<std::string> &data) {
  llvm::StringMap<std::vector<std::string>> byFile;
  llvm::StringMap<std::string> keyOf;
  for (auto ref : main.getOps<ParamRefOp>()) {
    auto parameter = SymbolTable::lookupNearestSymbolFrom<ParameterOp>(
        ref, ref.getNameAttr());
    Attribute initial = parameter.getInitialValueAttr();
    if (auto external = dyn_cast_if_present<ExternalAttr>(initial)) {
      byFile[external.getFile().getValue()].push_back(external.getKey().str());
      keyOf[external.getKey().getValue()] = parameter.getSymName().str();
      continue;
    }
    auto dense = dyn_cast_if_present<DenseElementsAttr>(initial);
    if (!dense || dense.getElementType().isInteger(1))
      return parameter.emitError("parameter '")
             << parameter.getSymName()
             << "' has no initial value the CPU target can load";
    ArrayRef<char> raw = dense.getRawData();
    std::string bytes(raw.begin(), raw.end());
    if (dense.isSplat()) {
      std::string full;
      for (int64_t i = 0; i < dense.getNumElements(); ++i)
        full += bytes;
      bytes = full;
    }
    data[parameter.getSymName()] = bytes;
  }
  for (auto &entry : byFile) {
    llvm::StringMap<std::string> bytes;
    if (std::string error =
            readONNXInitializers(entry.getKey(), entry.getValue(), bytes);
        !error.empty())
      return module.emitError("cannot load parameters: ") << error;
    for (auto &item : bytes)
      data[keyOf[item.getKey()]] = std::move(item.getValue());
  }
  return success();
}

static LogicalResult compileStage(Location loc, StringRef stageDir,
                                  const CPUTargetOptions &options) {
  llvm::ErrorOr<std::string> compiler =
      llvm::sys::findProgramByName(options.compiler);
  if (!compiler)
    return emitError(loc) << "cannot find the C++ compiler '"
                          << options.compiler << "'";
  std::string source = (stageDir + "/main.cpp").str();
  std::string binary = (stageDir + "/stage0").str();
  std::string log = (stageDir + "/compile.log").str();
  SmallVector<std::string> args = {
      *compiler,
      "-std=c++17",
      "-O3",
      "-march=native",
      "-fopenmp",
      "-I" PIPE_RUNTIME_SOURCE_DIR "/common",
      "-I" PIPE_RUNTIME_SOURCE_DIR "/cpu",
      source,
      "-o",
      binary,
      PIPE_RUNTIME_CPU_LIBRARY,
      PIPE_RUNTIME_COMMON_LIBRARY,
      PIPE_OPENBLAS_LIBRARY,
      ("-Wl,-rpath," + llvm::sys::path::parent_path(PIPE_OPENBLAS_LIBRARY))
          .str(),
      "-lm"};
  SmallVector<StringRef> argRefs(args.begin(), args.end());
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(log),
                                          StringRef(log)};
  std::string error;
  int status = llvm::sys::ExecuteAndWait(*compiler, argRefs, std::nullopt,
                                         redirects, 0, 0, &error);
  if (status != 0) {
    auto buffer = llvm::MemoryBuffer::getFile(log);
    return emitError(loc) << "compiling the CPU stage failed"
                          << (error.empty() ? "" : ": " + error) << "\n"
                          << (buffer ? (*buffer)->getBuffer().take_back(4000)
                                     : StringRef());
  }
  llvm::sys::fs::remove(log);
  return success();
}

LogicalResult mlir::pipe::emitCPUProgram(ModuleOp module, StringRef outDir,
                                         const CPUTargetOptions &options) {
  Location loc = module.getLoc();
  auto main = module.lookupSymbol<func::FuncOp>("main");
  if (!main)
    return module.emitError("the module has no func.func @main to compile");

  // Never clobber a folder that is not an earlier output of ours.
  if (llvm::sys::fs::exists(outDir)) {
    std::error_code error;
    llvm::sys::fs::directory_iterator it(outDir, error), end;
    if (!error && it != end && !llvm::sys::fs::exists(outDir + "/plan.json"))
      return emitError(loc) << "'" << outDir
                            << "' exists and is not a pipe output folder; "
                               "refusing to overwrite it";
  }

  llvm::StringMap<std::string> parameters;
  if (failed(readParameters(module, main, parameters)))
    return failure();
  StageArtifacts stage;
  if (failed(emitStage(main, parameters, stage)))
    return failure();

  std::string source;
  llvm::raw_string_ostream src(source);
  src << "// Generated by pipe-opt: stage 0 on the host CPU. Do not edit.\n"
      << "#include \"Kernels.h\"\n#include \"Npy.h\"\n\n"
      << "#include <algorithm>\n#include <chrono>\n#include <cmath>\n"
      << "#include <cstdint>\n"
      << "#include <cstdio>\n#include <cstdlib>\n#include <cstring>\n"
      << "#include <iterator>\n#include <string>\n#include <vector>\n\n"
      << "using namespace pipe_rt;\n\n"
      << "namespace {\nconstexpr int64_t kArenaBytes = " << stage.arenaBytes
      << ";\nconstexpr long kWeightBytes = " << stage.weights.size() << ";\n"
      << "struct Port {\n  const char *name;\n  pipe_rt::DType dtype;\n"
      << "  std::vector<int64_t> shape;\n};\n";
  if (failed(writePorts(src, "kInputs", main, /*results=*/false)) ||
      failed(writePorts(src, "kOutputs", main, /*results=*/true)))
    return failure();
  src << "} // namespace\n\n" << stage.source;
  std::string stageMain = kStageMain;
  // The Port struct is declared above, with the tables.
  size_t begin = stageMain.find("struct Port {");
  size_t end = stageMain.find("};", begin) + 3;
  stageMain.erase(begin, end - begin);
  src << stageMain;

  // Write everything into a fresh sibling folder, then move it into place.
  std::string temporary = (outDir + ".tmp." + std::to_string(::getpid())).str();
  llvm::sys::fs::remove_directories(temporary);
  std::string stageDir = temporary + "/stage0";
  if (std::error_code error = llvm::sys::fs::create_directories(stageDir))
    return emitError(loc) << "cannot create '" << stageDir
                          << "': " << error.message();
  llvm::scope_exit cleanup(
      [&] { llvm::sys::fs::remove_directories(temporary); });

  int64_t peak = stage.arenaBytes + static_cast<int64_t>(stage.weights.size());
  llvm::json::Object plan{
      {"schedule", "1f1b"},
      {"microbatches", 1},
      {"stages",
       llvm::json::Array{llvm::json::Object{
           {"index", 0},
           {"device", "cpu0"},
           {"kind", "cpu"},
           {"arch", "host"},
           {"ops", stage.numOps},
           {"flops", stage.flops},
           {"param_bytes", stage.parameterBytes},
           {"predicted_peak_memory_bytes", peak},
           {"activation_arena_bytes", stage.arenaBytes},
           {"activation_bytes_without_reuse", stage.arenaBytesWithoutReuse},
           {"fused_loops", stage.numFusedLoops},
           {"kernel_calls", stage.numKernelCalls},
           {"recompute", "none"}}}}};
  std::string planText;
  llvm::raw_string_ostream planOs(planText);
  planOs << llvm::formatv("{0:2}", llvm::json::Value(std::move(plan))) << "\n";

  if (failed(writeFile(loc, stageDir + "/main.cpp", source)) ||
      failed(writeFile(loc, stageDir + "/weights.bin", stage.weights)) ||
      failed(writeFile(loc, temporary + "/plan.json", planText)) ||
      failed(writeFile(loc, temporary + "/run", kLauncher)))
    return failure();
  llvm::sys::fs::setPermissions(
      temporary + "/run", llvm::sys::fs::all_read | llvm::sys::fs::all_exe |
                              llvm::sys::fs::owner_write);
  if (options.compile && failed(compileStage(loc, stageDir, options)))
    return failure();

  llvm::sys::fs::remove_directories(outDir);
  if (std::error_code error = llvm::sys::fs::rename(temporary, outDir))
    return emitError(loc) << "cannot move the output into '" << outDir
                          << "': " << error.message();
  cleanup.release();
  return success();
}
