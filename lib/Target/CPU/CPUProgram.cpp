//===- CPUProgram.cpp - write, compile and package a CPU program ----------===//
//
// `--emit=sources|binaries -o OUT` for the CPU target: OUT/stage0/main.cpp
// (from StageEmitter), OUT/stage0/weights.bin and weights.json,
// OUT/stage0/stage0 (compiled with the system C++ compiler against
// runtime/), OUT/plan.json and the launcher OUT/run. A training program
// also gets OUT/model.onnx, the model --save-onnx writes back. Everything is
// written to a temporary folder first and renamed into place at the end, so a
// failure leaves no partial output.
//
//===----------------------------------------------------------------------===//

#include "pipe/Target/CPU/CPUTarget.h"

#include "ProgramFiles.h"
#include "StageEmitter.h"

#include "pipe/Dialect/Pipe/IR/PipeOps.h"
#include "pipe/Import/ONNX/ImportONNX.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSet.h"
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

/// What every stage program has: reading the weights and the inputs, all
/// checked before any work.
static const char *const kStageCommon = R"cpp(
namespace {
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

/// Reads the weights blob into `bytes`; returns it 64-byte aligned.
char *readWeights(const std::string &path, std::vector<char> &bytes) {
  std::FILE *file = std::fopen(path.c_str(), "rb");
  if (!file)
    fail("cannot open weights '" + path + "'");
  std::fseek(file, 0, SEEK_END);
  long size = std::ftell(file);
  std::fseek(file, 0, SEEK_SET);
  bytes.resize(size + 64);
  if (size != kWeightBytes ||
      std::fread(bytes.data() + 64, 1, size, file) != (size_t)size)
    fail("weights '" + path + "' do not match this program");
  std::fclose(file);
  char *aligned =
      bytes.data() + 64 - reinterpret_cast<uintptr_t>(bytes.data()) % 64;
  std::memmove(aligned, bytes.data() + 64, kWeightBytes);
  return aligned;
}

/// Reads every input from `folder`; returns how many microbatches they hold.
int64_t readInputs(const std::string &folder,
                   std::vector<pipe_rt::NpyArray> &arrays) {
  arrays.resize(kInputsCount);
  int64_t microbatches = -1;
  for (size_t i = 0; i < kInputsCount; ++i) {
    const Port &port = kInputs[i];
    std::string path = folder + "/" + port.name + ".npy";
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
  return microbatches < 0 ? 1 : microbatches;
}

/// The command line, read as `--option value` pairs.
struct Arguments {
  int argc;
  char **argv;
  int index = 0;
  std::string name;

  /// Moves to the next option; false at the end.
  bool next() {
    if (++index >= argc)
      return false;
    name = argv[index];
    return true;
  }
  /// The value after the current option.
  std::string value() {
    if (index + 1 >= argc)
      fail("missing value after " + name);
    return argv[++index];
  }
  [[noreturn]] void unknown() { fail("unknown argument '" + name + "'"); }
};

/// Aligned scratch memory for the functions' intermediate buffers.
struct Arena {
  std::vector<char> bytes = std::vector<char>(kArenaBytes + 64);
  char *data() {
    return bytes.data() + 64 - reinterpret_cast<uintptr_t>(bytes.data()) % 64;
  }
};
} // namespace
)cpp";

