//===- NormTest.cpp - normalizations and softmax against torch ------------===//
//
// batch_norm_train follows ONNX: running = momentum * running + (1 -
// momentum) * batch, which is torch's update with momentum 1 - momentum,
// except that ONNX updates the running variance with the biased batch
// variance where torch uses the unbiased one.
//
//===----------------------------------------------------------------------===//

#include "Reference.h"

using namespace pipe_rt::cpu;
using reference::Reference;

namespace {

const char *const script = R"(
def channel_params(c):
    return (rand(c, lo=0.5, hi=2.0), rand(c), rand(c), rand(c, lo=0.1, hi=2.0))

def batch_norm(name, shape, eps):
    x = rand(*shape)
    scale, bias, mean, var = channel_params(shape[1])
    y = F.batch_norm(t(x), t(mean), t(var), t(scale), t(bias), False, 0.0, eps)
    save('batch_norm', name, x=x, scale=scale, bias=bias, mean=mean, var=var,
         eps=eps, y=y)

batch_norm('4d', (2, 3, 4, 5), 1e-5)
batch_norm('2d', (4, 3), 1e-3)
batch_norm('5d', (2, 3, 2, 2, 3), 0.5)
batch_norm('parallel', (4, 16, 24, 24), 1e-5)

def batch_norm_train(name, shape, momentum, eps):
    x = rand(*shape, lo=-2.0, hi=3.0)
    scale, bias, mean, var = channel_params(shape[1])
    running_mean, running_var = t(mean).clone(), t(var).clone()
    y = F.batch_norm(t(x), running_mean, running_var, t(scale), t(bias), True,
                     1 - momentum, eps)
    # The same with numpy, ONNX's formula written out.
    axes = tuple(i for i in range(len(shape)) if i != 1)
    count = x.size // shape[1]
    expected_var = (var * momentum +
                    x.var(axis=axes) * count / (count - 1) * (1 - momentum))
    assert np.allclose(running_var.numpy(), expected_var, rtol=1e-12)
    # ONNX (and its backend test data) take the biased batch variance.
    onnx_var = var * momentum + x.var(axis=axes) * (1 - momentum)
    save('batch_norm_train', name, x=x, scale=scale, bias=bias, mean=mean,
         var=var, eps=eps, momentum=momentum, y=y,
         running_mean=running_mean, running_var=onnx_var)

batch_norm_train('4d', (2, 3, 4, 5), 0.9, 1e-5)
batch_norm_train('2d', (6, 4), 0.75, 1e-3)
batch_norm_train('3d', (3, 2, 7), 0.0, 1e-5)
batch_norm_train('parallel', (8, 8, 24, 24), 0.9, 1e-5)

def batch_norm_train_grad(name, shape, eps):
    x = rand(*shape, lo=-2.0, hi=3.0)
    scale, bias = rand(shape[1], lo=0.5, hi=2.0), rand(shape[1])
    dy = rand(*shape)
    tx, ts, tb = (t(v).requires_grad_() for v in (x, scale, bias))
    F.batch_norm(tx, None, None, ts, tb, True, 0.0, eps).backward(t(dy))
    save('batch_norm_train_grad', name, x=x, scale=scale, dy=dy, eps=eps,
         dx=tx.grad, dscale=ts.grad, dbias=tb.grad)

batch_norm_train_grad('4d', (2, 3, 4, 5), 1e-5)
batch_norm_train_grad('2d', (6, 4), 1e-3)
batch_norm_train_grad('odd_plane', (2, 5, 3, 3), 1e-5)
batch_norm_train_grad('parallel', (8, 8, 24, 24), 1e-5)

def layer_norm(name, shape, axis, scale_shape, bias_shape, eps=1e-5):
    x = rand(*shape, lo=-2.0, hi=2.0)
    normalized = shape[axis:]
    scale = rand(*scale_shape, lo=0.5, hi=2.0)
    bias = None if bias_shape is None else rand(*bias_shape)
    y = F.layer_norm(t(x), normalized,
                     t(np.broadcast_to(scale, normalized).copy()),
                     None if bias is None else
                     t(np.broadcast_to(bias, normalized).copy()), eps)
    save('layer_norm', name, x=x, axis=axis, scale=scale, bias=bias, eps=eps,
         y=y)

layer_norm('middle', (2, 3, 4, 5), 2, (4, 5), (5,))
layer_norm('axis1_broadcast', (2, 3, 4, 5), 1, (3, 1, 5), (1,))
layer_norm('last_no_bias', (3, 7), 1, (7,), None)
layer_norm('axis0', (2, 3, 4), 0, (2, 3, 4), (3, 4), eps=1e-3)
layer_norm('scalar_scale', (2, 3, 4), 1, (), (4,))
layer_norm('wide', (4, 300), 1, (300,), (300,))
layer_norm('parallel', (64, 8, 96), 1, (96,), (8, 96))

def instance_norm(name, shape, eps=1e-5):
    x = rand(*shape, lo=-1.0, hi=3.0)
    scale, bias = rand(shape[1], lo=0.5, hi=2.0), rand(shape[1])
    y = F.instance_norm(t(x), weight=t(scale), bias=t(bias), eps=eps)
    save('instance_norm', name, x=x, scale=scale, bias=bias, eps=eps, y=y)

instance_norm('4d', (2, 3, 4, 5))
instance_norm('3d', (2, 4, 6), eps=1e-2)
instance_norm('5d', (1, 2, 3, 2, 4))
instance_norm('parallel', (4, 8, 33, 33))

def softmax(name, shape, axis, scale=1.0, offset=0.0):
    x = (rand(*shape) * scale + offset).astype(np.float32).astype(np.float64)
    outer = int(np.prod(shape[:axis]))
    inner = int(np.prod(shape[axis + 1:]))
    for log in [False, True]:
        fn = F.log_softmax if log else F.softmax
        save('softmax', name + ('_log' if log else ''), x=x,
             y=fn(t(x), dim=axis), outer=outer, extent=shape[axis],
             inner=inner, log=log)

softmax('middle', (3, 5, 4), 1)
softmax('last', (4, 10), 1)
softmax('first', (6, 3, 2), 0)
softmax('extent_1', (3, 1, 2), 1)
softmax('large_middle', (3, 7, 4), 1, scale=1000.0, offset=500.0)
softmax('large_last', (5, 9), 1, scale=2000.0, offset=-300.0)
softmax('large_4d', (2, 3, 50, 2), 2, scale=100.0, offset=1e4)
softmax('parallel_middle', (40, 100, 10), 1, scale=30.0)
softmax('parallel_last', (400, 100), 1, scale=30.0)
)";

