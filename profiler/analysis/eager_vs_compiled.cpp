#include "profiler/analysis/eager_vs_compiled.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
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

// Dynamo's and AOTAutograd's regions, not ampscope's marker inside them.
bool is_region_name(const std::string& name) {
  return is_compiled_region_op(name) && !name.starts_with(kCompiledGraphOpPrefix);
}

using Key = std::tuple<std::string, Phase, std::string>;  // module, phase, kind

struct Sides {
  std::map<Key, PrecisionSide> eager, compiled;
};

bool is_decision(OpCategory c) {
  return c == OpCategory::kDemoted || c == OpCategory::kKeptFp32 || c == OpCategory::kPromoted;
}

void add(PrecisionSide& side, const OpStats& r, OpFamily f) {
  side.present = true;
  side.calls += r.calls;
  if (is_decision(r.category)) {
    // An eager op autocast cast for (HF GPT-2's Conv1D calls addmm itself) is
    // recorded with the dtypes it was called with; autocast then cast its operands
    // to the output's dtype, which is what the GEMM ran in. A graph holds those casts
    // as ops of their own, so its GEMM already shows the cast operands. The first output
    // only: SDPA's kernels also return their softmax's logsumexp, in fp32 whatever the
    // operands (the eager op returns the attention alone).
    if (!r.output_dtypes.empty() && !r.output_dtypes.front().empty())
      side.operand_dtypes.insert(r.output_dtypes.front());
  } else {
    for (const size_t i : operand_indices(f, r.input_dtypes.size()))
      if (i < r.input_dtypes.size() && !r.input_dtypes[i].empty()) side.operand_dtypes.insert(r.input_dtypes[i]);
  }
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

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Over every step of the run with recorded ops, 0 where the phase had none.
double median_over_steps(const RecordedTimes& t, const std::map<Phase, std::map<int64_t, double>>& by_phase,
                         Phase phase) {
  const auto it = by_phase.find(phase);
  if (it == by_phase.end()) return 0.0;
  std::vector<double> v;
  for (const int64_t step : t.steps) {
    const auto s = it->second.find(step);
    v.push_back(s == it->second.end() ? 0.0 : s->second);
  }
  return median(std::move(v));
}

}  // namespace

void RecordedTimes::add_op(const OpRecord& op) {
  steps.insert(op.step);
  phase_of_op[op.id] = op.phase;
  const double ms = static_cast<double>(op.end_ns - op.start_ns) / kNsPerMs;
  if (op.parent_id == 0) cpu_ms[op.phase][op.step] += ms;
  if (is_region_name(op.name)) {
    auto& [phase, calls] = region_calls[op.name];
    phase = op.phase;
    calls.push_back({op.start_ns, ms});
  }
}

void RecordedTimes::add_kernel(const KernelRecord& k) {
  const auto it = phase_of_op.find(k.op_id);
  if (it == phase_of_op.end()) return;  // no op: the unattributed share, reported elsewhere
  gpu_ms[it->second][k.step] += static_cast<double>(k.end_ns - k.start_ns) / kNsPerMs;
}

std::string precision_side_text(const PrecisionSide& side, std::string_view arrow, std::string_view none) {
  if (!side.present) return std::string(none);
  const auto joined = [&](const std::set<std::string>& values) {
    std::string out;
    for (const std::string& v : values) out += (out.empty() ? "" : ",") + v;
    return out.empty() ? std::string(none) : out;
  };
  std::string text = joined(side.operand_dtypes) + " " + std::string(arrow) + " " + joined(side.output_dtypes);
  if (side.decision != OpCategory::kUnchanged) text += " (" + std::string(to_string(side.decision)) + ")";
  return text;
}

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
  // The module and phase each compiled region ran in (a model compiled whole runs its region
  // in the model's scope, a block compiled on its own in the block's, and their compiled
  // backward is theirs): the ATen calls there are the regions' own, nested in the forward,
  // the autograd engine's own calls in the backward. A region in no module's scope: nested.
  std::set<std::pair<std::string, Phase>> region_scopes;
  for (const OpStats& r : c)
    if (is_compiled_region_op(r.name) && !r.module.empty()) region_scopes.insert({r.module, r.phase});
  std::map<Key, PrecisionSide> eager_in_compiled_run;
  for (const OpStats& r : c) {
    const OpFamily f = op_family(r.name);
    if (f == OpFamily::kNone || !is_leaf_compute_op(r.name) || r.compiled) continue;
    if (out.compiled_run_has_graphs &&
        ((r.module.empty() && !r.top_level) || region_scopes.contains({r.module, r.phase})))
      continue;  // inside a region
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

  // Time per phase and step, from the recorded ops: medians over each run's steps.
  static const RecordedTimes kNoTimes;
  const RecordedTimes& et = eager.times ? *eager.times : kNoTimes;
  const RecordedTimes& ct = compiled.times ? *compiled.times : kNoTimes;
  std::set<Phase> phases;
  for (const RecordedTimes* t : {&et, &ct})
    for (const auto& [phase, _] : t->cpu_ms) phases.insert(phase);
  for (const Phase phase : phases) {
    PhaseTime p;
    p.phase = phase;
    p.eager_cpu_ms = median_over_steps(et, et.cpu_ms, phase);
    p.compiled_cpu_ms = median_over_steps(ct, ct.cpu_ms, phase);
    p.eager_gpu_ms = median_over_steps(et, et.gpu_ms, phase);
    p.compiled_gpu_ms = median_over_steps(ct, ct.gpu_ms, phase);
    out.phases.push_back(p);
  }
  for (const auto& [name, entry] : ct.region_calls) {
    std::vector<RecordedTimes::Call> calls = entry.second;
    if (calls.empty()) continue;
    std::sort(calls.begin(), calls.end(), [](const auto& x, const auto& y) { return x.start_ns < y.start_ns; });
    RegionTime t;
    t.name = name;
    t.phase = entry.first;
    t.calls = static_cast<int64_t>(calls.size());
    t.first_call_ms = calls.front().ms;
    std::vector<double> ms;
    for (const auto& c : calls) ms.push_back(c.ms);
    t.median_ms = median(ms);
    out.regions.push_back(std::move(t));
  }
  std::stable_sort(out.regions.begin(), out.regions.end(),
                   [](const RegionTime& a, const RegionTime& b) { return a.median_ms > b.median_ms; });

  out.eager_step_ms = eager.timing.step_ms();
  out.compiled_step_ms = compiled.timing.step_ms();
  return out;
}

}  // namespace ampscope::profiler
