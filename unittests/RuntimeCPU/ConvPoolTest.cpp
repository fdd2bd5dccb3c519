//===- ConvPoolTest.cpp - convolutions and pools against torch ------------===//
//
// torch pads symmetrically only, so the references pad explicitly (F.pad)
// and run torch's ops without padding; asymmetric pads, and for pools the
// extra windows of ceil mode, come out right that way. Average pooling sums
// with divisor_override=1 and divides by the pooled count of ones, over
// the input (count_include_pad off) or over the padded input (on).
//
//===----------------------------------------------------------------------===//

#include "Reference.h"
#include "ShapeUtil.h"

#include <limits>

using namespace pipe_rt::cpu;
using reference::Reference;

namespace {

const char *const script = R"(
def torch_pads(pads):
    n = len(pads) // 2
    result = []
    for i in reversed(range(n)):
        result += [pads[i], pads[n + i]]
    return result

def conv(name, xshape, wshape, group=1, strides=None, pads=None, dil=None,
         bias=True, weight_grad=False):
    """A conv case; with `weight_grad`, also a conv_weight_grad case: the
    gradient of sum(conv(x, w) * dy) with respect to w, by autograd."""
    n = len(xshape) - 2
    strides = strides or [1] * n
    pads = pads or [0] * (2 * n)
    dil = dil or [1] * n
    x, w = rand(*xshape), rand(*wshape)
    b = rand(wshape[0]) if bias else None
    fn = [F.conv1d, F.conv2d, F.conv3d][n - 1]
    weight = t(w).requires_grad_()
    y = fn(F.pad(t(x), torch_pads(pads)), weight, None if b is None else t(b),
           stride=strides, padding=0, dilation=dil, groups=group)
    attrs = dict(strides=I(strides), pads=I(pads), dil=I(dil), group=group)
    save('conv', name, x=x, w=w, b=b, y=y.detach(), **attrs)
    if weight_grad:
        dy = rand(*y.shape)
        (dw,) = torch.autograd.grad((y * t(dy)).sum(), weight)
        save('conv_weight_grad', name, x=x, dy=dy, dw=dw, **attrs)

conv('1d', [2, 4, 11], [6, 2, 3], group=2, strides=[2], pads=[1, 2], dil=[2],
     weight_grad=True)
conv('2d', [2, 3, 9, 8], [4, 3, 3, 3], strides=[1, 2], pads=[1, 0, 2, 1],
     dil=[1, 2], weight_grad=True)
conv('2d_pointwise', [2, 3, 5, 4], [5, 3, 1, 1], bias=False,
     weight_grad=True)
conv('2d_pointwise_strided_padded', [1, 3, 6, 5], [4, 3, 1, 1],
     strides=[2, 2], pads=[1, 0, 0, 1])
conv('2d_depthwise', [1, 4, 7, 7], [4, 1, 3, 3], group=4, pads=[1, 1, 1, 1],
     weight_grad=True)
conv('2d_depthwise_multiplier', [2, 3, 6, 5], [6, 1, 3, 2], group=3,
     strides=[2, 1], pads=[1, 0, 1, 1], weight_grad=True)
conv('2d_group3', [2, 6, 6, 5], [9, 2, 2, 3], group=3, strides=[2, 1],
     pads=[0, 1, 1, 0], dil=[2, 1], weight_grad=True)
conv('2d_kernel_over_input', [1, 1, 3, 3], [2, 1, 4, 4], pads=[2, 2, 1, 1])
conv('2d_wide', [2, 8, 10, 10], [6, 8, 3, 3], pads=[1, 1, 1, 1])
conv('3d', [1, 2, 5, 6, 4], [3, 2, 2, 3, 2], strides=[1, 2, 1],
     pads=[1, 0, 1, 0, 1, 1], dil=[2, 1, 1])
conv('3d_group', [2, 4, 4, 4, 3], [4, 2, 3, 1, 2], group=2, strides=[2, 1, 1],
     pads=[1, 0, 0, 1, 0, 1], weight_grad=True)
# Large enough for the parallel paths.
conv('2d_parallel', [4, 8, 32, 32], [24, 4, 3, 3], group=2, pads=[1, 1, 1, 1])

def conv_transpose(name, xshape, wshape, group=1, strides=None, pads=None,
                   dil=None, outpad=None, bias=True):
    n = len(xshape) - 2
    strides = strides or [1] * n
    pads = pads or [0] * (2 * n)
    dil = dil or [1] * n
    outpad = outpad or [0] * n
    x, w = rand(*xshape), rand(*wshape)
    m = wshape[1] * group
    b = rand(m) if bias else None
    fn = [F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d][n - 1]
    full = fn(t(x), t(w), None, stride=strides, padding=0, output_padding=0,
              groups=group, dilation=dil).numpy()
    out = [strides[i] * (xshape[2 + i] - 1) + outpad[i] +
           dil[i] * (wshape[2 + i] - 1) + 1 - pads[i] - pads[n + i]
           for i in range(n)]
    # Output padding may reach past the full result: zeros there.
    extra = [max(0, pads[i] + out[i] - full.shape[2 + i]) for i in range(n)]
    full = np.pad(full, [(0, 0), (0, 0)] + [(0, e) for e in extra])
    y = full[(slice(None), slice(None)) +
             tuple(slice(pads[i], pads[i] + out[i]) for i in range(n))]
    if b is not None:
        y = y + b.reshape(-1, *([1] * n))
    save('conv_transpose', name, x=x, w=w, b=b, y=y, strides=I(strides),
         pads=I(pads), dil=I(dil), group=group)

conv_transpose('1d', [2, 4, 5], [4, 3, 3], strides=[2], pads=[1, 0],
               outpad=[1])
conv_transpose('2d_group2', [1, 4, 4, 3], [4, 2, 3, 3], group=2,
               strides=[2, 3], pads=[1, 0, 0, 2], outpad=[1, 0], dil=[1, 2])
conv_transpose('2d_dilated', [2, 3, 5, 5], [3, 5, 2, 2], dil=[2, 2],
               bias=False)
conv_transpose('2d_outpad_past_full', [1, 2, 3, 3], [2, 3, 2, 2],
               strides=[3, 3], outpad=[2, 1])
conv_transpose('2d_pointwise', [2, 3, 4, 5], [3, 4, 1, 1])
conv_transpose('2d_group3', [2, 6, 3, 4], [6, 2, 3, 2], group=3,
               strides=[2, 2], pads=[1, 1, 0, 1], outpad=[1, 0])
conv_transpose('1d_cropped', [1, 2, 6], [2, 2, 5], pads=[3, 2])
conv_transpose('3d', [1, 2, 3, 2, 3], [2, 2, 2, 2, 2], strides=[2, 1, 2],
               pads=[0, 1, 0, 1, 0, 0], outpad=[1, 0, 0])
conv_transpose('2d_parallel', [2, 8, 24, 24], [8, 8, 3, 3], group=2,
               strides=[2, 2], pads=[1, 1, 0, 0], outpad=[1, 1])

def padded(x, pads, value):
    return F.pad(t(x), torch_pads(pads), value=value)

def max_pool(name, x, kernel, strides, pads, dil=None, ceil=False):
    n = len(kernel)
    dil = dil or [1] * n
    fn = [F.max_pool1d, F.max_pool2d, F.max_pool3d][n - 1]
    y = fn(padded(x, pads, -np.inf), kernel, strides, 0, dil, ceil_mode=ceil)
    if ceil:
        floor = fn(padded(x, pads, -np.inf), kernel, strides, 0, dil)
        assert floor.shape != y.shape, name
    save('max_pool', name, x=x, y=y, kernel=I(kernel), strides=I(strides),
         pads=I(pads), dil=I(dil))

max_pool('2d', rand(2, 3, 7, 8), [3, 3], [2, 2], [1, 1, 1, 1])
max_pool('2d_ceil', rand(1, 2, 9, 7), [3, 2], [2, 2], [0, 1, 1, 0], ceil=True)
max_pool('2d_dilated', rand(1, 2, 9, 9), [2, 3], [1, 2], [1, 2, 0, 1],
         dil=[2, 2])
max_pool('2d_all_negative', rand(1, 2, 6, 6) - 2, [3, 3], [2, 2],
         [1, 1, 1, 1], ceil=True)
max_pool('1d_ceil', rand(2, 3, 12), [3], [3], [1, 1], ceil=True)
max_pool('3d', rand(1, 2, 5, 6, 5), [2, 3, 2], [2, 1, 2], [0, 1, 1, 1, 0, 0],
         dil=[1, 1, 2])
max_pool('2d_parallel', rand(2, 8, 20, 20), [3, 3], [1, 1], [1, 1, 1, 1])
max_pool('3d_ceil_dilated', rand(1, 1, 7, 6, 5), [2, 2, 2], [2, 2, 2],
         [1, 0, 0, 0, 1, 0], dil=[2, 1, 1], ceil=True)

def pool_sum(a, kernel, strides, ceil):
    if len(kernel) == 1:
        return F.avg_pool2d(a.unsqueeze(2), (1, kernel[0]), (1, strides[0]), 0,
                            ceil_mode=ceil, divisor_override=1).squeeze(2)
    fn = [None, F.avg_pool2d, F.avg_pool3d][len(kernel) - 1]
    return fn(a, kernel, strides, 0, ceil_mode=ceil, divisor_override=1)

def average_pool(name, x, kernel, strides, pads, ceil=False, include=False):
    total = pool_sum(padded(x, pads, 0.0), kernel, strides, ceil)
    ones = np.ones_like(x)
    if include:
        count = pool_sum(torch.ones_like(padded(x, pads, 0.0)), kernel,
                         strides, ceil)
    else:
        count = pool_sum(padded(ones, pads, 0.0), kernel, strides, ceil)
    save('average_pool', name, x=x, y=total / count, kernel=I(kernel),
         strides=I(strides), pads=I(pads), include=include)

for include in [False, True]:
    suffix = '_include' if include else '_exclude'
    average_pool('2d' + suffix, rand(2, 3, 7, 8), [3, 3], [2, 2],
                 [1, 1, 1, 1], include=include)
    average_pool('2d_ceil' + suffix, rand(1, 2, 8, 7), [3, 2], [2, 2],
                 [0, 1, 1, 0], ceil=True, include=include)
    average_pool('1d_ceil' + suffix, rand(2, 3, 10), [4], [3], [2, 1],
                 ceil=True, include=include)
    average_pool('3d_ceil' + suffix, rand(1, 2, 5, 6, 5), [2, 3, 2],
                 [2, 1, 2], [0, 1, 1, 1, 0, 0], ceil=True, include=include)
    average_pool('2d_parallel' + suffix, rand(2, 8, 20, 20), [3, 3], [1, 1],
                 [1, 2, 2, 1], ceil=True, include=include)
    # Cross-check of the construction with torch's own padding.
    x = rand(1, 2, 7, 6)
    y = F.avg_pool2d(t(x), [3, 3], [2, 2], [1, 1], ceil_mode=True,
                     count_include_pad=include)
    save('average_pool', '2d_torch_padded' + suffix, x=x, y=y,
         kernel=I([3, 3]), strides=I([2, 2]), pads=I([1, 1, 1, 1]),
         include=include)

for i, shape in enumerate([(2, 3, 4, 5), (2, 3, 7), (1, 2, 3, 4, 2),
                           (4, 16, 24, 24)]):
    x = rand(*shape)
    save('global_average_pool', f'{len(shape) - 2}d_{i}', x=x,
         y=x.mean(axis=tuple(range(2, len(shape))), keepdims=True))
)";

