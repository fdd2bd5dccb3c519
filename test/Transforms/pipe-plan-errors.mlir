// RUN: pipe-opt %s --pipe-plan="stages=2" --verify-diagnostics
// RUN: not pipe-opt %s --pipe-plan="schedule=zb" 2>&1 | FileCheck %s --check-prefix=SCHEDULE
// RUN: not pipe-opt %s --pipe-plan="cut-after=nowhere cluster=%S/../Plan/Inputs/two-gpus.json" 2>&1 | FileCheck %s --check-prefix=NODE
// RUN: not pipe-opt %s --pipe-plan="device-order=a0,zz cluster=%S/../Plan/Inputs/two-gpus.json" 2>&1 | FileCheck %s --check-prefix=DEVICE
// RUN: not pipe-opt %s --pipe-plan="cluster=%S/missing.json" 2>&1 | FileCheck %s --check-prefix=CLUSTER

// With no cluster, this host's CPU: one device, which cannot take two
// stages.
// expected-error @below {{2 stages need 2 devices, but the cluster has 1}}
module {
  func.func @main(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
    %y = pipe.relu %x : tensor<8x16xf32> loc("first")
    %z = pipe.tanh %y : tensor<8x16xf32> loc("second")
    return %z : tensor<8x16xf32>
  }
}
// SCHEDULE: error: --pipe-plan: unknown schedule 'zb' (known: gpipe, 1f1b)
// NODE: error: --cut-after: the model has no node 'nowhere'
// DEVICE: error: --device-order: the cluster has no device 'zz'
// CLUSTER: missing.json: cannot open: No such file or directory
