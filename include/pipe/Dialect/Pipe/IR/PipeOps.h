//===- PipeOps.h - pipe dialect operations ----------------------*- C++ -*-===//

#ifndef PIPE_DIALECT_PIPE_IR_PIPEOPS_H
#define PIPE_DIALECT_PIPE_IR_PIPEOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/RegionKindInterface.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "pipe/Dialect/Pipe/IR/PipeDialect.h"

#include "pipe/Dialect/Pipe/IR/PipeEnums.h"
#include "pipe/Dialect/Pipe/IR/PipeInterfaces.h"

#define GET_ATTRDEF_CLASSES
#include "pipe/Dialect/Pipe/IR/PipeAttrs.h.inc"

namespace mlir {
namespace pipe {

/// The module attribute that holds the plan (a #pipe.plan), set by
/// --pipe-plan.
constexpr llvm::StringLiteral kPlanAttrName = "pipe.plan";
/// The attribute of an op that holds the index of its stage (i64).
constexpr llvm::StringLiteral kStageAttrName = "pipe.stage";
/// The attribute of an op that holds its phase (#pipe.phase).
constexpr llvm::StringLiteral kPhaseAttrName = "pipe.phase";
/// The result attribute of @main that names the parameter whose gradient
/// the result is.
constexpr llvm::StringLiteral kGradOfAttrName = "pipe.grad_of";
/// The result attribute that names the parameter a result is written to.
constexpr llvm::StringLiteral kAssignAttrName = "pipe.assign";
/// The attribute of a pipe.stage that holds its program (an array of
/// #pipe.step), set by --pipe-schedule.
constexpr llvm::StringLiteral kProgramAttrName = "pipe.program";
/// The module attribute --pipe-verify-schedule sets once it has proven the
/// stages' programs complete and deadlock-free.
constexpr llvm::StringLiteral kScheduleVerifiedAttrName =
    "pipe.schedule_verified";
/// The result attribute of a stage's @forward, and the argument attribute
/// of its @backward, that numbers a stashed value.
constexpr llvm::StringLiteral kStashAttrName = "pipe.stash";

/// Formats a shape as `[d0, d1, ...]` for diagnostics.
std::string formatShape(ArrayRef<int64_t> shape);

/// `bytes` for people, in binary units: "512 B", "1.5 GiB", "4.0 EiB".
std::string formatBytes(int64_t bytes);

/// Bytes a statically shaped tensor of `type` takes in memory: one byte per
/// bool (and per element narrower than a byte); 0 for other types.
/// INT64_MAX where the count overflows.
int64_t tensorBytes(Type type);
/// The same, or nullopt where the count overflows int64_t.
std::optional<int64_t> checkedTensorBytes(Type type);

/// `type` with its dimensions in the order `perm`: result dimension d is
/// `type`'s dimension perm[d].
RankedTensorType permutedType(RankedTensorType type, ArrayRef<int64_t> perm);

/// Constants with more elements than this are `dense_resource` blobs.
constexpr int64_t kMaxInlineElements = 256;

/// A constant of `type` from its little-endian `bytes` (one byte per bool):
/// inline `dense` up to kMaxInlineElements elements, else a `dense_resource`
/// blob named `name` (or "constant").
ElementsAttr elementsFromBytes(RankedTensorType type, StringRef name,
                               StringRef bytes);

/// Fails with an error unless every operand is a statically shaped ranked
/// tensor. Type inference runs while parsing, before operand constraints
/// are verified, so it must not compute with dynamic extents.
LogicalResult requireStaticShapes(std::optional<Location> loc,
                                  ValueRange operands);

/// Computes the numpy broadcast of `shapes`. Fails when two extents differ
/// and neither is 1.
FailureOr<SmallVector<int64_t>>
broadcastShapes(ArrayRef<ArrayRef<int64_t>> shapes);

/// Infers the result of an elementwise op over `operands` with numpy
/// broadcasting. The result element type is `elementType`, or the first
/// operand's element type when null.
LogicalResult inferBroadcastResult(std::optional<Location> loc,
                                   ArrayRef<Type> operands, Type elementType,
                                   SmallVectorImpl<Type> &results);

/// Checks that all `values` have the same element type.
LogicalResult verifySameElementType(Operation *op, ValueRange values);

/// Checks that `axis` is a valid non-negative axis of a rank-`rank` tensor,
/// reporting at `loc` (type inference) or on `op` (verifiers).
LogicalResult checkAxis(std::optional<Location> loc, int64_t axis,
                        int64_t rank);
LogicalResult verifyAxis(Operation *op, int64_t axis, int64_t rank);

/// Infers the result of a loss op from its scores and reduction.
LogicalResult inferLossResult(std::optional<Location> loc,
                              RankedTensorType scores, Reduction reduction,
                              SmallVectorImpl<Type> &results);

/// Checks the operand shapes of a loss op.
LogicalResult verifyLoss(Operation *op, RankedTensorType scores,
                         RankedTensorType labels, RankedTensorType weight);

} // namespace pipe
} // namespace mlir

#define GET_OP_CLASSES
#include "pipe/Dialect/Pipe/IR/PipeOps.h.inc"

#endif // PIPE_DIALECT_PIPE_IR_PIPEOPS_H
