//===- PipelineProgram.cpp - a pipeline of CPU stages ---------------------===//
//
// `--emit=sources|binaries` for a module split into pipe.stage ops: per
// stage, stage<k>/main.cpp holds its compute functions (forward, backward,
// update) and the tables the stage driver (runtime/pipeline) reads, with
// its weights; stage<k>/stage<k> is compiled against the runtime, the
// stages in parallel. OUT/run launches one process per stage with mpirun,
// and OUT/plan.json is the plan with what compiling the stages measured.
// Everything is written to a temporary folder and renamed into place.
//
//===----------------------------------------------------------------------===//

#include "pipe/Target/CPU/CPUTarget.h"

#include "ProgramFiles.h"
#include "StageEmitter.h"

#include "pipe/Dialect/Pipe/IR/PipeOps.h"
#include "pipe/Plan/PlanDriver.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <cstdio>
#include <set>
#include <unistd.h>

using namespace mlir;
using namespace mlir::pipe;

namespace {
/// One function of a stage, rewritten for the driver: receives are
/// arguments, sends results.
struct FunctionSpec {
  std::string name;
  std::vector<PortSpec> args, results;
};
} // namespace

/// Runs the body of every pipe.recompute in `func` in its place: the
/// driver's functions recompute inline.
static void inlineRecompute(func::FuncOp func) {
  SmallVector<RecomputeOp> regions;
  func.walk([&](RecomputeOp op) { regions.push_back(op); });
  for (RecomputeOp op : regions) {
    OpBuilder builder(op);
    IRMapping mapping;
    Block &body = op.getBody().front();
    mapping.map(body.getArguments(), op.getInputs());
    for (Operation &nested : body.without_terminator())
      builder.clone(nested, mapping);
    auto yield = cast<YieldOp>(body.getTerminator());
    for (auto [result, value] : llvm::zip(op.getResults(), yield.getValues()))
      result.replaceAllUsesWith(mapping.lookup(value));
    op.erase();
  }
}

/// Turns the receives of `func` into arguments and its sends into results
/// (before those that assign parameters), and describes its ports.
static FailureOr<FunctionSpec> rewriteForDriver(func::FuncOp func,
                                                bool training) {
  FunctionSpec spec;
  spec.name = func.getSymName().str();
  inlineRecompute(func);
  Block &body = func.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  SmallVector<DictionaryAttr> argAttrs;
  func.getAllArgAttrs(argAttrs);
  int64_t recvs = 0, sends = 0;
  SmallVector<std::pair<Value, int64_t>> sent;
  for (Operation &op : llvm::make_early_inc_range(body)) {
    if (auto recv = dyn_cast<RecvOp>(op)) {
      BlockArgument argument = body.addArgument(recv.getType(), recv.getLoc());
      recv.getValue().replaceAllUsesWith(argument);
      argAttrs.push_back(DictionaryAttr::get(func.getContext()));
      spec.args.push_back({"Recv", "", recvs++, recv.getPeer(),
                           cast<RankedTensorType>(recv.getType())});
      recv.erase();
    } else if (auto send = dyn_cast<SendOp>(op)) {
      sent.push_back({send.getValue(), send.getPeer()});
      send.erase();
    }
  }
  // The arguments before the receives.
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
    auto type = cast<RankedTensorType>(func.getArgument(i).getType());
    auto name = func.getArgAttrOfType<StringAttr>(i, "pipe.name");
    auto stash = func.getArgAttrOfType<IntegerAttr>(i, kStashAttrName);
    PortSpec port{"", name ? name.str() : "", 0, 0, type};
    if (stash) {
      port.kind = "Stash";
      port.index = stash.getInt();
    } else if (spec.name == "update" && name && name.getValue() == "step")
      port.kind = "Step";
    else if (spec.name == "update")
      port.kind = "Gradient";
    else
      port.kind = "Input";
    spec.args.insert(spec.args.begin() + i, port);
  }

  SmallVector<Value> results;
  SmallVector<DictionaryAttr> resultAttrs, assignAttrs;
  SmallVector<Value> assigns;
  for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
    DictionaryAttr attrs = func.getResultAttrDict(i);
    if (func.getResultAttr(i, kAssignAttrName)) {
      assigns.push_back(value);
      assignAttrs.push_back(attrs);
      continue;
    }
    auto type = cast<RankedTensorType>(value.getType());
    auto name = func.getResultAttrOfType<StringAttr>(i, "pipe.name");
    PortSpec port{"", name ? name.str() : "", 0, 0, type};
    if (auto stash = func.getResultAttrOfType<IntegerAttr>(i, kStashAttrName)) {
      port.kind = "Stash";
      port.index = stash.getInt();
    } else if (func.getResultAttr(i, kGradOfAttrName))
      port.kind = "Gradient";
    else
      port.kind = training ? "Loss" : "Output";
    if (port.name.empty())
      port.name = "output" + std::to_string(i);
    spec.results.push_back(port);
    results.push_back(value);
    resultAttrs.push_back(attrs);
  }
  for (auto [value, peer] : sent) {
    spec.results.push_back(
        {"Send", "", sends++, peer, cast<RankedTensorType>(value.getType())});
    results.push_back(value);
    resultAttrs.push_back(DictionaryAttr::get(func.getContext()));
  }
  results.append(assigns);
  resultAttrs.append(assignAttrs);
  OpBuilder builder(ret);
  func::ReturnOp::create(builder, ret.getLoc(), results);
  ret.erase();
  func.setType(builder.getFunctionType(body.getArgumentTypes(),
                                       ValueRange(results).getTypes()));
  func.setAllArgAttrs(argAttrs);
  func.setAllResultAttrs(resultAttrs);
  if (training && spec.name == "forward" &&
      llvm::count_if(spec.results, [](const PortSpec &port) {
        return port.kind == "Loss";
      }) > 1)
    return func.emitError("a stage's forward pass returns more than the "
                          "loss besides its stash");
  return spec;
}

