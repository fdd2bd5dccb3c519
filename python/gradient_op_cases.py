#!/usr/bin/env python3
"""One small float64 model per differentiable op, for checking the gradients
of --pipe-autodiff against finite differences (integration_test/Train/
finite-differences-{1,2}.test, with python/finite_differences.py).

    gradient_op_cases.py OUT [--op NAME ...]   # default: every case
    gradient_op_cases.py --list

writes OUT/<case>/model.mlir and OUT/<case>/in/<argument>.npy for every case.
A model holds its parameters inline, in f64, each operand of the op under
test that can be differentiated behind a trainable parameter. A loss op is
the loss itself (reduction `none`: weighted as below); any other op's loss
is

    loss = reduce_sum(op(...) * R)

with R a fixed random constant, so that every output element weighs
differently. The data are seeded per case (the same whichever cases are
written) and kept away from kinks: the zeros of relu, abs and the like,
clip's bounds, ties of max pooling, max, min and reduce_max, the domains of
log and sqrt.
"""

import argparse
import functools
import os
import sys
import zlib

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gradient_rules_case import dense  # noqa: E402

ELEMENT_TYPES = {np.dtype(np.float64): "f64", np.dtype(np.int64): "i64",
                 np.dtype(np.int32): "i32",
                 np.dtype(np.bool_): "i1"}


def tensor_type(shape, element="f64"):
    return "tensor<" + "".join(f"{d}x" for d in shape) + element + ">"


def literal(value):
    """The `dense<...> : type` of a numpy array (booleans as 0 and 1)."""
    type_ = tensor_type(value.shape, ELEMENT_TYPES[value.dtype])
    if value.dtype == np.bool_:
        value = value.astype(np.int64)
    return f"{dense(value)} : {type_}"


class Model:
    """A model being written: parameter declarations, @main's arguments and
    body, and the .npy inputs. Values are SSA names with known types."""

    def __init__(self, rng):
        self.rng = rng
        self.declarations, self.arguments, self.body = [], [], []
        self.inputs = {}
        self.types, self.shapes = {}, {}

    def _define(self, name, shape, element="f64"):
        self.types[name] = tensor_type(shape, element)
        self.shapes[name] = tuple(shape)
        return name

    def parameter(self, name, value, trainable=True):
        """Declares @name with initial value `value` and reads it."""
        value = np.asarray(value, dtype=np.float64)
        flag = " trainable" if trainable else ""
        self.declarations.append(
            f"pipe.parameter @{name} : {tensor_type(value.shape)}{flag} = "
            f"{literal(value)}")
        return self.emit(f"pipe.param_ref @{name} : "
                         f"{tensor_type(value.shape)}", value.shape, name=name)

    def input(self, name, value):
        """An argument of @main, fed from in/<name>.npy."""
        self.inputs[name] = value
        type_ = tensor_type(value.shape, ELEMENT_TYPES[value.dtype])
        self.arguments.append(f'%{name}: {type_} {{pipe.name = "{name}"}}')
        return self._define("%" + name, value.shape,
                            ELEMENT_TYPES[value.dtype])

    def constant(self, value):
        return self.emit(f"pipe.constant {literal(value)}", value.shape,
                         ELEMENT_TYPES[value.dtype])

    def emit(self, text, shape, element="f64", name=None):
        """Appends `%name = text` to the body; the result has `shape`."""
        name = "%" + (name or f"v{len(self.body)}")
        self.body.append(f"  {name} = {text}")
        return self._define(name, shape, element)

    def results(self, text, shapes):
        """Appends `%name:count = text`; its results have `shapes`."""
        name = f"v{len(self.body)}"
        self.body.append(f"  %{name}:{len(shapes)} = {text}")
        return [self._define(f"%{name}#{i}", s) for i, s in enumerate(shapes)]

    def op_text(self, mnemonic, operands, attributes="", typed=None):
        """`pipe.<mnemonic> operands attributes : operand types`, the types
        of the first `typed` operands (default: all)."""
        types = ", ".join(self.types[v] for v in operands[:typed])
        attributes = " " + attributes if attributes else ""
        return f"pipe.{mnemonic} {', '.join(operands)}{attributes} : {types}"

    def op(self, mnemonic, operands, shape, attributes="", typed=None):
        return self.emit(self.op_text(mnemonic, operands, attributes, typed),
                         shape)

    def unary(self, mnemonic, x, attributes=""):
        return self.op(mnemonic, [x], self.shapes[x], attributes)

    def binary(self, mnemonic, a, b):
        shape = np.broadcast_shapes(self.shapes[a], self.shapes[b])
        return self.op(mnemonic, [a, b], shape)

    def convert(self, mnemonic, x, shape, element="f64"):
        """`pipe.<mnemonic> x : type to type` (reshape, expand, cast)."""
        return self.emit(f"pipe.{mnemonic} {x} : {self.types[x]} to "
                         f"{tensor_type(shape, element)}", shape, element)

    def reshape(self, x, shape):
        return self.convert("reshape", x, shape)

    def split(self, x, axis, sizes):
        """The pieces of x along `axis`, of the given sizes."""
        shapes = []
        for size in sizes:
            shape = list(self.shapes[x])
            shape[axis] = size
            shapes.append(shape)
        types = ", ".join(tensor_type(s) for s in shapes)
        return self.results(f"pipe.split {x} axis {axis} : {self.types[x]} "
                            f"to {types}", shapes)

    def weighted_sum(self, *values):
        """sum(v * R) over every element, with a random constant R per
        value, added up over the values: the scalar loss."""
        total = None
        for v in values:
            weights = self.constant(self.rng.normal(0, 1, self.shapes[v]))
            product = self.binary("mul", v, weights)
            rank = len(self.shapes[v])
            term = self.op("reduce_sum", [product], (),
                           f"axes {list(range(rank))}")
            total = term if total is None else self.binary("add", total, term)
        return total

    def ir(self, loss):
        assert self.types[loss] == "tensor<f64>", "the loss must be a scalar"
        lines = self.declarations + [
            f"func.func @main({', '.join(self.arguments)}) -> "
            '(tensor<f64> {pipe.name = "loss"}) {']
        lines += self.body + [f"  return {loss} : tensor<f64>", "}"]
        return "\n".join(lines) + "\n"


