#include "profiler/analysis/eager_vs_compiled.h"

#include <algorithm>
#include <map>
#include <string_view>
#include <tuple>

#include "profiler/analysis/op_family.h"

namespace ampscope::profiler {
namespace {

constexpr double kNsPerMs = 1e6;

std::string kind_of(OpFamily f) {
  if (is_convolution(f)) return "convolution";
  if (is_attention(f)) return "attention";
  return "GEMM";
}

bool is_region(const OpStats& r) {
  return r.name.starts_with("Torch-Compiled Region") || r.name == "CompiledFunction" ||
         r.name == "CompiledFunctionBackward";
}

bool is_decision(OpCategory c) {
  return c == OpCategory::kDemoted || c == OpCategory::kKeptFp32 || c == OpCategory::kPromoted;
}

using Key = std::tuple<std::string, Phase, std::string>;  // module, phase, kind

struct Sides {
  std::map<Key, PrecisionSide> eager, compiled;
};

void add(PrecisionSide& side, const OpStats& r, OpFamily f) {
  side.present = true;
  side.calls += r.calls;
  for (const size_t i : operand_indices(f, r.input_dtypes.size()))
    if (i < r.input_dtypes.size() && !r.input_dtypes[i].empty()) side.operand_dtypes.insert(r.input_dtypes[i]);
  for (const std::string& d : r.output_dtypes)
    if (!d.empty()) side.output_dtypes.insert(d);
}

// Autocast's decision per module, phase and kind: the first non-neutral category
// among the rows of that kind there, wrappers included (eager records it on
// aten::linear, whose addmm then runs in the dtype it was given).
std::map<Key, OpCategory> decisions(const std::vector<OpStats>& ops) {
  std::map<Key, OpCategory> out;
  for (const OpStats& r : ops) {
    const OpFamily f = op_family(r.name);
    if (f != OpFamily::kNone && is_decision(r.category)) out.try_emplace({r.module, r.phase, kind_of(f)}, r.category);
  }
  return out;
}

}  // namespace

std::string_view to_string(Agreement a) {
  switch (a) {
    case Agreement::kSame: return "same";
    case Agreement::kDiffers: return "differs";
    case Agreement::kEagerOnly: return "eager only";
    case Agreement::kCompiledOnly: return "compiled only";
  }
  return "";
}

std::optional<double> EagerVsCompiled::speedup() const {
  if (eager_step_ms <= 0 || compiled_step_ms <= 0) return std::nullopt;
  return eager_step_ms / compiled_step_ms;
}

EagerVsCompiled compare_eager_and_compiled(const RunOps& eager, const RunOps& compiled) {
  EagerVsCompiled out;
  static const std::vector<OpStats> kNone;
  const std::vector<OpStats>& e = eager.ops ? *eager.ops : kNone;
  const std::vector<OpStats>& c = compiled.ops ? *compiled.ops : kNone;
  out.compiled_run_has_graphs = std::any_of(c.begin(), c.end(), [](const OpStats& r) { return r.compiled; });

  Sides sides;
  for (const OpStats& r : e) {
    const OpFamily f = op_family(r.name);
    if (f == OpFamily::kNone || !is_leaf_compute_op(r.name) || r.compiled) continue;
    add(sides.eager[{r.module, r.phase, kind_of(f)}], r, f);
  }
  // The compiled run: its graphs' ops first; then its eager ops where no graph op
  // stands for that module and phase, leaving out a region's own calls into ATen.
  for (const OpStats& r : c) {
    const OpFamily f = op_family(r.name);
    if (f == OpFamily::kNone || !is_leaf_compute_op(r.name) || !r.compiled) continue;
    add(sides.compiled[{r.module, r.phase, kind_of(f)}], r, f);
  }
  std::map<Key, PrecisionSide> eager_in_compiled_run;
  for (const OpStats& r : c) {
    const OpFamily f = op_family(r.name);
    if (f == OpFamily::kNone || !is_leaf_compute_op(r.name) || r.compiled) continue;
    if (out.compiled_run_has_graphs && r.module.empty() && !r.top_level) continue;  // inside a region
    const Key key{r.module, r.phase, kind_of(f)};
    if (!sides.compiled.contains(key)) add(eager_in_compiled_run[key], r, f);
  }
  sides.compiled.merge(eager_in_compiled_run);

  const auto eager_decisions = decisions(e);
  const auto compiled_decisions = decisions(c);
  std::set<Key> keys;
  for (const auto& [k, _] : sides.eager) keys.insert(k);
  for (const auto& [k, _] : sides.compiled) keys.insert(k);
  for (const Key& k : keys) {
    ModulePrecision m;
    std::tie(m.module, m.phase, m.kind) = k;
    if (auto it = sides.eager.find(k); it != sides.eager.end()) m.eager = it->second;
    if (auto it = sides.compiled.find(k); it != sides.compiled.end()) m.compiled = it->second;
    if (auto it = eager_decisions.find(k); it != eager_decisions.end()) m.eager.decision = it->second;
    if (auto it = compiled_decisions.find(k); it != compiled_decisions.end()) m.compiled.decision = it->second;
    if (!m.compiled.present) {
      m.agreement = Agreement::kEagerOnly;
      ++out.eager_only;
    } else if (!m.eager.present) {
      m.agreement = Agreement::kCompiledOnly;
      ++out.compiled_only;
    } else if (m.eager.operand_dtypes == m.compiled.operand_dtypes &&
               m.eager.output_dtypes == m.compiled.output_dtypes) {
      m.agreement = Agreement::kSame;
      ++out.same;
    } else {
      m.agreement = Agreement::kDiffers;
      ++out.differs;
    }
    out.modules.push_back(std::move(m));
  }

  // Time per phase and step: top-level rows, each microsecond once.
  std::map<Phase, PhaseTime> phases;
  const auto per_step = [](int64_t ns, int64_t steps) {
    return steps > 0 ? static_cast<double>(ns) / kNsPerMs / static_cast<double>(steps) : 0.0;
  };
  for (const OpStats& r : e) {
    if (!r.top_level) continue;
    PhaseTime& p = phases[r.phase];
    p.phase = r.phase;
    p.eager_cpu_ms += per_step(r.cpu_time_ns, eager.profiled_steps);
    p.eager_gpu_ms += per_step(r.gpu_time_ns, eager.profiled_steps);
  }
  for (const OpStats& r : c) {
    // Graph ops carry no time of their own. A compiled backward runs as one autograd
    // node, CompiledFunctionBackward, inside the engine's wrapper: no top-level row
    // holds its time, so it counts itself (a forward region is top-level already).
    const bool backward_region = r.name == "CompiledFunctionBackward" && !r.top_level;
    if ((!r.top_level && !backward_region) || r.compiled) continue;
    PhaseTime& p = phases[r.phase];
    p.phase = r.phase;
    p.compiled_cpu_ms += per_step(r.cpu_time_ns, compiled.profiled_steps);
    p.compiled_gpu_ms += per_step(r.gpu_time_ns, compiled.profiled_steps);
  }
  for (auto& [_, p] : phases) out.phases.push_back(p);

  for (const OpStats& r : c) {
    if (!is_region(r) || r.calls <= 0) continue;
    RegionTime t;
    t.name = r.name;
    t.phase = r.phase;
    t.calls = r.calls;
    t.cpu_ms_per_call = static_cast<double>(r.cpu_time_ns) / kNsPerMs / static_cast<double>(r.calls);
    t.gpu_ms_per_call = static_cast<double>(r.gpu_time_ns) / kNsPerMs / static_cast<double>(r.calls);
    out.regions.push_back(std::move(t));
  }
  std::stable_sort(out.regions.begin(), out.regions.end(), [](const RegionTime& a, const RegionTime& b) {
    return a.cpu_ms_per_call + a.gpu_ms_per_call > b.cpu_ms_per_call + b.gpu_ms_per_call;
  });

  out.eager_step_ms = eager.timing.step_ms();
  out.compiled_step_ms = compiled.timing.step_ms();
  return out;
}

}  // namespace ampscope::profiler