LogicalResult mlir::pipe::writePortTable(llvm::raw_ostream &os, Location loc,
                                         ArrayRef<PortSpec> ports) {
  os << "{";
  for (const PortSpec &port : ports) {
    std::string dtype = dtypeOf(port.type.getElementType());
    if (dtype.empty())
      return emitError(loc, "the CPU target cannot read or write ")
             << port.type.getElementType() << " tensors ('" << port.name
             << "')";
    os << "\n      {PortKind::" << port.kind << ", " << cppString(port.name)
       << ", " << port.index << ", " << port.peer << ", DType::" << dtype
       << ", {";
    llvm::interleaveComma(port.type.getShape(), os);
    os << "}},";
  }
  os << "}";
  return success();
}

/// The parameters `stage` owns and saves (before the transfers become
/// ports): the trainable ones its update computes, not the copies other
/// stages send it, and those its forward pass writes (running statistics).
static llvm::StringSet<> savedParameters(StageOp stage) {
  llvm::StringSet<> saved;
  for (auto func : stage.getBodyBlock()->getOps<func::FuncOp>()) {
    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
      auto assigned =
          func.getResultAttrOfType<FlatSymbolRefAttr>(i, kAssignAttrName);
      if (!assigned || value.getDefiningOp<RecvOp>())
        continue;
      auto parameter = dyn_cast_or_null<ParameterOp>(
          SymbolTable::lookupSymbolIn(stage, assigned.getAttr()));
      if (func.getSymName() == "forward" ||
          (parameter && parameter.getTrainable()))
        saved.insert(assigned.getValue());
    }
  }
  return saved;
}

namespace {
/// One stage, ready to be written and compiled.
struct StageFiles {
  int64_t index = 0;
  std::string source;
  StageArtifacts artifacts;
  /// A CUDA stage: its fused.h and GEMM sites, its architecture, and the
  /// toolchain that builds it (with `compile`).
  bool cuda = false;
  CUDAStageArtifacts cudaArtifacts;
  std::string arch;
  CUDAToolchain toolchain;
  /// The bytes the stage stashes per microbatch in flight, and the names of
  /// the parameters it saves.
  int64_t stashBytes = 0;
  llvm::json::Array parameters;
};
} // namespace

