//===- pipe-opt.cpp - the pipe compiler driver ----------------------------===//
//
// `pipe-opt FILE.mlir [passes]` behaves like mlir-opt with the pipe dialect
// and passes registered.
//
//===----------------------------------------------------------------------===//

#include "pipe/Dialect/Pipe/IR/PipeDialect.h"
#include "pipe/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

int main(int argc, char **argv) {
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::registerSymbolDCEPass();
  mlir::registerInlinerPass();
  mlir::pipe::registerPipePasses();

  mlir::DialectRegistry registry;
  registry.insert<mlir::pipe::PipeDialect, mlir::func::FuncDialect,
                  mlir::arith::ArithDialect, mlir::tensor::TensorDialect>();

  llvm::cl::AddExtraVersionPrinter([](llvm::raw_ostream &os) {
    os << "pipe version " << PIPE_VERSION << "\n";
  });
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "pipe compiler driver\n", registry));
}