PIPE_REFERENCE_FIXTURE(ConvPoolTest, script)

template <typename T> void checkConv(const Reference::Case &c, bool transpose) {
  reference::Array x = c["x"], w = c["w"], want = c["y"];
  std::vector<T> xv = x.as<T>(), wv = w.as<T>(), bv;
  if (c.has("b"))
    bv = c["b"].as<T>();
  std::vector<T> y(want.size(), T(-7));
  std::vector<int64_t> strides = c.ints("strides"), pads = c.ints("pads"),
                       dil = c.ints("dil");
  int spatial = x.rank() - 2;
  if (transpose)
    convTranspose<T>(xv.data(), x.shape().data(), wv.data(), w.shape().data(),
                     bv.empty() ? nullptr : bv.data(), y.data(),
                     want.shape().data(), spatial, strides.data(), pads.data(),
                     dil.data(), c.integer("group"));
  else
    conv<T>(xv.data(), x.shape().data(), wv.data(), w.shape().data(),
            bv.empty() ? nullptr : bv.data(), y.data(), want.shape().data(),
            spatial, strides.data(), pads.data(), dil.data(),
            c.integer("group"));
  EXPECT_TRUE(reference::near(y, want));
}

/// convChannelsLast on the case's input moved to channels last: its result
/// moved back must be the reference's (oneDNN's NHWC kernels for float,
/// conv around transposes for double).
template <typename T>
void checkConvChannelsLast(const Reference::Case &c,
                           int activation = kNoActivation) {
  reference::Array x = c["x"], w = c["w"], want = c["y"];
  // The reference with the fused activation applied.
  float low = -0.25f, high = 0.5f;
  std::vector<double> expected = want.as<double>();
  for (double &v : expected)
    v = activation == kRelu   ? std::max(v, 0.0)
        : activation == kClip ? std::min(std::max(v, double(low)), double(high))
        : activation == kSilu ? v / (1 + std::exp(-v))
                              : v;
  reference::Array wantActivated = want;
  wantActivated.npy.dtype = pipe_rt::DType::F64;
  wantActivated.npy.data.assign(
      reinterpret_cast<const char *>(expected.data()),
      reinterpret_cast<const char *>(expected.data() + expected.size()));
  int rank = x.rank(), spatial = rank - 2;
  std::vector<int64_t> toLast = channelsLastPerm(rank),
                       toFirst = channelsFirstPerm(rank);
  std::vector<int64_t> xLast = permuted(x.shape().data(), toLast),
                       yLast = permuted(want.shape().data(), toLast);
  std::vector<T> xv = x.as<T>(), wv = w.as<T>(), bv, in(xv.size()),
                 out(want.size(), T(-7)), y(want.size());
  if (c.has("b"))
    bv = c["b"].as<T>();
  transpose(xv.data(), x.shape().data(), rank, toLast.data(), sizeof(T),
            in.data());
  std::vector<int64_t> strides = c.ints("strides"), pads = c.ints("pads"),
                       dil = c.ints("dil");
  convChannelsLast<T>(in.data(), xLast.data(), wv.data(), w.shape().data(),
                      bv.empty() ? nullptr : bv.data(), out.data(),
                      yLast.data(), spatial, strides.data(), pads.data(),
                      dil.data(), c.integer("group"), false, activation, low,
                      high);
  transpose(out.data(), yLast.data(), rank, toFirst.data(), sizeof(T),
            y.data());
  EXPECT_TRUE(reference::near(y, wantActivated)) << "activation " << activation;
}

