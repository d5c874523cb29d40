#include "profiler/analysis/backward_origin.h"

#include <algorithm>
#include <tuple>

namespace ampscope::profiler {
namespace {

std::string module_name(const std::vector<std::string>& modules, int32_t index) {
  if (index < 0 || static_cast<size_t>(index) >= modules.size()) return "?";
  return modules[static_cast<size_t>(index)];
}

}  // namespace

BackwardCheck locate_backward_inf(int64_t step, bool skipped, const std::vector<std::string>& modules,
                                  const std::vector<CheckedGradient>& gradients) {
  BackwardCheck check;
  check.step = step;
  check.skipped = skipped;
  check.gradients = static_cast<int64_t>(gradients.size());
  // For each module, the position of its latest finite output gradient (-1: none yet):
  // its backward has begun, and what it produces next is its input gradient.
  std::vector<int64_t> output_at(modules.size(), -1);
  for (size_t i = 0; i < gradients.size(); ++i) {
    const CheckedGradient& g = gradients[i];
    if (g.finite) {
      for (const GradientUse& use : g.uses)
        if (use.side == GradientSide::kOutput && use.module >= 0 && static_cast<size_t>(use.module) < modules.size())
          output_at[static_cast<size_t>(use.module)] = static_cast<int64_t>(i);
      continue;
    }
    if (check.nonfinite++ > 0 || g.uses.empty()) continue;
    check.position = static_cast<int64_t>(i);
    check.dtype = g.dtype;
    const GradientUse* origin = nullptr;
    int64_t latest_output = -1;
    for (const GradientUse& use : g.uses) {
      if (use.side != GradientSide::kInput || use.module < 0 || static_cast<size_t>(use.module) >= modules.size())
        continue;
      if (const int64_t at = output_at[static_cast<size_t>(use.module)]; at > latest_output) {
        latest_output = at;
        origin = &use;
      }
    }
    // Else a parameter's gradient (its module's backward made it), else where it arrived.
    for (const GradientSide side : {GradientSide::kParameter, GradientSide::kOutput}) {
      if (origin != nullptr) break;
      const auto use = std::find_if(g.uses.begin(), g.uses.end(), [&](const GradientUse& u) { return u.side == side; });
      if (use != g.uses.end()) origin = &*use;
    }
    if (origin == nullptr) origin = &g.uses.front();
    check.module = module_name(modules, origin->module);
    check.side = origin->side;
  }
  return check;
}

BackwardInfSummary summarize_backward_checks(const std::vector<BackwardCheck>& checks, int64_t run_skipped_steps) {
  BackwardInfSummary s;
  s.run_skipped_steps = run_skipped_steps;
  for (const BackwardCheck& c : checks) {
    ++s.checked_steps;
    s.checked_skipped_steps += c.skipped ? 1 : 0;
    if (!c.found()) continue;
    ++s.steps_with_nonfinite;
    if (!s.first || c.step < s.first->step) s.first = c;
    auto it = std::find_if(s.origins.begin(), s.origins.end(), [&](const BackwardInfSummary::Origin& o) {
      return o.module == c.module && o.side == c.side;
    });
    if (it == s.origins.end()) it = s.origins.insert(s.origins.end(), {c.module, c.side, 0});
    ++it->steps;
  }
  std::stable_sort(s.origins.begin(), s.origins.end(),
                   [](const auto& a, const auto& b) { return a.steps > b.steps; });
  return s;
}

namespace {

// GradScaler's skips the checks did not see: nothing is known of where those began.
std::string unchecked_skips_text(const BackwardInfSummary& s) {
  const int64_t unchecked = s.run_skipped_steps - s.checked_skipped_steps;
  if (s.run_skipped_steps < 0 || unchecked <= 0) return "";
  const std::string total = std::to_string(s.run_skipped_steps);
  std::string said;
  if (s.run_skipped_steps == 1)
    said = "GradScaler's skipped step was not checked";
  else if (s.checked_skipped_steps == 0)
    said = "none of GradScaler's " + total + " skipped steps was checked";
  else
    said = std::to_string(unchecked) + " of GradScaler's " + total + " skipped steps " +
           (unchecked == 1 ? "was" : "were") + " not checked";
  return "; " + said + " (checks run on gradient-sampled steps and on the step after a skip or a growth of the scale)";
}

}  // namespace

std::string backward_inf_text(const BackwardInfSummary& s) {
  if (!s.any()) return "";
  const std::string checked = std::to_string(s.checked_steps) + " checked step" + (s.checked_steps == 1 ? "" : "s") +
                              " (" + std::to_string(s.checked_skipped_steps) + " skipped by GradScaler)";
  if (!s.first) {
    std::string text = "no non-finite gradient in the backward passes of the " + checked;
    // GradScaler found one all the same: it arose where the checks do not look.
    if (s.checked_skipped_steps > 0)
      text += "; the inf/NaN GradScaler found arose outside what was checked (code that changed the gradients "
              "after backward, or a parameter no module call was seen to use)";
    return text + unchecked_skips_text(s);
  }
  const BackwardCheck& f = *s.first;
  std::string text = "the first non-finite gradient in backward ";
  switch (f.side) {
    case GradientSide::kInput: text += "came out of " + f.module + "'s backward (its input gradient)"; break;
    case GradientSide::kOutput:
      // An fp16 gradient made non-finite before any module's backward: fp16 arithmetic, or a
      // cast into fp16 (of an fp32 residual stream's gradient, say), passed 65504.
      text += "arrived at " + f.module + "'s output" + (f.dtype == "float16" ? " as an fp16 gradient" : "") +
              " (from the loss or code between modules" +
              (f.dtype == "float16" ? ", where fp16 holds at most 65504)" : ")");
      break;
    case GradientSide::kParameter:
      text += "was parameter " + f.module + "'s gradient (a sum over the batch: it overflows where the "
              "activations' gradients need not)";
      break;
  }
  text += " at step " + std::to_string(f.step) + "; " +
          (s.checked_steps == 1 ? std::string("the ") : std::to_string(s.steps_with_nonfinite) + " of the ") + checked +
          " had one";
  if (s.origins.size() > 1) {
    text += "; origins:";
    for (size_t i = 0; i < s.origins.size() && i < 3; ++i)
      text += (i ? ", " : " ") + s.origins[i].module + " (" + std::string(to_string(s.origins[i].side)) + ") " +
              std::to_string(s.origins[i].steps);
    if (s.origins.size() > 3) text += ", …";
  }
  return text + unchecked_skips_text(s);
}

}  // namespace ampscope::profiler
