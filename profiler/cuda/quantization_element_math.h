#pragma once
// One element of precision readiness's simulated quantization, as plain float32
// arithmetic that g++ and nvcc compile alike: the GPU kernel
// (profiler/cuda/block_sums_kernel.cu) runs these functions, and CI, which has no GPU,
// holds them to the CPU kernel (quantization_block_sums_cpu.cpp, four lanes at a
// time) and to LibTorch's fp8 casts (tests/profiler/test_quantization_kernel_cpu.cpp).
//
// C++17 (the CUDA sources' standard), no library beyond <cstdint> and <cstring>.
#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define AMPSCOPE_HOST_DEVICE __host__ __device__
#else
#define AMPSCOPE_HOST_DEVICE
#endif

namespace ampscope::profiler {

inline constexpr int kBlockSumsBlock = 32;
// Columns of the per-matrix sums (block_sums_cpu, the GPU kernel): nonzero |x|,
// sum (|x| / amax)^2, then per format saturated, nonzero dequantized,
// sum ((dq - |x|) / amax)^2.
constexpr int block_sum_columns(int formats) { return 2 + 3 * formats; }

// A floating grid with `mantissa_bits` stored bits and normal exponents from
// `min_normal_exponent` up (subnormals below it): fp8 e4m3 (3, -6), e5m2 (2, -14),
// e2m1 (1, 0).
struct RoundingGrid {
  int mantissa_bits;
  int min_normal_exponent;
};

// A magnitude 0 <= x <= the format's max rounded to nearest even onto the grid.
// The grid's step at x is 2^(e - mantissa_bits) with e = max(exponent of x, the min
// normal exponent); M = 2^(e + 23 - mantissa_bits) has exactly that float32 ulp, and
// M > x, so x + M rounds x to the step (ties to even: M's last mantissa bit is 0,
// so the sum's parity is that of x's grid mantissa) and subtracting M gives it back
// exactly. The same numbers as a cast to the format and back, without a branch.
// (Neither compiler may reassociate (x + M) - M without fast-math, and nvcc's
// multiply-add contraction has no multiply here to fuse.)
AMPSCOPE_HOST_DEVICE inline uint32_t float_bits(float x) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(x);
#else
  uint32_t bits = 0;
  std::memcpy(&bits, &x, sizeof bits);
  return bits;
#endif
}

AMPSCOPE_HOST_DEVICE inline float float_of_bits(uint32_t bits) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(bits);
#else
  float x = 0;
  std::memcpy(&x, &bits, sizeof x);
  return x;
#endif
}

AMPSCOPE_HOST_DEVICE inline float round_to_grid(float x, RoundingGrid grid) {
  const uint32_t bits = float_bits(x);
  int32_t field = static_cast<int32_t>(bits >> 23);
  const int32_t floor_field = grid.min_normal_exponent + 127;
  field = (field > floor_field ? field : floor_field) + (23 - grid.mantissa_bits);
  const float magic = float_of_bits(static_cast<uint32_t>(field) << 23);
  return (x + magic) - magic;
}

// One format as the element loop sees it: the clamp, the saturation test and the grid.
struct ElementFormat {
  float max = 0;               // the clamp
  float saturation_bound = 0;  // saturated: scaled >= bound (saturates_at_bound) or > bound
  bool saturates_at_bound = false;
  bool divide = false;  // dequantized = rounded / dequantize (torchao's fp8), else rounded * dequantize
  RoundingGrid grid{};
};

// What one element adds to its matrix's per-format sums.
struct ElementSums {
  bool saturated;
  bool dequantized_nonzero;
  float error;  // (dequantized - x) / the matrix's amax: squared by the caller
};

// The magnitude x quantized with its scaling group's factors, as the ATen path does
// it element by element (mul, clamp, round, mul or div, subtract, scale by 1 / amax).
AMPSCOPE_HOST_DEVICE inline ElementSums quantize_element(float x, float quantize, float dequantize, float inverse_amax,
                                                         const ElementFormat& f) {
  const float scaled = x * quantize;
  ElementSums s{};
  s.saturated = f.saturates_at_bound ? scaled >= f.saturation_bound : scaled > f.saturation_bound;
  const float rounded = round_to_grid(scaled < f.max ? scaled : f.max, f.grid);
  const float dequantized = f.divide ? rounded / dequantize : rounded * dequantize;
  s.dequantized_nonzero = dequantized != 0.0f;
  s.error = (dequantized - x) * inverse_amax;
  return s;
}

}  // namespace ampscope::profiler
