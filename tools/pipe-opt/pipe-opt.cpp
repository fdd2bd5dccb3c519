//===- pipe-opt.cpp - the pipe compiler driver ----------------------------===//
//
// `pipe-opt FILE.mlir [passes]` behaves like mlir-opt with the pipe dialect
// and passes registered. `pipe-opt MODEL.onnx [passes]` imports the model
// first and then runs the same pipeline on the imported IR.
//
//===----------------------------------------------------------------------===//

#include "pipe/Dialect/Pipe/IR/PipeDialect.h"
#include "pipe/Import/ONNX/ImportONNX.h"
#include "pipe/Pipelines/Pipelines.h"
#include "pipe/Plan/Cluster.h"
#include "pipe/Plan/PlanDriver.h"
#include "pipe/Target/CPU/CPUTarget.h"
#include "pipe/Transforms/Passes.h"
#include "pipe/Transforms/StagePasses.h"

#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/Sequence.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

static llvm::cl::OptionCategory onnxCategory("ONNX import options");

static llvm::cl::list<std::string> inputShapes(
    "input-shape",
    llvm::cl::desc("Static shape of a graph input with symbolic dimensions: "
                   "NAME=d0,d1,... (repeatable)"),
    llvm::cl::cat(onnxCategory));

static llvm::cl::OptionCategory compileCategory("Compilation options");

static llvm::cl::opt<std::string> emitKind(
    "emit",
    llvm::cl::desc("How far to go: mlir (IR after the given passes, the "
                   "default), plan (OUT/plan.json and a table of stages), "
                   "sources (per-stage C++ in the -o folder), binaries "
                   "(compiled stages and OUT/run)"),
    llvm::cl::init("mlir"), llvm::cl::cat(compileCategory));

static llvm::cl::opt<std::string> targetKind(
    "target",
    llvm::cl::desc("Code generation target of the stages: auto (each "
                   "stage's device's kind chooses: CUDA on GPUs; the "
                   "default), cpu (every stage on the CPU, emulating GPUs), "
                   "cuda (as auto, and every stage must be on a GPU)"),
    llvm::cl::init("auto"), llvm::cl::cat(compileCategory));

static llvm::cl::opt<std::string> cuda12Root(
    "cuda12-root",
    llvm::cl::desc("The CUDA 12 root clang builds V100 (sm_70) stages "
                   "against (default: $PIPE_CUDA12_ROOT, or the .cuda12/root "
                   "scripts/install-deps.sh assembles)"),
    llvm::cl::cat(compileCategory));

static llvm::cl::opt<std::string> nvccPath(
    "nvcc",
    llvm::cl::desc("The nvcc that builds CUDA stages (default: "
                   "$CUDA_PATH/bin/nvcc, the one pipe was built with, or "
                   "PATH's)"),
    llvm::cl::cat(compileCategory));

static llvm::cl::OptionCategory planCategory("Planning options");

static llvm::cl::opt<std::string> clusterPath(
    "cluster",
    llvm::cl::desc("The devices to plan for (cluster.json); without it, "
                   "this host's CPU"),
    llvm::cl::cat(planCategory));

static llvm::cl::opt<bool>
    train("train",
          llvm::cl::desc("Plan a training step (forward, backward and "
                         "optimizer); the default is inference"),
          llvm::cl::cat(planCategory));

static llvm::cl::opt<std::string>
    lossName("loss",
             llvm::cl::desc("With --train, the output to train on (by "
                            "default the model's only scalar output)"),
             llvm::cl::cat(planCategory));

static llvm::cl::list<std::string>
    freezePatterns("freeze",
                   llvm::cl::desc("With --train, keep the parameters "
                                  "matching these glob patterns fixed"),
                   llvm::cl::CommaSeparated, llvm::cl::cat(planCategory));

static llvm::cl::opt<unsigned>
    microbatches("microbatches",
                 llvm::cl::desc("Microbatches per step (default 1)"),
                 llvm::cl::init(1), llvm::cl::cat(planCategory));

