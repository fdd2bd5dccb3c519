//===- Math.h - vectorizable math for fused loops ---------------*- C++ -*-===//
//
// Part of the pipe runtime. The generated elementwise loops call these in
// place of <cmath>'s exp, tanh and erf. libm's float functions are calls that
// keep a loop scalar; these are branch-free inline code over arithmetic,
// rounding and bit casts, which GCC vectorizes with the loop around them
// (-O3 -march=native). The double overloads forward to <cmath>. The CUDA
// target's fused kernels call the same functions (PIPE_HOST_DEVICE): a
// fused step evaluates the same expressions on a GPU as on the CPU, equal
// to rounding (nvcc contracts multiply-adds into FMAs; the host compiler
// may or may not).
//
// Accuracy (float, checked against <cmath> in double by
// unittests/RuntimeCPU/MathTest.cpp):
// - exp: within 2 ulp where the result is a normal float; subnormal results,
//   overflow to +inf, underflow to 0 and NaN behave like std::exp.
// - tanh: within 3 ulp; odd, saturating to +-1.
// - erf: within 2e-7 absolute, and 4 ulp for |x| < 1; odd, saturating to
//   +-1.
//
//===----------------------------------------------------------------------===//

#ifndef PIPE_RUNTIME_COMMON_MATH_H
#define PIPE_RUNTIME_COMMON_MATH_H

#include "HostDevice.h"

#include <cmath>
#include <cstdint>
#include <limits>

namespace pipe_rt {
namespace cpu {

/// e^x: Cody-Waite reduction x = n ln2 + r with |r| <= ln2/2, a degree-6
/// polynomial for e^r, and 2^n applied as two normal powers of two so that
/// subnormal results come out right.
PIPE_HOST_DEVICE inline float exp(float x) {
  // The smallest float whose e^x overflows (e^kHigh itself rounds to +inf
  // in the multiplication below), and where e^x rounds to 0.
  constexpr float kHigh = 88.72283935546875f;
  constexpr float kLow = -104.0f;
  float c = x < kLow ? kLow : (x > kHigh ? kHigh : x);
  // Adding 1.5 * 2^23 rounds to an integer (std::floor would keep the loop
  // scalar); the integer is then also in the sum's low mantissa bits.
  float shifted = c * 1.44269504088896341f + 12582912.0f;
  float n = shifted - 12582912.0f;
  float r = c - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  int32_t k = __builtin_bit_cast(int32_t, shifted) - 0x4B400000;
  int32_t k1 = k >> 1;
  int32_t k2 = k - k1;
  // Unsigned shifts: for a NaN x, k is garbage (the result is NaN anyway).
  float s1 = __builtin_bit_cast(float, uint32_t(k1 + 127) << 23);
  float s2 = __builtin_bit_cast(float, uint32_t(k2 + 127) << 23);
  float y = p * s1 * s2;
  return x > kHigh ? std::numeric_limits<float>::infinity() : y;
}

/// tanh x: an odd polynomial for |x| < 0.625, where 1 - 2/(e^2x + 1) would
/// cancel, and that form elsewhere.
PIPE_HOST_DEVICE inline float tanh(float x) {
  float a = std::fabs(x);
  float z = x * x;
  float p = -5.70498872745e-3f;
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  float small = p * z * x + x;
  float large = 1.0f - 2.0f / (exp(2.0f * a) + 1.0f);
  return std::copysign(a < 0.625f ? small : large, x);
}

/// erf x: its Maclaurin series in x^2 for |x| < 1 (truncation below 1e-8),
/// and Abramowitz and Stegun 7.1.26, 1 - t P(t) e^(-x^2), elsewhere.
PIPE_HOST_DEVICE inline float erf(float x) {
  float a = std::fabs(x);
  float z = x * x;
  // 2/sqrt(pi) * sum_k (-1)^k z^k / (k! (2k + 1)), k = 0..10.
  float s = 1.480719282e-08f;
  s = s * z - 1.636584469e-07f;
  s = s * z + 1.646211437e-06f;
  s = s * z - 1.492565036e-05f;
  s = s * z + 1.205533298e-04f;
  s = s * z - 8.548327023e-04f;
  s = s * z + 5.223977625e-03f;
  s = s * z - 2.686617065e-02f;
  s = s * z + 1.128379167e-01f;
  s = s * z - 3.761263890e-01f;
  s = s * z + 1.128379167e+00f;
  float small = s * x;
  float t = 1.0f / (1.0f + 0.3275911f * a);
  float q = 1.061405429f;
  q = q * t - 1.453152027f;
  q = q * t + 1.421413741f;
  q = q * t - 0.284496736f;
  q = q * t + 0.254829592f;
  float large = 1.0f - q * t * exp(-z);
  large = std::copysign(large, x);
  return a < 1.0f ? small : large;
}

/// The sum of term(i) (a double) over i in [0, n), in eight interleaved
/// partial sums, so that the additions vectorize instead of waiting on one
/// another.
template <typename Term> double sumOfTerms(int64_t n, Term term) {
  double partial[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; ++k)
      partial[k] += term(i + k);
  for (; i < n; ++i)
    partial[i % 8] += term(i);
  return ((partial[0] + partial[1]) + (partial[2] + partial[3])) +
         ((partial[4] + partial[5]) + (partial[6] + partial[7]));
}

/// The sum of x[0..n) in double.
template <typename T> double sumInDouble(const T *x, int64_t n) {
  return sumOfTerms(n, [x](int64_t i) { return double(x[i]); });
}

/// The sum of (x[i] - mean)^2 over x[0..n), in double.
template <typename T>
double squaresAboutInDouble(const T *x, int64_t n, double mean) {
  return sumOfTerms(n, [x, mean](int64_t i) {
    double d = double(x[i]) - mean;
    return d * d;
  });
}

PIPE_HOST_DEVICE inline double exp(double x) { return std::exp(x); }
PIPE_HOST_DEVICE inline double tanh(double x) { return std::tanh(x); }
PIPE_HOST_DEVICE inline double erf(double x) { return std::erf(x); }

} // namespace cpu
} // namespace pipe_rt

#endif // PIPE_RUNTIME_COMMON_MATH_H
