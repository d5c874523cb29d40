#include "profiler/analysis/scheduler_drift.h"

#include <algorithm>
#include <map>

namespace ampscope::profiler {

const char* const kSchedulerFix =
    "step the scheduler only when the optimizer stepped: GradScaler lowers the scale exactly when it "
    "skipped optimizer.step(), so compare scaler.get_scale() before and after scaler.update() "
    "(scale = scaler.get_scale(); scaler.update(); if scaler.get_scale() >= scale: scheduler.step())";

std::vector<SchedulerSummary> summarize_schedulers(const std::vector<SchedulerStepRecord>& calls,
                                                   const std::vector<OptimizerStepRecord>& optimizer_steps) {
  std::map<int32_t, std::pair<int64_t, std::string>> optimizers;  // optimizer -> (steps, class)
  for (const OptimizerStepRecord& r : optimizer_steps) {
    if (!r.stepped && !r.skipped) continue;  // unscaled but never stepped in that step
    auto& [steps, name] = optimizers[r.optimizer];
    ++steps;
    name = r.name;
  }
  std::vector<SchedulerSummary> out;
  std::vector<SchedulerStepRecord> ordered = calls;
  std::stable_sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) { return a.call < b.call; });
  for (const SchedulerStepRecord& c : ordered) {
    auto it = std::find_if(out.begin(), out.end(), [&](const SchedulerSummary& s) { return s.scheduler == c.scheduler; });
    if (it == out.end()) {
      SchedulerSummary s;
      s.scheduler = c.scheduler;
      s.name = c.name;
      s.optimizer = c.optimizer;
      if (const auto o = optimizers.find(c.optimizer); o != optimizers.end()) {
        s.optimizer_steps = o->second.first;
        s.optimizer_name = o->second.second;
      }
      it = out.insert(out.end(), std::move(s));
    }
    ++it->calls;
    it->last_lr = c.lr;
    if (c.after_skipped) {
      ++it->after_skipped;
      it->after_skipped_steps.push_back(c.step);
    }
  }
  return out;
}

std::string scheduler_drift_text(const SchedulerSummary& s) {
  const std::string n = std::to_string(s.after_skipped);
  return s.name + " advanced after " + n + " optimizer step" + (s.after_skipped == 1 ? "" : "s") +
         " GradScaler skipped: its schedule runs " + n + " step" + (s.after_skipped == 1 ? "" : "s") +
         " ahead of the optimizer";
}

std::string scheduler_text(const SchedulerSummary& s) {
  std::string text = s.name + " (optimizer " + std::to_string(s.optimizer) +
                     (s.optimizer_name.empty() ? "" : ", " + s.optimizer_name) + "): " + std::to_string(s.calls) +
                     " step" + (s.calls == 1 ? "" : "s");
  if (s.after_skipped == 0) return text + ", none after an optimizer step GradScaler skipped";
  text += ", " + std::to_string(s.after_skipped) + " after optimizer steps GradScaler skipped (step";
  text += s.after_skipped_steps.size() == 1 ? " " : "s ";
  for (size_t i = 0; i < s.after_skipped_steps.size() && i < 10; ++i)
    text += (i ? ", " : "") + std::to_string(s.after_skipped_steps[i]);
  text += s.after_skipped_steps.size() > 10 ? ", …)" : ")";
  if (s.drifts())
    text += ": its schedule runs " + std::to_string(s.after_skipped) + " step" + (s.after_skipped == 1 ? "" : "s") +
            " ahead of the optimizer's updates";
  else
    text += "; it steps less often than its optimizer (" + std::to_string(s.optimizer_steps) +
            " steps), as an epoch schedule does, so its schedule does not drift";
  return text;
}

}  // namespace ampscope::profiler