static llvm::cl::opt<pipe::Schedule> schedule(
    "schedule", llvm::cl::desc("Pipeline schedule"),
    llvm::cl::values(clEnumValN(pipe::Schedule::OneFOneB, "1f1b",
                                "one forward, one backward (default)"),
                     clEnumValN(pipe::Schedule::GPipe, "gpipe",
                                "all forward passes, then all backward")),
    llvm::cl::init(pipe::Schedule::OneFOneB), llvm::cl::cat(planCategory));

enum class RecomputeChoice { Auto, None, Selective, Full };
static llvm::cl::opt<RecomputeChoice> recompute(
    "recompute", llvm::cl::desc("Activation recomputation per stage"),
    llvm::cl::values(clEnumValN(RecomputeChoice::Auto, "auto",
                                "the planner chooses per stage (default)"),
                     clEnumValN(RecomputeChoice::None, "none",
                                "keep every activation"),
                     clEnumValN(RecomputeChoice::Selective, "selective",
                                "keep contraction results, recompute the rest"),
                     clEnumValN(RecomputeChoice::Full, "full",
                                "keep stage inputs, recompute everything")),
    llvm::cl::init(RecomputeChoice::Auto), llvm::cl::cat(planCategory));

enum class OptimizerChoice { SGD, Adam, AdamW };
static llvm::cl::opt<OptimizerChoice> optimizer(
    "optimizer", llvm::cl::desc("Optimizer (its state counts in memory)"),
    llvm::cl::values(clEnumValN(OptimizerChoice::SGD, "sgd", "SGD (default)"),
                     clEnumValN(OptimizerChoice::Adam, "adam", "Adam"),
                     clEnumValN(OptimizerChoice::AdamW, "adamw", "AdamW")),
    llvm::cl::init(OptimizerChoice::SGD), llvm::cl::cat(planCategory));

static llvm::cl::opt<double>
    momentum("momentum", llvm::cl::desc("SGD momentum (default 0)"),
             llvm::cl::init(0), llvm::cl::cat(planCategory));

static llvm::cl::opt<double> learningRate(
    "lr",
    llvm::cl::desc("Learning rate (default 0.01 for SGD, 0.001 for Adam "
                   "and AdamW)"),
    llvm::cl::init(-1), llvm::cl::cat(planCategory));

static llvm::cl::opt<bool> nesterov("nesterov",
                                    llvm::cl::desc("SGD: Nesterov momentum"),
                                    llvm::cl::cat(planCategory));

static llvm::cl::opt<double>
    dampening("dampening",
              llvm::cl::desc("SGD: momentum dampening (default 0)"),
              llvm::cl::init(0), llvm::cl::cat(planCategory));

static llvm::cl::opt<double> weightDecay(
    "weight-decay",
    llvm::cl::desc("Weight decay (default 0, or 0.01 for AdamW, where it is "
                   "decoupled)"),
    llvm::cl::init(-1), llvm::cl::cat(planCategory));

static llvm::cl::opt<double> beta1("beta1",
                                   llvm::cl::desc("Adam: beta1 (default 0.9)"),
                                   llvm::cl::init(0.9),
                                   llvm::cl::cat(planCategory));

static llvm::cl::opt<double>
    beta2("beta2", llvm::cl::desc("Adam: beta2 (default 0.999)"),
          llvm::cl::init(0.999), llvm::cl::cat(planCategory));

static llvm::cl::opt<double> adamEps("eps",
                                     llvm::cl::desc("Adam: eps (default 1e-8)"),
                                     llvm::cl::init(1e-8),
                                     llvm::cl::cat(planCategory));

static llvm::cl::opt<pipe::Precision> precision(
    "precision",
    llvm::cl::desc("Precision of contractions (their peak FLOP/s; tensors keep "
                   "their element types)"),
    llvm::cl::values(clEnumValN(pipe::Precision::FP32, "fp32", "(default)"),
                     clEnumValN(pipe::Precision::TF32, "tf32", ""),
                     clEnumValN(pipe::Precision::BF16, "bf16", ""),
                     clEnumValN(pipe::Precision::FP16, "fp16", "")),
    llvm::cl::init(pipe::Precision::FP32), llvm::cl::cat(planCategory));