/// The launcher OUT/run of a pipeline. The "@...@" fields are filled in.
static const char *const kPipelineLauncher = R"sh(#!/usr/bin/env bash
# Generated by pipe-opt. Runs the pipeline in this folder: one process per
# stage, launched by mpirun.
#   run [--steps N] [--inputs DIR] [--outputs DIR] [--metrics FILE]
#       [--save-onnx FILE] [--trace FILE] [--bench N] [--hostfile FILE]
#       [--mpirun-args "..."]
set -euo pipefail
here="$(cd -- "$(dirname -- "$0")" > /dev/null && pwd)"
stages=@STAGES@
training=@TRAINING@
threads=(@THREADS@)
inputs="." outputs="" hostfile="" mpirun_args="" args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --inputs|--outputs|--steps|--metrics|--save-onnx|--trace|--bench|--hostfile|--mpirun-args)
      if [ $# -lt 2 ]; then echo "run: error: $1 needs a value" >&2; exit 2; fi ;;&
    --inputs) inputs="$2"; shift 2 ;;
    --outputs) outputs="$2"; shift 2 ;;
    --hostfile) hostfile="$2"; shift 2 ;;
    --mpirun-args) mpirun_args="$2"; shift 2 ;;
    --trace) args+=("$1" "$2"); shift 2 ;;
    --bench)
      if [ "$training" = 1 ]; then
        echo "run: error: --bench times inference pipelines; training reports each step's seconds in --metrics" >&2; exit 2
      fi
      args+=("$1" "$2"); shift 2 ;;
    --steps|--metrics|--save-onnx)
      if [ "$training" = 0 ]; then
        echo "run: error: $1 needs a training pipeline (pipe-opt --train)" >&2; exit 2
      fi
      args+=("$1" "$2"); shift 2 ;;
    -h|--help) sed -n '2,6p' "$0"; exit 0 ;;
    *) echo "run: error: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
if [ "$training" = 0 ]; then
  if [ -z "$outputs" ]; then echo "run: error: --outputs DIR is required" >&2; exit 2; fi
  mkdir -p "$outputs"
  args+=(--outputs "$outputs")
elif [ -n "$outputs" ]; then
  echo "run: error: --outputs is for inference pipelines; training reports the loss on stdout and in --metrics, and writes the model with --save-onnx" >&2; exit 2
fi
if ! command -v mpirun > /dev/null; then
  echo "run: error: mpirun not found; this pipeline of $stages stages needs OpenMPI (Debian: apt-get install openmpi-bin)" >&2; exit 2
fi
launch=(--bind-to none)
if [ -n "$hostfile" ]; then
  if [ ! -r "$hostfile" ]; then echo "run: error: cannot read the hostfile '$hostfile'" >&2; exit 2; fi
  slots=$(awk '{ sub(/#.*/, "") } NF { n = 1; for (i = 2; i <= NF; i++) if ($i ~ /^slots=/) { n = substr($i, 7) + 0 } total += n } END { print total + 0 }' "$hostfile")
  if [ "$slots" -lt "$stages" ]; then
    echo "run: error: the hostfile '$hostfile' has $slots slots for $stages stages; each stage needs one" >&2; exit 2
  fi
  launch+=(--hostfile "$hostfile")
else
  launch+=(--oversubscribe)
fi
model=()
if [ -f "$here/model.onnx" ]; then model=(--model "$here/model.onnx"); fi
# Bad inputs are rejected before any process starts; on one host, so is a
# missing or wrong GPU.
check=(--check-inputs)
if [ -z "$hostfile" ]; then check+=(--check-device); fi
for ((k = 0; k < stages; k++)); do
  "$here/stage$k/stage$k" "${check[@]}" --inputs "$inputs" "${model[@]}" "${args[@]}"
done
if [ "$(id -u)" = 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
apps=()
for ((k = 0; k < stages; k++)); do
  [ "$k" = 0 ] || apps+=(:)
  apps+=(-np 1 "$here/stage$k/stage$k" --inputs "$inputs" --weights "$here/stage$k/weights.bin" --threads "${threads[$k]}" "${model[@]}" "${args[@]}")
done
extra=()
if [ -n "$mpirun_args" ]; then read -r -a extra <<< "$mpirun_args"; fi
exec mpirun "${launch[@]}" "${extra[@]}" "${apps[@]}"
)sh";

