//===- DnnlMatmul.cpp - mid-sized float GEMMs through oneDNN --------------===//
//
// Y = alpha op(A) op(B) on float32 through a oneDNN matmul primitive built
// once per call site's shape and kept. build/bin/pipe-gemm-bench
// (bench/gemm_libraries.cpp) measured
// where it beats OpenBLAS on this project's models: products of 2^18 to
// 2^28 multiply-adds (attention heads, the transformer encoder's layers,
// classifiers over a few rows); OpenBLAS stays faster on tiny products and
// on ViT-sized layers.
//
//===----------------------------------------------------------------------===//

#include "Dnnl.h"
#include "Kernels.h"

#include <memory>
#include <string>
#include <unordered_map>

namespace pipe_rt {
namespace cpu {

bool dnnlMatmulPays(int64_t m, int64_t n, int64_t k) {
  int64_t work = m * n * k;
  return work >= (int64_t(1) << 18) && work <= (int64_t(1) << 28);
}

bool dnnlMatmul(const float *a, const float *b, float *y, int64_t m, int64_t n,
                int64_t k, bool transA, bool transB, float alpha) {
  using tag = dnnl::memory::format_tag;
  using dt = dnnl::memory::data_type;
  struct Site {
    dnnl::memory::desc a, b, y;
    dnnl::matmul primitive;
  };
  static std::unordered_map<std::string, std::unique_ptr<Site>> sites;
  std::string key = std::to_string(m) + "," + std::to_string(n) + "," +
                    std::to_string(k) + (transA ? "t" : "n") +
                    (transB ? "t" : "n") + floatKey(alpha);
  try {
    auto it = sites.find(key);
    if (it == sites.end()) {
      std::unique_ptr<Site> site;
      try {
        dnnl::memory::desc ad({m, k}, dt::f32, transA ? tag::ba : tag::ab);
        dnnl::memory::desc bd({k, n}, dt::f32, transB ? tag::ba : tag::ab);
        dnnl::memory::desc yd({m, n}, dt::f32, tag::ab);
        dnnl::primitive_attr attr;
        if (alpha != 1.0f)
          attr.set_output_scales(0, {alpha});
        dnnl::matmul primitive(dnnl::matmul::primitive_desc(
            dnnl::matmul::desc(ad, bd, yd), attr, cpuEngine()));
        site.reset(new Site{ad, bd, yd, primitive});
      } catch (const dnnl::error &) {
      }
      it = sites.emplace(key, std::move(site)).first;
    }
    Site *site = it->second.get();
    if (!site)
      return false;
    dnnl::memory am(site->a, cpuEngine(), const_cast<float *>(a));
    dnnl::memory bm(site->b, cpuEngine(), const_cast<float *>(b));
    dnnl::memory ym(site->y, cpuEngine(), y);
    run(site->primitive,
        {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, ym}});
    return true;
  } catch (const dnnl::error &) {
    return false;
  }
}

} // namespace cpu
} // namespace pipe_rt