static llvm::cl::opt<unsigned>
    stages("stages",
           llvm::cl::desc("Number of pipeline stages (default: the "
                          "planner chooses)"),
           llvm::cl::init(0), llvm::cl::cat(planCategory));

static llvm::cl::opt<pipe::Partition> partition(
    "partition",
    llvm::cl::desc("How to choose the cuts (the others are baselines, "
                   "priced by the same cost model)"),
    llvm::cl::values(
        clEnumValN(pipe::Partition::Auto, "auto", "the planner (default)"),
        clEnumValN(pipe::Partition::Uniform, "uniform",
                   "equal node counts per stage (Megatron, DeepSpeed)"),
        clEnumValN(pipe::Partition::Parameters, "parameters",
                   "balanced parameter bytes (DeepSpeed)"),
        clEnumValN(pipe::Partition::SpeedBlind, "speed-blind",
                   "balanced time on the first device's speed (PipeDream)")),
    llvm::cl::init(pipe::Partition::Auto), llvm::cl::cat(planCategory));

static llvm::cl::list<std::string> cutAfter(
    "cut-after",
    llvm::cl::desc("Cut the pipeline after these ONNX nodes: NODE[,NODE...]"),
    llvm::cl::CommaSeparated, llvm::cl::cat(planCategory));

static llvm::cl::list<std::string> deviceOrder(
    "device-order",
    llvm::cl::desc("The device of each stage, in order: NAME[,NAME...]"),
    llvm::cl::CommaSeparated, llvm::cl::cat(planCategory));

static llvm::cl::opt<unsigned> exactLayers(
    "plan-exact-layers",
    llvm::cl::desc("Plan models of up to this many layers (ONNX nodes) "
                   "exactly; longer ones on as many blocks of layers, with "
                   "a proven gap (default 256, and longer ones exactly too "
                   "where that search is cheap)"),
    llvm::cl::init(256), llvm::cl::cat(planCategory));

static llvm::cl::opt<uint64_t> replaySteps(
    "plan-replay-steps",
    llvm::cl::desc("1F1B: the most pipeline steps the search for the least "
                   "replayed iteration simulates, and its search at the "
                   "incumbent on a second thread as many again; more "
                   "proves more plans the least (default 160000000, about "
                   "0.65 s at 100 layers on 16 devices of two kinds; 0: "
                   "bounds only). On blocks of layers only the bounds "
                   "count"),
    llvm::cl::init(pipe::PlanOptions().replaySteps),
    llvm::cl::cat(planCategory));

static llvm::cl::opt<std::string> timelinePath(
    "timeline",
    llvm::cl::desc("With --emit=plan, write the simulated iteration as a "
                   "Chrome trace (Perfetto, chrome://tracing)"),
    llvm::cl::cat(planCategory));

static llvm::cl::opt<bool> skipONNXChecker(
    "onnx-skip-checker",
    llvm::cl::desc("Do not run onnx::checker and ONNX shape inference"),
    llvm::cl::init(false), llvm::cl::cat(onnxCategory));

/// Prints import diagnostics as `FILE: error: OpType node 'name': message`.
static void printImportDiagnostic(Diagnostic &diag, StringRef path) {
  std::string message = diag.str();
  std::string prefix;
  if (auto name = dyn_cast<NameLoc>(diag.getLocation())) {
    auto child = dyn_cast<NameLoc>(name.getChildLoc());
    std::string opType = child ? child.getName().str() : "";
    if (!opType.empty() && !StringRef(message).starts_with(opType + " node"))
      prefix = opType + " node '" + name.getName().str() + "': ";
  }
  StringRef severity = diag.getSeverity() == DiagnosticSeverity::Error ? "error"
                       : diag.getSeverity() == DiagnosticSeverity::Warning
                           ? "warning"
                           : "note";
  llvm::errs() << path << ": " << severity << ": " << prefix << message << "\n";
}

