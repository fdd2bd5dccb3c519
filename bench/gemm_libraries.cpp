//===- gemm_libraries.cpp - OpenBLAS against oneDNN on the models' GEMMs --===//
//
// Not a test: the build makes it build/bin/pipe-gemm-bench; run it with
// OMP_NUM_THREADS=2. For each shape
// (the GEMMs of python/real_models.py's vit_b_16 and transformer encoder,
// and of resnet18's classifier), the median time of C = A B (row-major,
// float32) through OpenBLAS's cblas_sgemm, as the CPU target calls it, and
// through a oneDNN matmul primitive built once, as a call site would keep
// it. Threads: OMP_NUM_THREADS.
//
//===----------------------------------------------------------------------===//

#include <cblas.h>
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

namespace {

template <typename F> double medianMs(F f, int repeat) {
  f();
  std::vector<double> times;
  for (int i = 0; i < repeat; ++i) {
    auto start = std::chrono::steady_clock::now();
    f();
    times.push_back(std::chrono::duration<double, std::milli>(
                        std::chrono::steady_clock::now() - start)
                        .count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

} // namespace

int main() {
  struct Shape {
    const char *what;
    int64_t m, n, k;
  };
  const Shape shapes[] = {
      {"vit qkv", 394, 2304, 768},       {"vit mlp up", 394, 3072, 768},
      {"vit mlp down", 394, 768, 3072},  {"vit attention", 197, 197, 64},
      {"encoder ffn", 128, 512, 128},    {"encoder qkv", 128, 384, 128},
      {"encoder attention", 64, 64, 32}, {"resnet18 fc", 2, 1000, 512},
  };
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  std::mt19937 rng(0);
  std::normal_distribution<float> normal;
  std::printf("%-18s %6s %6s %6s %12s %12s %8s\n", "shape", "m", "n", "k",
              "openblas ms", "onednn ms", "ratio");
  for (const Shape &s : shapes) {
    std::vector<float> a(s.m * s.k), b(s.k * s.n), c(s.m * s.n);
    for (float &v : a)
      v = normal(rng);
    for (float &v : b)
      v = normal(rng);
    int repeat = s.m * s.n * s.k > (1 << 24) ? 20 : 200;
    double blas = medianMs(
        [&] {
          cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s.m, s.n, s.k,
                      1.0f, a.data(), s.k, b.data(), s.n, 0.0f, c.data(), s.n);
        },
        repeat);
    using tag = dnnl::memory::format_tag;
    using dt = dnnl::memory::data_type;
    dnnl::memory::desc ad({s.m, s.k}, dt::f32, tag::ab),
        bd({s.k, s.n}, dt::f32, tag::ab), cd({s.m, s.n}, dt::f32, tag::ab);
    dnnl::matmul matmul(
        dnnl::matmul::primitive_desc(dnnl::matmul::desc(ad, bd, cd), engine));
    dnnl::memory am(ad, engine, a.data()), bm(bd, engine, b.data()),
        cm(cd, engine, c.data());
    double onednn = medianMs(
        [&] {
          matmul.execute(
              stream,
              {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, cm}});
          stream.wait();
        },
        repeat);
    std::printf("%-18s %6lld %6lld %6lld %12.4f %12.4f %8.2f\n", s.what,
                (long long)s.m, (long long)s.n, (long long)s.k, blas, onednn,
                onednn / blas);
  }
  return 0;
}
