//===- DataMovementTest.cpp - byte-level kernels against NumPy ------------===//
//
// Every case runs on the element type NumPy saved (float32, float64, int64,
// int32 or bool, so element sizes 1, 4 and 8), and the result must equal
// NumPy's bytes exactly.
//
//===----------------------------------------------------------------------===//

#include "Reference.h"

using namespace pipe_rt::cpu;
using reference::Array;
using reference::Reference;

namespace {

const char *const script = R"(
def f32(*shape): return rng.standard_normal(shape).astype(np.float32)
def f64(*shape): return rng.standard_normal(shape)
def i64(*shape): return rng.integers(-1000, 1000, shape, dtype=np.int64)
def i32(*shape): return i64(*shape).astype(np.int32)
def b8(*shape): return rng.random(shape) < 0.5

def transpose(name, x, perm):
    save('transpose', name, x=x, perm=I(perm), y=np.transpose(x, perm))

transpose('3d_f32', f32(2, 3, 4), (2, 0, 1))
transpose('3d_i64', i64(2, 3, 4), (1, 0, 2))
transpose('4d_f64', f64(2, 3, 4, 5), (3, 1, 0, 2))
transpose('identity_i32', i32(3, 4), (0, 1))
transpose('1d_bool', b8(7), (0,))
transpose('4d_bool_unit_axis', b8(2, 3, 1, 4), (2, 3, 0, 1))
transpose('scalar', np.array(3.5, dtype=np.float32), ())
transpose('big_inner_run', f32(64, 48, 3), (1, 0, 2))
transpose('big_i32', i32(70, 90), (1, 0))
transpose('parallel_f32', f32(64, 48, 30), (1, 0, 2))
transpose('parallel_i64', i64(300, 250), (1, 0))

def slice_(name, x, offsets, sizes, strides):
    index = [o + np.arange(s) * st for o, s, st in zip(offsets, sizes, strides)]
    save('slice', name, x=x, offsets=I(offsets), sizes=I(sizes),
         strides=I(strides), y=x[np.ix_(*index)])

slice_('negative_f32', f32(5, 6, 7), [4, 1, 6], [3, 2, 4], [-1, 3, -2])
slice_('plain_i64', i64(4, 5), [1, 0], [2, 5], [1, 1])
slice_('reverse_all_bool', b8(3, 4), [2, 3], [3, 4], [-1, -1])
slice_('step_f64', f64(10), [1], [4], [2])
slice_('empty_i32', i32(3, 4), [0, 1], [0, 2], [1, 1])
slice_('inner_contiguous', f32(6, 5, 8), [5, 1, 2], [3, 3, 5], [-2, 1, 1])
slice_('parallel', f32(100, 100, 10), [99, 0, 9], [100, 100, 10], [-1, 1, -1])

def gather(name, data, indices, axis, index_type=np.int64):
    indices = np.array(indices, dtype=index_type)
    save('gather', name, data=data, indices=indices, axis=axis,
         y=np.take(data, indices, axis=axis))

gather('axis0_f32', f32(5, 4, 3), [[0, -1], [4, 2]], 0)
gather('axis1_i64_int32_indices', i64(2, 4, 3), [-4, 3, 0, 3], 1, np.int32)
gather('axis2_scalar_index', f64(2, 3, 4), -1, 2)
gather('axis1_bool', b8(3, 5), [[1, 2], [0, -5]], 1)
gather('rows', f32(10, 16), [7, 7, 0, -10, 9], 0)
gather('parallel', f64(1000, 64), rng.integers(-1000, 1000, 1000), 0)

def concat(name, inputs, axis):
    arrays = {f'in{i}': a for i, a in enumerate(inputs)}
    save('concat', name, count=len(inputs), axis=axis,
         y=np.concatenate(inputs, axis=axis), **arrays)

concat('axis1_f32', [f32(2, 3, 4), f32(2, 1, 4), f32(2, 5, 4)], 1)
concat('axis0_i64', [i64(1, 3), i64(2, 3)], 0)
concat('axis2_with_empty', [f64(2, 2, 3), f64(2, 2, 0), f64(2, 2, 1)], 2)
concat('single_bool', [b8(3)], 0)
concat('parallel', [f64(200, 300), f64(200, 200)], 1)

def split(name, x, axis, sizes):
    outputs = np.split(x, np.cumsum(sizes)[:-1], axis=axis)
    arrays = {f'out{i}': a for i, a in enumerate(outputs)}
    save('split', name, x=x, axis=axis, sizes=I(sizes), **arrays)

split('axis1_f32', f32(2, 9, 3), 1, [2, 3, 4])
split('axis0_i64', i64(2, 3), 0, [1, 1])
split('axis2_single', f64(2, 2, 3), 2, [3])
split('with_empty_bool', b8(4, 2), 0, [0, 4])
split('parallel', f64(200, 500), 1, [100, 400])

def broadcast(name, x, shape):
    save('broadcast', name, x=x, y=np.broadcast_to(x, shape))

broadcast('column_to_3d', f32(3, 1), (2, 3, 4))
broadcast('scalar_i64', np.array(7, dtype=np.int64), (2, 2))
broadcast('row', f64(1, 4), (3, 4))
broadcast('middle_i32', i32(2, 1, 3), (2, 4, 3))
broadcast('same_bool', b8(2, 3), (2, 3))
broadcast('new_leading', f32(4), (2, 3, 4))
broadcast('parallel', f32(300, 1), (300, 300))

def tile(name, x, repeats):
    save('tile', name, x=x, repeats=I(repeats), y=np.tile(x, repeats))

tile('2d_f32', f32(2, 3), [2, 3])
tile('3d_i64', i64(2, 1, 3), [1, 4, 2])
tile('ones_f64', f64(3, 2), [1, 1])
tile('1d_bool', b8(3), [4])
tile('parallel', f32(30, 40), [10, 10])

MODES = {'constant': 0, 'reflect': 1, 'edge': 2}

def pad(name, x, pads, mode, value=0):
    n = x.ndim
    # Negative pads crop first, then numpy pads what is left.
    crop = tuple(slice(max(0, -pads[i]), x.shape[i] - max(0, -pads[n + i]))
                 for i in range(n))
    width = [(max(0, pads[i]), max(0, pads[n + i])) for i in range(n)]
    value = np.array(value, dtype=x.dtype)
    if mode == 'constant':
        y = np.pad(x[crop], width, mode='constant', constant_values=value)
    else:
        y = np.pad(x[crop], width, mode=mode)
    save('pad', name, x=x, pads=I(pads), mode=MODES[mode], value=value, y=y)

pad('constant_f32', f32(2, 3), [1, 2, 0, 1], 'constant', 2.5)
pad('reflect_f64', f64(3, 4), [2, 1, 1, 3], 'reflect')
pad('edge_i64', i64(3, 4), [0, 2, 3, 1], 'edge')
pad('negative_constant', f32(4, 5), [-1, 2, 1, -2], 'constant', -1.0)
pad('negative_reflect', f64(5, 6), [-1, 2, 3, -2], 'reflect')
pad('negative_edge_i32', i32(4, 5), [2, -1, -2, 1], 'edge')
pad('3d_constant_i32', i32(2, 3, 4), [1, 0, 2, 0, 1, 1], 'constant', 7)
pad('reflect_beyond_extent', f64(3), [4, 5], 'reflect')
pad('reflect_3d_f32', f32(2, 3, 4), [1, 2, 1, 1, 0, 3], 'reflect')
pad('edge_3d_f32', f32(2, 3, 4), [0, 1, 3, 2, 2, 0], 'edge')
pad('constant_bool', b8(2, 3), [1, 1, 1, 1], 'constant', True)
pad('constant_crop_all_columns', f32(2, 3), [0, -2, 1, -1], 'constant', 9.0)
pad('parallel_reflect', f32(300, 300), [2, 3, 1, 4], 'reflect')
pad('parallel_edge', f64(300, 300), [-2, 3, 1, -4], 'edge')

def trilu(name, x, k, upper):
    save('trilu', name, x=x, k=k, upper=upper,
         y=np.triu(x, k) if upper else np.tril(x, k))

trilu('upper', f32(4, 5), 0, True)
trilu('upper_k1_f64', f64(4, 5), 1, True)
trilu('upper_negative_k_i64', i64(5, 4), -2, True)
trilu('lower', f32(4, 5), 0, False)
trilu('lower_k2', f64(4, 5), 2, False)
trilu('lower_negative_k_batched', f32(2, 3, 4, 5), -1, False)
trilu('upper_batched_i64', i64(3, 4, 4), 1, True)
trilu('upper_k_past_columns', f64(3, 3), 5, True)
trilu('lower_k_before_rows', f64(3, 3), -5, False)
trilu('lower_k_past_columns_bool', b8(3, 4), 10, False)
trilu('parallel', f64(4, 100, 100), 3, True)
)";