/// Imports the ONNX model at `path` and returns its IR as a buffer, or null
/// after printing the errors.
static std::unique_ptr<llvm::MemoryBuffer>
importONNXToBuffer(StringRef path, DialectRegistry &registry) {
  pipe::ImportONNXOptions options;
  options.check = !skipONNXChecker;
  for (const std::string &spec : inputShapes) {
    std::string error = pipe::parseInputShapeOption(spec, options);
    if (!error.empty()) {
      llvm::errs() << "error: " << error << "\n";
      return nullptr;
    }
  }
  MLIRContext context(registry);
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    printImportDiagnostic(diag, path);
    return success();
  });
  OwningOpRef<ModuleOp> module = pipe::importONNXModel(path, &context, options);
  if (!module)
    return nullptr;
  // Hand the module over as bytecode: it keeps every op's location (the
  // ONNX node name) for the diagnostics of later passes, and its resource
  // blobs, and it parses faster than text.
  std::string bytes;
  llvm::raw_string_ostream os(bytes);
  if (failed(writeBytecodeToFile(*module, os))) {
    llvm::errs() << path << ": error: cannot serialize the imported IR\n";
    return nullptr;
  }
  return llvm::MemoryBuffer::getMemBufferCopy(bytes, path);
}

/// The --pipe-optimizer options of the command line.
static pipe::OptimizerOptions optimizerOptions() {
  pipe::OptimizerOptions options;
  options.optimizer = optimizer == OptimizerChoice::SGD    ? "sgd"
                      : optimizer == OptimizerChoice::Adam ? "adam"
                                                           : "adamw";
  options.lr = learningRate;
  options.momentum = momentum;
  options.dampening = dampening;
  options.nesterov = nesterov;
  options.weightDecay = weightDecay;
  options.beta1 = beta1;
  options.beta2 = beta2;
  options.eps = adamEps;
  return options;
}

/// The compilation options of the command line, for `module`.
static pipe::CompileOptions compileOptions(ModuleOp module) {
  pipe::CompileOptions compile;
  compile.train = train;
  compile.loss = lossName;
  compile.freeze.assign(freezePatterns.begin(), freezePatterns.end());
  // A module that already returns gradients (--pipe-autodiff's output) is
  // a training program: its forward pass keeps its training-mode ops.
  auto main = module.lookupSymbol<func::FuncOp>("main");
  compile.inferenceMode =
      !main || llvm::none_of(llvm::seq(main.getNumResults()), [&](unsigned i) {
        return main.getResultAttr(i, "pipe.grad_of") != nullptr;
      });
  // Code generation: a program of one stage runs on the CPU target, so its
  // layout applies (pipelines skip it).
  compile.channelsLast = emitKind == "sources" || emitKind == "binaries";
  compile.optimizer = optimizerOptions();
  pipe::PlanRequest &request = compile.plan;
  request.clusterPath = clusterPath;
  request.timelinePath = timelinePath;
  request.partition = partition;
  request.cutAfter.assign(cutAfter.begin(), cutAfter.end());
  request.deviceOrder.assign(deviceOrder.begin(), deviceOrder.end());
  pipe::PlanOptions &options = request.options;
  options.training = train;
  options.schedule = schedule;
  options.microbatches = microbatches;
  options.precision = precision;
  options.stages = stages;
  if (exactLayers.getNumOccurrences())
    options.maxExactLayers = exactLayers;
  options.replaySteps = replaySteps;
  switch (recompute) {
  case RecomputeChoice::Auto:
    break;
  case RecomputeChoice::None:
    options.recompute = pipe::Recompute::None;
    break;
  case RecomputeChoice::Selective:
    options.recompute = pipe::Recompute::Selective;
    break;
  case RecomputeChoice::Full:
    options.recompute = pipe::Recompute::Full;
    break;
  }
  if (train)
    options.optimizer = optimizer != OptimizerChoice::SGD
                            ? pipe::Optimizer::Adam
                        : momentum != 0 ? pipe::Optimizer::SGDMomentum
                                        : pipe::Optimizer::SGD;
  return compile;
}

