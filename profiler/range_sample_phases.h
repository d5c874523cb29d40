#pragma once
// Where a range sample's time goes on the training thread, by the profiler's own
// passes: the gradients' range statistics, the activations' (their passes inside the
// forward and the read-back at the step's end) and precision readiness (layer inputs,
// weights and gradients, and its read-back). Wall time of each, no device sync added:
// on a GPU that is the host's work and launches, plus the wait for the device in the
// read-backs. A sample's cost as the user feels it (range_sample_spacing.h) is the
// step's time beyond a typical step; this says which pass to blame. On an H200 a
// 12-layer GPT's sample added 150-420 ms while the profiler's kernels took 82 ms
// (docs/performance.md, session 26): the rest had to be found by hand. Kept in the
// session (meta `range_sample_phases`) and said by `summary`. No LibTorch.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace ampscope::profiler {

struct RangeSamplePhases {
  int64_t samples = 0;
  // Sums over the samples, milliseconds.
  double gradients_ms = 0.0;
  double activations_ms = 0.0;
  double readiness_ms = 0.0;

  void add(const RangeSamplePhases& sample);
  // "samples:3;gradients:1.5;activations:40.2;readiness:120.7" (the sums).
  std::string encode() const;
  static std::optional<RangeSamplePhases> decode(const std::string& text);
  // "a sample's own passes on the training thread (mean of 3): readiness 40.2 ms,
  // activations 13.4 ms, gradients 0.5 ms" (costliest first); empty without samples.
  std::string describe() const;
};

// Adds its scope's wall time to a phase (one clock read at each end).
class PhaseTimer {
 public:
  explicit PhaseTimer(double& phase_ms) : phase_ms_(phase_ms), start_(std::chrono::steady_clock::now()) {}
  ~PhaseTimer() {
    phase_ms_ += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
  }
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;

 private:
  double& phase_ms_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace ampscope::profiler