TEST_F(ConvPoolTest, Conv) {
  for (const Reference::Case &c : cases("conv")) {
    SCOPED_TRACE(c.name);
    checkConv<float>(c, false);
    checkConv<double>(c, false);
    for (int activation : {kNoActivation, kRelu, kClip, kSilu}) {
      checkConvChannelsLast<float>(c, activation);
      checkConvChannelsLast<double>(c, activation);
    }
  }
}

/// convWeightGrad in float and double against the case's reference.
void checkConvWeightGrad(const Reference::Case &c) {
  SCOPED_TRACE(c.name);
  reference::Array x = c["x"], dy = c["dy"], want = c["dw"];
  std::vector<int64_t> strides = c.ints("strides"), pads = c.ints("pads"),
                       dil = c.ints("dil");
  auto check = [&](auto zero) {
    using T = decltype(zero);
    std::vector<T> xv = x.as<T>(), dyv = dy.as<T>(), dw(want.size(), T(-7));
    convWeightGrad<T>(xv.data(), x.shape().data(), dyv.data(),
                      dy.shape().data(), dw.data(), want.shape().data(),
                      x.rank() - 2, strides.data(), pads.data(), dil.data(),
                      c.integer("group"));
    EXPECT_TRUE(reference::near(dw, want));
  };
  check(0.0f);
  check(0.0);
}