PIPE_REFERENCE_FIXTURE(NormTest, script)

template <typename T> void checkBatchNorm(const Reference::Case &c) {
  reference::Array x = c["x"], want = c["y"];
  std::vector<T> xv = x.as<T>(), scale = c["scale"].as<T>(),
                 bias = c["bias"].as<T>(), mean = c["mean"].as<T>(),
                 var = c["var"].as<T>();
  std::vector<T> y(want.size(), T(-7));
  batchNorm<T>(xv.data(), x.shape().data(), x.rank(), scale.data(), bias.data(),
               mean.data(), var.data(), T(c.real("eps")), y.data());
  EXPECT_TRUE(reference::near(y, want));
}

TEST_F(NormTest, BatchNorm) {
  for (const Reference::Case &c : cases("batch_norm")) {
    SCOPED_TRACE(c.name);
    checkBatchNorm<float>(c);
    checkBatchNorm<double>(c);
  }
}

template <typename T> void checkBatchNormTrain(const Reference::Case &c) {
  reference::Array x = c["x"], want = c["y"];
  std::vector<T> xv = x.as<T>(), scale = c["scale"].as<T>(),
                 bias = c["bias"].as<T>(), mean = c["mean"].as<T>(),
                 var = c["var"].as<T>();
  std::vector<T> y(want.size(), T(-7)), runningMean(mean.size(), T(-7)),
      runningVar(var.size(), T(-7));
  batchNormTrain<T>(xv.data(), x.shape().data(), x.rank(), scale.data(),
                    bias.data(), mean.data(), var.data(), T(c.real("eps")),
                    T(c.real("momentum")), y.data(), runningMean.data(),
                    runningVar.data());
  EXPECT_TRUE(reference::near(y, want));
  EXPECT_TRUE(reference::near(runningMean, c["running_mean"]));
  EXPECT_TRUE(reference::near(runningVar, c["running_var"]));
}

