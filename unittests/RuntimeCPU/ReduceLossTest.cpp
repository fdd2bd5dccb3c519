//===- ReduceLossTest.cpp - reductions (NumPy) and losses (torch) ---------===//

#include "Reference.h"

#include <memory>

using namespace pipe_rt::cpu;
using reference::Reference;

namespace {

const char *const script = R"(
KINDS = {'sum': 0, 'mean': 1, 'max': 2}

def reduce(name, kind, x, axes):
    if kind == 'sum':
        y = np.sum(x, axis=axes)
    elif kind == 'mean':
        y = np.mean(x, axis=axes)
    else:
        y = np.max(x, axis=axes)
    if x.dtype == np.int64:
        y = y.astype(np.int64)  # ONNX: the mean truncates toward zero
    flags = np.zeros(x.ndim, dtype=bool)
    flags[list(axes)] = True
    save('reduce', name, x=x, reduced=flags, kind=KINDS[kind], y=y)

reduce('sum_middle', 'sum', rand(2, 3, 4), (1,))
reduce('mean_outer_inner', 'mean', rand(2, 3, 4), (0, 2))
reduce('max_all', 'max', rand(2, 3, 4), (0, 1, 2))
reduce('sum_alternating', 'sum', rand(3, 4, 5, 6), (1, 3))
reduce('mean_trailing', 'mean', rand(3, 4, 5, 6), (2, 3))
reduce('max_leading', 'max', rand(3, 4, 5), (0,))
reduce('sum_none', 'sum', rand(3, 4), ())
reduce('sum_unit_axes', 'sum', rand(2, 1, 3, 1), (1, 2))
reduce('mean_leading_wide', 'mean', rand(5, 2000), (0,))
reduce('max_middle_wide', 'max', rand(3, 1030, 2), (1,))
reduce('sum_scalar', 'sum', rand(), ())
x = rand(4, 5)
x[1, 2] = np.nan
reduce('max_nan', 'max', x, (1,))
ints = rng.integers(-100, 100, (3, 4, 5), dtype=np.int64)
reduce('int_sum', 'sum', ints, (0, 2))
reduce('int_mean_truncates', 'mean', ints, (1,))
reduce('int_mean_all', 'mean', ints, (0, 1, 2))
reduce('int_max', 'max', ints, (0, 1))
reduce('int_max_inner', 'max', ints, (2,))
reduce('parallel_middle', 'sum', rand(40, 30, 50), (1,))
reduce('parallel_last', 'mean', rand(200, 300), (1,))
reduce('parallel_chunks', 'max', rand(40, 3000), (0,))
reduce('parallel_alternating', 'sum', rand(6, 40, 7, 30), (0, 2))
reduce('int_parallel', 'sum', rng.integers(-9, 9, (60, 20, 50)), (1,))

REDUCTIONS = {'none': 0, 'sum': 1, 'mean': 2}

def loss(name, shape, weight=False, ignore=None):
    x = rand(*shape, lo=-3.0, hi=3.0)
    classes = shape[1]
    label_shape = (shape[0],) + tuple(shape[2:])
    labels = rng.integers(0, classes, label_shape)
    if ignore is not None:
        labels[rng.random(label_shape) < 0.3] = ignore
    w = rand(classes, lo=0.2, hi=2.0) if weight else None
    for reduction in REDUCTIONS:
        args = dict(weight=None if w is None else t(w),
                    ignore_index=-100 if ignore is None else ignore,
                    reduction=reduction)
        for kernel, fn in [('softmax_cross_entropy', F.cross_entropy),
                           ('nll_loss', F.nll_loss)]:
            save(kernel, f'{name}_{reduction}', x=x, labels=labels, weight=w,
                 reduction=REDUCTIONS[reduction],
                 has_ignore=ignore is not None,
                 ignore=0 if ignore is None else ignore,
                 y=fn(t(x), t(labels), **args))

loss('2d', (5, 4))
loss('2d_weight_ignore_in_range', (6, 4), weight=True, ignore=2)
loss('4d_weight_ignore_negative', (3, 4, 2, 3), weight=True, ignore=-1)
loss('3d_ignore_0', (3, 5, 4), ignore=0)
loss('3d_weight', (2, 3, 5), weight=True)
loss('parallel_2d', (500, 70), weight=True, ignore=3)
loss('parallel_3d', (20, 10, 200), ignore=-100)
)";

PIPE_REFERENCE_FIXTURE(ReduceLossTest, script)

