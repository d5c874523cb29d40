// The rules that read steps (loss scale, skipped steps), gradient samples, the
// backward checks and a Python loop's LR scheduler calls.
#include <algorithm>
#include <cmath>

#include "profiler/report/recommendation_rules.h"
#include "profiler/report/recommendation_text.h"
#include "profiler/script_facts.h"
#include "profiler/store/session_view.h"

namespace ampscope::profiler::report_rules {
namespace {

using namespace report_text;

// The scaler starts high (65536 by default) and halves on each overflow until
// gradients fit: a model whose gradients need 2^10 backs off six times at the
// start. Those skips are calibration, not a problem; a run that starts even
// higher extends calibration to the end of its first run of skipped steps.
constexpr size_t kCalibrationSteps = 20;
// After calibration, GradScaler skips one step per overflow and grows the scale
// again after growth_interval (2000) clean steps: one skip in hundreds. Past 5%
// the skipped work is visible and overflow is no longer the scaler probing.
constexpr double kSkippedStepShare = 0.05;
// One overflow after calibration is the scaler probing a grown scale.
constexpr int64_t kMinSkippedSteps = 2;
// At a scale below 2^4, gradients overflow fp16 with almost no scaling, and any
// below 2^-24 / 16 ~ 3.7e-9 already flush to zero: scaling no longer helps.
constexpr double kLowLossScale = 16;
// "Backing off without growth" is judged over the run's last steps...
constexpr size_t kStuckWindowSteps = 50;
// ...where this many overflows without a single growth mean the overflow comes
// from the values, not from a scale that grew too far.
constexpr int64_t kStuckBackoffs = 3;
// A thousandth of the nonzero gradient elements lost to underflow is where
// updates of small weights visibly go missing; below, it is rounding noise.
constexpr double kUnderflowShare = 0.001;
constexpr double kFp16Max = float_format(FloatFormat::fp16).max;
constexpr double kFp16SmallestSubnormal = float_format(FloatFormat::fp16).min_subnormal;

std::vector<StepRecord> sorted_steps(const RecommendationInput& in) {
  std::vector<StepRecord> steps = in.steps;
  std::stable_sort(steps.begin(), steps.end(),
                   [](const StepRecord& a, const StepRecord& b) { return a.step < b.step; });
  return steps;
}

// How many leading steps are the scaler's calibration.
size_t calibration_steps(const std::vector<StepRecord>& steps) {
  size_t leading_skips = 0;
  while (leading_skips < steps.size() && steps[leading_skips].skipped) ++leading_skips;
  return std::max(kCalibrationSteps, leading_skips);
}

// Where the skipped steps' inf/NaN started in backward, when the checks found it: a
// sentence for the rules about overflow.
std::string backward_origin_sentence(const RecommendationInput& in) {
  if (!in.backward_inf.first) return "";
  return " The backward checks say where: " + backward_inf_text(in.backward_inf) + ".";
}

std::string scale_change(const std::vector<StepRecord>& steps, size_t i) {
  std::string line = "step " + std::to_string(steps[i].step) + ": loss scale ";
  if (i > 0) line += text::loss_scale_text(steps[i - 1].loss_scale) + " -> ";
  return line + text::loss_scale_text(steps[i].loss_scale);
}

void frequent_skipped_steps(const RecommendationInput& in, const std::vector<StepRecord>& steps,
                            std::vector<Finding>& out) {
  if (!in.meta.scaler_enabled) return;
  const size_t calibration = calibration_steps(steps);
  if (steps.size() <= calibration) return;
  std::vector<size_t> skipped;
  int64_t growths = 0;
  for (size_t i = calibration; i < steps.size(); ++i) {
    if (steps[i].skipped) skipped.push_back(i);
    if (steps[i].loss_scale > steps[i - 1].loss_scale) ++growths;
  }
  const double considered = static_cast<double>(steps.size() - calibration);
  const double share = static_cast<double>(skipped.size()) / considered;
  if (static_cast<int64_t>(skipped.size()) < kMinSkippedSteps || share <= kSkippedStepShare) return;

  Finding f;
  Recommendation& r = f.recommendation;
  r.id = "frequent_skipped_steps";
  r.severity = Severity::kWarning;
  // The share is of the steps after calibration: "100% of steps" read against "29 of 30" in the verdict.
  r.title = percent(share) + " of the steps after the first " + std::to_string(calibration) +
            " were skipped on gradient overflow";
  r.detail = std::to_string(skipped.size()) + " of the " + count(considered) +
             " steps after the first " + std::to_string(calibration) + " (" + percent(share) +
             ") were skipped because their gradients held inf or NaN; each one wasted a forward "
             "and a backward pass. The first " +
             std::to_string(calibration) +
             " steps are left out: the scaler starts high and halves until gradients fit, which "
             "is expected. ";
  if (growths > 0) {
    r.detail += "In between, the scale grew " + std::to_string(growths) +
                " times and overflowed again: it oscillates around the largest scale the "
                "gradients allow, so a longer growth interval (GradScaler's default is 2000 "
                "steps) would skip fewer steps.";
  } else {
    r.detail +=
        "The scale never grew in between, so gradients overflow whatever the scale: "
        "look for an op that produces inf in fp16 (exp, pow, a division by a small "
        "number, large logits), keep it in fp32, or lower the learning rate.";
  }
  r.detail += backward_origin_sentence(in);
  for (size_t i : skipped) {
    if (r.evidence.size() == kMaxEvidence) break;
    r.evidence.push_back(scale_change(steps, i));
  }
  f.impact = share;
  out.push_back(std::move(f));
}

// A scale low from the first step with no overflow anywhere was set that low (init_scale).
// Under fp16 autocast the backward computes in fp16 before the unscale, so what fp16 cannot
// hold at that scale is zero in the gradients: "0% underflow" while nothing trains.
void loss_scale_set_low(const RecommendationInput& in, const std::vector<StepRecord>& steps,
                        std::vector<Finding>& out) {
  const double first = steps.front().loss_scale, last = steps.back().loss_scale;
  const double threshold = kFp16SmallestSubnormal / std::max(last, 1e-300);
  Finding f;
  Recommendation& r = f.recommendation;
  r.id = "loss_scale_set_low";
  r.severity = Severity::kWarning;
  r.title = "The fp16 loss scale was set low: small gradients flush to zero in the backward";
  r.detail = "The loss scale was " + text::loss_scale_text(first) + " at the first step and never backed off, so no "
             "overflow brought it to " + text::loss_scale_text(last) + ": the initial scale was set this low. "
             "Under fp16 autocast the backward computes in fp16 before GradScaler unscales, so gradients below "
             "2^-24 / scale = " + number(threshold) + " flush to zero there";
  double max_abs = 0;
  if (!in.gradients.empty()) {
    const GradientStepSummary g = summarize_gradients(in.gradients);
    for (const GradientSample& s : in.gradients) max_abs = std::max(max_abs, s.max_abs);
    r.detail += g.all_zero() ? ": at step " + std::to_string(g.step) +
                                   " every gradient element was zero, so the optimizer had nothing to apply"
                             : "; at step " + std::to_string(g.step) + ", " + percent(g.zero_fraction) +
                                   " of the gradient elements were exactly zero";
  }
  r.detail += ". GradScaler's default initial scale is 65536 (2^16)";
  if (max_abs > 0)
    r.detail += ", and the largest gradient here (|g| = " + number(max_abs) + ") allows a scale up to " +
                text::loss_scale_text(std::floor(kFp16Max / max_abs));
  r.detail += "; the scaler grows the scale only after growth_interval clean steps (2000 by default), so a low "
              "start stays low for as many steps.";
  r.evidence.push_back(scale_change(steps, 0));
  if (steps.size() > 1) r.evidence.push_back(scale_change(steps, steps.size() - 1));
  std::vector<const GradientSample*> zeros;
  for (const GradientSample& g : in.gradients)
    if (g.zero_fraction > 0) zeros.push_back(&g);
  std::stable_sort(zeros.begin(), zeros.end(), [](auto* a, auto* b) { return a->zero_fraction > b->zero_fraction; });
  for (const GradientSample* g : zeros) {
    if (r.evidence.size() == kMaxEvidence) break;
    r.evidence.push_back(g->parameter + ": " + percent(g->zero_fraction) + " of " +
                         count(static_cast<double>(g->numel)) + " elements exactly zero");
  }
  f.impact = 1.0;
  out.push_back(std::move(f));
}

void loss_scale_stuck_low(const RecommendationInput& in, const std::vector<StepRecord>& steps,
                          std::vector<Finding>& out) {
  if (in.compute_precision() != "fp16" || !in.meta.scaler_enabled || steps.empty()) return;
  const size_t calibration = calibration_steps(steps);
  const size_t window_begin = std::max(
      calibration, steps.size() > kStuckWindowSteps ? steps.size() - kStuckWindowSteps : 0);
  std::vector<size_t> backoffs;
  int64_t growths = 0;
  for (size_t i = std::max<size_t>(window_begin, 1); i < steps.size(); ++i) {
    if (steps[i].found_inf) backoffs.push_back(i);
    if (steps[i].loss_scale > steps[i - 1].loss_scale) ++growths;
  }
  const double final_scale = steps.back().loss_scale;
  const bool low = final_scale < kLowLossScale;
  const bool stuck = static_cast<int64_t>(backoffs.size()) >= kStuckBackoffs && growths == 0;
  if (!low && !stuck) return;
  const bool ever_backed_off = final_scale < steps.front().loss_scale ||
                               std::any_of(steps.begin(), steps.end(), [](const StepRecord& s) { return s.found_inf; });
  if (!ever_backed_off) return loss_scale_set_low(in, steps, out);  // "keeps backing off" would be untrue

  Finding f;
  Recommendation& r = f.recommendation;
  r.id = "loss_scale_stuck_low";
  r.severity = Severity::kWarning;
  r.title = "The fp16 loss scale keeps backing off: gradients overflow";
  r.detail = low ? "The loss scale ended at " + text::loss_scale_text(final_scale)
                 : "The loss scale backed off " + std::to_string(backoffs.size()) +
                       " times in the last " + std::to_string(steps.size() - window_begin) +
                       " steps without growing once, to " + text::loss_scale_text(final_scale);
  r.detail +=
      ". The scaler halves the scale on every step whose gradients overflow, so a "
      "scale this low means they overflow fp16 even barely scaled: the values blow up, "
      "not the scale. Likely a numerically unstable op in fp16 (exp or pow of large "
      "values, a sum of squares, logits or attention scores without scaling) or a "
      "learning rate high enough that activations explode. Find the first op whose "
      "output is inf (anomaly detection, or the first skipped step), keep it in fp32, "
      "or lower the learning rate; bf16, where the hardware has it, has fp32's range. "
      "Meanwhile gradients below " +
      number(kFp16SmallestSubnormal / std::max(final_scale, 1e-300)) +
      " flush to zero at this scale." + backward_origin_sentence(in);
  for (auto it = backoffs.rbegin(); it != backoffs.rend() && r.evidence.size() < kMaxEvidence;
       ++it) {
    r.evidence.push_back(scale_change(steps, *it));
  }
  if (r.evidence.empty()) r.evidence.push_back(scale_change(steps, steps.size() - 1));
  f.impact = 1.0;
  out.push_back(std::move(f));
}

void fp16_gradient_underflow(const RecommendationInput& in, std::vector<Finding>& out) {
  // bf16 has fp32's exponent range and fp32 needs no scaling: underflow at fp16's
  // range says nothing about those runs, so the rule is for fp16 only.
  if (in.compute_precision() != "fp16" || in.gradients.empty()) return;
  struct Param {
    const GradientSample* sample;
    double nonzero, underflow;
  };
  std::vector<Param> params;
  double nonzero = 0, underflow = 0, max_abs = 0;
  for (const GradientSample& g : in.gradients) {
    const double n = static_cast<double>(g.numel);
    const Param p{&g, std::max(0.0, (1.0 - g.zero_fraction - g.nonfinite_fraction) * n),
                  g.fp16_underflow_fraction * n};
    nonzero += p.nonzero;
    underflow += p.underflow;
    max_abs = std::max(max_abs, g.max_abs);
    if (p.underflow > 0 && p.nonzero > 0) params.push_back(p);
  }
  const double share = nonzero > 0 ? underflow / nonzero : 0;
  if (share <= kUnderflowShare) return;
  std::stable_sort(params.begin(), params.end(), [](const Param& a, const Param& b) {
    return a.underflow / a.nonzero > b.underflow / b.nonzero;
  });
  const double scale = in.gradients.front().loss_scale;
  const double threshold = kFp16SmallestSubnormal / std::max(scale, 1e-300);

  Finding f;
  Recommendation& r = f.recommendation;
  r.id = "fp16_gradient_underflow";
  r.severity = Severity::kWarning;
  r.title = percent(share) + " of gradient elements underflow fp16 at the current loss scale";
  r.detail = "At loss scale " + text::loss_scale_text(scale) + ", " + percent(share) +
             " of the nonzero gradient elements (" + count(underflow) + " of " + count(nonzero) +
             ", step " + std::to_string(in.gradients.front().step) +
             ") are smaller in magnitude than 2^-24 / scale = " + number(threshold) +
             ": in fp16 they flush to zero and their updates are lost. ";
  if (in.meta.scaler_enabled) {
    r.detail +=
        "The scaler grows the scale only after growth_interval clean steps (2000 by "
        "default); a larger initial scale or a shorter interval lets it reach a scale "
        "where they fit";
    if (max_abs > 0) {
      r.detail += ", as long as the largest gradient (|g| = " + number(max_abs) +
                  ") times the scale stays below 65504, which allows a scale up to " +
                  text::loss_scale_text(std::floor(kFp16Max / max_abs));
    }
    r.detail += ". bf16, where the hardware has it, has fp32's range and needs no scaling.";
  } else {
    r.detail +=
        "No loss scaler is on: enable one (GradScaler, --scaler), which multiplies the "
        "loss so that small gradients stay representable, or train in bf16.";
  }
  for (const Param& p : params) {
    if (r.evidence.size() == kMaxEvidence) break;
    r.evidence.push_back(p.sample->parameter + ": " + percent(p.underflow / p.nonzero) + " of " +
                         count(p.nonzero) + " nonzero elements underflow (min |g| " +
                         number(p.sample->min_abs_nonzero) + ", max |g| " +
                         number(p.sample->max_abs) + ")");
  }
  f.impact = share;
  out.push_back(std::move(f));
}

// A scheduler stepped once per optimizer step that also stepped after the steps
// GradScaler skipped: its schedule runs ahead of the optimizer's real updates.
void scheduler_steps_after_skipped(const RecommendationInput& in, std::vector<Finding>& out) {
  for (const SchedulerSummary& s : in.schedulers) {
    if (!s.drifts()) continue;
    Finding f;
    Recommendation& r = f.recommendation;
    r.id = "scheduler_steps_after_skipped";
    r.severity = Severity::kWarning;
    r.title = s.name + " advanced " + std::to_string(s.after_skipped) + " time" + (s.after_skipped == 1 ? "" : "s") +
              " after optimizer steps GradScaler skipped";
    r.detail = "GradScaler skips optimizer.step() when the step's gradients hold inf or NaN, but " + s.name +
               " (optimizer " + std::to_string(s.optimizer) +
               (s.optimizer_name.empty() ? "" : ", " + s.optimizer_name) + ") stepped anyway: " +
               std::to_string(s.after_skipped) + " of its " + std::to_string(s.calls) +
               " steps followed a skipped optimizer step, so its schedule runs " + std::to_string(s.after_skipped) +
               " steps ahead of the optimizer's real updates (warm-up ends early, decay comes early). PyTorch "
               "warns about it only before the first optimizer step. Fix: " + kSchedulerFix + ".";
    for (int64_t step : s.after_skipped_steps) {
      if (r.evidence.size() == kMaxEvidence) break;
      r.evidence.push_back("step " + std::to_string(step) + ": optimizer step skipped, " + s.name + " stepped");
    }
    f.impact = s.calls > 0 ? static_cast<double>(s.after_skipped) / static_cast<double>(s.calls) : 0.0;
    out.push_back(std::move(f));
  }
}

// model.bfloat16() / .half(): the optimizer updates the reduced-precision weights themselves.
// An update below half a unit in the last place of a weight (2^-9 to 2^-8 of it in bf16,
// 2^-12 to 2^-11 in fp16: 8 and 11 significant bits) rounds away, and Adam's moments live in that precision too. AMP keeps fp32 master
// weights (../shared/seeds: "Master weights are maintained in FP32"); autocast gives the
// forward its reduced precision.
void no_master_weights(const RecommendationInput& in, std::vector<Finding>& out) {
  const std::string reduced = reduced_parameters(in.parameter_dtypes);
  if (reduced.empty()) return;
  const bool fp16 = reduced == "fp16";
  Finding f;
  Recommendation& r = f.recommendation;
  r.id = "no_master_weights";
  r.severity = Severity::kWarning;
  r.title = "The model's parameters are " + reduced + ": no fp32 master weights";
  r.detail = "Most of the model's parameters are " + std::string(fp16 ? "float16" : "bfloat16") +
             " (model." + (fp16 ? "half()" : "bfloat16()") + " or .to()), so the optimizer updates them in " +
             reduced + " and keeps its state (Adam's moments) in " + reduced +
             ": an update smaller than half a unit in the last place of a weight (" + (fp16 ? "2^-12 to 2^-11" : "2^-9 to 2^-8") +
             " of it) rounds away, and small learning rates stop training long before fp32 would. Mixed "
             "precision keeps the parameters in fp32 and runs the forward pass under torch.autocast(dtype=torch." +
             (fp16 ? "float16), with a GradScaler" : "bfloat16)") +
             ", which computes the ops on its lists in " + reduced + " from fp32 master weights.";
  std::string dtypes = in.parameter_dtypes;
  std::replace(dtypes.begin(), dtypes.end(), ':', ' ');
  r.evidence.push_back("parameters by dtype (elements): " + dtypes);
  f.impact = 1.0;
  out.push_back(std::move(f));
}

// FSDP in fp16 under torch.amp.GradScaler: each rank checks only its own shard of the gradients
// for inf/NaN (GradScaler's unscale_ reads the optimizer's parameters, this rank's shards) and
// skips or steps, and backs the scale off or not, on that alone. An overflow in one rank's shard
// makes the ranks disagree; from then on they scale their losses differently, and the gradients
// FSDP reduce-scatters sum terms scaled apart. FSDP's ShardedGradScaler all-reduces the check.
void sharded_gradients_unsynced_scaler(const RecommendationInput& in, const std::vector<StepRecord>& steps,
                                       std::vector<Finding>& out) {
  if (!in.script || !in.script->scaler || in.script->scaler_syncs_ranks()) return;
  const ScriptFacts& s = *in.script;
  if (s.fsdp.empty() || in.compute_precision() != "fp16") return;
  if (s.command && s.command->world_size < 2) return;  // one rank holds every shard
  Finding f;
  Recommendation& r = f.recommendation;
  r.id = "sharded_gradients_unsynced_scaler";
  r.severity = Severity::kWarning;
  r.title = "FSDP shards the gradients, but " + s.scaler_class + " checks each rank's shard alone";
  r.detail = "Under FSDP each rank holds its own shard of every gradient, and " + s.scaler_class +
             " looks for inf/NaN only in the gradients of this rank's optimizer: an overflow in one "
             "rank's shard skips that rank's step and halves its loss scale, while the other ranks step "
             "and keep theirs. From then on the ranks scale their losses differently, and the gradients "
             "FSDP reduce-scatters add up terms scaled apart, with no error raised. Use "
             "torch.distributed.fsdp.sharded_grad_scaler.ShardedGradScaler, which all-reduces the "
             "check so that every rank skips the same steps, or train in bf16, which needs no scaling. "
             "To see whether the ranks already disagree, open their files together "
             "(`ampscope summary RUN.rank0.ampscope RUN.rank1.ampscope ...`).";
  int64_t skipped = 0;
  for (const StepRecord& step : steps) {
    if (!step.found_inf) continue;
    if (r.evidence.size() < kMaxEvidence)
      r.evidence.push_back("step " + std::to_string(step.step) + ": this rank found inf/NaN in its shard and skipped");
    ++skipped;
  }
  r.evidence.insert(r.evidence.begin(), "loss scaler: " + s.scaler_class + "; " + std::to_string(skipped) +
                                            " of " + std::to_string(steps.size()) + " steps skipped on this rank");
  if (r.evidence.size() > kMaxEvidence) r.evidence.resize(kMaxEvidence);
  f.impact = 1.0;
  out.push_back(std::move(f));
}

// clip_grad_norm_ before scaler.unscale_ (PyTorch's AMP examples: "Working with Unscaled
// Gradients"). The gradients are still multiplied by the loss scale S, so max_norm applies to
// S·‖g‖: where that passes max_norm they are cut to max_norm / S (1/65536 of max_norm at the
// default scale), whatever their own norm.
void clip_before_unscale(const RecommendationInput& in, const std::vector<StepRecord>& steps,
                         std::vector<Finding>& out) {
  if (!in.script || !in.script->clip_before_unscale) return;
  const ScriptFacts::ClipBeforeUnscale& c = *in.script->clip_before_unscale;
  const auto at = std::find_if(steps.begin(), steps.end(), [&](const StepRecord& s) { return s.step == c.first_step; });
  const StepRecord* first = at != steps.end() ? &*at : nullptr;
  const double scale = first ? first->loss_scale : std::nan(""), norm = first ? first->grad_norm : std::nan("");
  const double max_norm = c.max_norm;
  const std::string first_step = "step " + std::to_string(c.first_step);
  Finding f;
  Recommendation& r = f.recommendation;
  r.id = "clip_before_unscale";
  r.severity = Severity::kWarning;
  r.title = "clip_grad_norm_ clipped the scaled gradients: call scaler.unscale_(optimizer) before it";
  r.detail = "In " + std::to_string(c.steps) + " of the " + std::to_string(steps.size()) +
             " steps, torch.nn.utils.clip_grad_norm_ ran after the backward of scaler.scale(loss) and before "
             "scaler.unscale_(optimizer), so it measured the gradients still multiplied by the loss scale" +
             (std::isfinite(scale) ? " (" + text::loss_scale_text(scale) + " at " + first_step + ")" : std::string()) +
             ", and max_norm" + (std::isfinite(max_norm) ? " (" + number(max_norm) + ")" : std::string()) +
             " applied to that scaled norm.";
  if (std::isfinite(scale) && scale > 0 && std::isfinite(norm) && std::isfinite(max_norm)) {
    const double scaled = norm * scale, clipped = scaled > max_norm ? max_norm / scale : norm;
    const double intended = std::min(norm, max_norm);
    if (clipped < intended) {
      r.detail += " At " + first_step + " the gradients' own norm was " + number(norm) + " (" + number(scaled) +
                  " scaled): clipping cut it to " + number(clipped) + " where " +
                  (norm > max_norm ? "max_norm would have cut it to " + number(max_norm) : "it needed no clipping") +
                  ", " + count(intended / clipped) + " times smaller than intended.";
    } else {
      r.detail += " At " + first_step + " the scaled norm (" + number(scaled) +
                  ") stayed below max_norm and nothing was clipped, but max_norm acts on a norm " +
                  text::loss_scale_text(scale) + " times the gradients' own.";
    }
  }
  r.detail += " Unless max_norm was multiplied by the scale on purpose, call scaler.unscale_(optimizer) between the "
              "backward and clip_grad_norm_, as PyTorch's AMP examples do; scaler.step(optimizer) then does not "
              "unscale again. The gradient norm shown for these steps is the one clip_grad_norm_ returned divided "
              "by the loss scale: the gradients' own.";
  if (first) {
    r.evidence.push_back("step " + std::to_string(c.first_step) + ": loss scale " + text::loss_scale_text(scale) +
                         ", gradient norm " + number(norm) +
                         (std::isfinite(max_norm) ? ", max_norm " + number(max_norm) : std::string()));
  }
  r.evidence.push_back(std::to_string(c.steps) + " of " + std::to_string(steps.size()) +
                       " steps clipped before unscale_, the first at step " + std::to_string(c.first_step));
  f.impact = steps.empty() ? 1.0 : static_cast<double>(c.steps) / static_cast<double>(steps.size());
  out.push_back(std::move(f));
}

}  // namespace

void add_training_findings(const RecommendationInput& input, std::vector<Finding>& out) {
  no_master_weights(input, out);
  const std::vector<StepRecord> steps = sorted_steps(input);
  frequent_skipped_steps(input, steps, out);
  loss_scale_stuck_low(input, steps, out);
  fp16_gradient_underflow(input, out);
  scheduler_steps_after_skipped(input, out);
  sharded_gradients_unsynced_scaler(input, steps, out);
  clip_before_unscale(input, steps, out);
}

}  // namespace ampscope::profiler::report_rules
