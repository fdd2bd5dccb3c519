//===- pipe-opt.cpp - the pipe compiler driver ----------------------------===//
//
// `pipe-opt FILE.mlir [passes]` behaves like mlir-opt with the pipe dialect
// and passes registered. `pipe-opt MODEL.onnx [passes]` imports the model
// first and then runs the same pipeline on the imported IR.
//
//===----------------------------------------------------------------------===//

#include "pipe/Dialect/Pipe/IR/PipeDialect.h"
#include "pipe/Import/ONNX/ImportONNX.h"
#include "pipe/Target/CPU/CPUTarget.h"
#include "pipe/Transforms/Passes.h"

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
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
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
                   "default), sources (per-stage C++ in the -o folder), "
                   "binaries (compiled stages and OUT/run)"),
    llvm::cl::init("mlir"), llvm::cl::cat(compileCategory));

static llvm::cl::opt<std::string>
    targetKind("target", llvm::cl::desc("Code generation target: cpu"),
               llvm::cl::init("cpu"), llvm::cl::cat(compileCategory));

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

/// `--emit=sources|binaries`: parses `input`, lowers it for inference and
/// writes the program into the folder `outDir`.
static int compileProgram(std::unique_ptr<llvm::MemoryBuffer> input,
                          StringRef inputPath, StringRef outDir,
                          DialectRegistry &registry) {
  if (targetKind != "cpu") {
    llvm::errs() << "error: unknown --target '" << targetKind
                 << "' (known: cpu)\n";
    return 1;
  }
  if (outDir.empty() || outDir == "-") {
    llvm::errs() << "error: --emit=" << emitKind
                 << " needs an output folder: -o OUT\n";
    return 1;
  }
  MLIRContext context(registry);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  // Ops imported from ONNX carry loc("<node>"("<op type>"(file))): report
  // those by node; everything else by source line.
  ScopedDiagnosticHandler nodeHandler(&context, [&](Diagnostic &diag) {
    auto name = dyn_cast<NameLoc>(diag.getLocation());
    if (!name || !isa<NameLoc>(name.getChildLoc()))
      return failure();
    printImportDiagnostic(diag, inputPath);
    return success();
  });
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;
  PassManager pm(&context);
  pm.addPass(createCanonicalizerPass());
  // Without --train the program is an inference pipeline; training-mode
  // batch normalization whose updated statistics the model returns stays.
  pm.addPass(pipe::createInferenceMode());
  pm.addPass(createCSEPass());
  pm.addPass(createCanonicalizerPass());
  if (failed(pm.run(*module)))
    return 1;
  pipe::CPUTargetOptions options;
  options.compile = emitKind == "binaries";
  if (failed(pipe::emitCPUProgram(*module, outDir, options)))
    return 1;
  return 0;
}

int main(int argc, char **argv) {
  registerCanonicalizerPass();
  registerCSEPass();
  registerSymbolDCEPass();
  registerInlinerPass();
  pipe::registerPipePasses();

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

  if (emitKind == "sources" || emitKind == "binaries")
    return compileProgram(std::move(input), inputFilename, outputFilename,
                          registry);
  if (emitKind != "mlir") {
    llvm::errs() << "error: unknown --emit '" << emitKind
                 << "' (known: mlir, sources, binaries)\n";
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