PIPE_REFERENCE_FIXTURE(DataMovementTest, script)

std::vector<char> outputFor(const Array &want) {
  return std::vector<char>(want.npy.data.size(), char(0x5a));
}

TEST_F(DataMovementTest, Transpose) {
  for (const Reference::Case &c : cases("transpose")) {
    SCOPED_TRACE(c.name);
    Array x = c["x"], want = c["y"];
    std::vector<int64_t> perm = c.ints("perm");
    std::vector<char> y = outputFor(want);
    transpose(x.bytes(), x.shape().data(), x.rank(), perm.data(),
              x.elementSize(), y.data());
    EXPECT_TRUE(reference::sameBytes(y, want));
  }
}

TEST_F(DataMovementTest, Slice) {
  for (const Reference::Case &c : cases("slice")) {
    SCOPED_TRACE(c.name);
    Array x = c["x"], want = c["y"];
    std::vector<int64_t> offsets = c.ints("offsets"), sizes = c.ints("sizes"),
                         strides = c.ints("strides");
    std::vector<char> y = outputFor(want);
    slice(x.bytes(), x.shape().data(), x.rank(), offsets.data(), sizes.data(),
          strides.data(), x.elementSize(), y.data());
    EXPECT_TRUE(reference::sameBytes(y, want));
  }
}

