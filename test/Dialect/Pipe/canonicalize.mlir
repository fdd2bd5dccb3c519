// RUN: pipe-opt %s -canonicalize -split-input-file | FileCheck %s

// The Shape -> Gather -> Unsqueeze -> Mul -> Concat chain of an exported
// model folds to a constant shape.
// CHECK-LABEL: func @shape_chain
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT: %[[C:.*]] = pipe.constant dense<[2, 12]> : tensor<2xi64>
// CHECK-NEXT: %[[R:.*]] = pipe.reshape %[[X]] : tensor<2x3x4xf32> to tensor<2x12xf32>
// CHECK-NEXT: return %[[R]], %[[C]]
func.func @shape_chain(%x: tensor<2x3x4xf32>) -> (tensor<2x12xf32>, tensor<2xi64>) {
  %s = pipe.shape %x : tensor<2x3x4xf32>
  %i0 = pipe.constant dense<0> : tensor<i64>
  %i1 = pipe.constant dense<1> : tensor<i64>
  %i2 = pipe.constant dense<2> : tensor<i64>
  %d0 = pipe.gather %s, %i0 axis 0 : tensor<3xi64>, tensor<i64>
  %d1 = pipe.gather %s, %i1 axis 0 : tensor<3xi64>, tensor<i64>
  %d2 = pipe.gather %s, %i2 axis 0 : tensor<3xi64>, tensor<i64>
  %p = pipe.mul %d1, %d2 : tensor<i64>, tensor<i64>
  %u0 = pipe.reshape %d0 : tensor<i64> to tensor<1xi64>
  %u1 = pipe.reshape %p : tensor<i64> to tensor<1xi64>
  %shape = pipe.concat %u0, %u1 axis 0 : tensor<1xi64>, tensor<1xi64>
  %r = pipe.reshape %x : tensor<2x3x4xf32> to tensor<2x12xf32>
  return %r, %shape : tensor<2x12xf32>, tensor<2xi64>
}

// -----

// CHECK-LABEL: func @integer_arithmetic
// CHECK-DAG: %[[A:.*]] = pipe.constant dense<[5, 7, 9]> : tensor<3xi64>
// CHECK-DAG: %[[S:.*]] = pipe.constant dense<-3> : tensor<3xi64>
// CHECK-DAG: %[[M:.*]] = pipe.constant dense<[{{\[}}4, 10, 18], [8, 20, 36]]> : tensor<2x3xi64>
// CHECK-DAG: %[[D:.*]] = pipe.constant dense<[4, 2, 2]> : tensor<3xi64>
// CHECK-DAG: %[[MX:.*]] = pipe.constant dense<[4, 5, 6]> : tensor<3xi64>
// CHECK-DAG: %[[MN:.*]] = pipe.constant dense<[1, 2, 3]> : tensor<3xi64>
// CHECK: return %[[A]], %[[S]], %[[M]], %[[D]], %[[MX]], %[[MN]]
func.func @integer_arithmetic() -> (tensor<3xi64>, tensor<3xi64>, tensor<2x3xi64>,
                                    tensor<3xi64>, tensor<3xi64>, tensor<3xi64>) {
  %a = pipe.constant dense<[1, 2, 3]> : tensor<3xi64>
  %b = pipe.constant dense<[4, 5, 6]> : tensor<3xi64>
  %c = pipe.constant dense<[[1], [2]]> : tensor<2x1xi64>
  %0 = pipe.add %a, %b : tensor<3xi64>, tensor<3xi64>
  %1 = pipe.sub %a, %b : tensor<3xi64>, tensor<3xi64>
  %t = pipe.mul %a, %b : tensor<3xi64>, tensor<3xi64>
  %2 = pipe.mul %c, %t : tensor<2x1xi64>, tensor<3xi64>
  %3 = pipe.div %b, %a : tensor<3xi64>, tensor<3xi64>
  %4 = pipe.max %a, %b : tensor<3xi64>, tensor<3xi64>
  %5 = pipe.min %a, %b : tensor<3xi64>, tensor<3xi64>
  return %0, %1, %2, %3, %4, %5 : tensor<3xi64>, tensor<3xi64>, tensor<2x3xi64>,
                                  tensor<3xi64>, tensor<3xi64>, tensor<3xi64>
}

// -----

