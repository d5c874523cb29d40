#include "profiler/store/session_view.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "profiler/analysis/op_aggregator.h"
#include "profiler/store/comparison_store.h"
#include "profiler/number_text.h"
#include "profiler/range_sample_spacing.h"
#include "profiler/session_meta_keys.h"
#include "profiler/store/session_reader.h"

namespace ampscope::profiler {
namespace {

// Completed steps whose ops were recorded, for sessions whose meta lacks the count
// (older sessions, or killed before the first op table was saved): ops after the last
// completed step (a killed run's step in progress, a Python loop's GradScaler.update()
// after its last optimizer step) are in the table but make no step of their own.
int64_t count_profiled_steps(const SessionReader& reader, const std::vector<StepRecord>& steps) {
  const std::vector<int64_t> with_ops = reader.op_steps();
  int64_t count = 0;
  auto it = steps.begin();
  for (const int64_t step : with_ops) {
    it = std::lower_bound(it, steps.end(), step, [](const StepRecord& s, int64_t n) { return s.step < n; });
    if (it != steps.end() && it->step == step) ++count;
  }
  return with_ops.empty() ? 0 : std::max<int64_t>(count, 1);
}

// The op table of a run killed before it was first saved: the recorded ops and
// their kernels through the same aggregation the live profiler uses, a few steps
// at a time so a long session is never held whole.
// The warm-up step is left out as the capture leaves it out (warmup_step.h); `profiled` counts it.
OpTable rebuild_op_stats(const SessionReader& reader, const std::vector<StepRecord>& steps, int64_t profiled) {
  OpAggregator aggregator;
  aggregator.keep_step_apart(kWarmupStep);
  // Ops of a step whose StepRecord never arrived (killed mid-step) come with the last chunk.
  constexpr size_t kChunk = 16;
  for (size_t i = 0; i < steps.size() || i == 0; i += kChunk) {
    const bool last = i + kChunk >= steps.size();
    const int64_t first = i == 0 ? std::numeric_limits<int64_t>::min() : steps[i].step;
    const int64_t end = last ? std::numeric_limits<int64_t>::max() : steps[i + kChunk - 1].step;
    aggregator.add_ops(reader.ops(first, end));
    aggregator.add_kernels(reader.kernels_in_steps(first, end));
    (void)aggregator.take_settled();
    if (last) break;
  }
  aggregator.release_parked();
  const bool warmup_completed = std::any_of(steps.begin(), steps.end(), [](const StepRecord& s) {
    return s.step == kWarmupStep;
  });
  return op_table_without_warmup(aggregator.op_stats(), aggregator.warmup_op_stats(),
                                 profiled > (warmup_completed ? 1 : 0));
}

void load_gradients(const SessionReader& reader, const SessionViewOptions& options, SessionView& v) {
  const auto steps = reader.gradient_steps();
  v.gradient_sampled_steps = steps.size();
  if (steps.empty()) return;
  v.sampled_gradient_norms = reader.sampled_gradient_norms();
  v.latest_gradients = reader.gradients(steps.back());
  const size_t n = std::min(steps.size(), options.gradient_summaries);
  v.gradient_summaries.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    // Evenly over the samples, the last one always included.
    const size_t k = n == 1 ? steps.size() - 1 : i * (steps.size() - 1) / (n - 1);
    v.gradient_summaries.push_back(
        k + 1 == steps.size() ? summarize_gradients(v.latest_gradients) : summarize_gradients(reader.gradients(steps[k])));
  }
  const size_t first = steps.size() > options.gradient_history_steps ? steps.size() - options.gradient_history_steps : 0;
  for (size_t i = first; i < steps.size(); ++i) {
    const auto samples = i + 1 == steps.size() ? v.latest_gradients : reader.gradients(steps[i]);
    v.gradient_history.insert(v.gradient_history.end(), samples.begin(), samples.end());
  }
}

}  // namespace

GradientStepSummary summarize_gradients(const std::vector<GradientSample>& samples) {
  GradientStepSummary s;
  if (samples.empty()) return s;
  s.step = samples.front().step;
  s.loss_scale = samples.front().loss_scale;
  double zero = 0, nonfinite = 0;
  for (const auto& g : samples) {
    s.numel += g.numel;
    zero += g.zero_fraction * static_cast<double>(g.numel);
    nonfinite += g.nonfinite_fraction * static_cast<double>(g.numel);
  }
  if (s.numel > 0) {
    // A sum of shares times counts can land a hair off 1 for a wholly zero gradient.
    s.zero_fraction = std::min(1.0, zero / static_cast<double>(s.numel));
    s.nonfinite_fraction = nonfinite / static_cast<double>(s.numel);
  }
  s.fp16_window = loss_scale_window(samples);
  const FormatRangeShares fp16 = total_range_shares(samples, FloatFormat::fp16);
  s.fp16_underflow_fraction = fp16.underflow;
  s.fp16_subnormal_fraction = fp16.subnormal;
  s.fp16_overflow_fraction = fp16.overflow;
  return s;
}