/// The main of an inference program: run every microbatch, write the
/// outputs atomically.
static const char *const kInferenceMain = R"cpp(
int main(int argc, char **argv) {
  std::string inputs, outputs, weightsPath;
  long repeat = 0;
  for (Arguments args{argc, argv}; args.next();) {
    if (args.name == "--inputs")
      inputs = args.value();
    else if (args.name == "--outputs")
      outputs = args.value();
    else if (args.name == "--weights")
      weightsPath = args.value();
    else if (args.name == "--bench")
      repeat = std::atol(args.value().c_str());
    else
      args.unknown();
  }
  if (inputs.empty() && kInputsCount > 0)
    fail("no --inputs folder given");
  if (outputs.empty())
    fail("no --outputs folder given");

  std::vector<char> weightBytes;
  char *weights = readWeights(weightsPath, weightBytes);
  std::vector<pipe_rt::NpyArray> arrays;
  int64_t microbatches = readInputs(inputs, arrays);

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

  Arena arena;
  std::vector<const void *> in(kInputsCount + 1);
  std::vector<void *> out(kOutputsCount + 1);
  auto runAll = [&] {
    for (int64_t m = 0; m < microbatches; ++m) {
      for (size_t i = 0; i < kInputsCount; ++i)
        in[i] = arrays[i].data.data() + m * bytesOf(kInputs[i]);
      for (size_t i = 0; i < kOutputsCount; ++i)
        out[i] = results[i].data.data() + m * bytesOf(kOutputs[i]);
      std::string error;
      if (!runMicrobatch(arena.data(), weights, in.data(), out.data(), m,
                         error))
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

/// The main of a training program. Step s (from 1) runs microbatches
/// (s-1)*M .. s*M-1 of the inputs, wrapping around, through runMicrobatch
/// (result 0 the loss, then the gradients), averages the gradients and
/// calls runUpdate, which writes the new parameters and optimizer state
/// into the weights.
static const char *const kTrainingMain = R"cpp(
namespace {
/// A whole decimal number in [1, 10^9], or 0.
long parseCount(const std::string &text) {
  if (text.empty() || text.size() > 10 ||
      text.find_first_not_of("0123456789") != std::string::npos)
    return 0;
  long value = std::atol(text.c_str());
  return value <= 1000000000L ? value : 0;
}

bool parentExists(const std::string &path) {
  size_t slash = path.rfind('/');
  std::string parent = slash == std::string::npos ? "." : path.substr(0, slash);
  struct stat info;
  return parent.empty() || (::stat(parent.c_str(), &info) == 0 &&
                            S_ISDIR(info.st_mode));
}
} // namespace

int main(int argc, char **argv) {
  std::string inputs, weightsPath, metricsPath, savePath, modelPath;
  long steps = 1;
  for (Arguments args{argc, argv}; args.next();) {
    if (args.name == "--inputs")
      inputs = args.value();
    else if (args.name == "--weights")
      weightsPath = args.value();
    else if (args.name == "--steps") {
      std::string text = args.value();
      steps = parseCount(text);
      if (!steps)
        fail("--steps must be a whole number from 1 to 1000000000, not '" +
             text + "'");
    } else if (args.name == "--metrics")
      metricsPath = args.value();
    else if (args.name == "--save-onnx")
      savePath = args.value();
    else if (args.name == "--model")
      modelPath = args.value();
    else
      args.unknown();
  }
  if (inputs.empty() && kInputsCount > 0)
    fail("no --inputs folder given");
  if (!savePath.empty() && modelPath.empty())
    fail("--save-onnx needs the model this program was compiled from; it "
         "was compiled from IR without an ONNX file");
  if (!savePath.empty() && !parentExists(savePath))
    fail("cannot write '" + savePath + "': its folder does not exist");

  std::vector<char> weightBytes;
  char *weights = readWeights(weightsPath, weightBytes);
  std::vector<pipe_rt::NpyArray> arrays;
  int64_t available = readInputs(inputs, arrays);

  std::FILE *metrics = nullptr;
  if (!metricsPath.empty() &&
      !(metrics = std::fopen(metricsPath.c_str(), "w")))
    fail("cannot write the metrics file '" + metricsPath + "'");

  // Result 0 of runMicrobatch is the loss, the others the gradients, which
  // are also the arguments of runUpdate before the step number.
  const size_t numGrads = kOutputsCount - 1;
  std::vector<std::vector<Real>> microbatchResults(kOutputsCount),
      sums(kOutputsCount);
  for (size_t i = 0; i < kOutputsCount; ++i) {
    microbatchResults[i].resize(bytesOf(kOutputs[i]) / sizeof(Real));
    sums[i].resize(microbatchResults[i].size());
  }
  Arena arena;
  std::vector<const void *> in(kInputsCount + 1), updateIn(numGrads + 1);
  std::vector<void *> out(kOutputsCount + 1);
  for (size_t i = 0; i < kOutputsCount; ++i)
    out[i] = microbatchResults[i].data();
  for (size_t i = 0; i < numGrads; ++i)
    updateIn[i] = sums[i + 1].data();
  int64_t stepNumber = 0;
  updateIn[numGrads] = &stepNumber;

  for (long step = 1; step <= steps; ++step) {
    auto start = std::chrono::steady_clock::now();
    for (std::vector<Real> &sum : sums)
      std::fill(sum.begin(), sum.end(), Real(0));
    double lossSum = 0;
    for (int64_t j = 0; j < kMicrobatches; ++j) {
      int64_t m = ((step - 1) * kMicrobatches + j) % available;
      for (size_t i = 0; i < kInputsCount; ++i)
        in[i] = arrays[i].data.data() + m * bytesOf(kInputs[i]);
      std::string error;
      if (!runMicrobatch(arena.data(), weights, in.data(), out.data(), m,
                         error))
        fail("step " + std::to_string(step) + ", microbatch " +
             std::to_string(m) + ": " + error);
      lossSum += static_cast<double>(microbatchResults[0][0]);
      for (size_t i = 1; i < kOutputsCount; ++i) {
        Real *sum = sums[i].data();
        const Real *value = microbatchResults[i].data();
        for (size_t e = 0, n = sums[i].size(); e < n; ++e)
          sum[e] += value[e];
      }
    }
    const Real scale = Real(1) / Real(kMicrobatches);
    for (size_t i = 1; i < kOutputsCount; ++i)
      for (Real &value : sums[i])
        value *= scale;
    stepNumber = step;
    std::string error;
    if (!runUpdate(arena.data(), weights, updateIn.data(), nullptr, 0, error))
      fail("step " + std::to_string(step) + ": optimizer: " + error);
    double seconds = std::chrono::duration<double>(
                         std::chrono::steady_clock::now() - start)
                         .count();
    double loss = lossSum / kMicrobatches;
    std::printf("step %ld loss %.9g\n", step, loss);
    std::fflush(stdout);
    if (metrics) {
      std::fprintf(metrics, "{\"step\": %ld, \"loss\": %.9g, \"seconds\": %.6f}\n",
                   step, loss, seconds);
      std::fflush(metrics);
    }
  }
  if (metrics && std::fclose(metrics) != 0)
    fail("cannot write the metrics file '" + metricsPath + "'");

  if (!savePath.empty()) {
    std::vector<pipe_rt::InitializerData> trained;
    for (const Trained &parameter : kTrained)
      trained.push_back({parameter.name, weights + parameter.offset,
                         static_cast<size_t>(parameter.bytes)});
    if (std::string error =
            pipe_rt::saveTrainedOnnx(modelPath, savePath, trained);
        !error.empty())
      fail("--save-onnx: " + error);
  }
  return 0;
}
)cpp";

/// The launcher OUT/run of an inference program: one CPU stage, run
/// directly.
static const char *const kInferenceLauncher = R"sh(#!/usr/bin/env bash
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
    --steps|--metrics|--save-onnx)
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

/// The launcher OUT/run of a training program.
static const char *const kTrainingLauncher = R"sh(#!/usr/bin/env bash
# Generated by pipe-opt. Trains with the compiled pipeline in this folder.
#   run [--steps N] [--inputs DIR] [--metrics FILE] [--save-onnx FILE]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --inputs|--steps|--metrics|--save-onnx)
      if [ $# -lt 2 ]; then echo "run: error: $1 needs a value" >&2; exit 2; fi
      args+=("$1" "$2"); shift 2 ;;
    --outputs|--bench)
      echo "run: error: $1 is for inference pipelines; training reports the loss on stdout and in --metrics, and writes the model with --save-onnx" >&2; exit 2 ;;
    -h|--help) sed -n '2,3p' "$0"; exit 0 ;;
    *) echo "run: error: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