# Seeded data.

def normal(rng, *shape):
    return rng.normal(0, 1, shape)


def away_from_zero(rng, *shape):
    """Magnitudes in [0.3, 1.5], random signs: no element near a kink at 0
    or a pole of 1/x."""
    return rng.uniform(0.3, 1.5, shape) * rng.choice([-1.0, 1.0], shape)


def positive(rng, *shape):
    return rng.uniform(0.5, 2.0, shape)


def distinct(rng, *shape):
    """A shuffled even spread over [-1.5, 1.5): no two elements closer than
    3 / size, so a step of 1e-6 never changes which one is the largest."""
    count = int(np.prod(shape))
    return (rng.permutation(count) * (3.0 / count) - 1.5).reshape(shape)


def distinct_together(rng, *shapes):
    """Tensors of these shapes, `distinct` all together: no element of one
    close to an element of another."""
    sizes = [int(np.prod(shape)) for shape in shapes]
    flat = distinct(rng, sum(sizes))
    return [part.reshape(shape) for part, shape in
            zip(np.split(flat, np.cumsum(sizes)[:-1]), shapes)]


def each(data):
    """`data` drawn for each of several shapes in turn."""
    return lambda rng, *shapes: [data(rng, *shape) for shape in shapes]


CLIP_BOUNDS = (-0.5, 0.75)


def around_clip_bounds(rng, *shape):
    """A third each below, between and above CLIP_BOUNDS, shuffled, and no
    element within 0.2 of a bound."""
    low, high = CLIP_BOUNDS
    count = int(np.prod(shape))
    begins = np.array([low - 1.0, low + 0.2, high + 0.2])
    ends = np.array([low - 0.2, high - 0.2, high + 1.0])
    side = rng.permutation(np.arange(count) % 3)
    return rng.uniform(begins[side], ends[side]).reshape(shape)


def window_extent(size, kernel, stride, pad_begin, pad_end, dilation=1):
    return (size + pad_begin + pad_end - dilation * (kernel - 1) - 1) \
        // stride + 1


# The cases: each builds its model and returns the loss.

CASES = {}


def case(name, *args):
    """Registers `build(model, *args)` as case `name`."""
    def register(build):
        CASES[name] = functools.partial(build, *args) if args else build
        return build
    return register


