//===- DnnlConv.cpp - float convolutions through oneDNN -------------------===//
//
// pipe.conv, pipe.conv_transpose and pipe.conv_weight_grad on float32
// through oneDNN, as PyTorch's CPU path does. Each call site's primitive is
// built once and kept, keyed by its shapes and attributes (a site oneDNN
// cannot run is remembered, and the caller's kernel runs). Windowed
// convolutions let oneDNN pick its blocked layouts (its direct and depthwise
// kernels need them) and reorder the activations in and out, through scratch
// buffers shared by every call site; pointwise ones stay in NCHW, where its
// GEMM wins over the reorders. A weight that is a parameter has a site of its
// own and is reordered once per parameter epoch (a copy of the convolution
// weights lives beside the parameters); any other weight on every call. A
// channels-last convolution (pipe.conv's `channels_last`) reads and writes NHWC
// activations as they are, with no reorder.
//
//===----------------------------------------------------------------------===//

#include "Dnnl.h"
#include "Kernels.h"
#include "ShapeUtil.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <atomic>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace pipe_rt {
namespace cpu {

dnnl::engine &cpuEngine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

dnnl::stream &cpuStream() {
  static dnnl::stream stream(cpuEngine());
  return stream;
}

namespace {

std::atomic<int64_t> parameterEpoch{0};

/// One call site's primitive and the memories it keeps.
struct ConvSite {
  dnnl::convolution_forward::primitive_desc desc;
  dnnl::convolution_forward primitive;
  /// The weights in the primitive's layout, and which parameter and epoch
  /// they were read from.
  dnnl::memory weights;
  const float *weightSource = nullptr;
  int64_t weightEpoch = -1;
  /// The activations' layouts where they are not the plain ones.
  dnnl::memory::desc src, dst;
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

/// oneDNN's dims of a convolution weight [M, C/group, k...]: grouped ones
/// as [G, M/G, C/G, k...], the same data.
dnnl::memory::dims weightDims(const int64_t *wShape, int rank, int64_t group) {
  dnnl::memory::dims dims = dimsOf(wShape, rank);
  if (group > 1) {
    dims[0] /= group;
    dims.insert(dims.begin(), group);
  }
  return dims;
}

/// The tag of activations of rank `rank` as pipe stores them: row-major,
/// or with the channels last (nwc, nhwc, ndhwc).
dnnl::memory::format_tag activationTag(int rank, bool channelsLast) {
  using tag = dnnl::memory::format_tag;
  if (!channelsLast)
    return plainTag(rank);
  static const tag tags[] = {tag::acb, tag::acdb, tag::acdeb};
  return tags[rank - 3];
}

/// `desc` where it is not the layout `tag` of `shape`; else the zero
/// descriptor.
dnnl::memory::desc unlessPlain(const dnnl::memory::desc &desc,
                               const int64_t *shape, int rank,
                               dnnl::memory::format_tag tag) {
  if (desc == dnnl::memory::desc(dimsOf(shape, rank),
                                 dnnl::memory::data_type::f32, tag))
    return dnnl::memory::desc();
  return desc;
}

dnnl::memory::desc unlessPlain(const dnnl::memory::desc &desc,
                               const int64_t *shape, int rank) {
  return unlessPlain(desc, shape, rank, plainTag(rank));
}

/// Activations in a primitive's own layout live in these buffers, shared
/// by every call site and grown to the largest: slot 0 for the source,
/// 1 for the destination (or the output's gradient), 2 for a weight
/// gradient. Only one primitive runs at a time.
void *scratch(int slot, size_t bytes) {
  static std::vector<char> buffers[3];
  if (buffers[slot].size() < bytes)
    buffers[slot].resize(bytes);
  return buffers[slot].data();
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

/// The window of a convolution in oneDNN's terms, and its descriptors:
/// activations in oneDNN's choice of layout where the window is not
/// pointwise, weights always (grouped: [G, M/G, C/G, k...]).
struct Window {
  dnnl::memory::dims strides, dilations, padBegin, padEnd;
  dnnl::memory::desc src, weights, dst;
};

Window makeWindow(const int64_t *xShape, const int64_t *wShape,
                  const int64_t *yShape, int spatial, const int64_t *strides,
                  const int64_t *pads, const int64_t *dilations, int64_t group,
                  bool channelsLast = false) {
  using dt = dnnl::memory::data_type;
  using tag = dnnl::memory::format_tag;
  int rank = spatial + 2;
  Window window;
  bool pointwise = true;
  for (int d = 0; d < spatial; ++d) {
    pointwise = pointwise && wShape[d + 2] == 1 && strides[d] == 1 &&
                pads[d] == 0 && pads[spatial + d] == 0;
    window.strides.push_back(strides[d]);
    window.padBegin.push_back(pads[d]);
    window.padEnd.push_back(pads[spatial + d]);
    window.dilations.push_back(dilations[d] - 1);
  }
  tag activations = channelsLast ? activationTag(rank, true)
                    : pointwise  ? plainTag(rank)
                                 : tag::any;
  window.src = dnnl::memory::desc(dimsOf(xShape, rank), dt::f32, activations);
  window.dst = dnnl::memory::desc(dimsOf(yShape, rank), dt::f32, activations);
  window.weights =
      dnnl::memory::desc(weightDims(wShape, rank, group), dt::f32, tag::any);
  return window;
}

ConvSite makeSite(const int64_t *xShape, const int64_t *wShape, bool hasBias,
                  const int64_t *yShape, int spatial, const int64_t *strides,
                  const int64_t *pads, const int64_t *dilations, int64_t group,
                  bool channelsLast, int activation, float low, float high) {
  using dt = dnnl::memory::data_type;
  Window window = makeWindow(xShape, wShape, yShape, spatial, strides, pads,
                             dilations, group, channelsLast);
  dnnl::memory::desc bias =
      hasBias ? dnnl::memory::desc({wShape[0]}, dt::f32, plainTag(1))
              : dnnl::memory::desc();
  ConvSite site;
  // The fused activation, as an eltwise post-op.
  dnnl::primitive_attr attr;
  if (activation != kNoActivation) {
    dnnl::post_ops ops;
    if (activation == kRelu)
      ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
    else if (activation == kClip)
      ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_clip, low, high);
    else
      ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_swish, 1.0f, 0.0f);
    attr.set_post_ops(ops);
  }
  site.desc = dnnl::convolution_forward::primitive_desc(
      {dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
       window.src, window.weights, bias, window.dst, window.strides,
       window.dilations, window.padBegin, window.padEnd},
      attr, cpuEngine());
  site.primitive = dnnl::convolution_forward(site.desc);
  site.weights = dnnl::memory(site.desc.weights_desc(), cpuEngine());
  dnnl::memory::format_tag given = activationTag(spatial + 2, channelsLast);
  site.src = unlessPlain(site.desc.src_desc(), xShape, spatial + 2, given);
  site.dst = unlessPlain(site.desc.dst_desc(), yShape, spatial + 2, given);
  return site;
}

/// One call site of a weight gradient: its primitive, and the layouts of
/// its activations and result where those are not plain.
struct WeightGradSite {
  dnnl::convolution_backward_weights::primitive_desc desc;
  dnnl::convolution_backward_weights primitive;
  dnnl::memory::desc src, diffDst, diffWeights;
};

WeightGradSite makeWeightGradSite(const int64_t *xShape, const int64_t *dyShape,
                                  const int64_t *wShape, int spatial,
                                  const int64_t *strides, const int64_t *pads,
                                  const int64_t *dilations, int64_t group) {
  Window window = makeWindow(xShape, wShape, dyShape, spatial, strides, pads,
                             dilations, group);
  // The backward primitive is chosen against a forward one.
  dnnl::convolution_forward::primitive_desc hint(
      {dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct,
       window.src, window.weights, window.dst, window.strides, window.dilations,
       window.padBegin, window.padEnd},
      cpuEngine());
  WeightGradSite site;
  site.desc = dnnl::convolution_backward_weights::primitive_desc(
      {dnnl::algorithm::convolution_direct, window.src, window.weights,
       window.dst, window.strides, window.dilations, window.padBegin,
       window.padEnd},
      cpuEngine(), hint);
  site.primitive = dnnl::convolution_backward_weights(site.desc);
  site.src = unlessPlain(site.desc.src_desc(), xShape, spatial + 2);
  site.diffDst = unlessPlain(site.desc.diff_dst_desc(), dyShape, spatial + 2);
  dnnl::memory::desc plainWeights(weightDims(wShape, spatial + 2, group),
                                  dnnl::memory::data_type::f32,
                                  plainTag(spatial + 2 + (group > 1)));
  if (site.desc.diff_weights_desc() != plainWeights)
    site.diffWeights = site.desc.diff_weights_desc();
  return site;
}

/// One call site of a transposed convolution: its primitive, its weights
/// in the primitive's layout, and its activations' layouts where not plain.
struct TransposeSite {
  dnnl::deconvolution_forward::primitive_desc desc;
  dnnl::deconvolution_forward primitive;
  dnnl::memory weights;
  dnnl::memory::desc src, dst;
};

/// The weights of a transposed convolution, [C, M/group, k...], as
/// oneDNN's [M, C, k...] (grouped: [G, M/G, C/G, k...]) by strides.
dnnl::memory::desc transposedWeights(const int64_t *wShape, int rank,
                                     int64_t group) {
  int64_t cg = wShape[0] / group, mg = wShape[1];
  int64_t kernel = 1;
  for (int d = 2; d < rank; ++d)
    kernel *= wShape[d];
  dnnl::memory::dims dims = {mg * group, cg}, strides = {kernel, mg * kernel};
  if (group > 1) {
    dims = {group, mg, cg};
    strides = {cg * mg * kernel, kernel, mg * kernel};
  }
  int64_t stride = kernel;
  for (int d = 2; d < rank; ++d) {
    stride /= wShape[d];
    dims.push_back(wShape[d]);
    strides.push_back(stride);
  }
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, strides);
}

TransposeSite makeTransposeSite(const int64_t *xShape, const int64_t *wShape,
                                bool hasBias, const int64_t *yShape,
                                int spatial, const int64_t *strides,
                                const int64_t *pads, const int64_t *dilations,
                                int64_t group) {
  using dt = dnnl::memory::data_type;
  using tag = dnnl::memory::format_tag;
  int rank = spatial + 2;
  dnnl::memory::dims stride, dilation, padBegin, padEnd;
  for (int d = 0; d < spatial; ++d) {
    // ONNX's output padding is the end pad oneDNN's shape rule leaves.
    int64_t extent = (xShape[d + 2] - 1) * strides[d] +
                     dilations[d] * (wShape[d + 2] - 1) + 1 - pads[d];
    if (extent - yShape[d + 2] < 0)
      throw dnnl::error(dnnl_unimplemented, "negative end padding");
    stride.push_back(strides[d]);
    dilation.push_back(dilations[d] - 1);
    padBegin.push_back(pads[d]);
    padEnd.push_back(extent - yShape[d + 2]);
  }
  dnnl::memory::desc weights = transposedWeights(wShape, rank, group);
  dnnl::memory::desc anyWeights(weights.dims(), dt::f32, tag::any);
  dnnl::memory::desc src(dimsOf(xShape, rank), dt::f32, tag::any);
  dnnl::memory::desc dst(dimsOf(yShape, rank), dt::f32, tag::any);
  dnnl::memory::desc bias =
      hasBias ? dnnl::memory::desc({yShape[1]}, dt::f32, plainTag(1))
              : dnnl::memory::desc();
  TransposeSite site;
  site.desc = dnnl::deconvolution_forward::primitive_desc(
      {dnnl::prop_kind::forward_inference,
       dnnl::algorithm::deconvolution_direct, src, anyWeights, bias, dst,
       stride, dilation, padBegin, padEnd},
      cpuEngine());
  site.primitive = dnnl::deconvolution_forward(site.desc);
  site.weights = dnnl::memory(site.desc.weights_desc(), cpuEngine());
  site.src = unlessPlain(site.desc.src_desc(), xShape, rank);
  site.dst = unlessPlain(site.desc.dst_desc(), yShape, rank);
  return site;
}

/// The call site of kind `Site` and `key`, made by `make` the first time;
/// null where oneDNN has no implementation for it (remembered) or for
/// `spatial`.
template <typename Site, typename Make>
Site *siteFor(int spatial, const std::string &key, Make make) {
  static std::unordered_map<std::string, std::unique_ptr<Site>> sites;
  if (spatial < 1 || spatial > 3)
    return nullptr;
  auto it = sites.find(key);
  if (it == sites.end()) {
    std::unique_ptr<Site> site;
    try {
      site = std::make_unique<Site>(make());
    } catch (const dnnl::error &) {
    }
    it = sites.emplace(key, std::move(site)).first;
  }
  return it->second.get();
}

/// Runs `primitive` on `args` with its output `output` in `plain`, or,
/// where the primitive wants the layout `converted`, in scratch slot
/// `slot` and reordered into `plain`.
void execute(const dnnl::primitive &primitive,
             std::unordered_map<int, dnnl::memory> args, int output,
             dnnl::memory plain, const dnnl::memory::desc &converted,
             int slot) {
  dnnl::memory target = plain;
  if (!converted.is_zero())
    target = dnnl::memory(converted, cpuEngine(),
                          scratch(slot, converted.get_size()));
  args[output] = target;
  primitive.execute(cpuStream(), args);
  if (!converted.is_zero())
    dnnl::reorder(target, plain).execute(cpuStream(), target, plain);
  cpuStream().wait();
}

/// `data` as a float memory of the logical (NC...) `shape`'s first `rank`
/// extents, row-major or channels last.
dnnl::memory plainMemory(const int64_t *shape, int rank, const float *data,
                         bool channelsLast = false) {
  return dnnl::memory({dimsOf(shape, rank), dnnl::memory::data_type::f32,
                       activationTag(rank, channelsLast)},
                      cpuEngine(), const_cast<float *>(data));
}

/// `plain` in the layout `converted` (copied into scratch slot `slot`)
/// where that is set, else `plain` itself.
dnnl::memory inLayout(dnnl::memory plain, const dnnl::memory::desc &converted,
                      int slot) {
  if (converted.is_zero())
    return plain;
  dnnl::memory copy(converted, cpuEngine(),
                    scratch(slot, converted.get_size()));
  dnnl::reorder(plain, copy).execute(cpuStream(), plain, copy);
  return copy;
}

} // namespace