std::string sampled_gradient_norm_text(const std::vector<SampledGradientNorm>& norms) {
  const SampledGradientNorm *first = nullptr, *last = nullptr, *largest = nullptr;
  size_t steps = 0, nonfinite = 0;
  for (const SampledGradientNorm& g : norms) {
    if (std::isnan(g.norm)) continue;  // no gradient at all
    ++steps;
    if (!std::isfinite(g.norm)) {
      ++nonfinite;
      continue;
    }
    if (!first) first = &g;
    last = &g;
    if (!largest || g.norm > largest->norm) largest = &g;
  }
  if (steps == 0) return "";
  const auto at = [](const SampledGradientNorm& g) {
    return text::sig3(g.norm) + " at step " + std::to_string(g.step);
  };
  std::string s = first ? at(*first) : "inf/NaN";
  if (last != first) s += " to " + at(*last);
  if (largest != first && largest != last) s += ", largest " + at(*largest);
  s += " (" + std::to_string(steps) + (steps == 1 ? " range-sampled step" : " range-sampled steps");
  if (first && nonfinite > 0) s += "; inf/NaN at " + std::to_string(nonfinite) + " of them";
  return s + ")";
}

SessionView load_session_view(const SessionReader& reader, const SessionViewOptions& options) {
  if (is_comparison(reader))
    throw StoreError("'" + reader.path() + "' holds a comparison, not a training session");
  SessionView v;
  v.path = reader.path();
  v.format_version = reader.format_version();
  v.meta_values = reader.meta_values();
  v.meta = reader.meta();
  v.health = recording_health_from_meta(v.meta_values);
  v.steps = reader.steps();
  v.step = v.steps.empty() ? 0 : v.steps.back().step;
  v.gpu_tracing = v.meta.gpu_tracing;
  v.unattributed_kernels = meta_key::count(v.meta_values, meta_key::kUnattributedKernels).value_or(0);
  // dropped_records stays 0: a file's losses are in `health`, with their causes.
  v.optimizer_steps = reader.optimizer_steps();
  v.op_count = reader.op_count();
  v.kernel_count = reader.kernel_count();
  v.op_stats = reader.op_stats();
  if (v.op_stats.empty() && v.op_count > 0) {
    // The stored count describes the stored table; a rebuilt table is counted from its ops.
    v.profiled_steps = count_profiled_steps(reader, v.steps);
    OpTable rebuilt = rebuild_op_stats(reader, v.steps, v.profiled_steps);
    v.op_stats = std::move(rebuilt.rows);
    v.warmup_left_out = rebuilt.warmup_left_out;
    if (v.warmup_left_out) --v.profiled_steps;
    v.op_stats_rebuilt = true;
  } else {
    const auto stored = meta_key::count(v.meta_values, meta_key::kProfiledSteps);
    v.profiled_steps = stored ? *stored : count_profiled_steps(reader, v.steps);
    v.warmup_left_out = warmup_left_out_from_meta(v.meta_values);
  }
  v.gpu_attribution = reader.gpu_attribution();
  if (v.kernel_count > 0 && options.top_kernels > 0) v.top_kernels = reader.top_kernels(options.top_kernels);
  load_gradients(reader, options, v);
  const auto activation_steps = reader.activation_steps();
  v.activation_sampled_steps = activation_steps.size();
  if (!activation_steps.empty()) v.latest_activations = reader.activations(activation_steps.back());
  v.first_fp16_overflow = reader.first_fp16_overflow();
  v.readiness = reader.readiness();
  const std::vector<BackwardCheck> backward_checks = reader.backward_checks();
  const auto skipped = std::count_if(v.steps.begin(), v.steps.end(), [](const StepRecord& s) { return s.skipped; });
  v.backward_inf = summarize_backward_checks(backward_checks, skipped);
  v.schedulers = summarize_schedulers(reader.scheduler_steps(), v.optimizer_steps);
  std::set<int64_t> recorded, sampled;
  const std::vector<int64_t> op_steps = reader.op_steps();
  recorded.insert(op_steps.begin(), op_steps.end());
  for (const BackwardCheck& c : backward_checks) recorded.insert(c.step);  // its checks ran inside the step
  for (const auto& source : {reader.gradient_steps(), activation_steps}) sampled.insert(source.begin(), source.end());
  v.step_timing = step_timing(v.steps, recorded, sampled);
  v.memory_peak = memory_peak(v.steps, sampled);
  v.compile = compile_events_from_meta(v.meta_values);
  v.compile.kernels = reader.compiled_kernels();
  v.compiled_compute = compiled_compute_time(v.compile.kernels);
  v.category_totals = category_totals(v.op_stats, v.compiled_compute);
  v.own_kernels = own_kernels_from_meta(v.meta_values);
  if (const auto every = meta_key::count(v.meta_values, meta_key::kRangeSampleEvery)) {
    const auto spacing = v.meta_values.find(meta_key::kRangeSampleSpacing);
    v.range_sampling = RangeSampleSpacing::describe_sampling(
        *every, meta_key::count(v.meta_values, meta_key::kRangeSampleBudget).value_or(0),
        spacing == v.meta_values.end() ? std::vector<RangeSampleSpacing::Change>{}
                                       : RangeSampleSpacing::decode(spacing->second),
        meta_key::count(v.meta_values, meta_key::kReadinessEvery),
        meta_key::count(v.meta_values, meta_key::kRangeSampleLastStep).value_or(0));
  }
  if (const auto phases = v.meta_values.find(meta_key::kRangeSamplePhases); phases != v.meta_values.end())
    if (auto decoded = RangeSamplePhases::decode(phases->second); decoded && decoded->samples > 0)
      v.range_sample_phases = decoded;
  return v;
}