def broadcast_binary(mnemonic, data, m):
    """(A op b) then c op that: the rhs broadcasts along rows ([4]), then
    the lhs along columns ([3, 1]). `data(rng, *shapes)` draws the three."""
    a, b, c = data(m.rng, (3, 4), (4,), (3, 1))
    a, b, c = m.parameter("A", a), m.parameter("b", b), m.parameter("c", c)
    return m.weighted_sum(m.binary(mnemonic, c, m.binary(mnemonic, a, b)))


for _op in ("add", "sub", "mul", "div"):
    case(_op, _op, each(away_from_zero if _op == "div" else normal))(
        broadcast_binary)
for _op in ("max", "min"):
    case(_op, _op, distinct_together)(broadcast_binary)


@case("pow")
def pow_(m):
    """A positive base [3, 1] to an exponent [4]: both broadcast."""
    base = m.parameter("A", positive(m.rng, 3, 1))
    exponent = m.parameter("b", normal(m.rng, 4))
    return m.weighted_sum(m.binary("pow", base, exponent))


@case("pow_constant_exponent")
def pow_constant_exponent(m):
    """x ** 3, a constant scalar exponent: negative bases too."""
    x = m.parameter("X", away_from_zero(m.rng, 3, 4))
    return m.weighted_sum(m.binary("pow", x, m.constant(np.array(3.0))))


@case("prelu")
def prelu(m):
    """A slope per channel, [3, 1, 1] for an input [2, 3, 2, 3]."""
    x = m.parameter("X", away_from_zero(m.rng, 2, 3, 2, 3))
    slope = m.parameter("slope", normal(m.rng, 3, 1, 1))
    return m.weighted_sum(m.op("prelu", [x, slope], (2, 3, 2, 3)))


UNARY_DATA = {"neg": normal, "relu": away_from_zero, "tanh": normal,
              "sigmoid": normal, "exp": normal, "log": positive,
              "sqrt": positive, "erf": normal, "abs": away_from_zero,
              "reciprocal": away_from_zero, "softplus": normal,
              "leaky_relu": away_from_zero, "elu": away_from_zero,
              "selu": away_from_zero, "clip": around_clip_bounds}
UNARY_ATTRIBUTES = {
    "leaky_relu": "{alpha = 0.25 : f32}", "elu": "{alpha = 0.75 : f32}",
    "clip": f"{{min = {CLIP_BOUNDS[0]!r} : f64, max = {CLIP_BOUNDS[1]!r} : "
            "f64}"}


def unary(mnemonic, m):
    x = m.parameter("X", UNARY_DATA[mnemonic](m.rng, 3, 4))
    return m.weighted_sum(m.unary(mnemonic, x,
                                  UNARY_ATTRIBUTES.get(mnemonic, "")))


for _op in UNARY_DATA:
    case(_op, _op)(unary)


@case("cast")
def cast(m):
    """f64 to f32 and back: the gradient passes through both casts. The
    data are multiples of 2**-7 and the test steps by 2**-7, so that every
    value moved stays exact in f32."""
    x = m.parameter("X", np.round(normal(m.rng, 3, 4) * 128) / 128)
    narrow = m.convert("cast", x, (3, 4), "f32")
    return m.weighted_sum(m.convert("cast", narrow, (3, 4)))


def softmax_like(mnemonic, shape, axis, m):
    x = m.parameter("X", normal(m.rng, *shape))
    return m.weighted_sum(m.op(mnemonic, [x], shape, f"axis {axis}"))


case("softmax", "softmax", (3, 5), 1)(softmax_like)
case("softmax_middle_axis", "softmax", (2, 4, 3), 1)(softmax_like)
case("log_softmax", "log_softmax", (3, 5), 1)(softmax_like)
case("log_softmax_middle_axis", "log_softmax", (2, 4, 3), 1)(softmax_like)


@case("layer_norm")
def layer_norm(m):
    """Over the last axis, with a bias."""
    x = m.parameter("X", normal(m.rng, 2, 3, 5))
    scale = m.parameter("G", normal(m.rng, 5))
    bias = m.parameter("B", normal(m.rng, 5))
    return m.weighted_sum(m.op("layer_norm", [x, scale, bias], (2, 3, 5),
                               "axis 2"))