/// `--emit=plan|sources|binaries`: parses `input`, then plans it or lowers
/// it, writing into the folder `outDir`.
static int compileProgram(std::unique_ptr<llvm::MemoryBuffer> input,
                          StringRef inputPath, StringRef outDir,
                          DialectRegistry &registry,
                          const MlirOptMainConfig &config) {
  if (targetKind != "auto" && targetKind != "cpu" && targetKind != "cuda") {
    llvm::errs() << "error: unknown --target '" << targetKind
                 << "' (known: auto, cpu, cuda)\n";
    return 1;
  }
  if (outDir.empty() || outDir == "-") {
    llvm::errs() << "error: --emit=" << emitKind
                 << " needs an output folder: -o OUT\n";
    return 1;
  }
  if (microbatches < 1 || microbatches > pipe::kMaxMicrobatches) {
    llvm::errs() << "error: --microbatches must be between 1 and "
                 << pipe::kMaxMicrobatches << "\n";
    return 1;
  }
  if (!train && (!lossName.empty() || !freezePatterns.empty())) {
    llvm::errs() << "error: --loss and --freeze need --train\n";
    return 1;
  }
  for (llvm::cl::opt<double> *option :
       {&learningRate, &dampening, &weightDecay, &adamEps, &momentum})
    if (option->getNumOccurrences() && !(*option >= 0)) {
      llvm::errs() << "error: --" << option->ArgStr
                   << " must not be negative, not " << *option << "\n";
      return 1;
    }
  for (llvm::cl::Option *option : std::initializer_list<llvm::cl::Option *>{
           &learningRate, &nesterov, &dampening, &weightDecay, &beta1, &beta2,
           &adamEps, &momentum, &optimizer})
    if (!train && option->getNumOccurrences()) {
      llvm::errs() << "error: --" << option->ArgStr
                   << " is an optimizer option; it needs --train\n";
      return 1;
    }
  if (!train && schedule != pipe::Schedule::OneFOneB) {
    llvm::errs() << "error: --schedule orders the forward and backward "
                    "passes of training; it needs --train\n";
    return 1;
  }
  if (!train && recompute != RecomputeChoice::Auto) {
    llvm::errs() << "error: --recompute trades stashed activations for "
                    "time in the backward pass; it needs --train\n";
    return 1;
  }
  if (stages.getNumOccurrences() && stages < 1) {
    llvm::errs() << "error: --stages must be at least 1 (without it, the "
                    "planner chooses)\n";
    return 1;
  }
  if (timelinePath.getNumOccurrences() && timelinePath.empty()) {
    llvm::errs() << "error: --timeline needs a file name\n";
    return 1;
  }
  if (exactLayers < 2) {
    llvm::errs() << "error: --plan-exact-layers must be at least 2\n";
    return 1;
  }
  bool planOnly = emitKind == "plan";
  if (replaySteps.getNumOccurrences() &&
      (!planOnly || !train || schedule != pipe::Schedule::OneFOneB)) {
    llvm::errs() << "error: --plan-replay-steps bounds the search for the "
                    "least 1F1B replay; it needs --emit=plan, --train and "
                    "--schedule=1f1b\n";
    return 1;
  }
  // A cluster or a hand-given split makes a pipeline of stages.
  bool pipeline =
      !planOnly && (!clusterPath.empty() || stages.getNumOccurrences() ||
                    partition != pipe::Partition::Auto || !cutAfter.empty() ||
                    !deviceOrder.empty());
  if (!train && microbatches > 1 && !planOnly) {
    llvm::errs() << "error: --microbatches sets the microbatches of a "
                    "training step (--train); for inference, each input "
                    "file holds as many as it has\n";
    return 1;
  }
  if (!planOnly && !timelinePath.empty()) {
    llvm::errs() << "error: --timeline needs --emit=plan\n";
    return 1;
  }
  std::optional<pipe::PlanOutputs> planOutputs;
  if (planOnly) {
    llvm::Expected<pipe::PlanOutputs> outputs =
        pipe::PlanOutputs::create(outDir, timelinePath);
    if (!outputs) {
      llvm::errs() << inputPath
                   << ": error: " << llvm::toString(outputs.takeError())
                   << "\n";
      return 1;
    }
    planOutputs.emplace(std::move(*outputs));
  }
  // Whatever fails from here leaves no partial output.
  auto discard = llvm::make_scope_exit([&] {
    if (planOutputs)
      planOutputs->discard();
  });
  MLIRContext context(registry);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;
  // Ops imported from ONNX carry loc("<node>"("<op type>"(file))), and
  // the module and @main the model file at line 0: report those by node,
  // or by file, and so errors on the module; everything else by source
  // line.
  Location moduleLoc = module->getLoc();
  ScopedDiagnosticHandler nodeHandler(&context, [&](Diagnostic &diag) {
    auto file = dyn_cast<FileLineColLoc>(diag.getLocation());
    auto name = dyn_cast<NameLoc>(diag.getLocation());
    bool wholeFile =
        (file && file.getLine() == 0) || diag.getLocation() == moduleLoc;
    if (!wholeFile && (!name || !isa<NameLoc>(name.getChildLoc())))
      return failure();
    printImportDiagnostic(diag, inputPath);
    return success();
  });

  pipe::CompileOptions options = compileOptions(*module);
  module->walk([&](Operation *op) {
    if (auto name = dyn_cast<NameLoc>(op->getLoc()))
      options.plan.knownNodes.insert(name.getName().strref());
  });
  // The command line's pass-manager options and passes apply here as in
  // mlir-opt mode: the passes run first, then the compilation pipeline.
  DefaultTimingManager timing;
  applyDefaultTimingManagerCLOptions(timing);
  PassManager pm(&context);
  pm.enableVerifier(config.shouldVerifyPasses());
  if (failed(applyPassManagerCLOptions(pm)))
    return 1;
  TimingScope rootTiming = timing.getRootScope();
  pm.enableTiming(rootTiming);
  if (failed(config.setupPassPipeline(pm)))
    return 1;
  pipe::buildCompilePipeline(pm, options,
                             planOnly   ? pipe::EmitLevel::Plan
                             : pipeline ? pipe::EmitLevel::Pipeline
                                        : pipe::EmitLevel::Program);
  if (failed(pm.run(*module)))
    return 1;
  if (planOnly) {
    if (llvm::Error error = planOutputs->write(*module, llvm::outs())) {
      llvm::errs() << inputPath
                   << ": error: " << llvm::toString(std::move(error)) << "\n";
      return 1;
    }
    return 0;
  }
  pipe::CPUTargetOptions target;
  target.compile = emitKind == "binaries";
  target.microbatches = microbatches;
  target.allOnCPU = targetKind == "cpu";
  target.cuda.nvcc = nvccPath;
  target.cuda.cuda12Root = cuda12Root;
  if (!pipeline) {
    if (targetKind == "cuda") {
      llvm::errs() << inputPath
                   << ": error: --target=cuda needs GPU devices: give a "
                      "--cluster whose devices are GPUs\n";
      return 1;
    }
    return failed(pipe::emitCPUProgram(*module, outDir, target)) ? 1 : 0;
  }
  // Each stage's device's kind chooses its target.
  auto plan = (*module)->getAttrOfType<pipe::PlanAttr>(pipe::kPlanAttrName);
  // The CUDA target computes in fp32 with TF32 off: a precision a GPU stage
  // lacks is an error naming it, and any other than fp32 is not built yet.
  if (targetKind != "cpu" && precision != pipe::Precision::FP32) {
    StringRef name = precision == pipe::Precision::TF32   ? "tf32"
                     : precision == pipe::Precision::BF16 ? "bf16"
                                                          : "fp16";
    for (unsigned s = 0, e = plan.getNumStages(); s < e; ++s) {
      pipe::StagePlanAttr stage = plan.getStage(s);
      if (stage.getArch().getValue() == "cpu")
        continue;
      if (pipe::runsOnFP32Units(stage.getKind().getValue(), name)) {
        llvm::errs() << inputPath << ": error: --precision=" << name
                     << ": stage " << s << " runs on device '"
                     << stage.getDevice().getValue() << "' ("
                     << stage.getKind().getValue()
                     << "), which has no " << name << " tensor cores\n";
        return 1;
      }
      llvm::errs() << inputPath << ": error: --precision=" << name
                   << ": the CUDA target computes in fp32 (TF32 off) only "
                      "yet; stage "
                   << s << " runs on device '" << stage.getDevice().getValue()
                   << "' (" << stage.getKind().getValue()
                   << "); --precision prices plans (--emit=plan)\n";
      return 1;
    }
  }
  if (targetKind == "cuda")
    for (unsigned s = 0, e = plan.getNumStages(); s < e; ++s)
      if (pipe::StagePlanAttr stage = plan.getStage(s);
          stage.getArch().getValue() == "cpu") {
        llvm::errs() << inputPath << ": error: --target=cuda: stage " << s
                     << " runs on device '" << stage.getDevice().getValue()
                     << "' (" << stage.getKind().getValue()
                     << "), a CPU; --target=auto puts it on the CPU target\n";
        return 1;
      }
  if (failed(pipe::emitPipeline(*module, outDir, target)))
    return 1;
  return 0;
}