model=()
if [ -f "$here/model.onnx" ]; then model=(--model "$here/model.onnx"); fi
exec "$here/stage0/stage0" --inputs . --weights "$here/stage0/weights.bin" \
  "${model[@]}" "${args[@]}"
)sh";

std::string mlir::pipe::dtypeOf(Type element) {
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

/// The number of results of `func` that go to its caller: those before the
/// ones it assigns to parameters (`pipe.assign`), which must come last.
static FailureOr<unsigned> numOutputs(func::FuncOp func) {
  unsigned count = func.getNumResults();
  while (count > 0 && func.getResultAttr(count - 1, "pipe.assign"))
    --count;
  for (unsigned i = 0; i < count; ++i)
    if (func.getResultAttr(i, "pipe.assign"))
      return func.emitError("result ")
             << i << " assigns a parameter but comes before a result that "
             << "does not; the CPU target needs those last";
  return count;
}

/// The table of input or output ports of the stage program.
static LogicalResult writePorts(llvm::raw_ostream &os, const char *name,
                                func::FuncOp main, bool results) {
  os << "const Port " << name << "[] = {\n";
  FailureOr<unsigned> outputs = numOutputs(main);
  if (failed(outputs))
    return failure();
  unsigned count = results ? *outputs : main.getNumArguments();
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

LogicalResult mlir::pipe::writeFile(Location loc, StringRef path,
                                    StringRef contents) {
  std::error_code error;
  llvm::raw_fd_ostream file(path, error);
  if (error)
    return emitError(loc) << "cannot write '" << path
                          << "': " << error.message();
  file << contents;
  return success();
}

LogicalResult mlir::pipe::readParameters(Operation *scope,
                                         llvm::StringMap<std::string> &data,
                                         std::string &sourceModel) {
  llvm::SetVector<ParameterOp> used;
  for (auto func : scope->getRegion(0).front().getOps<func::FuncOp>()) {
    func.walk([&](ParamRefOp ref) {
      used.insert(SymbolTable::lookupNearestSymbolFrom<ParameterOp>(
          ref, ref.getNameAttr()));
    });
    for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
      if (auto assigned =
              func.getResultAttrOfType<FlatSymbolRefAttr>(i, "pipe.assign"))
        used.insert(dyn_cast_or_null<ParameterOp>(
            SymbolTable::lookupSymbolIn(scope, assigned.getAttr())));
  }
  llvm::StringMap<std::vector<std::string>> byFile;
  llvm::StringMap<std::string> keyOf;
  llvm::StringSet<> trainedFiles;
  bool inlineTrained = false;
  for (ParameterOp parameter : used) {
    if (!parameter)
      continue;
    Attribute initial = parameter.getInitialValueAttr();
    if (auto external = dyn_cast_if_present<ExternalAttr>(initial)) {
      byFile[external.getFile().getValue()].push_back(external.getKey().str());
      keyOf[external.getKey().getValue()] = parameter.getSymName().str();
      if (parameter.getTrainable())
        trainedFiles.insert(external.getFile().getValue());
      continue;
    }
    inlineTrained |= parameter.getTrainable();
    auto dense = dyn_cast_if_present<DenseElementsAttr>(initial);
    if (!dense || dense.getElementType().isInteger(1))
      return parameter.emitError("parameter '")
             << parameter.getSymName()
             << "' has no initial value the CPU target can load";
    ArrayRef<char> raw = dense.getRawData();
    std::string bytes(raw.begin(), raw.end());
    if (dense.isSplat()) {
      std::string full;
      full.reserve(bytes.size() * dense.getNumElements());
      for (int64_t i = 0; i < dense.getNumElements(); ++i)
        full += bytes;
      bytes = std::move(full);
    }
    data[parameter.getSymName()] = std::move(bytes);
  }
  if (trainedFiles.size() == 1 && !inlineTrained)
    sourceModel = trainedFiles.begin()->getKey().str();
  for (auto &entry : byFile) {
    llvm::StringMap<std::string> bytes;
    if (std::string error =
            readONNXInitializers(entry.getKey(), entry.getValue(), bytes);
        !error.empty())
      return scope->emitError("cannot load parameters: ") << error;
    for (auto &item : bytes)
      data[keyOf[item.getKey()]] = std::move(item.getValue());
  }
  return success();
}

std::string mlir::pipe::weightsIndex(const StageArtifacts &stage) {
  llvm::json::Array tensors;
  for (const WeightEntry &entry : stage.parameters) {
    llvm::json::Array shape;
    for (int64_t extent : entry.type.getShape())
      shape.push_back(extent);
    tensors.push_back(
        llvm::json::Object{{"name", entry.name},
                           {"offset", entry.offset},
                           {"bytes", tensorBytes(entry.type)},
                           {"dtype", dtypeOf(entry.type.getElementType())},
                           {"shape", std::move(shape)},
                           {"trainable", entry.trainable}});
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", llvm::json::Value(llvm::json::Object{
                                   {"tensors", std::move(tensors)}}))
     << "\n";
  return text;
}