void parametersChanged() { ++parameterEpoch; }

bool dnnlConv(const float *x, const int64_t *xShape, const float *w,
              const int64_t *wShape, const float *bias, float *y,
              const int64_t *yShape, int spatial, const int64_t *strides,
              const int64_t *pads, const int64_t *dilations, int64_t group,
              bool parameterWeight, bool channelsLast, int activation,
              float low, float high) {
  if (channelsLast && (spatial < 1 || spatial > 3))
    return false;
  // A failure inside oneDNN leaves the work to the caller's kernel.
  try {
    // oneDNN describes activations by their logical [N, C, D...] shape.
    std::vector<int64_t> xLogical, yLogical;
    if (channelsLast) {
      xLogical = permuted(xShape, channelsFirstPerm(spatial + 2));
      yLogical = permuted(yShape, channelsFirstPerm(spatial + 2));
      xShape = xLogical.data();
      yShape = yLogical.data();
    }
    ConvSite *site = siteFor<ConvSite>(
        spatial,
        siteKey(xShape, wShape, bias, spatial, strides, pads, dilations,
                group) +
            (channelsLast ? "nhwc" : "") +
            (activation ? "a" + std::to_string(activation) + ":" +
                              floatKey(low) + ":" + floatKey(high)
                        : std::string()) +
            // Each parameter its own site, so that convolutions of one
            // shape keep their weights apart.
            (parameterWeight
                 ? "@" + std::to_string(reinterpret_cast<uintptr_t>(w))
                 : std::string()),
        [&] {
          return makeSite(xShape, wShape, bias, yShape, spatial, strides, pads,
                          dilations, group, channelsLast, activation, low,
                          high);
        });
    if (!site)
      return false; // No oneDNN implementation: the caller's kernel runs.
    int rank = spatial + 2;
    dnnl::stream &stream = cpuStream();
    int64_t epoch = parameterEpoch.load();
    if (!parameterWeight || site->weightSource != w ||
        site->weightEpoch != epoch) {
      dnnl::memory::dims dims = weightDims(wShape, rank, group);
      dnnl::memory source({dims, dnnl::memory::data_type::f32,
                           plainTag(static_cast<int>(dims.size()))},
                          cpuEngine(), const_cast<float *>(w));
      dnnl::reorder(source, site->weights)
          .execute(stream, source, site->weights);
      site->weightSource = w;
      site->weightEpoch = parameterWeight ? epoch : -1;
    }
    std::unordered_map<int, dnnl::memory> args = {
        {DNNL_ARG_SRC,
         inLayout(plainMemory(xShape, rank, x, channelsLast), site->src, 0)},
        {DNNL_ARG_WEIGHTS, site->weights}};
    if (bias)
      args[DNNL_ARG_BIAS] = plainMemory(wShape, 1, bias);
    execute(site->primitive, args, DNNL_ARG_DST,
            plainMemory(yShape, rank, y, channelsLast), site->dst, 1);
    return true;
  } catch (const dnnl::error &) {
    return false;
  }
}

