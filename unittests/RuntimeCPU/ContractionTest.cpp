//===- ContractionTest.cpp - gemm and matmul against NumPy ----------------===//

#include "Reference.h"

using namespace pipe_rt::cpu;
using reference::Reference;

namespace {

const char *const script = R"(
def gemm(name, M, N, K, ta=False, tb=False, alpha=1.0, beta=1.0, cshape=None):
    a = rand(K, M) if ta else rand(M, K)
    b = rand(N, K) if tb else rand(K, N)
    y = alpha * ((a.T if ta else a) @ (b.T if tb else b))
    c = None
    if cshape is not None:
        c = rand(*cshape)
        y = y + beta * c
    save('gemm', name, a=a, b=b, c=c, y=np.broadcast_to(y, (M, N)), m=M, n=N,
         k=K, ta=ta, tb=tb, alpha=alpha, beta=beta)

gemm('plain', 4, 5, 3)
gemm('c_n', 4, 5, 6, cshape=(5,), alpha=0.5, beta=2.0)
gemm('c_m1_transA', 4, 5, 6, ta=True, cshape=(4, 1), beta=-1.5)
gemm('c_11_transB', 3, 7, 5, tb=True, cshape=(1, 1), alpha=2.0, beta=0.25)
gemm('c_scalar_both', 3, 7, 5, ta=True, tb=True, cshape=(), alpha=-1.0,
     beta=3.0)
gemm('c_1', 2, 3, 4, cshape=(1,))
gemm('c_1n', 2, 3, 4, tb=True, cshape=(1, 3))
gemm('c_mn', 6, 5, 4, ta=True, tb=True, cshape=(6, 5), alpha=0.75, beta=0.5)
gemm('beta_0', 3, 4, 5, cshape=(3, 4), beta=0.0)
gemm('no_c_alpha', 5, 2, 7, ta=True, alpha=-0.5)
gemm('big', 67, 45, 33, ta=True, cshape=(45,), alpha=1.25, beta=-0.5)
gemm('k_0', 3, 4, 0, cshape=(4,))
gemm('dot', 1, 1, 8, ta=True, tb=True, cshape=(1,))
# Large enough for the parallel paths.
gemm('parallel', 300, 250, 20, cshape=(250,), beta=0.5)
# Mid-sized float products run on oneDNN (dnnlMatmulPays), in every
# transposition, with alpha.
gemm('onednn', 128, 96, 24)
gemm('onednn_transA', 128, 96, 24, ta=True, alpha=-0.75, cshape=(96,))
gemm('onednn_transB', 128, 96, 24, tb=True, cshape=(128, 1), beta=0.5)
gemm('onednn_both', 128, 96, 24, ta=True, tb=True, alpha=2.0)

def matmul(name, ashape, bshape):
    a = rand(*ashape)
    b = rand(*bshape)
    save('matmul', name, a=a, b=b, y=np.matmul(a, b))

matmul('2d', (3, 4), (4, 5))
matmul('batched_shared_rhs', (2, 3, 4), (4, 5))
matmul('batched_4d_shared_rhs', (2, 3, 4, 5), (5, 6))
matmul('batched_both', (2, 3, 4), (2, 4, 5))
matmul('broadcast_lhs', (1, 3, 4), (2, 4, 5))
matmul('broadcast_rhs', (2, 3, 4), (1, 4, 5))
matmul('broadcast_rank', (2, 1, 3, 4), (5, 4, 6))
matmul('broadcast_both', (3, 1, 2, 3), (1, 4, 3, 2))
matmul('vec_mat', (4,), (4, 5))
matmul('mat_vec', (3, 4), (4,))
matmul('vec_vec', (4,), (4,))
matmul('vec_batched', (4,), (2, 4, 5))
matmul('batched_vec', (2, 3, 4), (4,))
matmul('big', (2, 40, 33), (2, 33, 50))
matmul('many_batches', (6, 5, 20, 8), (5, 8, 30))
matmul('onednn_batched', (3, 128, 24), (3, 24, 96))
)";

PIPE_REFERENCE_FIXTURE(ContractionTest, script)

template <typename T> void checkGemm(const Reference::Case &c) {
  std::vector<T> a = c["a"].as<T>(), b = c["b"].as<T>();
  int64_t m = c.integer("m"), n = c.integer("n"), k = c.integer("k");
  std::vector<T> cValues;
  std::vector<int64_t> cShape;
  if (c.has("c")) {
    reference::Array array = c["c"];
    cValues = array.as<T>();
    cShape = array.shape();
  }
  std::vector<T> y(m * n, T(-7));
  gemm<T>(a.data(), b.data(), c.has("c") ? cValues.data() : nullptr,
          cShape.data(), int(cShape.size()), y.data(), m, n, k, c.integer("ta"),
          c.integer("tb"), T(c.real("alpha")), T(c.real("beta")));
  EXPECT_TRUE(reference::near(y, c["y"]));
}

TEST_F(ContractionTest, Gemm) {
  for (const Reference::Case &c : cases("gemm")) {
    SCOPED_TRACE(c.name);
    checkGemm<float>(c);
    checkGemm<double>(c);
  }
}

template <typename T> void checkMatmul(const Reference::Case &c) {
  reference::Array a = c["a"], b = c["b"], want = c["y"];
  std::vector<T> av = a.as<T>(), bv = b.as<T>();
  std::vector<T> y(want.size(), T(-7));
  matmul<T>(av.data(), a.shape().data(), a.rank(), bv.data(), b.shape().data(),
            b.rank(), y.data(), want.shape().data(), want.rank());
  EXPECT_TRUE(reference::near(y, want));
}

TEST_F(ContractionTest, Matmul) {
  for (const Reference::Case &c : cases("matmul")) {
    SCOPED_TRACE(c.name);
    checkMatmul<float>(c);
    checkMatmul<double>(c);
  }
}

} // namespace