@case("layer_norm_no_bias")
def layer_norm_no_bias(m):
    """Over the last two axes, no bias."""
    x = m.parameter("X", normal(m.rng, 2, 3, 4))
    scale = m.parameter("G", normal(m.rng, 3, 4))
    return m.weighted_sum(m.op("layer_norm", [x, scale], (2, 3, 4), "axis 1"))


@case("instance_norm")
def instance_norm(m):
    """Every (sample, channel) of [2, 3, 4, 5] over its 4 x 5 values."""
    x = m.parameter("X", normal(m.rng, 2, 3, 4, 5))
    scale = m.parameter("G", normal(m.rng, 3))
    bias = m.parameter("B", normal(m.rng, 3))
    return m.weighted_sum(m.op("instance_norm", [x, scale, bias],
                               (2, 3, 4, 5), typed=2))


@case("batch_norm")
def batch_norm(m):
    """With the running statistics, all five operands trainable."""
    x = m.parameter("X", normal(m.rng, 3, 2, 2, 3))
    scale = m.parameter("G", normal(m.rng, 2))
    bias = m.parameter("B", normal(m.rng, 2))
    mean = m.parameter("M", normal(m.rng, 2))
    variance = m.parameter("V", positive(m.rng, 2))
    return m.weighted_sum(m.op("batch_norm", [x, scale, bias, mean, variance],
                               (3, 2, 2, 3), typed=2))


@case("batch_norm_train")
def batch_norm_train(m):
    """Batch statistics of [3, 2, 2, 3] per channel; the running mean and
    variance (from non-trainable parameters) are unused."""
    x = m.parameter("X", normal(m.rng, 3, 2, 2, 3))
    scale = m.parameter("G", normal(m.rng, 2))
    bias = m.parameter("B", normal(m.rng, 2))
    mean = m.parameter("mean", normal(m.rng, 2), trainable=False)
    variance = m.parameter("variance", positive(m.rng, 2), trainable=False)
    output, _, _ = m.results(m.op_text(
        "batch_norm_train", [x, scale, bias, mean, variance], typed=2),
        [(3, 2, 2, 3), (2,), (2,)])
    return m.weighted_sum(output)


def matmul(lhs, rhs, m):
    a = m.parameter("A", normal(m.rng, *lhs))
    b = m.parameter("B", normal(m.rng, *rhs))
    shape = np.broadcast_shapes(lhs[:-2], rhs[:-2]) + (lhs[-2], rhs[-1])
    return m.weighted_sum(m.op("matmul", [a, b], shape))


case("matmul", (3, 4), (4, 5))(matmul)
case("matmul_batched", (2, 3, 4), (2, 4, 5))(matmul)
case("matmul_broadcast", (2, 3, 4), (4, 5))(matmul)


def gemm(trans_a, trans_b, bias, alpha, beta, m):
    """alpha op(A) op(B) + beta C, with op(A) [3, 4] and op(B) [4, 5]."""
    a = m.parameter("A", normal(m.rng, *((4, 3) if trans_a else (3, 4))))
    b = m.parameter("B", normal(m.rng, *((5, 4) if trans_b else (4, 5))))
    operands = [a, b] + ([m.parameter("C", normal(m.rng, *bias))]
                         if bias else [])
    flags = ["trans_a"] * trans_a + ["trans_b"] * trans_b
    if (alpha, beta) != (1.0, 1.0):
        flags.append(f"{{alpha = {alpha!r} : f32, beta = {beta!r} : f32}}")
    return m.weighted_sum(m.op("gemm", operands, (3, 5), " ".join(flags)))


case("gemm", False, False, (3, 5), 1.0, 1.0)(gemm)
case("gemm_trans_a", True, False, None, 1.0, 1.0)(gemm)
case("gemm_trans_b_alpha_beta", False, True, (5,), 0.5, 2.0)(gemm)
case("gemm_trans_both_no_bias", True, True, None, -0.75, 1.0)(gemm)
case("gemm_column_bias", True, False, (3, 1), 1.5, -0.5)(gemm)


