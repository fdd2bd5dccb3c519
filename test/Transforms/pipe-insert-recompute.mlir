// RUN: pipe-opt %S/Inputs/tied-skip.mlir --pipe-prepare="train=true" --pipe-plan="cluster=%S/Inputs/three-cpus.json training=true microbatches=2 cut-after=first,middle device-order=c0,c1,c2 recompute=selective" --pipe-training --mlir-print-debuginfo | pipe-opt --pipe-partition --pipe-insert-comm | pipe-opt --pipe-insert-recompute | FileCheck %s --check-prefix=SELECTIVE
// RUN: pipe-opt %S/Inputs/tied-skip.mlir --pipe-prepare="train=true" --pipe-plan="cluster=%S/Inputs/three-cpus.json training=true microbatches=2 cut-after=first,middle device-order=c0,c1,c2 recompute=full" --pipe-training --mlir-print-debuginfo | pipe-opt --pipe-partition --pipe-insert-comm | pipe-opt --pipe-insert-recompute | FileCheck %s --check-prefix=FULL
// RUN: pipe-opt %S/Inputs/tied-skip.mlir --pipe-prepare="train=true" --pipe-plan="cluster=%S/Inputs/three-cpus.json training=true microbatches=2 cut-after=first,middle device-order=c0,c1,c2 recompute=none" --pipe-training --mlir-print-debuginfo | pipe-opt --pipe-partition --pipe-insert-comm | pipe-opt --pipe-insert-recompute | FileCheck %s --check-prefix=NONE
// RUN: pipe-opt %s --pipe-insert-recompute --verify-diagnostics

// Selective recomputation keeps stage 0's matmul and recomputes its tanh,
// for the tanh's gradient, from it.
// SELECTIVE-LABEL: func.func @main
// SELECTIVE: %[[A:.*]] = pipe.matmul %{{.*}}, %{{.*}} {pipe.phase = #pipe<phase forward>, pipe.stage = 0 : i64}
// SELECTIVE: %[[R:.*]] = pipe.recompute(%[[A]]) {pipe.phase = #pipe<phase backward>, pipe.stage = 0 : i64} : (tensor<8x16xf32>) -> tensor<8x16xf32> {
// SELECTIVE-NEXT: ^bb0(%[[IN:.*]]: tensor<8x16xf32>):
// SELECTIVE-NEXT: %[[T:.*]] = pipe.tanh %[[IN]] : tensor<8x16xf32>
// SELECTIVE-NEXT: pipe.yield %[[T]]
// SELECTIVE: pipe.mul %[[R]], %[[R]] {pipe.phase = #pipe<phase backward>, pipe.stage = 0 : i64}

// Full recomputation keeps stage 0's input alone and recomputes both.
// FULL-LABEL: func.func @main
// FULL: pipe.recompute(%arg0) {pipe.phase = #pipe<phase backward>, pipe.stage = 0 : i64}
// FULL-NEXT: ^bb0(%[[IN:.*]]: tensor<8x16xf32>):
// FULL-NEXT: %[[W:.*]] = pipe.param_ref @w
// FULL-NEXT: %[[M:.*]] = pipe.matmul %[[IN]], %[[W]]
// FULL-NEXT: %[[T:.*]] = pipe.tanh %[[M]]
// FULL-NEXT: pipe.yield %[[T]]

// NONE-NOT: pipe.recompute

// expected-error @below {{--pipe-insert-recompute needs a planned, partitioned @main; run --pipe-plan and --pipe-partition first}}
module {
}
