#pragma once
// Where a non-finite gradient started in a backward pass (issue #30). On the steps
// checked, each gradient with respect to a module's input or output, and each
// parameter's gradient as autograd computes it, is tested for inf/NaN on its device;
// the tests are read once at the step's end. The origin is the first non-finite
// gradient in backward order, named by the module whose own backward produced it, or
// the parameter whose gradient it was. One rule for the Python capture
// (python/ampscope/_backward_origin.py) and the built-in engine
// (profiler/capture/backward_checks.h); one summary for summary, JSON, report and GUI.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "profiler/records.h"

namespace ampscope::profiler {

// A module that met a checked gradient's tensor, as its input or as its output; or the
// parameter it is the gradient of.
struct GradientUse {
  int32_t module = 0;  // an index into the names passed with the gradients (a parameter's, for kParameter)
  GradientSide side = GradientSide::kInput;
};

// One gradient tensor as autograd produced it. A tensor is checked once, however many
// modules met it: the output of one module is often the input of the next (and the
// output of its parent too).
struct CheckedGradient {
  bool finite = true;
  std::vector<GradientUse> uses;  // in the order the forward met them
  DtypeName dtype;                // as autograd produced it ("float16")
};

// `gradients` in the order autograd produced them. The origin is the first non-finite
// one: a module that took it as input while its own output gradient was still finite
// made it (of several, the one whose output gradient came last: the innermost); when
// no module took it as input, a parameter's gradient names the parameter; otherwise it
// arrived non-finite at the output of the module that gave it (from the loss, or from
// code between modules).
BackwardCheck locate_backward_inf(int64_t step, bool skipped, const std::vector<std::string>& modules,
                                  const std::vector<CheckedGradient>& gradients);

// The checks of a session, for its views.
struct BackwardInfSummary {
  struct Origin {
    std::string module;
    GradientSide side = GradientSide::kInput;
    int64_t steps = 0;  // checked steps whose first non-finite gradient arose here
  };
  int64_t checked_steps = 0;
  int64_t checked_skipped_steps = 0;  // of which GradScaler skipped
  int64_t run_skipped_steps = -1;     // GradScaler's skipped steps over the run; -1: not known
  int64_t steps_with_nonfinite = 0;
  std::optional<BackwardCheck> first;  // the earliest checked step with a non-finite gradient
  std::vector<Origin> origins;         // most steps first, then the earliest seen
  bool any() const { return checked_steps > 0; }
};
// `run_skipped_steps`: the steps GradScaler skipped over the run (checked or not).
BackwardInfSummary summarize_backward_checks(const std::vector<BackwardCheck>& checks,
                                             int64_t run_skipped_steps = -1);

// One line for summary and the GUI: where the first non-finite gradient arose (and at
// which step), how many checked steps had one; or that none had; and how many of
// GradScaler's skipped steps were not checked. "" without checks.
std::string backward_inf_text(const BackwardInfSummary& summary);

}  // namespace ampscope::profiler