/// Hides the options registered before MLIR's, outside pipe's categories
/// and LLVM's generic ones (--help, --version): those that the shared
/// libLLVM registers for its backends (--polly-*, --aarch64-*, ...), which
/// pipe does not use. They still parse. --help and the suggestions for a
/// mistyped flag leave them out; --help-hidden lists them.
static void hideBackendOptions(int argc, char **argv) {
  bool listHidden = llvm::any_of(llvm::ArrayRef(argv, argc), [](char *arg) {
    StringRef flag = StringRef(arg).ltrim('-');
    return flag == "help-hidden" || flag == "help-list-hidden";
  });
  const llvm::cl::OptionCategory *pipeCategories[] = {
      &onnxCategory, &compileCategory, &planCategory};
  for (auto &[name, option] : llvm::cl::getRegisteredOptions()) {
    bool kept = llvm::any_of(
        option->Categories, [&](const llvm::cl::OptionCategory *category) {
          return llvm::is_contained(pipeCategories, category) ||
                 category->getName() == "Generic Options";
        });
    if (!kept && option->getOptionHiddenFlag() != llvm::cl::ReallyHidden)
      option->setHiddenFlag(listHidden ? llvm::cl::Hidden
                                       : llvm::cl::ReallyHidden);
  }
}

int main(int argc, char **argv) {
  hideBackendOptions(argc, argv);
  registerCanonicalizerPass();
  registerCSEPass();
  registerSymbolDCEPass();
  registerInlinerPass();
  pipe::registerPipePasses();
  pipe::registerPipeStagePasses();
  pipe::registerPipePipelines();

  DialectRegistry registry;
  registry.insert<pipe::PipeDialect, func::FuncDialect, arith::ArithDialect,
                  tensor::TensorDialect>();

  llvm::cl::AddExtraVersionPrinter([](llvm::raw_ostream &os) {
    os << "pipe version " << PIPE_VERSION << "\n";
  });
  auto [inputFilename, outputFilename] = registerAndParseCLIOptions(
      argc, argv, "pipe compiler driver\n", registry);
  MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();

  std::unique_ptr<llvm::MemoryBuffer> input;
  if (StringRef(inputFilename).ends_with(".onnx")) {
    input = importONNXToBuffer(inputFilename, registry);
    if (!input)
      return 1;
  } else {
    std::string error;
    input = openInputFile(inputFilename, &error);
    if (!input) {
      llvm::errs() << "error: " << error << "\n";
      return 1;
    }
  }

  if (emitKind == "plan" || emitKind == "sources" || emitKind == "binaries")
    return compileProgram(std::move(input), inputFilename, outputFilename,
                          registry, config);
  if (emitKind != "mlir") {
    llvm::errs() << "error: unknown --emit '" << emitKind
                 << "' (known: mlir, plan, sources, binaries)\n";
    return 1;
  }

  std::string error;
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFilename, &error);
  if (!output) {
    llvm::errs() << "error: " << error << "\n";
    return 1;
  }
  if (failed(MlirOptMain(output->os(), std::move(input), registry, config)))
    return 1;
  // The output file is only kept on success: never a partial result.
  output->keep();
  return 0;
}