template <typename I> void checkGather(const Reference::Case &c) {
  Array data = c["data"], indices = c["indices"], want = c["y"];
  std::vector<I> iv = indices.as<I>();
  std::vector<char> y = outputFor(want);
  int64_t bad = -1;
  EXPECT_TRUE(gather<I>(data.bytes(), data.shape().data(), data.rank(),
                        c.integer("axis"), iv.data(), indices.size(),
                        data.elementSize(), y.data(), &bad));
  EXPECT_EQ(bad, -1);
  EXPECT_TRUE(reference::sameBytes(y, want));
}

TEST_F(DataMovementTest, Gather) {
  for (const Reference::Case &c : cases("gather")) {
    SCOPED_TRACE(c.name);
    checkGather<int32_t>(c);
    checkGather<int64_t>(c);
  }
}

template <typename I> void checkGatherOutOfRange() {
  int64_t shape[] = {2, 3};
  float data[6] = {0, 1, 2, 3, 4, 5}, y[8];
  int64_t bad = -1;
  I tooLarge[] = {0, -3, 2, 3};
  EXPECT_FALSE(
      gather<I>(data, shape, 2, 1, tooLarge, 4, sizeof(float), y, &bad));
  EXPECT_EQ(bad, 3);
  I tooSmall[] = {1, -3, -4, 5};
  EXPECT_FALSE(
      gather<I>(data, shape, 2, 0, tooSmall, 4, sizeof(float), y, &bad));
  EXPECT_EQ(bad, 1); // -3 < -2 along axis 0; the first bad one counts
  I fine[] = {-2, 1};
  bad = -1;
  EXPECT_TRUE(gather<I>(data, shape, 2, 0, fine, 2, sizeof(float), y, &bad));
  EXPECT_EQ(bad, -1);
  EXPECT_EQ(std::vector<float>(y, y + 6),
            (std::vector<float>{0, 1, 2, 3, 4, 5}));
}

TEST(DataMovementGather, OutOfRangeIndex) {
  checkGatherOutOfRange<int32_t>();
  checkGatherOutOfRange<int64_t>();
}

TEST_F(DataMovementTest, Concat) {
  for (const Reference::Case &c : cases("concat")) {
    SCOPED_TRACE(c.name);
    int count = int(c.integer("count"));
    std::vector<Array> inputs;
    for (int i = 0; i < count; ++i)
      inputs.push_back(c["in" + std::to_string(i)]);
    std::vector<const void *> data;
    std::vector<const int64_t *> shapes;
    for (const Array &input : inputs) {
      data.push_back(input.bytes());
      shapes.push_back(input.shape().data());
    }
    Array want = c["y"];
    std::vector<char> y = outputFor(want);
    concat(data.data(), shapes.data(), count, want.rank(), c.integer("axis"),
           want.elementSize(), y.data());
    EXPECT_TRUE(reference::sameBytes(y, want));
  }
}

TEST_F(DataMovementTest, Split) {
  for (const Reference::Case &c : cases("split")) {
    SCOPED_TRACE(c.name);
    Array x = c["x"];
    std::vector<int64_t> sizes = c.ints("sizes");
    std::vector<Array> wants;
    std::vector<std::vector<char>> outputs;
    for (size_t i = 0; i < sizes.size(); ++i) {
      wants.push_back(c["out" + std::to_string(i)]);
      outputs.push_back(outputFor(wants.back()));
    }
    std::vector<void *> pointers;
    for (std::vector<char> &output : outputs)
      pointers.push_back(output.data());
    split(x.bytes(), x.shape().data(), x.rank(), c.integer("axis"),
          sizes.data(), int(sizes.size()), x.elementSize(), pointers.data());
    for (size_t i = 0; i < sizes.size(); ++i)
      EXPECT_TRUE(reference::sameBytes(outputs[i], wants[i])) << "output " << i;
  }
}