bool dnnlConvTranspose(const float *x, const int64_t *xShape, const float *w,
                       const int64_t *wShape, const float *bias, float *y,
                       const int64_t *yShape, int spatial,
                       const int64_t *strides, const int64_t *pads,
                       const int64_t *dilations, int64_t group) {
  // A failure inside oneDNN leaves the work to the caller's kernel.
  try {
    // The output's shape holds the output padding.
    std::string key =
        siteKey(xShape, wShape, bias, spatial, strides, pads, dilations,
                group) +
        siteKey(yShape, yShape, false, spatial, strides, pads, dilations, 1);
    TransposeSite *site = siteFor<TransposeSite>(spatial, key, [&] {
      return makeTransposeSite(xShape, wShape, bias, yShape, spatial, strides,
                               pads, dilations, group);
    });
    if (!site)
      return false;
    int rank = spatial + 2;
    dnnl::memory source(transposedWeights(wShape, rank, group), cpuEngine(),
                        const_cast<float *>(w));
    dnnl::reorder(source, site->weights)
        .execute(cpuStream(), source, site->weights);
    std::unordered_map<int, dnnl::memory> args = {
        {DNNL_ARG_SRC, inLayout(plainMemory(xShape, rank, x), site->src, 0)},
        {DNNL_ARG_WEIGHTS, site->weights}};
    if (bias)
      args[DNNL_ARG_BIAS] = plainMemory(yShape + 1, 1, bias);
    execute(site->primitive, args, DNNL_ARG_DST, plainMemory(yShape, rank, y),
            site->dst, 1);
    return true;
  } catch (const dnnl::error &) {
    return false;
  }
}