def conv(input_shape, weight_shape, strides, pads, dilations, group, m):
    """conv(X, K, B): every operand trainable."""
    x = m.parameter("X", normal(m.rng, *input_shape))
    k = m.parameter("K", normal(m.rng, *weight_shape))
    b = m.parameter("B", normal(m.rng, weight_shape[0]))
    spatial = len(input_shape) - 2
    shape = [input_shape[0], weight_shape[0]] + [
        window_extent(input_shape[d + 2], weight_shape[d + 2], strides[d],
                      pads[d], pads[spatial + d], dilations[d])
        for d in range(spatial)]
    return m.weighted_sum(m.op(
        "conv", [x, k, b], shape, f"strides {strides} pads {pads} "
        f"dilations {dilations} group {group}"))


case("conv", (2, 3, 9, 8), (4, 3, 3, 2), [2, 2], [1, 0, 2, 1], [2, 2],
     1)(conv)
case("conv_group2", (2, 4, 6, 5), (6, 2, 3, 3), [1, 1], [1, 1, 1, 1], [1, 1],
     2)(conv)
case("conv_depthwise", (2, 3, 6, 5), (3, 1, 3, 3), [2, 1], [1, 1, 1, 0],
     [1, 1], 3)(conv)
case("conv_1d", (2, 3, 11), (4, 3, 3), [2], [1, 2], [2], 1)(conv)


def pool(mnemonic, input_shape, kernel, strides, pads, flags, m):
    """Max pooling reads distinct values: no ties between window members."""
    data = distinct if mnemonic == "max_pool" else normal
    x = m.parameter("X", data(m.rng, *input_shape))
    spatial = len(kernel)
    shape = list(input_shape[:2]) + [
        window_extent(input_shape[d + 2], kernel[d], strides[d], pads[d],
                      pads[spatial + d]) for d in range(spatial)]
    attributes = f"kernel {kernel} strides {strides} pads {pads}"
    if mnemonic == "max_pool":
        attributes += f" dilations {[1] * spatial}"
    return m.weighted_sum(m.op(mnemonic, [x], shape,
                               " ".join([attributes] + flags)))


case("max_pool", "max_pool", (2, 3, 6, 4), [2, 2], [2, 2], [0, 0, 0, 0],
     [])(pool)
case("max_pool_overlapping", "max_pool", (2, 2, 7, 6), [3, 3], [2, 2],
     [1, 1, 1, 1], [])(pool)
case("average_pool", "average_pool", (2, 3, 6, 4), [2, 2], [2, 2],
     [0, 0, 0, 0], [])(pool)
case("average_pool_exclude_pad", "average_pool", (2, 2, 7, 6), [3, 3],
     [2, 2], [1, 1, 1, 1], [])(pool)
case("average_pool_include_pad", "average_pool", (2, 2, 7, 6), [3, 3],
     [2, 2], [1, 1, 1, 1], ["count_include_pad"])(pool)


@case("global_average_pool")
def global_average_pool(m):
    x = m.parameter("X", normal(m.rng, 2, 3, 4, 5))
    return m.weighted_sum(m.op("global_average_pool", [x], (2, 3, 1, 1)))


@case("reshape")
def reshape(m):
    x = m.parameter("X", normal(m.rng, 2, 3, 4))
    return m.weighted_sum(m.reshape(x, (6, 4)))


@case("transpose")
def transpose(m):
    x = m.parameter("X", normal(m.rng, 2, 3, 4))
    return m.weighted_sum(m.op("transpose", [x], (4, 2, 3), "perm [2, 0, 1]"))


@case("slice")
def slice_(m):
    x = m.parameter("X", normal(m.rng, 5, 6))
    return m.weighted_sum(m.op("slice", [x], (3, 2),
                               "offsets [1, 3] sizes [3, 2] strides [1, 1]"))


@case("slice_strided")
def slice_strided(m):
    # Every second row from row 1 (the last row read is the input's last),
    # and every third column backwards from column 7: 7, 4, 1.
    x = m.parameter("X", normal(m.rng, 7, 8, 2))
    return m.weighted_sum(m.op("slice", [x], (3, 3, 2),
                               "offsets [1, 7, 0] sizes [3, 3, 2] "
                               "strides [2, -3, 1]"))


@case("concat")
def concat(m):
    """Three inputs along the middle axis."""
    parts = [m.parameter(name, normal(m.rng, 2, size, 3))
             for name, size in (("A", 1), ("B", 2), ("C", 3))]
    return m.weighted_sum(m.op("concat", parts, (2, 6, 3), "axis 1"))