template <typename T> void checkReduce(const Reference::Case &c) {
  reference::Array x = c["x"], want = c["y"];
  std::vector<T> xv = x.as<T>();
  std::vector<uint8_t> flags = c["reduced"].as<uint8_t>();
  std::unique_ptr<bool[]> reduced(new bool[flags.size() + 1]);
  for (size_t i = 0; i < flags.size(); ++i)
    reduced[i] = flags[i];
  std::vector<T> y(want.size(), T(-7));
  reduce<T>(ReduceKind(c.integer("kind")), xv.data(), x.shape().data(),
            x.rank(), reduced.get(), y.data());
  EXPECT_TRUE(reference::near(y, want));
}

TEST_F(ReduceLossTest, Reduce) {
  for (const Reference::Case &c : cases("reduce")) {
    SCOPED_TRACE(c.name);
    if (c["x"].npy.dtype == pipe_rt::DType::I64) {
      checkReduce<int32_t>(c);
      checkReduce<int64_t>(c);
    } else {
      checkReduce<float>(c);
      checkReduce<double>(c);
    }
  }
}

template <typename T, typename L>
void checkLoss(const Reference::Case &c, bool crossEntropy) {
  reference::Array x = c["x"], want = c["y"];
  std::vector<T> xv = x.as<T>(), weight;
  if (c.has("weight"))
    weight = c["weight"].as<T>();
  std::vector<L> labels = c["labels"].as<L>();
  std::vector<T> y(want.size(), T(-7));
  int64_t bad = -1;
  auto kernel = crossEntropy ? softmaxCrossEntropy<T, L> : nllLoss<T, L>;
  EXPECT_TRUE(kernel(xv.data(), x.shape().data(), x.rank(), labels.data(),
                     weight.empty() ? nullptr : weight.data(),
                     LossReduction(c.integer("reduction")),
                     c.integer("has_ignore"), c.integer("ignore"), y.data(),
                     &bad));
  EXPECT_EQ(bad, -1);
  EXPECT_TRUE(reference::near(y, want));
}

TEST_F(ReduceLossTest, SoftmaxCrossEntropy) {
  for (const Reference::Case &c : cases("softmax_cross_entropy")) {
    SCOPED_TRACE(c.name);
    checkLoss<float, int32_t>(c, true);
    checkLoss<float, int64_t>(c, true);
    checkLoss<double, int32_t>(c, true);
    checkLoss<double, int64_t>(c, true);
  }
}

TEST_F(ReduceLossTest, NllLoss) {
  for (const Reference::Case &c : cases("nll_loss")) {
    SCOPED_TRACE(c.name);
    checkLoss<float, int32_t>(c, false);
    checkLoss<float, int64_t>(c, false);
    checkLoss<double, int32_t>(c, false);
    checkLoss<double, int64_t>(c, false);
  }
}

template <typename L> void checkBadLabels(bool crossEntropy) {
  auto kernel =
      crossEntropy ? softmaxCrossEntropy<float, L> : nllLoss<float, L>;
  // Scores [3, 4, 2]: labels [3, 2], flat index 1 is bad (4 == C).
  int64_t shape[] = {3, 4, 2};
  std::vector<float> x(24, 0.5f);
  float y[6];
  int64_t bad = -1;
  L tooLarge[] = {0, 4, 3, 1, 7, 2};
  EXPECT_FALSE(kernel(x.data(), shape, 3, tooLarge, nullptr,
                      LossReduction::Mean, false, 0, y, &bad));
  EXPECT_EQ(bad, 1);
  // Negative labels are bad unless they are the ignored index.
  L negative[] = {0, 1, 3, -1, 2, -100};
  bad = -1;
  EXPECT_FALSE(kernel(x.data(), shape, 3, negative, nullptr,
                      LossReduction::None, true, -100, y, &bad));
  EXPECT_EQ(bad, 3);
  bad = -1;
  EXPECT_FALSE(kernel(x.data(), shape, 3, negative, nullptr, LossReduction::Sum,
                      true, -1, y, &bad));
  EXPECT_EQ(bad, 5);
  L ignored[] = {0, 1, 3, -1, 2, -1};
  bad = -1;
  EXPECT_TRUE(kernel(x.data(), shape, 3, ignored, nullptr, LossReduction::None,
                     true, -1, y, &bad));
  EXPECT_EQ(bad, -1);
  EXPECT_EQ(y[3], 0.0f);
  EXPECT_EQ(y[5], 0.0f);
  bad = -1;
  EXPECT_FALSE(kernel(x.data(), shape, 3, ignored, nullptr, LossReduction::None,
                      false, -1, y, &bad));
  EXPECT_EQ(bad, 3);
}

TEST(ReduceLossBadLabels, ReturnFalseWithFlatIndex) {
  checkBadLabels<int32_t>(true);
  checkBadLabels<int64_t>(true);
  checkBadLabels<int32_t>(false);
  checkBadLabels<int64_t>(false);
}

} // namespace
