#include "profiler/report/verdict.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "profiler/analysis/loss_scale_window.h"
#include "profiler/analysis/op_family.h"
#include "profiler/recording_health.h"
#include "profiler/script_facts.h"
#include "profiler/session_meta_keys.h"
#include "profiler/report/report_format.h"

namespace ampscope::profiler {
namespace {

using report_detail::factor;
using report_detail::ms_text;
using report_detail::percent;
using report_detail::step_timing_text;
using report_detail::sig3;

// Below this a speed difference is within what repeats of one variant scatter by.
constexpr double kSameSpeed = 0.05;

std::string where(const SessionMeta& meta) {
  return meta.device.rfind("cuda", 0) == 0 ? "this GPU"
         : meta.device == "cpu"            ? "this CPU"
                                           : meta.device;
}

// Time shares of an op table's top-level rows, in GPU time when any was traced.
struct TableShares {
  double total = 0, kept_fp32 = 0, demoted = 0, cast_tax = 0, tensor_core = 0, autocast_off = 0;
  std::set<std::string> kept_names, demoted_names, autocast_off_names;
  bool gpu = false;
};

// The times are category_totals' (the summary's category table): compiling in none, a
// compiled region's time moved to what its kernels computed (`compiled`).
TableShares shares_of(const std::vector<OpStats>& rows, const std::vector<CompiledComputeTime>& compiled = {}) {
  TableShares t;
  for (const auto& r : rows) {
    if (!r.top_level || r.name == kTorchCompileOp) continue;
    t.gpu = t.gpu || r.gpu_time_ns > 0;
    t.tensor_core += static_cast<double>(r.tensor_core_gpu_time_ns);
    if (r.category == OpCategory::kKeptFp32) t.kept_names.insert(r.name);
    if (r.category == OpCategory::kDemoted) t.demoted_names.insert(r.name);
    if (r.category == OpCategory::kAutocastOff) t.autocast_off_names.insert(r.name);
  }
  for (const CategoryTotals& c : category_totals(rows, compiled)) {
    const double time = static_cast<double>(t.gpu ? c.gpu_time_ns : c.cpu_time_ns);
    t.total += time;
    t.cast_tax += static_cast<double>(t.gpu ? c.cast_gpu_time_ns : c.cast_cpu_time_ns);
    if (c.category == OpCategory::kKeptFp32) t.kept_fp32 += time;
    if (c.category == OpCategory::kDemoted) t.demoted += time;
    if (c.category == OpCategory::kAutocastOff) t.autocast_off += time;
  }
  return t;
}

// "aten::softmax and aten::layer_norm" for a few op names, "5 ops" for more.
std::string ops_text(const std::set<std::string>& names) {
  if (names.empty() || names.size() > 3) return std::to_string(names.size()) + " ops";
  std::string s;
  size_t i = 0;
  for (const auto& n : names) {
    s += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + n;
    ++i;
  }
  return s;
}

// Why no GPU figures: the tracer's own reason, which may be a sentence of its own.
std::string no_gpu_sentence(const SessionMeta& meta) {
  std::string s = "No GPU was traced, so op times are CPU times";
  if (!meta.gpu_tracing.empty()) s += "; GPU tracing: " + meta.gpu_tracing;
  return s + ".";
}

// "; 3 ops kept in fp32 took 12% of op time; autocast's casts cost 4%", or "".
std::string autocast_costs(const std::vector<OpStats>& rows, const std::vector<CompiledComputeTime>& compiled = {}) {
  const auto t = shares_of(rows, compiled);
  if (t.total <= 0) return "";
  std::string s;
  if (!t.kept_names.empty())
    s += "; " + ops_text(t.kept_names) + " kept in fp32 took " + percent(t.kept_fp32 / t.total) +
         " of op time";
  if (!t.autocast_off_names.empty())
    s += "; " + ops_text(t.autocast_off_names) + ", run where the code turned autocast off, took " +
         percent(t.autocast_off / t.total) + " of op time";
  if (t.cast_tax > 0) s += "; the casts autocast inserted cost " + percent(t.cast_tax / t.total);
  return s;
}

// Why a CPU's bf16/fp16 matrix multiplies were slow, when PyTorch itself said (in the
// session's meta) that it has no oneDNN kernels for them here; "" when it has them,
// or the session predates the question: no claim without the fact.
std::string cpu_fallback_reason(const SessionMeta& meta, const std::string& precision) {
  if (meta.device != "cpu" || (precision != "bf16" && precision != "fp16")) return "";
  const std::string& path = precision == "bf16" ? meta.cpu_bf16_matmul : meta.cpu_fp16_matmul;
  if (path != kCpuMatmulFallback) return "";
  return ", as PyTorch has no oneDNN " + precision + " kernels on this CPU (vector ISA " +
         (meta.cpu_isa.empty() ? std::string("unknown") : meta.cpu_isa) +
         ") and runs them in ATen's fallback loops";
}

// Why a variant ran slower, from the matched op table: the matrix multiplies' share.
std::string slowdown_reason(const ReportData& d, size_t variant, size_t base) {
  double v = 0, b = 0;
  for (const auto& row : d.op_rows) {
    if (!is_gemm_like(row.name) || variant >= row.cells.size() || base >= row.cells.size())
      continue;
    if (!row.cells[variant].present || !row.cells[base].present) continue;
    v += row.cells[variant].time_ns_per_step;
    b += row.cells[base].time_ns_per_step;
  }
  if (b <= 0 || v <= 1.5 * b) return "";
  const auto& run = d.comparison->variants[variant];
  std::string s = ": its matrix multiplies ran " + factor(v / b) + " slower than in fp32";
  return s + cpu_fallback_reason(d.meta, run.precision);
}

std::string repeats_text(const VariantSummary& s, double lo, double hi) {
  if (s.finished_repeats <= 1) return " (1 repeat)";
  const std::string n = std::to_string(s.finished_repeats);
  if (factor(lo) == factor(hi)) return " (" + factor(lo) + " in each of " + n + " repeats)";
  return " (" + factor(lo) + "\u2013" + factor(hi) + " across " + n + " repeats)";
}

std::string speed_sentence(const ReportData& d, size_t i, size_t base) {
  const auto& s = d.variant_summaries[i];
  const auto& sp = s.speedup;
  const std::string& name = s.variant;
  const std::string& base_name = d.comparison->variants[base].variant;
  if (!(sp.median > 0)) return name + " could not be timed against " + base_name;
  if (sp.median >= 1 + kSameSpeed) {
    std::string out = name + " gave " + factor(sp.median) + " over " + base_name +
                      repeats_text(s, sp.min, sp.max);
    if (sp.min < 1) out += ", though its slowest repeat was no faster than " + base_name;
    return out;
  }
  if (sp.median <= 1 - kSameSpeed) {
    // A slowdown reads better as its inverse: "15× slower", and the spread likewise.
    std::string out = name + " was " + factor(1 / sp.median) + " slower than " + base_name +
                      " on " + where(d.meta);
    if (s.finished_repeats > 1) out += repeats_text(s, 1 / sp.max, 1 / sp.min);
    return out + slowdown_reason(d, i, base);
  }
  return name + " ran at " + base_name + "'s speed" + repeats_text(s, sp.min, sp.max);
}

// `which`: "final" for training, "last batch's" for inference.
std::string loss_sentence(const VariantSummary& s, const VariantSummary& b, const std::string& which) {
  if (!std::isfinite(s.final_loss)) return s.variant + " diverged: its " + which + " loss is not a number";
  if (!std::isfinite(b.final_loss)) return "";
  const double rel =
      std::fabs(s.final_loss - b.final_loss) / std::max(std::fabs(b.final_loss), 1e-12);
  const std::string head = s.variant + "'s " + which + " loss " + sig3(s.final_loss);
  const std::string tail = " of " + b.variant + "'s " + sig3(b.final_loss);
  if (rel <= 0.01) return head + " is within 1%" + tail;
  if (rel <= 0.05) return head + " is within 5%" + tail;
  return head + " differs by " + percent(rel) + " from " + b.variant + "'s " + sig3(b.final_loss);
}

void comparison_verdict(const ReportData& d, std::vector<std::string>& out) {
  const auto& c = *d.comparison;
  const auto base = baseline_index(c);
  const auto& sums = d.variant_summaries;
  if (sums.size() != c.variants.size()) return;

  // The fastest variant first: it is what a reader came for.
  std::optional<size_t> fastest;
  for (size_t i = 0; i < sums.size(); ++i)
    if (sums[i].step_ms.median > 0 &&
        (!fastest || sums[i].step_ms.median < sums[*fastest].step_ms.median))
      fastest = i;
  if (fastest && sums.size() > 1)
    out.push_back(std::string(c.inference ? "Fastest inference: " : "Fastest: ") + sums[*fastest].variant +
                  ", a median " + timed_unit(c) + " of " +
                  ms_text(sums[*fastest].step_ms.median) + " on " +
                  (d.meta.device_name.empty() ? d.meta.device : d.meta.device_name) + ".");
  if (!base) out.push_back("No fp32 baseline was run, so no speedup is given.");

  for (size_t i = 0; i < sums.size(); ++i) {
    const auto& run = c.variants[i];
    const auto& s = sums[i];
    if (s.finished_repeats == 0) {
      out.push_back(run.variant + " finished no repeat" +
                    (run.error.empty() ? "." : ": " + run.error + "."));
      continue;
    }
    if (base && i != *base) {
      out.push_back(speed_sentence(d, i, *base) + autocast_costs(run.op_stats) + ".");
      const auto loss = loss_sentence(s, sums[*base], c.inference ? "last batch's" : "final");
      if (!loss.empty()) out.push_back(loss + ".");
    } else if (!base) {
      const auto costs = autocast_costs(run.op_stats);
      if (!costs.empty()) out.push_back(run.variant + costs.substr(1) + ".");
    }
    if (s.skipped_steps > 0)
      out.push_back(run.variant + " skipped " + std::to_string(s.skipped_steps) +
                    (s.skipped_steps == 1 ? " step" : " steps") +
                    " on inf/NaN gradients (the most in one repeat).");
    if (!run.error.empty()) out.push_back(run.variant + " stopped early: " + run.error + ".");
    if (s.utilization > 0)
      out.push_back(
          run.variant + " reached " + report_detail::flops_text(s.achieved_flops_per_second) +
          ", " + percent(s.utilization) + " of " + where(d.meta) + "'s " + run.variant + " peak.");
  }
}

double median_step_ms(const std::vector<StepRecord>& steps) {
  std::vector<double> t;
  // The first step pays for allocation and kernel selection; leave it out when there are others.
  for (size_t i = steps.size() > 1 ? 1 : 0; i < steps.size(); ++i)
    if (std::isfinite(steps[i].cost_ms())) t.push_back(steps[i].cost_ms());
  if (t.empty()) return 0;
  std::nth_element(t.begin(), t.begin() + static_cast<std::ptrdiff_t>(t.size() / 2), t.end());
  return t[t.size() / 2];
}

void session_verdict(const ReportData& d, std::vector<std::string>& out) {
  // First: what follows is read from an incomplete recording.
  if (const std::string lost = describe(d.health); !lost.empty()) out.push_back("Recording: " + lost + ".");
  if (const std::string going = in_progress(d.health); !going.empty()) out.push_back("Recording: " + going + ".");
  const auto& m = d.meta;
  const std::string precision = m.precision.empty() ? "this" : m.precision;
  // model.bfloat16() without autocast: a bf16 run whose autocast precision reads fp32.
  const auto dtypes = d.meta_values.find(meta_key::kParameterDtypes);
  const std::string reduced = dtypes == d.meta_values.end() ? "" : reduced_parameters(dtypes->second);
  const bool reduced_model = m.precision == "fp32" && !reduced.empty();
  // FSDP's mixed precision without autocast: fp32 parameters, the compute in param_dtype.
  const std::optional<ScriptFacts> facts = script_facts(d.meta_values);
  const std::string fsdp =
      facts && m.precision == "fp32" && !reduced_model ? facts->fsdp_compute_precision() : "";
  if (!d.steps.empty()) {
    std::string s = (reduced_model   ? reduced + " run (a " + reduced + " model, no autocast)"
                     : !fsdp.empty() ? fsdp + " run (FSDP's mixed precision: fp32 parameters, " +
                                           fsdp + " compute; no autocast)"
                                     : precision + " run") +
                    " of " + (m.model.empty() ? "the model" : m.model) + " on " +
                    (m.device_name.empty() ? m.device : m.device_name) + ": " +
                    std::to_string(d.steps.size()) + (d.steps.size() == 1 ? " step" : " steps");
    // A profiled step's time includes capture: say so, and give the unprofiled steps' time where there are any.
    if (d.step_timing.any_recorded()) {
      s += ", " + step_timing_text(d.step_timing);
    } else if (const double median = median_step_ms(d.steps); median > 0) {
      s += ", median step " + ms_text(median);
    }
    out.push_back(s + ".");
  }

  const auto t = shares_of(d.op_stats, d.compiled_compute);
  if (t.total > 0) {
    if (t.demoted_names.empty() && t.kept_names.empty()) {
      const std::string why =
          reduced_model ? ": the model's parameters are " + reduced + ", so its ops ran in " + reduced +
                              " without it, with no fp32 master weights"
          : !fsdp.empty() ? ": FSDP casts the parameters to " + fsdp + " as it gathers them, so the model's ops ran " +
                                "in " + fsdp + " without it, the fp32 shards staying the master weights"
          : m.precision == "fp32" ? " (an fp32 run)"
                                  : "";
      out.push_back("Autocast changed no op's precision" + why + autocast_costs(d.op_stats, d.compiled_compute) + ".");
    } else {
      std::string s = t.demoted_names.empty()
                          ? "Autocast lowered no op to " + precision +
                                (reduced.empty() ? "" : " (the model's parameters are " + reduced + " already)")
                          : "Autocast ran " + ops_text(t.demoted_names) + " in " + precision + " (" +
                                percent(t.demoted / t.total) + " of op time)";
      out.push_back(s + autocast_costs(d.op_stats, d.compiled_compute) + ".");
    }
  }

  if (const auto why = cpu_fallback_reason(m, m.precision); !why.empty())
    out.push_back("Its " + m.precision + " matrix multiplies may be slow" + why +
                  "; `ampscope compare` measures the cost against fp32.");

  if (!d.gpu_traced()) {
    out.push_back(no_gpu_sentence(m));
  } else if (t.gpu && t.total > 0) {
    out.push_back(percent(t.tensor_core / t.total) + " of GPU op time ran in Tensor Core kernels.");
  }

  if (!d.gradient_summaries.empty()) {
    const auto& g = d.gradient_summaries.back();
    const bool fp16 = m.precision == "fp16";
    // Another precision's gradients against fp16: which loss scales would carry them says
    // more than the shares at this run's scale (1 without a scaler), which no fp16 run uses.
    std::string s;
    if (!fp16 && g.fp16_window) {
      s = report_detail::capitalized(loss_scale_window_text(*g.fp16_window));
    } else {
      s = percent(g.fp16_underflow_fraction) + " of gradients " + (fp16 ? "underflow" : "would underflow") +
          " fp16 at scale " + text::loss_scale_text(g.loss_scale);
      if (g.fp16_overflow_fraction > 0)
        s += " and " + percent(g.fp16_overflow_fraction) + (fp16 ? " overflow it" : " would overflow it");
    }
    s += " (step " + std::to_string(g.step) + ")";
    // Those shares are of what a cast could still lose: a gradient that is already zero
    // reads "0% underflow" while nothing trains.
    if (g.all_zero()) {
      s += ", but every gradient element was exactly zero: the step had nothing to apply";
      if (fp16 && g.loss_scale < 1.0)
        s += " (with a loss scale below 1, fp16's backward flushes small values to zero before the unscale)";
    } else if (g.zero_fraction >= 0.05) {  // a few dead units or unused embedding rows are not news
      s += "; " + percent(g.zero_fraction) + " of the elements were exactly zero before any cast";
      // Autocast's backward is fp16 itself: what it flushed reaches the fp32 gradient as 0.
      if (fp16) s += ", where an fp16 backward's flushed values end up";
    }
    out.push_back(s + ".");
  }

  if (!d.steps.empty()) {
    int64_t skipped = 0;
    for (const auto& st : d.steps) skipped += st.skipped ? 1 : 0;
    if (skipped > 0) {
      out.push_back(std::to_string(skipped) + " of " + std::to_string(d.steps.size()) +
                    " steps were skipped on inf/NaN gradients; the loss scale went from " +
                    text::loss_scale_text(d.steps.front().loss_scale) + " to " +
                    text::loss_scale_text(d.steps.back().loss_scale) + ".");
    } else if (m.scaler_enabled) {
      out.push_back("No step was skipped; the loss scale ended at " +
                    text::loss_scale_text(d.steps.back().loss_scale) + ".");
    }
    // The skipped steps' consequences: where their inf started in backward, and a
    // scheduler that advanced anyway.
    if (d.backward_inf.first)
      out.push_back(report_detail::capitalized(backward_inf_text(d.backward_inf)) + ".");
    for (const SchedulerSummary& sc : d.schedulers)
      if (sc.drifts()) out.push_back(scheduler_drift_text(sc) + ".");
    // Clipping before unscale_ cut the gradients by the scale, silently: it belongs beside the scale.
    if (facts && facts->clip_before_unscale)
      out.push_back("clip_grad_norm_ ran on the scaled gradients, before scaler.unscale_, in " +
                    std::to_string(facts->clip_before_unscale->steps) + " of " + std::to_string(d.steps.size()) +
                    " steps: max_norm applied to gradients multiplied by the loss scale.");
    const auto bad = std::find_if(d.steps.begin(), d.steps.end(),
                                  [](const StepRecord& st) { return !std::isfinite(st.loss); });
    if (bad != d.steps.end()) {
      out.push_back("The loss stopped being finite at step " + std::to_string(bad->step) + ".");
    } else if (d.steps.size() > 1) {
      out.push_back("The loss went from " + sig3(d.steps.front().loss) + " to " +
                    sig3(d.steps.back().loss) + ".");
    }
  }
}

void rank_verdict(const RankComparison& ranks, std::vector<std::string>& out) {
  if (ranks.ranks.empty()) return;
  const RankRow& slowest = ranks.ranks[ranks.slowest];
  if (ranks.has_straggler())
    out.push_back("Rank " + std::to_string(slowest.rank) + " is the straggler: its median step (" +
                  sig3(slowest.median_step_ms) + " ms) is " + sig3(slowest.vs_fastest) +
                  "× the fastest rank's, and every rank waits for it at each all-reduce.");
  else if (ranks.ranks.size() > 1)
    out.push_back("No straggler: every rank's median step is within 10% of the fastest.");
  if (ranks.scale_disagreements == 0)
    out.push_back("The loss scale was the same on every rank at every step, as GradScaler with DDP should be.");
  else
    out.push_back("The ranks disagree on the loss scale (or a rank lacks the step) at " +
                  std::to_string(ranks.scale_disagreements) + " steps, first at step " +
                  std::to_string(ranks.first_disagreement_step) +
                  ": they saw different gradients, so they no longer train the same model.");
  const auto most = std::max_element(ranks.ranks.begin(), ranks.ranks.end(), [](const RankRow& a, const RankRow& b) {
    return a.collective_share < b.collective_share;
  });
  if (most->collective_share > 0)
    out.push_back("Collectives take up to " + percent(most->collective_share) + " of the op time (rank " +
                  std::to_string(most->rank) + ").");
}

}  // namespace

std::vector<std::string> verdict(const ReportData& data) {
  std::vector<std::string> out;
  if (data.kind == ReportData::Kind::kComparison && data.comparison) {
    comparison_verdict(data, out);
    // Only the profiled passes are traced; without one there are no op times to qualify.
    const auto& runs = data.comparison->variants;
    const bool profiled = std::any_of(runs.begin(), runs.end(),
                                      [](const VariantRun& r) { return r.profiled_steps > 0; });
    if (profiled && !data.gpu_traced()) out.push_back(no_gpu_sentence(data.meta));
  } else if (data.kind == ReportData::Kind::kRanks && data.ranks) {
    rank_verdict(*data.ranks, out);
  } else {
    session_verdict(data, out);
  }
  return out;
}

}  // namespace ampscope::profiler