TEST_F(DataMovementTest, BroadcastTo) {
  for (const Reference::Case &c : cases("broadcast")) {
    SCOPED_TRACE(c.name);
    Array x = c["x"], want = c["y"];
    std::vector<char> y = outputFor(want);
    broadcastTo(x.bytes(), x.shape().data(), x.rank(), want.shape().data(),
                want.rank(), x.elementSize(), y.data());
    EXPECT_TRUE(reference::sameBytes(y, want));
  }
}

TEST_F(DataMovementTest, Tile) {
  for (const Reference::Case &c : cases("tile")) {
    SCOPED_TRACE(c.name);
    Array x = c["x"], want = c["y"];
    std::vector<int64_t> repeats = c.ints("repeats");
    std::vector<char> y = outputFor(want);
    tile(x.bytes(), x.shape().data(), x.rank(), repeats.data(), x.elementSize(),
         y.data());
    EXPECT_TRUE(reference::sameBytes(y, want));
  }
}

TEST_F(DataMovementTest, Pad) {
  for (const Reference::Case &c : cases("pad")) {
    SCOPED_TRACE(c.name);
    Array x = c["x"], value = c["value"], want = c["y"];
    std::vector<int64_t> pads = c.ints("pads");
    std::vector<char> y = outputFor(want);
    pad(x.bytes(), x.shape().data(), x.rank(), pads.data(),
        PadMode(c.integer("mode")), value.bytes(), x.elementSize(), y.data());
    EXPECT_TRUE(reference::sameBytes(y, want));
  }
}

TEST_F(DataMovementTest, Trilu) {
  for (const Reference::Case &c : cases("trilu")) {
    SCOPED_TRACE(c.name);
    Array x = c["x"], want = c["y"];
    std::vector<char> y = outputFor(want);
    trilu(x.bytes(), x.shape().data(), x.rank(), c.integer("k"),
          c.integer("upper"), x.elementSize(), y.data());
    EXPECT_TRUE(reference::sameBytes(y, want));
  }
}

/// Element sizes other than 1, 2, 4 and 8 take the generic path: 3-byte
/// elements move like the int32 positions they encode.
TEST(DataMovementOddSize, ThreeByteElements) {
  int64_t shape[] = {3, 4, 5};
  std::vector<uint8_t> x(60 * 3);
  for (int i = 0; i < 60; ++i)
    x[3 * i] = uint8_t(i), x[3 * i + 1] = uint8_t(i * 7),
          x[3 * i + 2] = uint8_t(255 - i);
  std::vector<int32_t> positions(60);
  for (int i = 0; i < 60; ++i)
    positions[i] = i;
  auto expand = [&](const std::vector<int32_t> &indices) {
    std::vector<uint8_t> bytes;
    for (int32_t i : indices)
      bytes.insert(bytes.end(), x.begin() + 3 * i, x.begin() + 3 * i + 3);
    return bytes;
  };
  int64_t perm[] = {2, 0, 1};
  std::vector<int32_t> indices(60);
  std::vector<uint8_t> y(180);
  transpose(positions.data(), shape, 3, perm, 4, indices.data());
  transpose(x.data(), shape, 3, perm, 3, y.data());
  EXPECT_EQ(y, expand(indices));

  int64_t offsets[] = {2, 0, 4}, sizes[] = {2, 2, 3}, strides[] = {-1, 3, -2};
  indices.resize(12);
  y.resize(36);
  slice(positions.data(), shape, 3, offsets, sizes, strides, 4, indices.data());
  slice(x.data(), shape, 3, offsets, sizes, strides, 3, y.data());
  EXPECT_EQ(y, expand(indices));

  int64_t pads[] = {1, 0, 2, 0, 1, 1};
  int32_t zero = 0;
  uint8_t zeros[3] = {0, 0, 0};
  std::vector<int32_t> padded(4 * 5 * 8);
  y.assign(4 * 5 * 8 * 3, 1);
  pad(positions.data(), shape, 3, pads, PadMode::Edge, &zero, 4, padded.data());
  pad(x.data(), shape, 3, pads, PadMode::Edge, zeros, 3, y.data());
  EXPECT_EQ(y, expand(padded));
}

} // namespace