@case("split")
def split(m):
    """Three unequal pieces along the middle axis, all used."""
    x = m.parameter("X", normal(m.rng, 2, 9, 3))
    return m.weighted_sum(*m.split(x, 1, [2, 3, 4]))


@case("split_unused_piece")
def split_unused_piece(m):
    """As `split`, but the middle piece is unused: its part of the gradient
    is zero."""
    x = m.parameter("X", normal(m.rng, 2, 9, 3))
    first, _, last = m.split(x, 1, [2, 3, 4])
    return m.weighted_sum(first, last)


@case("where")
def where(m):
    condition = m.constant(m.rng.random((3, 4)) < 0.5)
    a = m.parameter("A", normal(m.rng, 3, 4))
    b = m.parameter("B", normal(m.rng, 3, 4))
    return m.weighted_sum(m.op("where", [condition, a, b], (3, 4)))


@case("where_broadcast")
def where_broadcast(m):
    """Condition [3, 1], branches [2, 1, 4] and [4]: the result is
    [2, 3, 4] and both branch gradients sum over broadcast axes."""
    condition = m.constant(np.array([[True], [False], [True]]))
    a = m.parameter("A", normal(m.rng, 2, 1, 4))
    b = m.parameter("B", normal(m.rng, 4))
    return m.weighted_sum(m.op("where", [condition, a, b], (2, 3, 4)))


@case("gather")
def gather(m):
    """Embedding lookup along axis 0, with repeated rows and one unused."""
    table = m.parameter("E", normal(m.rng, 5, 3))
    ids = m.input("ids", np.array([[0, 2, 2, 4], [1, 0, 2, 2]], np.int64))
    return m.weighted_sum(m.op("gather", [table, ids], (2, 4, 3), "axis 0"))


@case("gather_axis1")
def gather_axis1(m):
    """Along a middle axis, with repeated and negative (from the end)
    indices."""
    data = m.parameter("D", normal(m.rng, 2, 5, 3))
    ids = m.input("ids", np.array([[4, -1, 0], [1, 1, -5]], np.int64))
    return m.weighted_sum(m.op("gather", [data, ids], (2, 2, 3, 3),
                               "axis 1"))


@case("gather_int32")
def gather_int32(m):
    """int32 indices, negative ones included."""
    data = m.parameter("D", normal(m.rng, 2, 5, 3))
    ids = m.input("ids", np.array([[4, -1, 0], [1, 1, -5]], np.int32))
    return m.weighted_sum(m.op("gather", [data, ids], (2, 2, 3, 3),
                               "axis 1"))


@case("expand")
def expand(m):
    """[3, 1] to [2, 3, 4]: a new leading axis and a stretched one."""
    x = m.parameter("X", normal(m.rng, 3, 1))
    return m.weighted_sum(m.convert("expand", x, (2, 3, 4)))


@case("tile")
def tile(m):
    x = m.parameter("X", normal(m.rng, 2, 1, 3))
    return m.weighted_sum(m.op("tile", [x], (2, 3, 6), "repeats [1, 3, 2]"))


def pad(mode, input_shape, pads, value, m):
    x = m.parameter("X", normal(m.rng, *input_shape))
    rank = len(input_shape)
    shape = [n + pads[d] + pads[rank + d] for d, n in enumerate(input_shape)]
    attributes = f"pads {pads} mode {mode}"
    if value:
        attributes += f" {{value = {value!r} : f64}}"
    return m.weighted_sum(m.op("pad", [x], shape, attributes))


case("pad_constant", "constant", (3, 4), [1, 0, 2, 1], 1.5)(pad)
case("pad_constant_crop", "constant", (4, 5), [1, -1, -2, 2], -0.5)(pad)
case("pad_reflect", "reflect", (4, 5), [1, 2, 2, 1], None)(pad)
case("pad_edge", "edge", (2, 3, 4), [0, 2, 1, 0, 1, 3], None)(pad)


def trilu(upper, k, m):
    """The triangles of the last two axes of [2, 4, 5], from diagonal k."""
    x = m.parameter("X", normal(m.rng, 2, 4, 5))
    attributes = ("upper " if upper else "") + f"{{k = {k} : i64}}"
    return m.weighted_sum(m.unary("trilu", x, attributes))


case("trilu_upper", True, 1)(trilu)
case("trilu_lower", False, -1)(trilu)