/// Compiles every stage's main.cpp, all at once, and waits for them.
static LogicalResult compileStages(Location loc, StringRef folder,
                                   ArrayRef<StageFiles> stages,
                                   const CPUTargetOptions &options) {
  llvm::ErrorOr<std::string> compiler =
      llvm::sys::findProgramByName(options.compiler);
  if (!compiler)
    return emitError(loc) << "cannot find the C++ compiler '"
                          << options.compiler << "'";
  SmallVector<std::string> mpiIncludes, mpiLibraries;
  for (StringRef dir : llvm::split(StringRef(PIPE_MPI_INCLUDE_DIRS), '|'))
    if (!dir.empty())
      mpiIncludes.push_back(("-I" + dir).str());
  for (StringRef library : llvm::split(StringRef(PIPE_MPI_LIBRARIES), '|'))
    if (!library.empty())
      mpiLibraries.push_back(library.str());
  struct Job {
    llvm::sys::ProcessInfo process;
    std::string log;
    int64_t index;
  };
  SmallVector<Job> jobs;
  for (const StageFiles &stage : stages) {
    std::string dir = (folder + "/stage" + std::to_string(stage.index)).str();
    std::string binary = dir + "/stage" + std::to_string(stage.index);
    SmallVector<std::string> args;
    if (stage.cuda) {
      std::vector<std::string> command = cudaCompileCommand(
          stage.toolchain, stage.arch, dir + "/main.cu", binary);
      args.append(command.begin(), command.end());
    } else {
      args.push_back(*compiler);
      args.append(stageCompileFlags());
      args.append(mpiIncludes);
      args.append({dir + "/main.cpp", "-o", binary, PIPE_RUNTIME_MPI_LIBRARY,
                   PIPE_RUNTIME_PIPELINE_LIBRARY});
      args.append(runtimeLinkArgs());
      args.append(mpiLibraries);
    }
    SmallVector<StringRef> argRefs(args.begin(), args.end());
    Job job;
    job.log = dir + "/compile.log";
    job.index = stage.index;
    std::optional<StringRef> redirects[] = {std::nullopt, StringRef(job.log),
                                            StringRef(job.log)};
    std::string error;
    bool failedToStart = false;
    job.process =
        llvm::sys::ExecuteNoWait(args.front(), argRefs, std::nullopt, redirects,
                                 0, &error, &failedToStart);
    if (failedToStart)
      return emitError(loc)
             << "cannot run the compiler '" << args.front() << "': " << error;
    jobs.push_back(std::move(job));
  }
  LogicalResult result = success();
  for (Job &job : jobs) {
    std::string error;
    llvm::sys::ProcessInfo done =
        llvm::sys::Wait(job.process, std::nullopt, &error);
    if (done.ReturnCode != 0 && succeeded(result)) {
      auto buffer = llvm::MemoryBuffer::getFile(job.log);
      result = emitError(loc)
               << "compiling stage " << job.index << " failed"
               << (error.empty() ? "" : ": " + error) << "\n"
               << (buffer ? (*buffer)->getBuffer().take_back(4000)
                          : StringRef());
    }
    if (done.ReturnCode == 0)
      llvm::sys::fs::remove(job.log);
  }
  return result;
}

namespace {
/// The GPU a stage's device is: its host, and its index there (plan.json's
/// "gpu").
struct GpuPlace {
  std::string host;
  int64_t gpu = 0;
  bool operator!=(const GpuPlace &other) const {
    return host != other.host || gpu != other.gpu;
  }
};
} // namespace

static GpuPlace gpuPlace(StagePlanAttr stage) {
  GpuPlace place{stage.getHost().str(), 0};
  if (auto gpu = stage.getReport().getAs<IntegerAttr>("gpu"))
    place.gpu = gpu.getInt();
  return place;
}

/// A CUDA stage's fused.h: the arithmetic of its fused steps, and their
/// table, which tools and tests read.
static std::string fusedHeader(const CUDAStageArtifacts &cuda) {
  std::string text =
      "// Generated by pipe-opt: the fused elementwise steps of one CUDA\n"
      "// stage, each a __host__ __device__ function of one result element.\n"
      "// Do not edit.\n#pragma once\n\n#include \"HostDevice.h\"\n"
      "#include \"Math.h\"\n\n#include <algorithm>\n#include <cmath>\n"
      "#include <cstdint>\n#include <limits>\n\nnamespace pipe_rt {\n\n" +
      cuda.fusedHeader;
  text += "/// Every step: its name, result elements and operands' pointers,\n"
          "/// and a host loop over its elements.\n"
          "struct FusedStepInfo {\n  const char *name;\n  int64_t count;\n"
          "  int operands;\n  const char *const *operandPointers;\n"
          "  void (*host)(const void *const *operands, void *result);\n};\n"
          "inline const FusedStepInfo kFusedSteps[] = {\n";
  for (const std::string &step : cuda.fusedSteps)
    text += "    {\"" + step + "\", " + step + "::kCount, " + step +
            "::kOperands, " + step + "::kOperandPointers, &" + step +
            "::host},\n";
  text += "    {nullptr, 0, 0, nullptr, nullptr}};\n\n} // namespace pipe_rt\n";
  return text;
}

