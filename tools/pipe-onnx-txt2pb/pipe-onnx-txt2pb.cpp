//===- pipe-onnx-txt2pb.cpp - ONNX text format to binary model ------------===//
//
// Turns a model written in ONNX's text format into a binary ModelProto with
// ONNX's own parser (onnx/defs/parser.h). Tests describe their models in
// readable text and build them with this tool; no binary is hand-edited.
//
//   pipe-onnx-txt2pb model.onnxtxt -o model.onnx
//
//===----------------------------------------------------------------------===//

#include "onnx/defs/parser.h"
#include "onnx/onnx_pb.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

static llvm::cl::opt<std::string> inputFilename(llvm::cl::Positional,
                                                llvm::cl::desc("<input>"),
                                                llvm::cl::Required);
static llvm::cl::opt<bool> nameNodes(
    "name-nodes",
    llvm::cl::desc("Name every unnamed node after its first output (ONNX "
                   "1.12's text format has no syntax for node names)"),
    llvm::cl::init(false));
static llvm::cl::opt<std::string> outputFilename("o",
                                                 llvm::cl::desc("Output file"),
                                                 llvm::cl::value_desc("file"),
                                                 llvm::cl::Required);

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  llvm::cl::ParseCommandLineOptions(argc, argv,
                                    "ONNX text format to binary model\n");
  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(inputFilename);
  if (std::error_code error = buffer.getError()) {
    llvm::errs() << "error: cannot open '" << inputFilename
                 << "': " << error.message() << "\n";
    return 1;
  }
  onnx::ModelProto model;
  try {
    std::string text = (*buffer)->getBuffer().str();
    onnx::OnnxParser parser(text.c_str());
    onnx::Common::Status status = parser.Parse(model);
    if (!status.IsOK()) {
      llvm::errs() << "error: " << inputFilename << ": "
                   << status.ErrorMessage() << "\n";
      return 1;
    }
  } catch (const std::exception &error) {
    llvm::errs() << "error: " << inputFilename << ": " << error.what() << "\n";
    return 1;
  }
  if (nameNodes)
    for (onnx::NodeProto &node : *model.mutable_graph()->mutable_node())
      if (node.name().empty() && node.output_size() > 0)
        node.set_name(node.output(0));
  std::string bytes;
  if (!model.SerializeToString(&bytes)) {
    llvm::errs() << "error: cannot serialize the model\n";
    return 1;
  }
  std::error_code error;
  llvm::ToolOutputFile output(outputFilename, error, llvm::sys::fs::OF_None);
  if (error) {
    llvm::errs() << "error: cannot write '" << outputFilename
                 << "': " << error.message() << "\n";
    return 1;
  }
  output.os() << bytes;
  output.keep();
  return 0;
}