bool dnnlConvWeightGrad(const float *x, const int64_t *xShape, const float *dy,
                        const int64_t *dyShape, float *dw,
                        const int64_t *wShape, int spatial,
                        const int64_t *strides, const int64_t *pads,
                        const int64_t *dilations, int64_t group) {
  // A failure inside oneDNN leaves the work to the caller's kernel.
  try {
    WeightGradSite *site = siteFor<WeightGradSite>(
        spatial,
        siteKey(xShape, wShape, false, spatial, strides, pads, dilations,
                group),
        [&] {
          return makeWeightGradSite(xShape, dyShape, wShape, spatial, strides,
                                    pads, dilations, group);
        });
    if (!site)
      return false;
    int rank = spatial + 2;
    dnnl::memory::dims dims = weightDims(wShape, rank, group);
    dnnl::memory result({dims, dnnl::memory::data_type::f32,
                         plainTag(static_cast<int>(dims.size()))},
                        cpuEngine(), dw);
    execute(
        site->primitive,
        {{DNNL_ARG_SRC, inLayout(plainMemory(xShape, rank, x), site->src, 0)},
         {DNNL_ARG_DIFF_DST,
          inLayout(plainMemory(dyShape, rank, dy), site->diffDst, 1)}},
        DNNL_ARG_DIFF_WEIGHTS, result, site->diffWeights, 2);
    return true;
  } catch (const dnnl::error &) {
    return false;
  }
}

} // namespace cpu
} // namespace pipe_rt
