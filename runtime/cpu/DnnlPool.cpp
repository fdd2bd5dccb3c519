//===- DnnlPool.cpp - float pooling through oneDNN ------------------------===//
//
// pipe.max_pool and pipe.average_pool on float32 NC... tensors through
// oneDNN's pooling, each call site's primitive built once and kept, keyed
// by its shapes and attributes (a site oneDNN cannot run is remembered, and
// the caller's kernel runs). Activations stay in their row-major layout.
// pipe's own kernel runs where oneDNN's answer would differ: a max pool
// over a NaN (pipe propagates it) or -inf, or with a window that reads
// only padding (pipe gives -inf), and an average that counts padding
// whose ceil-mode windows reach past the end pad.
//
//===----------------------------------------------------------------------===//

#include "Dnnl.h"
#include "Kernels.h"

#include <limits>
#include <memory>
#include <string>
#include <unordered_map>

namespace pipe_rt {
namespace cpu {
namespace {

dnnl::memory::desc plainDesc(const int64_t *shape, int rank) {
  using tag = dnnl::memory::format_tag;
  static const tag tags[] = {tag::abc, tag::abcd, tag::abcde};
  return dnnl::memory::desc(dnnl::memory::dims(shape, shape + rank),
                            dnnl::memory::data_type::f32, tags[rank - 3]);
}

std::unique_ptr<dnnl::pooling_v2_forward>
makePooling(const int64_t *xShape, const int64_t *yShape, int spatial,
            const int64_t *kernel, const int64_t *strides, const int64_t *pads,
            const int64_t *dilations, dnnl::algorithm algorithm) {
  dnnl::memory::dims window, steps, dilation, padBegin, padEnd;
  for (int d = 0; d < spatial; ++d) {
    int64_t dilate = dilations ? dilations[d] : 1;
    // Every window must read the input: oneDNN's maximum of an empty one
    // is the lowest float, pipe's -inf.
    if (dilate != 1 || pads[d] >= kernel[d] ||
        (yShape[d + 2] - 1) * strides[d] - pads[d] >= xShape[d + 2])
      return nullptr;
    window.push_back(kernel[d]);
    steps.push_back(strides[d]);
    dilation.push_back(dilate - 1);
    padBegin.push_back(pads[d]);
    // ONNX's ceil_mode makes windows that reach past the end pad; oneDNN
    // takes them as more end padding.
    int64_t reach = (yShape[d + 2] - 1) * strides[d] +
                    (kernel[d] - 1) * dilate + 1 - xShape[d + 2] - pads[d];
    if (algorithm == dnnl::algorithm::pooling_avg_include_padding &&
        reach != pads[spatial + d])
      return nullptr; // The average would count the extra padding.
    padEnd.push_back(reach);
  }
  int rank = spatial + 2;
  dnnl::pooling_v2_forward::desc desc(
      dnnl::prop_kind::forward_inference, algorithm, plainDesc(xShape, rank),
      plainDesc(yShape, rank), steps, window, dilation, padBegin, padEnd);
  return std::make_unique<dnnl::pooling_v2_forward>(
      dnnl::pooling_v2_forward::primitive_desc(desc, cpuEngine()));
}

} // namespace

bool dnnlPool(const float *x, const int64_t *xShape, float *y,
              const int64_t *yShape, int spatial, const int64_t *kernel,
              const int64_t *strides, const int64_t *pads,
              const int64_t *dilations, bool max, bool countIncludePad) {
  if (spatial < 1 || spatial > 3)
    return false;
  dnnl::algorithm algorithm =
      max               ? dnnl::algorithm::pooling_max
      : countIncludePad ? dnnl::algorithm::pooling_avg_include_padding
                        : dnnl::algorithm::pooling_avg_exclude_padding;
  std::string key = std::to_string(int(algorithm)) + ":";
  auto add = [&](const int64_t *values, int count) {
    for (int i = 0; values && i < count; ++i)
      key += std::to_string(values[i]) + ",";
    key += ";";
  };
  add(xShape, spatial + 2);
  add(yShape, spatial + 2);
  add(kernel, spatial);
  add(strides, spatial);
  add(pads, 2 * spatial);
  add(dilations, spatial);
  static std::unordered_map<std::string,
                            std::unique_ptr<dnnl::pooling_v2_forward>>
      sites;
  try {
    auto it = sites.find(key);
    if (it == sites.end()) {
      std::unique_ptr<dnnl::pooling_v2_forward> site;
      try {
        site = makePooling(xShape, yShape, spatial, kernel, strides, pads,
                           dilations, algorithm);
      } catch (const dnnl::error &) {
      }
      it = sites.emplace(key, std::move(site)).first;
    }
    if (!it->second)
      return false;
    int rank = spatial + 2;
    // oneDNN's maximum may drop a NaN, which pipe's kernel propagates, and
    // starts from the lowest float, so that a window of -inf would give
    // that rather than -inf.
    if (max) {
      int64_t count = 1;
      for (int d = 0; d < rank; ++d)
        count *= xShape[d];
      constexpr float kInf = std::numeric_limits<float>::infinity();
      bool special = false;
#pragma omp parallel for reduction(|| : special) if (count > 32768)
      for (int64_t i = 0; i < count; ++i)
        special = special || !(x[i] > -kInf);
      if (special)
        return false;
    }
    dnnl::memory src(plainDesc(xShape, rank), cpuEngine(),
                     const_cast<float *>(x));
    dnnl::memory dst(plainDesc(yShape, rank), cpuEngine(), y);
    run(*it->second, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
    return true;
  } catch (const dnnl::error &) {
    return false;
  }
}

} // namespace cpu
} // namespace pipe_rt