TEST_F(ConvPoolTest, ConvWeightGrad) {
  for (const Reference::Case &c : cases("conv_weight_grad"))
    checkConvWeightGrad(c);
}

// A convolution may keep a parameter weight in its own layout, but reads it
// again once parametersChanged() says it was written.
TEST(ConvParameterWeight, ReadAgainAfterParametersChange) {
  const int64_t xShape[] = {1, 2, 5, 5}, wShape[] = {3, 2, 3, 3},
                yShape[] = {1, 3, 3, 3}, strides[] = {1, 1},
                pads[] = {0, 0, 0, 0}, dilations[] = {1, 1};
  std::vector<float> x(50, 1.0f), w(54, 1.0f), y(27), twice(27);
  conv<float>(x.data(), xShape, w.data(), wShape, nullptr, y.data(), yShape, 2,
              strides, pads, dilations, 1, /*parameterWeight=*/true);
  EXPECT_EQ(y[0], 18.0f);
  std::fill(w.begin(), w.end(), 2.0f);
  parametersChanged();
  conv<float>(x.data(), xShape, w.data(), wShape, nullptr, twice.data(), yShape,
              2, strides, pads, dilations, 1,
              /*parameterWeight=*/true);
  for (size_t i = 0; i < y.size(); ++i)
    EXPECT_EQ(twice[i], 2.0f * y[i]) << "at " << i;
}

TEST_F(ConvPoolTest, ConvTranspose) {
  for (const Reference::Case &c : cases("conv_transpose")) {
    SCOPED_TRACE(c.name);
    checkConv<float>(c, true);
    checkConv<double>(c, true);
  }
}

