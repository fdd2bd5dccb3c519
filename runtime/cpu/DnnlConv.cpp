//===- DnnlConv.cpp - float convolutions through oneDNN -------------------===//
//
// pipe.conv on float32 through oneDNN, as PyTorch's CPU path does. Each call
// site's primitive is built once and kept, keyed by its shapes and
// attributes. Windowed convolutions let oneDNN pick its blocked layouts
// (its direct and depthwise kernels need them) and reorder the activations
// in and out; pointwise ones stay in NCHW, where its GEMM wins over the
// reorders. A weight that is a parameter is reordered once per parameter
// epoch; any other weight on every call.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <atomic>
#include <string>
#include <unordered_map>

namespace pipe_rt {
namespace cpu {
namespace {

std::atomic<int64_t> parameterEpoch{0};

dnnl::engine &cpuEngine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

dnnl::stream &cpuStream() {
  static dnnl::stream stream(cpuEngine());
  return stream;
}

/// One call site's primitive and the memories it keeps.
struct ConvSite {
  dnnl::convolution_forward::primitive_desc desc;
  dnnl::convolution_forward primitive;
  /// The weights in the primitive's layout, and which parameter and epoch
  /// they were read from.
  dnnl::memory weights;
  const float *weightSource = nullptr;
  int64_t weightEpoch = -1;
  /// Activations in the primitive's layout, where it is not the plain one.
  dnnl::memory src, dst;
};

dnnl::memory::dims dimsOf(const int64_t *shape, int rank) {
  return dnnl::memory::dims(shape, shape + rank);
}

/// The row-major tag of a rank-`rank` tensor: abc, abcd, ...
dnnl::memory::format_tag plainTag(int rank) {
  using tag = dnnl::memory::format_tag;
  static const tag tags[] = {tag::a,    tag::ab,    tag::abc,
                             tag::abcd, tag::abcde, tag::abcdef};
  return tags[rank - 1];
}

std::string siteKey(const int64_t *xShape, const int64_t *wShape, bool hasBias,
                    int spatial, const int64_t *strides, const int64_t *pads,
                    const int64_t *dilations, int64_t group) {
  std::string key;
  auto add = [&](const int64_t *values, int count) {
    for (int i = 0; i < count; ++i)
      key += std::to_string(values[i]) + ",";
    key += ";";
  };
  add(xShape, spatial + 2);
  add(wShape, spatial + 2);
  add(strides, spatial);
  add(pads, 2 * spatial);
  add(dilations, spatial);
  key += std::to_string(group) + (hasBias ? "b" : "");
  return key;
}

ConvSite makeSite(const int64_t *xShape, const int64_t *wShape, bool hasBias,
                  const int64_t *yShape, int spatial, const int64_t *strides,
                  const int64_t *pads, const int64_t *dilations,
                  int64_t group) {
  using dt = dnnl::memory::data_type;
  using tag = dnnl::memory::format_tag;
  int rank = spatial + 2;
  bool pointwise = true;
  dnnl::memory::dims stride, padBegin, padEnd, dilation;
  for (int d = 0; d < spatial; ++d) {
    pointwise = pointwise && wShape[d + 2] == 1 && strides[d] == 1 &&
                pads[d] == 0 && pads[spatial + d] == 0;
    stride.push_back(strides[d]);
    padBegin.push_back(pads[d]);
    padEnd.push_back(pads[spatial + d]);
    dilation.push_back(dilations[d] - 1);
  }
  tag activations = pointwise ? plainTag(rank) : tag::any;
  dnnl::memory::dims weightDims = dimsOf(wShape, rank);
  if (group > 1) {
    weightDims[0] /= group;
    weightDims.insert(weightDims.begin(), group);
  }
  dnnl::memory::desc src(dimsOf(xShape, rank), dt::f32, activations);
  dnnl::memory::desc dst(dimsOf(yShape, rank), dt::f32, activations);
  dnnl::memory::desc weights(weightDims, dt::f32, tag::any);
  dnnl::memory::desc bias =
      hasBias ? dnnl::memory::desc({wShape[0]}, dt::f32, tag::a)
              : dnnl::memory::desc();
  ConvSite site;
  site.desc = dnnl::convolution_forward::primitive_desc(
      {dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
       src, weights, bias, dst, stride, dilation, padBegin, padEnd},
      cpuEngine());
  site.primitive = dnnl::convolution_forward(site.desc);
  site.weights = dnnl::memory(site.desc.weights_desc(), cpuEngine());
  if (site.desc.src_desc() !=
      dnnl::memory::desc(dimsOf(xShape, rank), dt::f32, plainTag(rank)))
    site.src = dnnl::memory(site.desc.src_desc(), cpuEngine());
  if (site.desc.dst_desc() !=
      dnnl::memory::desc(dimsOf(yShape, rank), dt::f32, plainTag(rank)))
    site.dst = dnnl::memory(site.desc.dst_desc(), cpuEngine());
  return site;
}

} // namespace

void parametersChanged() { ++parameterEpoch; }

bool dnnlConv(const float *x, const int64_t *xShape, const float *w,
              const int64_t *wShape, const float *bias, float *y,
              const int64_t *yShape, int spatial, const int64_t *strides,
              const int64_t *pads, const int64_t *dilations, int64_t group,
              bool parameterWeight) {
  using dt = dnnl::memory::data_type;
  if (spatial < 1 || spatial > 3)
    return false;
  static std::unordered_map<std::string, ConvSite> sites;
  std::string key =
      siteKey(xShape, wShape, bias, spatial, strides, pads, dilations, group);
  auto it = sites.find(key);
  if (it == sites.end()) {
    try {
      it = sites
               .emplace(key, makeSite(xShape, wShape, bias, yShape, spatial,
                                      strides, pads, dilations, group))
               .first;
    } catch (const dnnl::error &) {
      return false; // No oneDNN implementation: the caller's kernel runs.
    }
  }
  ConvSite &site = it->second;
  int rank = spatial + 2;
  dnnl::engine &engine = cpuEngine();
  dnnl::stream &stream = cpuStream();
  auto plain = [&](const int64_t *shape, const float *data) {
    return dnnl::memory({dimsOf(shape, rank), dt::f32, plainTag(rank)}, engine,
                        const_cast<float *>(data));
  };
  int64_t epoch = parameterEpoch.load();
  if (!parameterWeight || site.weightSource != w || site.weightEpoch != epoch) {
    dnnl::memory::desc weightDesc = site.desc.weights_desc();
    dnnl::memory source(dnnl::memory::desc(weightDesc.dims(), dt::f32,
                                           plainTag(static_cast<int>(
                                               weightDesc.dims().size()))),
                        engine, const_cast<float *>(w));
    dnnl::reorder(source, site.weights).execute(stream, source, site.weights);
    site.weightSource = w;
    site.weightEpoch = parameterWeight ? epoch : -1;
  }
  dnnl::memory src = plain(xShape, x), dst = plain(yShape, y);
  if (site.src) {
    dnnl::reorder(src, site.src).execute(stream, src, site.src);
    src = site.src;
  }
  std::unordered_map<int, dnnl::memory> args = {
      {DNNL_ARG_SRC, src},
      {DNNL_ARG_WEIGHTS, site.weights},
      {DNNL_ARG_DST, site.dst ? site.dst : dst}};
  if (bias)
    args[DNNL_ARG_BIAS] = dnnl::memory({{wShape[0]}, dt::f32, plainTag(1)},
                                       engine, const_cast<float *>(bias));
  site.primitive.execute(stream, args);
  if (site.dst)
    dnnl::reorder(site.dst, dst).execute(stream, site.dst, dst);
  stream.wait();
  return true;
}

} // namespace cpu
} // namespace pipe_rt