TEST_F(NormTest, BatchNormTrain) {
  for (const Reference::Case &c : cases("batch_norm_train")) {
    SCOPED_TRACE(c.name);
    checkBatchNormTrain<float>(c);
    checkBatchNormTrain<double>(c);
  }
}

template <typename T> void checkBatchNormTrainGrad(const Reference::Case &c) {
  reference::Array x = c["x"];
  std::vector<T> xv = x.as<T>(), scale = c["scale"].as<T>(),
                 dy = c["dy"].as<T>();
  std::vector<T> dx(xv.size(), T(-7)), dscale(scale.size(), T(-7)),
      dbias(scale.size(), T(-7));
  batchNormTrainGrad<T>(xv.data(), x.shape().data(), x.rank(), scale.data(),
                        dy.data(), T(c.real("eps")), dx.data(), dscale.data(),
                        dbias.data());
  EXPECT_TRUE(reference::near(dx, c["dx"]));
  EXPECT_TRUE(reference::near(dscale, c["dscale"]));
  EXPECT_TRUE(reference::near(dbias, c["dbias"]));
}

TEST_F(NormTest, BatchNormTrainGrad) {
  for (const Reference::Case &c : cases("batch_norm_train_grad")) {
    SCOPED_TRACE(c.name);
    checkBatchNormTrainGrad<float>(c);
    checkBatchNormTrainGrad<double>(c);
  }
}

template <typename T> void checkLayerNorm(const Reference::Case &c) {
  reference::Array x = c["x"], scale = c["scale"], want = c["y"];
  std::vector<T> xv = x.as<T>(), sv = scale.as<T>(), bv;
  reference::Array bias;
  if (c.has("bias")) {
    bias = c["bias"];
    bv = bias.as<T>();
  }
  std::vector<T> y(want.size(), T(-7));
  layerNorm<T>(xv.data(), x.shape().data(), x.rank(), c.integer("axis"),
               sv.data(), scale.shape().data(), scale.rank(),
               c.has("bias") ? bv.data() : nullptr, bias.shape().data(),
               bias.rank(), T(c.real("eps")), y.data());
  EXPECT_TRUE(reference::near(y, want));
}

TEST_F(NormTest, LayerNorm) {
  for (const Reference::Case &c : cases("layer_norm")) {
    SCOPED_TRACE(c.name);
    checkLayerNorm<float>(c);
    checkLayerNorm<double>(c);
  }
}

template <typename T> void checkInstanceNorm(const Reference::Case &c) {
  reference::Array x = c["x"], want = c["y"];
  std::vector<T> xv = x.as<T>(), scale = c["scale"].as<T>(),
                 bias = c["bias"].as<T>();
  std::vector<T> y(want.size(), T(-7));
  instanceNorm<T>(xv.data(), x.shape().data(), x.rank(), scale.data(),
                  bias.data(), T(c.real("eps")), y.data());
  EXPECT_TRUE(reference::near(y, want));
}

TEST_F(NormTest, InstanceNorm) {
  for (const Reference::Case &c : cases("instance_norm")) {
    SCOPED_TRACE(c.name);
    checkInstanceNorm<float>(c);
    checkInstanceNorm<double>(c);
  }
}

template <typename T> void checkSoftmax(const Reference::Case &c) {
  reference::Array want = c["y"];
  std::vector<T> x = c["x"].as<T>();
  std::vector<T> y(want.size(), T(-7));
  softmax<T>(x.data(), y.data(), c.integer("outer"), c.integer("extent"),
             c.integer("inner"), c.integer("log"));
  EXPECT_TRUE(reference::near(y, want));
}

TEST_F(NormTest, Softmax) {
  for (const Reference::Case &c : cases("softmax")) {
    SCOPED_TRACE(c.name);
    checkSoftmax<float>(c);
    checkSoftmax<double>(c);
  }
}

} // namespace
