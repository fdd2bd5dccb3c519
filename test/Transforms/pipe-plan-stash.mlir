// RUN: pipe-opt %S/Inputs/tied-skip.mlir --pipe-prepare="train=true" --pipe-plan="cluster=%S/Inputs/three-cpus.json training=true microbatches=2 cut-after=first,middle device-order=c0,c1,c2 recompute=none" --pipe-training --pipe-stages | FileCheck %s --check-prefix=NONE
// RUN: pipe-opt %S/Inputs/tied-skip.mlir --pipe-prepare="train=true" --pipe-plan="cluster=%S/Inputs/three-cpus.json training=true microbatches=2 cut-after=first,middle device-order=c0,c1,c2 recompute=selective" --pipe-training --pipe-stages | FileCheck %s --check-prefix=SELECTIVE
// RUN: pipe-opt %S/Inputs/tied-skip.mlir --pipe-prepare="train=true" --pipe-plan="cluster=%S/Inputs/three-cpus.json training=true microbatches=2 cut-after=first,middle device-order=c0,c1,c2 recompute=full" --pipe-training --pipe-stages | FileCheck %s --check-prefix=FULL

// The stash --pipe-plan predicts per stage and microbatch is what
// --pipe-split-stages makes the stage keep: its @forward's pipe.stash
// results, 512 bytes each (tensor<8x16xf32>). Its recompute buffer is
// what the stage's pipe.recompute region rebuilds: the region's results. The stages are the nodes
// "first" (a = x * w, b = tanh a), "middle" (c = b * v, d = sigmoid c) and
// "skip" (e = d + a, f = e * w, the loss from f * f).

// Without recompute a stage keeps what its gradient ops read: b (tanh's
// gradient); the received b (v's gradient) and d; e (w's gradient) and f.
// NONE: stage_plan<index = 0, {{[^>]*}} recompute_buffer = 0 : i64, stash_per_microbatch = 512 : i64
// NONE-SAME: stage_plan<index = 1, {{[^>]*}} stash_per_microbatch = 1024 : i64
// NONE-SAME: stage_plan<index = 2, {{[^>]*}} stash_per_microbatch = 1024 : i64
// NONE-LABEL: pipe.stage @stage0
// NONE: func.func @forward(%{{.*}}) -> (tensor<8x16xf32> {pipe.stash = 0 : i64}) {
// NONE-LABEL: pipe.stage @stage1
// NONE: func.func @forward() -> (tensor<8x16xf32> {pipe.stash = 0 : i64}, tensor<8x16xf32> {pipe.stash = 1 : i64}) {
// NONE-LABEL: pipe.stage @stage2
// NONE: func.func @forward() -> (tensor<f32> {pipe.name = "loss"}, tensor<8x16xf32> {pipe.stash = 0 : i64}, tensor<8x16xf32> {pipe.stash = 1 : i64}) {

// Selective recompute keeps contraction results and what the stage
// receives, where its backward pass or what it rebuilds reads them: a;
// b and c; the received d and a (to rebuild e) and f. Stage 2 keeps more
// than without recompute, and the plan says so. Each stage rebuilds one
// value: b, d and e.
// SELECTIVE: stage_plan<index = 0, {{[^>]*}} recompute_buffer = 512 : i64, stash_per_microbatch = 512 : i64
// SELECTIVE-SAME: stage_plan<index = 1, {{[^>]*}} recompute_buffer = 512 : i64, stash_per_microbatch = 1024 : i64
// SELECTIVE-SAME: stage_plan<index = 2, {{[^>]*}} recompute_buffer = 512 : i64, stash_per_microbatch = 1536 : i64
// SELECTIVE-LABEL: pipe.stage @stage0
// SELECTIVE: func.func @forward(%{{.*}}) -> (tensor<8x16xf32> {pipe.stash = 0 : i64}) {
// SELECTIVE: pipe.recompute({{.*}}) -> tensor<8x16xf32> {
// SELECTIVE-LABEL: pipe.stage @stage1
// SELECTIVE: func.func @forward() -> (tensor<8x16xf32> {pipe.stash = 0 : i64}, tensor<8x16xf32> {pipe.stash = 1 : i64}) {
// SELECTIVE: pipe.recompute({{.*}}) -> tensor<8x16xf32> {
// SELECTIVE-LABEL: pipe.stage @stage2
// SELECTIVE: func.func @forward() -> (tensor<f32> {pipe.name = "loss"}, tensor<8x16xf32> {pipe.stash = 0 : i64}, tensor<8x16xf32> {pipe.stash = 1 : i64}, tensor<8x16xf32> {pipe.stash = 2 : i64}) {
// SELECTIVE: pipe.recompute({{.*}}) -> tensor<8x16xf32> {

// Full recompute keeps only what the stage receives: nothing on stage 0,
// whose input is the graph's; b; d and a. What the backward pass reads
// and the stage no longer keeps is rebuilt: b on stage 0, d on stage 1,
// e and f on stage 2.
// FULL: stage_plan<index = 0, {{[^>]*}} recompute_buffer = 512 : i64, stash_per_microbatch = 0 : i64
// FULL-SAME: stage_plan<index = 1, {{[^>]*}} recompute_buffer = 512 : i64, stash_per_microbatch = 512 : i64
// FULL-SAME: stage_plan<index = 2, {{[^>]*}} recompute_buffer = 1024 : i64, stash_per_microbatch = 1024 : i64
// FULL-LABEL: pipe.stage @stage0
// FULL: func.func @forward(%{{.*}}: tensor<8x16xf32> {pipe.name = "x"}) {
// FULL: pipe.recompute({{.*}}) -> tensor<8x16xf32> {
// FULL-LABEL: pipe.stage @stage1
// FULL: func.func @forward() -> (tensor<8x16xf32> {pipe.stash = 0 : i64}) {
// FULL: pipe.recompute({{.*}}) -> tensor<8x16xf32> {
// FULL-LABEL: pipe.stage @stage2
// FULL: func.func @forward() -> (tensor<f32> {pipe.name = "loss"}, tensor<8x16xf32> {pipe.stash = 0 : i64}, tensor<8x16xf32> {pipe.stash = 1 : i64}) {
// FULL: pipe.recompute({{.*}}) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