/// The C++ name of phase `phase` in the runtime's tables.
static const char *stepPhaseName(Phase phase) {
  switch (phase) {
  case Phase::Forward:
    return "StepPhase::Forward";
  case Phase::Backward:
    return "StepPhase::Backward";
  case Phase::Update:
    return "StepPhase::Update";
  }
  return "";
}

/// Emits stage `stage` of `plan`: its functions, tables and main().
static LogicalResult emitStageFiles(StageOp stage, PlanAttr plan,
                                    const CPUTargetOptions &options,
                                    StageFiles &files,
                                    std::string &sourceModel) {
  Location loc = stage.getLoc();
  files.index = stage.getIndex();
  StagePlanAttr stagePlan = plan.getStage(files.index);
  files.arch = stagePlan.getArch().str();
  files.cuda = !options.allOnCPU && files.arch != "cpu";
  if (files.cuda && options.compile) {
    FailureOr<CUDAToolchain> toolchain = findCUDAToolchain(
        loc, files.index, stagePlan.getDevice().getValue(),
        stagePlan.getKind().getValue(), files.arch, options.cuda);
    if (failed(toolchain))
      return failure();
    files.toolchain = *toolchain;
  }
  llvm::StringMap<std::string> parameterData;
  if (failed(readParameters(stage, parameterData, sourceModel)))
    return failure();
  llvm::StringSet<> saved = savedParameters(stage);
  auto program = stage->getAttrOfType<ArrayAttr>(kProgramAttrName);
  if (!program)
    return stage.emitOpError("has no program; run --pipe-schedule first");

  std::string tables;
  llvm::raw_string_ostream os(tables);
  os << "int main(int argc, char **argv) {\n"
     << "  StageTable table;\n"
     << "  table.index = " << files.index << ";\n"
     << "  table.numStages = " << plan.getNumStages() << ";\n"
     << "  table.device = " << cppString(stagePlan.getDevice().getValue())
     << ";\n"
     << "  table.kind = " << cppString(stagePlan.getKind().getValue()) << ";\n"
     << "  table.training = " << (plan.getTraining() ? "true" : "false")
     << ";\n"
     << "  table.microbatches = " << plan.getMicrobatches() << ";\n";
  // The stages it exchanges tensors with.
  std::set<int64_t> peers;
  for (StringRef name : {"forward", "backward", "update"}) {
    auto func = dyn_cast_or_null<func::FuncOp>(
        SymbolTable::lookupSymbolIn(stage, name));
    if (!func)
      continue;
    if (name == "forward")
      for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
        if (func.getResultAttr(i, kStashAttrName))
          files.stashBytes += tensorBytes(func.getResultTypes()[i]);
    FailureOr<FunctionSpec> spec = rewriteForDriver(func, plan.getTraining());
    std::string function = ("stage_" + name).str();
    if (failed(spec) ||
        failed(files.cuda
                   ? emitCUDAStage(func, function, parameterData,
                                   files.artifacts, files.cudaArtifacts)
                   : emitStage(func, function, parameterData, files.artifacts)))
      return failure();
    os << "  table." << name << ".run = stage_" << name << ";\n"
       << "  table." << name << ".args = ";
    for (const std::vector<PortSpec> *ports : {&spec->args, &spec->results})
      for (const PortSpec &port : *ports)
        if (port.kind == "Recv" || port.kind == "Send")
          peers.insert(port.peer);
    if (failed(writePortTable(os, loc, spec->args)))
      return failure();
    os << ";\n  table." << name << ".results = ";
    if (failed(writePortTable(os, loc, spec->results)))
      return failure();
    os << ";\n";
  }
  os << "  table.program = {";
  for (Attribute entry : program) {
    if (auto step = dyn_cast<StepAttr>(entry))
      os << "\n      {false, " << stepPhaseName(step.getPhase()) << ", "
         << step.getMicrobatch() << ", 0},";
    else if (auto post = dyn_cast<PostAttr>(entry))
      os << "\n      {true, " << stepPhaseName(post.getPhase()) << ", "
         << post.getMicrobatch() << ", " << post.getSend() << "},";
  }
  os << "};\n  table.saved = {";
  for (const WeightEntry &entry : files.artifacts.parameters)
    if (saved.contains(entry.name)) {
      os << "\n      {" << cppString(entry.name) << ", " << entry.offset << ", "
         << tensorBytes(entry.type) << "},";
      files.parameters.push_back(entry.name);
    }
  os << "};\n"
     << "  table.weightBytes = " << files.artifacts.weights.size() << ";\n"
     << "  table.arenaBytes = " << files.artifacts.arenaBytes << ";\n";
  if (files.cuda) {
    // NCCL joins CUDA stages on different GPUs; NCCL refuses two ranks on
    // one GPU, so stages that share one, and CPU stages, go over MPI.
    GpuPlace place = gpuPlace(stagePlan);
    os << "  table.gpu = " << place.gpu << ";\n  table.arch = "
       << StringRef(files.arch).drop_front(3).take_while(llvm::isDigit)
       << ";\n  table.ncclPeers = {";
    for (int64_t peer : peers) {
      StagePlanAttr other = plan.getStage(peer);
      if (!options.allOnCPU && other.getArch().getValue() != "cpu" &&
          gpuPlace(other) != place)
        os << peer << ", ";
    }
    os << "};\n  table.prepare = prepareStage;\n"
       << "  return runStage(table, argc, argv, cuda::createTransport, "
          "cuda::createDevice);\n}\n";
  } else
    os << "  return runStage(table, argc, argv, createMPITransport);\n}\n";

  llvm::raw_string_ostream src(files.source);
  src << "// Generated by pipe-opt: stage " << files.index << " of "
      << plan.getNumStages() << ", for device '"
      << stagePlan.getDevice().getValue() << "' ("
      << stagePlan.getKind().getValue()
      << (files.cuda ? ", " + files.arch : std::string())
      << "). Do not edit.\n";
  if (files.cuda) {
    src << "#include \"CudaRuntime.h\"\n#include \"Kernels.h\"\n"
        << "#include \"StageDriver.h\"\n\n"
        << "#include <algorithm>\n#include <cmath>\n#include <cstdint>\n"
        << "#include <limits>\n#include <string>\n\n"
        << "using namespace pipe_rt;\nnamespace kernels = pipe_rt::cuda;\n\n"
        << "#include \"fused.h\"\n\n"
        << files.artifacts.source << "\n";
    // The cuBLASLt plans of the stage's matrix products, made at start-up.
    const std::vector<std::string> &sites = files.cudaArtifacts.gemmSites;
    src << "namespace {\nkernels::GemmSite *const kGemmSites[] = {";
    for (const std::string &site : sites)
      src << "&" << site << ", ";
    src << "nullptr};\n\nbool prepareStage(std::string &error) {\n"
        << "  return kernels::prepareGemms(kGemmSites, " << sites.size()
        << ", error);\n}\n} // namespace\n\n";
  } else {
    src << "#include \"Kernels.h\"\n#include \"Math.h\"\n#include \"Npy.h\"\n"
        << "#include \"StageDriver.h\"\n\n"
        << "#include <algorithm>\n#include <cmath>\n#include <cstdint>\n"
        << "#include <cstring>\n#include <string>\n\n"
        << "using namespace pipe_rt;\nnamespace kernels = pipe_rt::cpu;\n\n"
        << files.artifacts.source << "\n";
  }
  src << tables;
  return success();
}