// Integer division by zero is left for run time.
// CHECK-LABEL: func @div_by_zero
// CHECK: pipe.div
func.func @div_by_zero() -> tensor<2xi64> {
  %a = pipe.constant dense<[1, 2]> : tensor<2xi64>
  %z = pipe.constant dense<[1, 0]> : tensor<2xi64>
  %0 = pipe.div %a, %z : tensor<2xi64>, tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

// Elementwise ops on constants fold, floats in their own precision (the
// functions through double, rounded): arithmetic, comparisons into
// booleans, selection, logical not, unary functions and clip.
// CHECK-LABEL: func @constant_elementwise
// CHECK-DAG: %[[FA:.*]] = pipe.constant dense<[1.500000e+00, 4.500000e+00]> : tensor<2xf32>
// CHECK-DAG: %[[FD:.*]] = pipe.constant dense<[2.500000e-01, 1.250000e+00]> : tensor<2xf32>
// CHECK-DAG: %[[EQ:.*]] = pipe.constant dense<[false, true, false]> : tensor<3xi1>
// CHECK-DAG: %[[LT:.*]] = pipe.constant dense<[true, false]> : tensor<2xi1>
// CHECK-DAG: %[[GT:.*]] = pipe.constant dense<[false, false, true]> : tensor<3xi1>
// CHECK-DAG: %[[W:.*]] = pipe.constant dense<[7, 2, 7]> : tensor<3xi64>
// CHECK-DAG: %[[NOT:.*]] = pipe.constant dense<[false, true]> : tensor<2xi1>
// CHECK-DAG: %[[EXP:.*]] = pipe.constant dense<[2.71828175, 7.3890562]> : tensor<2xf32>
// CHECK-DAG: %[[SQRT:.*]] = pipe.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-DAG: %[[NEG:.*]] = pipe.constant dense<[-1, -2, -3]> : tensor<3xi64>
// CHECK-DAG: %[[RELU:.*]] = pipe.constant dense<[0.000000e+00, 2.500000e+00]> : tensor<2xf32>
// CHECK-DAG: %[[POW:.*]] = pipe.constant dense<[1.000000e+00, 8.000000e+00]> : tensor<2xf32>
// CHECK-DAG: %[[CLIP:.*]] = pipe.constant dense<[0.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK: return %[[FA]], %[[FD]], %[[EQ]], %[[LT]], %[[GT]], %[[W]], %[[NOT]], %[[EXP]], %[[SQRT]], %[[NEG]], %[[RELU]], %[[POW]], %[[CLIP]]
func.func @constant_elementwise()
    -> (tensor<2xf32>, tensor<2xf32>, tensor<3xi1>, tensor<2xi1>, tensor<3xi1>,
        tensor<3xi64>, tensor<2xi1>, tensor<2xf32>, tensor<2xf32>, tensor<3xi64>,
        tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
  %a = pipe.constant dense<[0.5, 2.5]> : tensor<2xf32>
  %b = pipe.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %two = pipe.constant dense<2.0> : tensor<f32>
  %i = pipe.constant dense<[1, 2, 3]> : tensor<3xi64>
  %k = pipe.constant dense<2> : tensor<i64>
  %seven = pipe.constant dense<7> : tensor<i64>
  %fa = pipe.add %a, %b : tensor<2xf32>, tensor<2xf32>
  %fd = pipe.div %a, %two : tensor<2xf32>, tensor<f32>
  %eq = pipe.equal %i, %k : tensor<3xi64>, tensor<i64>
  %lt = pipe.less %a, %b : tensor<2xf32>, tensor<2xf32>
  %gt = pipe.greater %i, %k : tensor<3xi64>, tensor<i64>
  %w = pipe.where %eq, %i, %seven : tensor<3xi1>, tensor<3xi64>, tensor<i64>
  %not = pipe.not %lt : tensor<2xi1>
  %exp = pipe.exp %b : tensor<2xf32>
  %sq = pipe.mul %b, %b : tensor<2xf32>, tensor<2xf32>
  %sqrt = pipe.sqrt %sq : tensor<2xf32>
  %neg = pipe.neg %i : tensor<3xi64>
  %m = pipe.sub %b, %two : tensor<2xf32>, tensor<f32>
  %r = pipe.mul %m, %m : tensor<2xf32>, tensor<2xf32>
  %relu0 = pipe.neg %r : tensor<2xf32>
  %relu1 = pipe.add %relu0, %a : tensor<2xf32>, tensor<2xf32>
  %relu = pipe.relu %relu1 : tensor<2xf32>
  %three = pipe.constant dense<3.0> : tensor<f32>
  %pow = pipe.pow %b, %three : tensor<2xf32>, tensor<f32>
  %c = pipe.mul %b, %two : tensor<2xf32>, tensor<f32>
  %cm = pipe.sub %c, %two : tensor<2xf32>, tensor<f32>
  %clip = pipe.clip %cm {min = 0.0 : f64, max = 2.0 : f64} : tensor<2xf32>
  return %fa, %fd, %eq, %lt, %gt, %w, %not, %exp, %sqrt, %neg, %relu, %pow, %clip
      : tensor<2xf32>, tensor<2xf32>, tensor<3xi1>, tensor<2xi1>, tensor<3xi1>,
        tensor<3xi64>, tensor<2xi1>, tensor<2xf32>, tensor<2xf32>, tensor<3xi64>,
        tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}

// -----

// Arithmetic on a function argument is not folded, but identities are.
// CHECK-LABEL: func @float_identities
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK: %[[B:.*]] = pipe.add %[[X]], %{{.*}} : tensor<2x3xf32>, tensor<3xf32>
// CHECK-NEXT: return %[[X]], %[[X]], %[[X]], %[[X]], %[[B]], %[[B]]
func.func @float_identities(%x: tensor<2x3xf32>)
    -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>,
        tensor<2x3xf32>, tensor<2x3xf32>) {
  %zero = pipe.constant dense<0.0> : tensor<f32>
  %one = pipe.constant dense<1.0> : tensor<2x3xf32>
  %two = pipe.constant dense<2.0> : tensor<3xf32>
  %z3 = pipe.constant dense<0.0> : tensor<3xf32>
  %0 = pipe.add %x, %zero : tensor<2x3xf32>, tensor<f32>
  %1 = pipe.mul %one, %x : tensor<2x3xf32>, tensor<2x3xf32>
  %2 = pipe.sub %x, %zero : tensor<2x3xf32>, tensor<f32>
  %3 = pipe.div %x, %one : tensor<2x3xf32>, tensor<2x3xf32>
  // A non-neutral constant stays; a zero that broadcasts into the other
  // operand's shape is still an identity.
  %4 = pipe.add %x, %two : tensor<2x3xf32>, tensor<3xf32>
  %5 = pipe.add %z3, %4 : tensor<3xf32>, tensor<2x3xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>,
                                  tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func @reshapes
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-DAG: %[[C:.*]] = pipe.constant dense<{{\[}}[1, 2], [3, 4]]> : tensor<2x2xi64>
// CHECK-DAG: %[[R:.*]] = pipe.reshape %[[X]] : tensor<2x3x4xf32> to tensor<24xf32>
// CHECK-NEXT: return %[[X]], %[[R]], %[[C]]
func.func @reshapes(%x: tensor<2x3x4xf32>)
    -> (tensor<2x3x4xf32>, tensor<24xf32>, tensor<2x2xi64>) {
  %0 = pipe.reshape %x : tensor<2x3x4xf32> to tensor<2x3x4xf32>
  %1 = pipe.reshape %x : tensor<2x3x4xf32> to tensor<6x4xf32>
  %2 = pipe.reshape %1 : tensor<6x4xf32> to tensor<24xf32>
  %c = pipe.constant dense<[1, 2, 3, 4]> : tensor<4xi64>
  %3 = pipe.reshape %c : tensor<4xi64> to tensor<2x2xi64>
  return %0, %2, %3 : tensor<2x3x4xf32>, tensor<24xf32>, tensor<2x2xi64>
}

// -----

// CHECK-LABEL: func @transposes
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>, %[[U:.*]]: tensor<1x5x1x6xf32>)
// CHECK-NEXT: %[[T:.*]] = pipe.transpose %[[X]] perm [2, 1, 0] : tensor<2x3x4xf32>
// CHECK-NEXT: %[[R:.*]] = pipe.reshape %[[U]] : tensor<1x5x1x6xf32> to tensor<5x1x1x6xf32>
// CHECK-NEXT: %[[K:.*]] = pipe.transpose %[[U]] perm [3, 0, 1, 2]
// CHECK-NEXT: return %[[X]], %[[T]], %[[R]], %[[K]]
func.func @transposes(%x: tensor<2x3x4xf32>, %u: tensor<1x5x1x6xf32>)
    -> (tensor<2x3x4xf32>, tensor<4x3x2xf32>, tensor<5x1x1x6xf32>, tensor<6x1x5x1xf32>) {
  %0 = pipe.transpose %x perm [0, 1, 2] : tensor<2x3x4xf32>
  // Composition: [1, 2, 0] then [1, 0, 2] is [2, 1, 0].
  %1 = pipe.transpose %x perm [1, 2, 0] : tensor<2x3x4xf32>
  %2 = pipe.transpose %1 perm [1, 0, 2] : tensor<3x4x2xf32>
  // Only unit axes move: a reshape.
  %3 = pipe.transpose %u perm [1, 0, 2, 3] : tensor<1x5x1x6xf32>
  // A non-unit axis moves: stays a transpose.
  %4 = pipe.transpose %u perm [3, 0, 1, 2] : tensor<1x5x1x6xf32>
  return %0, %2, %3, %4 : tensor<2x3x4xf32>, tensor<4x3x2xf32>, tensor<5x1x1x6xf32>, tensor<6x1x5x1xf32>
}