template <typename T> void checkPool(const Reference::Case &c, bool max) {
  reference::Array x = c["x"], want = c["y"];
  std::vector<T> xv = x.as<T>();
  std::vector<T> y(want.size(), T(-7));
  std::vector<int64_t> kernel = c.ints("kernel"), strides = c.ints("strides"),
                       pads = c.ints("pads");
  int spatial = x.rank() - 2;
  if (max) {
    std::vector<int64_t> dil = c.ints("dil");
    maxPool<T>(xv.data(), x.shape().data(), y.data(), want.shape().data(),
               spatial, kernel.data(), strides.data(), pads.data(), dil.data());
  } else {
    averagePool<T>(xv.data(), x.shape().data(), y.data(), want.shape().data(),
                   spatial, kernel.data(), strides.data(), pads.data(),
                   c.integer("include"));
  }
  EXPECT_TRUE(reference::near(y, want));
}

TEST_F(ConvPoolTest, MaxPool) {
  for (const Reference::Case &c : cases("max_pool")) {
    SCOPED_TRACE(c.name);
    checkPool<float>(c, true);
    checkPool<double>(c, true);
  }
}

TEST_F(ConvPoolTest, AveragePool) {
  for (const Reference::Case &c : cases("average_pool")) {
    SCOPED_TRACE(c.name);
    checkPool<float>(c, false);
    checkPool<double>(c, false);
  }
}

template <typename T> void checkGlobalPool(const Reference::Case &c) {
  reference::Array x = c["x"], want = c["y"];
  std::vector<T> xv = x.as<T>();
  std::vector<T> y(want.size(), T(-7));
  globalAveragePool<T>(xv.data(), x.shape().data(), x.rank(), y.data());
  EXPECT_TRUE(reference::near(y, want));
}

TEST_F(ConvPoolTest, GlobalAveragePool) {
  for (const Reference::Case &c : cases("global_average_pool")) {
    SCOPED_TRACE(c.name);
    checkGlobalPool<float>(c);
    checkGlobalPool<double>(c);
  }
}

// The transposes that pipe-channels-last leaves, of 4-byte elements (a
// batched matrix transpose), move every element where it belongs.
TEST(ChannelTranspose, MovesChannelsLastAndBack) {
  const int64_t shape[] = {2, 3, 37, 41};
  std::vector<float> x(2 * 3 * 37 * 41);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = float(i);
  std::vector<int64_t> toLast = channelsLastPerm(4),
                       toFirst = channelsFirstPerm(4);
  std::vector<float> last(x.size()), back(x.size());
  transpose(x.data(), shape, 4, toLast.data(), sizeof(float), last.data());
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t c = 0; c < 3; ++c)
      for (int64_t h = 0; h < 37; ++h)
        for (int64_t w = 0; w < 41; ++w)
          ASSERT_EQ(last[((n * 37 + h) * 41 + w) * 3 + c],
                    x[((n * 3 + c) * 37 + h) * 41 + w]);
  const int64_t lastShape[] = {2, 37, 41, 3};
  transpose(last.data(), lastShape, 4, toFirst.data(), sizeof(float),
            back.data());
  EXPECT_EQ(back, x);
}

/// Max pooling lets NaN win, as numpy and torch do.
TEST(ConvPoolNaN, MaxPoolPropagatesNaN) {
  float x[] = {1, NAN, 3, 4, 5, 6, 7, 8, 9};
  int64_t xShape[] = {1, 1, 3, 3}, yShape[] = {1, 1, 2, 2};
  int64_t kernel[] = {2, 2}, strides[] = {1, 1}, pads[] = {0, 0, 0, 0},
          dil[] = {1, 1};
  float y[4];
  maxPool<float>(x, xShape, y, yShape, 2, kernel, strides, pads, dil);
  EXPECT_TRUE(std::isnan(y[0]));
  EXPECT_TRUE(std::isnan(y[1]));
  EXPECT_EQ(y[2], 8);
  EXPECT_EQ(y[3], 9);
}

/// The maximum of -inf, alone or beside padding, is -inf (oneDNN's would
/// be the lowest float).
TEST(ConvPoolNaN, MaxPoolOfMinusInfinity) {
  constexpr float inf = std::numeric_limits<float>::infinity();
  float x[] = {-inf, -inf, -inf, 5};
  int64_t xShape[] = {1, 1, 2, 2}, yShape[] = {1, 1, 2, 2};
  int64_t kernel[] = {2, 2}, strides[] = {1, 1}, pads[] = {1, 1, 0, 0},
          dil[] = {1, 1};
  float y[4];
  maxPool<float>(x, xShape, y, yShape, 2, kernel, strides, pads, dil);
  EXPECT_EQ(y[0], -inf);
  EXPECT_EQ(y[1], -inf);
  EXPECT_EQ(y[2], -inf);
  EXPECT_EQ(y[3], 5);
}

} // namespace