LogicalResult mlir::pipe::emitPipeline(ModuleOp module, StringRef outDir,
                                       const CPUTargetOptions &options) {
  Location loc = module.getLoc();
  auto plan = module->getAttrOfType<PlanAttr>(kPlanAttrName);
  if (!plan || !module->hasAttr(kScheduleVerifiedAttrName))
    return module.emitError("a pipeline needs a plan and a verified "
                            "schedule; run --pipe-schedule and "
                            "--pipe-verify-schedule first");
  SmallVector<StageOp> stages(module.getOps<StageOp>());
  llvm::sort(stages,
             [](StageOp a, StageOp b) { return a.getIndex() < b.getIndex(); });
  if (failed(checkOutputFolder(loc, outDir)))
    return failure();

  std::vector<StageFiles> files(stages.size());
  std::string sourceModel;
  for (auto [stage, stageFiles] : llvm::zip(stages, files))
    if (failed(emitStageFiles(stage, plan, options, stageFiles, sourceModel)))
      return failure();

  std::string temporary = temporaryFolder(outDir);
  llvm::scope_exit cleanup(
      [&] { llvm::sys::fs::remove_directories(temporary); });
  for (const StageFiles &stage : files) {
    std::string dir = temporary + "/stage" + std::to_string(stage.index);
    if (std::error_code error = llvm::sys::fs::create_directories(dir))
      return emitError(loc)
             << "cannot create '" << dir << "': " << error.message();
    if ((stage.cuda && failed(writeFile(loc, dir + "/fused.h",
                                        fusedHeader(stage.cudaArtifacts)))) ||
        failed(writeFile(loc, dir + (stage.cuda ? "/main.cu" : "/main.cpp"),
                         stage.source)) ||
        failed(writeFile(loc, dir + "/weights.bin", stage.artifacts.weights)) ||
        failed(writeFile(loc, dir + "/weights.json",
                         weightsIndex(stage.artifacts))))
      return failure();
  }

  // plan.json: the plan, and what compiling the stages measured.
  llvm::json::Object json = planToJSON(plan);
  json["format_version"] = 1;
  json["schedule_verified"] = true;
  llvm::json::Array *jsonStages = json.getArray("stages");
  std::string threads;
  for (auto [stage, stageFiles] : llvm::zip(stages, files)) {
    llvm::json::Object &entry = *(*jsonStages)[stageFiles.index].getAsObject();
    entry["parameters"] = llvm::json::Array(stageFiles.parameters);
    entry["stash_bytes_per_microbatch"] = stageFiles.stashBytes;
    entry["activation_arena_bytes"] = stageFiles.artifacts.arenaBytes;
    entry["target"] = stageFiles.cuda ? "cuda" : "cpu";
    if (stageFiles.cuda && options.compile)
      entry["toolchain"] = stageFiles.toolchain.name;
    llvm::json::Array steps;
    for (Attribute attr : stage->getAttrOfType<ArrayAttr>(kProgramAttrName)) {
      std::string text;
      llvm::raw_string_ostream os(text);
      if (auto step = dyn_cast<StepAttr>(attr))
        os << stringifyPhase(step.getPhase()) << " " << step.getMicrobatch();
      else if (auto post = dyn_cast<PostAttr>(attr))
        os << "post " << stringifyPhase(post.getPhase()) << " "
           << post.getMicrobatch() << " send " << post.getSend();
      steps.push_back(text);
    }
    entry["program"] = std::move(steps);
    int64_t cores = plan.getStage(stageFiles.index).getCores();
    threads += (threads.empty() ? "" : " ") +
               std::to_string(std::max<int64_t>(cores, 1));
  }
  std::string planText;
  llvm::raw_string_ostream planOs(planText);
  planOs << llvm::formatv("{0:2}", llvm::json::Value(std::move(json))) << "\n";
  std::string launcher = kPipelineLauncher;
  auto fill = [&](StringRef field, StringRef value) {
    size_t at = launcher.find(field.str());
    launcher.replace(at, field.size(), value.str());
  };
  fill("@STAGES@", std::to_string(files.size()));
  fill("@TRAINING@", plan.getTraining() ? "1" : "0");
  fill("@THREADS@", threads);
  if (failed(writeFile(loc, temporary + "/plan.json", planText)) ||
      failed(finishProgram(
          loc, temporary, outDir, launcher,
          plan.getTraining() ? StringRef(sourceModel) : StringRef(), [&] {
            return options.compile
                       ? compileStages(loc, temporary, files, options)
                       : success();
          })))
    return failure();
  cleanup.release();
  return success();
}