// -----

// CHECK-LABEL: func @constant_data_movement
// CHECK-DAG: %[[C:.*]] = pipe.constant dense<[2, 3, 4, 5, 6]> : tensor<5xi64>
// CHECK-DAG: %[[S:.*]] = pipe.constant dense<[6, 4]> : tensor<2xi64>
// CHECK-DAG: %[[G:.*]] = pipe.constant dense<{{\[}}[3, 1], [6, 4]]> : tensor<2x2xi64>
// CHECK-DAG: %[[E:.*]] = pipe.constant dense<7> : tensor<2x3xi64>
// CHECK-DAG: %[[F:.*]] = pipe.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-DAG: %[[N:.*]] = pipe.constant dense<6> : tensor<i64>
// CHECK: return %[[C]], %[[S]], %[[G]], %[[E]], %[[F]], %[[N]]
func.func @constant_data_movement()
    -> (tensor<5xi64>, tensor<2xi64>, tensor<2x2xi64>, tensor<2x3xi64>,
        tensor<2xf32>, tensor<i64>) {
  %a = pipe.constant dense<[2, 3]> : tensor<2xi64>
  %b = pipe.constant dense<[4, 5, 6]> : tensor<3xi64>
  %0 = pipe.concat %a, %b axis 0 : tensor<2xi64>, tensor<3xi64>
  %1 = pipe.slice %0 offsets [4] sizes [2] strides [-2] : tensor<5xi64>
  %m = pipe.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi64>
  %i = pipe.constant dense<[2, -3]> : tensor<2xi64>
  %2 = pipe.gather %m, %i axis 1 : tensor<2x3xi64>, tensor<2xi64>
  %s = pipe.constant dense<7> : tensor<1xi64>
  %3 = pipe.expand %s : tensor<1xi64> to tensor<2x3xi64>
  %ic = pipe.constant dense<[1, 2]> : tensor<2xi64>
  %4 = pipe.cast %ic : tensor<2xi64> to tensor<2xf32>
  %5 = pipe.size %m : tensor<2x3xi64>
  return %0, %1, %2, %3, %4, %5 : tensor<5xi64>, tensor<2xi64>, tensor<2x2xi64>,
                                  tensor<2x3xi64>, tensor<2xf32>, tensor<i64>
}

// -----

// CHECK-LABEL: func @identities
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT: return %[[X]], %[[X]], %[[X]], %[[X]], %[[X]]
func.func @identities(%x: tensor<2x3xf32>)
    -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = pipe.concat %x axis 0 : tensor<2x3xf32>
  %1 = pipe.slice %x offsets [0, 0] sizes [2, 3] strides [1, 1] : tensor<2x3xf32>
  %2 = pipe.expand %x : tensor<2x3xf32> to tensor<2x3xf32>
  %3 = pipe.cast %x : tensor<2x3xf32> to tensor<2x3xf32>
  %4 = pipe.dropout %x {ratio = 0.0 : f32} : tensor<2x3xf32>
  return %0, %1, %2, %3, %4 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// A reversed slice is not an identity.
// CHECK-LABEL: func @reversed_slice
// CHECK: pipe.slice
func.func @reversed_slice(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = pipe.slice %x offsets [2] sizes [3] strides [-1] : tensor<3xf32>
  return %0 : tensor<3xf32>
}