/// Compiles OUT/stage0/main.cpp into OUT/stage0/stage0.
static LogicalResult compileStage(Location loc, StringRef stageDir,
                                  const CPUTargetOptions &options,
                                  bool training) {
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
  if (training)
    args.append(
        {PIPE_RUNTIME_ONNX_LIBRARY, "-lonnx", "-lonnx_proto", "-lprotobuf"});
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
  auto update = module.lookupSymbol<func::FuncOp>("update");
  bool training = static_cast<bool>(update);
  Type real;
  if (training) {
    // @main returns the loss, then the gradients @update takes before the
    // step number, all of one floating-point type (then what it writes
    // back itself, like running statistics).
    FailureOr<unsigned> outputs = numOutputs(main);
    if (failed(outputs))
      return failure();
    if (*outputs < 2 || update.getNumArguments() != *outputs)
      return main.emitError("a training program needs @main to return the "
                            "loss and the gradients that @update takes");
    real = cast<RankedTensorType>(main.getResultTypes()[0]).getElementType();
    if (!real.isF32() && !real.isF64())
      return main.emitError("the CPU target trains in f32 or f64, not ")
             << real;
    for (auto [index, type] :
         llvm::enumerate(main.getResultTypes().take_front(*outputs)))
      if (cast<RankedTensorType>(type).getElementType() != real ||
          (index > 0 && update.getArgumentTypes()[index - 1] != type))
        return main.emitError("result ")
               << index << " does not match the loss type or @update";
  }

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
  std::string sourceModel;
  if (failed(readParameters(module, parameters, sourceModel)))
    return failure();
  StageArtifacts stage;
  if (failed(emitStage(main, "runMicrobatch", parameters, stage)) ||
      (training && failed(emitStage(update, "runUpdate", parameters, stage))))
    return failure();

  std::string source;
  llvm::raw_string_ostream src(source);
  src << "// Generated by pipe-opt: stage 0 on the host CPU. Do not edit.\n"
      << "#include \"Kernels.h\"\n#include \"Npy.h\"\n";
  if (training)
    src << "#include \"OnnxSave.h\"\n\n#include <sys/stat.h>\n";
  src << "\n#include <algorithm>\n#include <chrono>\n#include <cmath>\n"
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
  if (training) {
    // What --save-onnx writes back: the trainable parameters and those
    // @main updates itself (running statistics), not the optimizer state.
    llvm::StringSet<> updated;
    for (unsigned i = 0, e = main.getNumResults(); i < e; ++i)
      if (auto assigned =
              main.getResultAttrOfType<FlatSymbolRefAttr>(i, "pipe.assign"))
        updated.insert(assigned.getValue());
    src << "using Real = " << (real.isF32() ? "float" : "double") << ";\n"
        << "constexpr int64_t kMicrobatches = " << options.microbatches
        << ";\nstruct Trained {\n  const char *name;\n  int64_t offset, "
           "bytes;\n};\nconst Trained kTrained[] = {\n";
    for (const WeightEntry &entry : stage.parameters)
      if (entry.trainable || updated.contains(entry.name))
        src << "    {\"" << entry.name << "\", " << entry.offset << ", "
            << tensorBytes(entry.type) << "},\n";
    src << "};\n";
  }
  src << "} // namespace\n"
      << kStageCommon << "\n"
      << stage.source << (training ? kTrainingMain : kInferenceMain);

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
      {"microbatches", training ? options.microbatches : 1},
      {"training", training},
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
      failed(writeFile(loc, stageDir + "/weights.json", weightsIndex(stage))) ||
      failed(writeFile(loc, temporary + "/plan.json", planText)) ||
      failed(writeFile(loc, temporary + "/run",
                       training ? kTrainingLauncher : kInferenceLauncher)))
    return failure();
  llvm::sys::fs::setPermissions(
      temporary + "/run", llvm::sys::fs::all_read | llvm::sys::fs::all_exe |
                              llvm::sys::fs::owner_write);
  if (training && !sourceModel.empty())
    if (std::error_code error =
            llvm::sys::fs::copy_file(sourceModel, temporary + "/model.onnx"))
      return emitError(loc) << "cannot copy the model '" << sourceModel
                            << "': " << error.message();
  if (options.compile && failed(compileStage(loc, stageDir, options, training)))
    return failure();

  llvm::sys::fs::remove_directories(outDir);
  if (std::error_code error = llvm::sys::fs::rename(temporary, outDir))
    return emitError(loc) << "cannot move the output into '" << outDir
                          << "': " << error.message();
  cleanup.release();
  return success();
}
