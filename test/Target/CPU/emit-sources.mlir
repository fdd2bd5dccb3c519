// RUN: rm -rf %t && pipe-opt %s --emit=sources -o %t
// RUN: FileCheck %s --input-file=%t/stage0/main.cpp
// RUN: FileCheck %s --check-prefix=PLAN --input-file=%t/plan.json
// RUN: test -x %t/run && test -f %t/stage0/weights.bin && not test -e %t/stage0/stage0

// Parameters with inline values, so no model file is needed.
pipe.parameter @w : tensor<16x8xf32> trainable = dense<0.5> : tensor<16x8xf32>
pipe.parameter @b : tensor<16xf32> trainable = dense<0.25> : tensor<16xf32>

func.func @main(%x: tensor<4x8xf32> {pipe.name = "x"}) -> (tensor<4x16xf32> {pipe.name = "y"}) {
  %w = pipe.param_ref @w : tensor<16x8xf32>
  %b = pipe.param_ref @b : tensor<16xf32>
  %h = pipe.gemm %x, %w trans_b : tensor<4x8xf32>, tensor<16x8xf32>
  // add(bias) -> relu -> tanh fuse into one loop.
  %a = pipe.add %h, %b : tensor<4x16xf32>, tensor<16xf32>
  %r = pipe.relu %a : tensor<4x16xf32>
  %t = pipe.tanh %r : tensor<4x16xf32>
  // Three softmaxes in a row: a later one reuses an earlier one's buffer.
  %s = pipe.softmax %t axis 1 : tensor<4x16xf32>
  %s2 = pipe.softmax %s axis 1 : tensor<4x16xf32>
  %s3 = pipe.softmax %s2 axis 1 : tensor<4x16xf32>
  return %s3 : tensor<4x16xf32>
}

// CHECK: kernels::gemm(reinterpret_cast<const float *>(in[0]), reinterpret_cast<const float *>((weights + 0)), static_cast<const float *>(nullptr), nullptr, 0, reinterpret_cast<float *>((arena + [[GEMM:[0-9]+]])), 4, 16, 8, false, true
// The fused loop reads the gemm result and the broadcast bias, and writes
// tanh(relu(h + b)) once: one row of 16 per row of h, in which the bias is
// contiguous. A loop this small runs on one thread, without a parallel
// region.
// CHECK-NOT: #pragma omp
// CHECK: for (int64_t o = 0; o < 4; ++o) {
// CHECK-NEXT: for (int64_t j = 0; j < 16; ++j) {
// CHECK-NEXT: const int64_t i = o * 16 + j;
// CHECK-NEXT: const float v0 = reinterpret_cast<const float *>((arena + [[GEMM]]))[i];
// CHECK-NEXT: const float v1 = reinterpret_cast<const float *>((weights + 512))[j];
// CHECK-NEXT: const float v2 = (v0 + v1);
// CHECK-NEXT: const float v3 = (v2 > float(0) ? v2 : float(0));
// CHECK-NEXT: const float v4 = cpu::tanh(v3);
// CHECK-NEXT: dst[i] = v4;
// CHECK: kernels::softmax(
// CHECK: kernels::softmax(
// CHECK: kernels::softmax(
// CHECK: std::memcpy(out[0],
// The generated code ends in the tables the stage driver reads: the ports
// of the function, its program and its memory.
// CHECK: int main(int argc, char **argv) {
// CHECK: table.forward.run = runMicrobatch;
// CHECK-NEXT: table.forward.args = {
// CHECK-NEXT: {PortKind::Input, "x", 0, 0, DType::F32, {4, 8}},
// CHECK: table.forward.results = {
// CHECK-NEXT: {PortKind::Output, "y", 0, 0, DType::F32, {4, 16}},
// CHECK: table.arenaBytes = 512;
// CHECK-NEXT: return runStage(table, argc, argv);

// PLAN: "activation_arena_bytes": 512,
// PLAN: "activation_bytes_without_reuse": 1280,
// The work counted by each op's CostOpInterface: 2 * 64 * 8 for the gemm,
// 64 for each of add, relu and tanh, 5 * 64 for each softmax.
// PLAN: "flops": 2176,
// PLAN: "fused_loops": 1,
// PLAN: "kernel_calls": 4,
// PLAN: "param_bytes": 576,
// PLAN: "predicted_peak_memory_bytes":
