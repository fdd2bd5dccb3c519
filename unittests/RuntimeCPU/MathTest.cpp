//===- MathTest.cpp - vectorizable exp, tanh and erf against <cmath> ------===//

#include "Math.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace {

/// Distance in units in the last place between `got` and the float nearest
/// to `want`, measured at `want`'s binade.
double ulps(float got, double want) {
  float nearest = static_cast<float>(want);
  float next = std::nextafter(std::fabs(nearest),
                              std::numeric_limits<float>::infinity());
  double ulp = static_cast<double>(next) - std::fabs(nearest);
  return std::fabs(static_cast<double>(got) - want) / ulp;
}

/// A million evenly spaced points of [low, high] and 100,000 random ones.
std::vector<float> samples(float low, float high) {
  std::vector<float> xs;
  constexpr int kGrid = 1000000;
  for (int i = 0; i <= kGrid; ++i)
    xs.push_back(low + (high - low) * (static_cast<double>(i) / kGrid));
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> uniform(low, high);
  for (int i = 0; i < 100000; ++i)
    xs.push_back(uniform(rng));
  return xs;
}

/// The largest error of `f` against `reference` in double over samples of
/// [low, high], in ulps.
template <typename F, typename R>
double worstUlps(F f, R reference, float low, float high) {
  double worst = 0;
  for (float x : samples(low, high))
    worst = std::max(worst, ulps(f(x), reference(static_cast<double>(x))));
  return worst;
}

TEST(Math, ExpWithinTwoUlpOnNormalResults) {
  EXPECT_LE(worstUlps([](float x) { return pipe_rt::cpu::exp(x); },
                      [](double x) { return std::exp(x); }, -87.3f, 88.72f),
            2.0);
}

TEST(Math, ExpEdges) {
  constexpr float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(pipe_rt::cpu::exp(0.0f), 1.0f);
  EXPECT_EQ(pipe_rt::cpu::exp(89.0f), inf);
  EXPECT_EQ(pipe_rt::cpu::exp(inf), inf);
  EXPECT_EQ(pipe_rt::cpu::exp(-inf), 0.0f);
  EXPECT_EQ(pipe_rt::cpu::exp(-200.0f), 0.0f);
  EXPECT_TRUE(std::isnan(pipe_rt::cpu::exp(std::nanf(""))));
  // Subnormal results: within one subnormal step of std::exp.
  for (float x : {-88.0f, -95.0f, -100.0f, -103.0f}) {
    float want = std::exp(x);
    EXPECT_NEAR(pipe_rt::cpu::exp(x), want,
                std::numeric_limits<float>::denorm_min())
        << "x = " << x;
  }
  EXPECT_GT(pipe_rt::cpu::exp(88.7f), 1e38f);
}

TEST(Math, TanhWithinThreeUlp) {
  EXPECT_LE(worstUlps([](float x) { return pipe_rt::cpu::tanh(x); },
                      [](double x) { return std::tanh(x); }, -12.0f, 12.0f),
            3.0);
  EXPECT_EQ(pipe_rt::cpu::tanh(50.0f), 1.0f);
  EXPECT_EQ(pipe_rt::cpu::tanh(-50.0f), -1.0f);
  EXPECT_EQ(pipe_rt::cpu::tanh(std::numeric_limits<float>::infinity()), 1.0f);
  EXPECT_EQ(pipe_rt::cpu::tanh(1e-30f), 1e-30f);
  EXPECT_TRUE(std::signbit(pipe_rt::cpu::tanh(-0.0f)));
  EXPECT_TRUE(std::signbit(pipe_rt::cpu::erf(-0.0f)));
  EXPECT_TRUE(std::isnan(pipe_rt::cpu::tanh(std::nanf(""))));
}

TEST(Math, Erf) {
  double worstAbs = 0, worstSmallUlps = 0;
  for (float x : samples(-6.0f, 6.0f)) {
    double want = std::erf(static_cast<double>(x));
    float got = pipe_rt::cpu::erf(x);
    worstAbs = std::max(worstAbs, std::fabs(got - want));
    if (std::fabs(x) < 1.0f)
      worstSmallUlps = std::max(worstSmallUlps, ulps(got, want));
  }
  EXPECT_LE(worstAbs, 2e-7);
  EXPECT_LE(worstSmallUlps, 4.0);
  EXPECT_EQ(pipe_rt::cpu::erf(10.0f), 1.0f);
  EXPECT_EQ(pipe_rt::cpu::erf(-10.0f), -1.0f);
  EXPECT_FLOAT_EQ(pipe_rt::cpu::erf(1e-30f), 1.1283791670955126 * 1e-30f);
  EXPECT_TRUE(std::isnan(pipe_rt::cpu::erf(std::nanf(""))));
}

TEST(Math, DoubleForwardsToCmath) {
  EXPECT_EQ(pipe_rt::cpu::exp(0.5), std::exp(0.5));
  EXPECT_EQ(pipe_rt::cpu::tanh(0.5), std::tanh(0.5));
  EXPECT_EQ(pipe_rt::cpu::erf(0.5), std::erf(0.5));
}

} // namespace