def reduce(mnemonic, axes, keepdims, m):
    """reduce_max reads distinct values: no ties."""
    shape = (2, 3, 4)
    data = distinct if mnemonic == "reduce_max" else normal
    x = m.parameter("X", data(m.rng, *shape))
    kept = [1 if d in axes else n for d, n in enumerate(shape)]
    result = kept if keepdims else [n for d, n in enumerate(shape)
                                    if d not in axes]
    attributes = f"axes {axes}" + (" keepdims" if keepdims else "")
    return m.weighted_sum(m.op(mnemonic, [x], result, attributes))


case("reduce_sum", "reduce_sum", [0, 2], False)(reduce)
case("reduce_sum_keepdims", "reduce_sum", [1], True)(reduce)
case("reduce_mean", "reduce_mean", [0, 2], False)(reduce)
case("reduce_mean_keepdims", "reduce_mean", [1, 2], True)(reduce)
case("reduce_max", "reduce_max", [0, 2], False)(reduce)
case("reduce_max_keepdims", "reduce_max", [1], True)(reduce)

# Losses: scores [4, 5] (or [2, 5, 3]) from a trainable parameter; for the
# negative log-likelihood through log_softmax over the classes.
LABELS = np.array([3, 0, 4, 1], np.int64)
IGNORED_LABELS = np.array([3, -100, 0, 4], np.int64)
ND_LABELS = np.array([[1, 4, 0], [2, 2, 3]], np.int64)


def loss(mnemonic, reduction, labels, weighted, ignore, m):
    scores_shape = (labels.shape[0], 5) + labels.shape[1:]
    scores = m.parameter("S", normal(m.rng, *scores_shape))
    if mnemonic == "nll_loss":
        scores = m.op("log_softmax", [scores], scores_shape, "axis 1")
    operands = [scores, m.input("labels", labels)]
    if weighted:
        operands.append(m.parameter("class_weights",
                                    m.rng.uniform(0.5, 2.0, 5),
                                    trainable=False))
    attributes = f"reduction {reduction}"
    if ignore:
        attributes += " {ignore_index = -100 : i64}"
    shape = labels.shape if reduction == "none" else ()
    result = m.op(mnemonic, operands, shape, attributes)
    return m.weighted_sum(result) if reduction == "none" else result


for _op, _prefix in (("softmax_cross_entropy", "cross_entropy"),
                     ("nll_loss", "nll_loss")):
    case(f"{_prefix}_mean", _op, "mean", LABELS, False, False)(loss)
    case(f"{_prefix}_sum", _op, "sum", LABELS, False, False)(loss)
    case(f"{_prefix}_none", _op, "none", IGNORED_LABELS, False, True)(loss)
    case(f"{_prefix}_ignore_index", _op, "mean", IGNORED_LABELS, False,
         True)(loss)
    case(f"{_prefix}_weighted", _op, "mean", LABELS, True, False)(loss)
    case(f"{_prefix}_weighted_sum_ignore_index", _op, "sum", IGNORED_LABELS,
         True, True)(loss)
    case(f"{_prefix}_nd", _op, "mean", ND_LABELS, False, False)(loss)
    # int32 labels, class weights and an ignored row.
    case(f"{_prefix}_int32_labels", _op, "mean",
         IGNORED_LABELS.astype(np.int32), True, True)(loss)


def write(out, name):
    m = Model(np.random.default_rng(zlib.crc32(name.encode())))
    text = m.ir(CASES[name](m))
    folder = os.path.join(out, name)
    os.makedirs(os.path.join(folder, "in"), exist_ok=True)
    with open(os.path.join(folder, "model.mlir"), "w") as f:
        f.write(text)
    for argument, value in m.inputs.items():
        np.save(os.path.join(folder, "in", argument + ".npy"), value)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?")
    parser.add_argument("--op", nargs="+", choices=sorted(CASES),
                        metavar="NAME", help="only these cases")
    parser.add_argument("--list", action="store_true",
                        help="print the case names and exit")
    args = parser.parse_args()
    if args.list:
        print("\n".join(CASES))
        return
    if not args.out:
        parser.error("OUT is required")
    names = args.op or list(CASES)
    for name in names:
        write(args.out, name)
    print(f"wrote {len(names)} cases to {args.out}")


if __name__ == "__main__":
    main()
