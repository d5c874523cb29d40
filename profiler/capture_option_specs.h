#pragma once
// The capture's sampling options, declared once: name, flag, default, lower bound
// and help. `ampscope profile` and `ampscope run` take their flags from here, the
// Python package its keywords and argparse flags (through the native module), the
// GUI its spin boxes, and ProfilerOptions its defaults, so none of them can drift
// (the GUI sampled gradients every 5 steps while every other entry point took 10).
// No LibTorch, no Qt.
#include <array>
#include <cstdint>
#include <optional>
#include <string>

namespace ampscope::profiler {

struct CaptureOptionSpec {
  const char* key;   // Python keyword, TOML key: "grad_every"
  const char* flag;  // command-line flag: "--grad-every"
  int64_t default_value;
  int64_t minimum;
  const char* help;
};

inline constexpr CaptureOptionSpec kWindowStartOption{"window_start", "--window-start", 1, 1,
                                                      "First step whose ops are recorded"};
inline constexpr CaptureOptionSpec kWindowStepsOption{"window_steps", "--window-steps", 0, 0,
                                                      "Steps recorded from --window-start (0 = to the end)"};
inline constexpr CaptureOptionSpec kEveryOption{"every", "--every", 1, 1, "Inside the window, record every Nth step"};
inline constexpr CaptureOptionSpec kGradEveryOption{
    "grad_every", "--grad-every", 10, 0, "Gradient and activation range statistics every K steps (0 = off)"};
// Range samples cost the GPU far more than a step (profiler/range_sample_spacing.h).
inline constexpr CaptureOptionSpec kSampleBudgetOption{
    "sample_budget", "--sample-budget", 5, 0,
    "Space range samples past every K steps to keep their cost within this percent of the run's time "
    "(0 = every K steps, whatever they cost)"};
// Precision readiness held most of each range sample on an H200 (152 of 212 ms on GPT-2,
// 452 of 485 on ResNet-50, docs/performance.md): on every sample it made the gradient
// ranges, which change from step to step, as rare as the budget allows. Its answer (can
// a layer go to FP8, MXFP8, NVFP4) needs a few samples over the run, not every one.
inline constexpr CaptureOptionSpec kReadinessEveryOption{
    "readiness_every", "--readiness-every", 5, 0,
    "Precision readiness (FP8, MXFP8, NVFP4) on every Nth range sample, the first included (0 = off)"};
inline constexpr std::array<CaptureOptionSpec, 6> kCaptureOptions{
    kWindowStartOption, kWindowStepsOption, kEveryOption, kGradEveryOption, kSampleBudgetOption, kReadinessEveryOption};

// "--every must be >= 1" when `value` is below the option's minimum, else nullopt.
inline std::optional<std::string> capture_option_error(const CaptureOptionSpec& spec, int64_t value) {
  if (value >= spec.minimum) return std::nullopt;
  return std::string(spec.flag) + " must be >= " + std::to_string(spec.minimum);
}

}  // namespace ampscope::profiler
