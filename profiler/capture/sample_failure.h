#pragma once
// A range sample (gradient, activation and readiness statistics; backward checks) is the
// profiler's own work on the training's device, and must never end the training. Its
// device work runs through SampleFailure::run, which catches what the work throws (out
// of device memory, most often: a sample's batched passes hold up to some 500 MB at once
// (batched_pass.h) where the training may use all of the device but that), drops that
// sample and stops range sampling for the rest of the run. The session says at which
// step and why (RecordingHealth: summary, the end of `profile`, the GUI's status bar).
// Training thread only.
#include <c10/util/Exception.h>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace ampscope::profiler {

class SampleFailure {
 public:
  // Runs before each part's work (tests: throws as a device out of memory would).
  using Fault = std::function<void(std::string_view part)>;
  explicit SampleFailure(Fault fault = {}) : fault_(std::move(fault)) {}

  void begin_step(int64_t step) { step_now_ = step; }
  // Runs `work`, the sample's `part` ("gradient statistics"); false if it threw, now or
  // earlier in the run (then it does not run).
  template <class Work>
  bool run(std::string_view part, Work&& work) {
    if (stopped()) return false;
    try {
      if (fault_) fault_(part);
      work();
      return true;
    } catch (const c10::OutOfMemoryError&) {
      fail(part, "ran out of device memory");
    } catch (const std::exception& e) {
      fail(part, std::string("failed: ") + first_line(e.what()));
    }
    return false;
  }
  bool stopped() const { return stopped_step_ > 0; }
  int64_t stopped_step() const { return stopped_step_; }
  // "the gradient statistics ran out of device memory"; empty while not stopped.
  const std::string& why() const { return why_; }

 private:
  static std::string first_line(std::string_view text) { return std::string(text.substr(0, text.find('\n'))); }
  void fail(std::string_view part, const std::string& what) {
    stopped_step_ = step_now_ > 0 ? step_now_ : 1;
    why_ = "the " + std::string(part) + " " + what;
  }

  Fault fault_;
  int64_t step_now_ = 0;
  int64_t stopped_step_ = 0;
  std::string why_;
};

}  // namespace ampscope::profiler