CompileEvents compile_events_from_meta(const std::map<std::string, std::string>& meta) {
  CompileEvents events;
  events.graphs = meta_key::count(meta, meta_key::kCompiledGraphs).value_or(0);
  auto array = [&](const char* key) {
    const auto it = meta.find(key);
    if (it == meta.end()) return nlohmann::json::array();
    nlohmann::json parsed = nlohmann::json::parse(it->second, nullptr, /*allow_exceptions=*/false);
    return parsed.is_array() ? parsed : nlohmann::json::array();
  };
  auto text = [](const nlohmann::json& o, const char* field) {
    return o.is_object() && o.contains(field) && o[field].is_string() ? o[field].get<std::string>() : std::string();
  };
  for (const auto& o : array(meta_key::kCompileGraphBreaks)) {
    const int64_t count = o.is_object() && o.contains("count") && o["count"].is_number_integer() ? o["count"].get<int64_t>() : 0;
    events.graph_breaks.push_back({text(o, "where"), text(o, "reason"), count});
  }
  for (const auto& o : array(meta_key::kCompileRecompiles))
    events.recompilations.push_back({text(o, "frame"), text(o, "reason")});
  for (const auto& o : array(meta_key::kCompileRanEagerly))
    if (!text(o, "module").empty()) events.ran_eagerly.push_back({text(o, "module"), text(o, "cls")});
  return events;
}

std::string graphs_read_text(int64_t graphs) {
  if (graphs <= 0) return "no AOTAutograd graph read";
  return std::to_string(graphs) + (graphs == 1 ? " AOTAutograd graph" : " AOTAutograd graphs") +
         " read (forward and backward)";
}

std::string ran_eagerly_text(const std::vector<EagerInPlaceModule>& modules) {
  if (modules.empty()) return "";
  std::map<std::string, std::vector<std::string>> by_class;  // in the classes' name order
  for (const auto& m : modules) by_class[m.class_name].push_back(m.module);
  std::string text = (modules.size() == 1 ? std::string("1 module") : std::to_string(modules.size()) + " modules") +
                     " compiled in place ran eagerly (torch.compile compiled nothing in them):";
  constexpr size_t kShown = 4;
  bool first = true;
  for (const auto& [cls, paths] : by_class) {
    text += std::string(first ? " " : "; ") + cls + " \u00d7" + std::to_string(paths.size()) + " (";
    for (size_t i = 0; i < paths.size() && i < kShown; ++i) text += (i > 0 ? ", " : "") + paths[i];
    if (paths.size() > kShown) text += " and " + std::to_string(paths.size() - kShown) + " more";
    text += ")";
    first = false;
  }
  return text + ". `module.compile()` compiles from the first code outside PyTorch that the module's call "
                "reaches, and theirs is all PyTorch's; `torch.compile(module)` compiles them";
}

SessionView load_session_view(const std::string& path, const SessionViewOptions& options) {
  return load_session_view(SessionReader::open(path), options);
}

RecordedFile open_recorded_file(const std::string& path, const SessionViewOptions& options) {
  const SessionReader reader = SessionReader::open(path);
  RecordedFile file;
  if (is_comparison(reader)) file.comparison = read_comparison(reader);
  else file.session = load_session_view(reader, options);
  return file;
}

}  // namespace ampscope::profiler
