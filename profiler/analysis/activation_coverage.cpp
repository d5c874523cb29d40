#include "profiler/analysis/activation_coverage.h"

#include <set>

namespace ampscope::profiler {

std::vector<std::string> modules_unmeasured_in_compiled_graphs(const ProfileSnapshot& profile) {
  std::vector<std::string> out;
  if (profile.latest_activations.empty()) return out;
  std::set<std::string> seen;
  for (const ActivationSample& a : profile.latest_activations) seen.insert(a.module);
  // The training forward only: a validation pass and a recomputation take no samples anywhere.
  for (const OpStats& row : profile.op_stats)
    if (row.compiled && row.phase == Phase::kForward && !row.module.empty() && seen.insert(row.module).second)
      out.push_back(row.module);
  return out;
}

std::string unmeasured_activations_text(const std::vector<std::string>& modules, size_t shown) {
  if (modules.empty()) return "";
  std::string text = modules.size() == 1 ? "the output of 1 module inside torch.compile'd graphs is not measured"
                                         : "the outputs of " + std::to_string(modules.size()) +
                                               " modules inside torch.compile'd graphs are not measured";
  text += " (compiled code runs no module hooks): ";
  for (size_t i = 0; i < modules.size() && i < shown; ++i) text += (i > 0 ? ", " : "") + modules[i];
  if (modules.size() > shown) text += " and " + std::to_string(modules.size() - shown) + " more";
  return text;
}

}  // namespace ampscope::profiler
