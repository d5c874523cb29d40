// The rules that read the op table.
#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "profiler/analysis/op_classifier.h"
#include "profiler/analysis/op_family.h"
#include "profiler/analysis/tensor_core_eligibility.h"
#include "profiler/float_formats.h"
#include "profiler/report/recommendation_rules.h"
#include "profiler/report/recommendation_text.h"

#include "engine/scope_names.h"

namespace ampscope::profiler::report_rules {
namespace {

using namespace report_text;

// Tensor Core GEMM/conv kernels read fp16/bf16 operands in rows of 16 bytes: 8 elements.
constexpr int64_t kTensorCoreMultiple = 8;
// A dimension under 16 is less than one MMA tile wide whatever its alignment (a
// 10-class head, an RGB image's 3 channels): the op is cheap along it and padding
// gains little, so it is not flagged.
constexpr int64_t kMinFlaggedDimension = 16;
// Casts are memory-bound copies doing no useful arithmetic: at 5% of op time,
// removing them is a visible speed-up; below, they are noise next to other overheads.
constexpr double kCastTaxShare = 0.05;
// Losses, softmax and norms in fp32 normally take a few percent of a step; past a
// fifth they shape the step time.
constexpr double kKeptFp32Share = 0.20;
// Where the script turned autocast off, its ops run at the precision it gave them, fp32 as a
// rule: a few softmaxes or a loss cost little, but matrix multiplies there run at fp32's
// rate, a fraction of fp16/bf16's on Tensor Cores. Past a tenth of op time, the region's
// extent is worth a look.
constexpr double kAutocastOffShare = 0.10;

// Op time, counted once: top-level rows only, GPU time when kernels were traced.
struct OpTime {
  bool gpu = false;
  double total_ns = 0;
  double steps = 1;  // steps the table covers, for per-step figures

  double of(const OpStats& r) const {
    return static_cast<double>(gpu ? r.gpu_time_ns : r.cpu_time_ns);
  }
  double cast_of(const OpStats& r) const {
    return static_cast<double>(gpu ? r.cast_gpu_time_ns : r.cast_cpu_time_ns);
  }
  double share(double ns) const { return total_ns > 0 ? ns / total_ns : 0; }
};

OpTime op_time(const RecommendationInput& in) {
  OpTime t;
  for (const OpStats& r : in.op_stats) t.gpu = t.gpu || r.gpu_time_ns > 0;
  for (const OpStats& r : in.op_stats) {
    if (r.top_level) t.total_ns += t.of(r);
  }
  t.steps = in.profiled_steps > 0 ? static_cast<double>(in.profiled_steps) : 1.0;
  return t;
}

std::string reduced_precision_name(const RecommendationInput& in) {
  return in.meta.precision == "fp16" || in.meta.precision == "bf16" ? in.meta.precision
                                                                    : "fp16/bf16";
}

struct Dim {
  const char* letter;
  const char* meaning;  // "" when the letter says it all
  int64_t value;
};

// The dimensions a Tensor Core kernel wants aligned, N and K (and channels) first.
std::vector<Dim> aligned_dims(const OpStats& row) {
  const OpFamily family = op_family(row.name);
  const std::vector<Shape>& s = row.input_shapes;
  if (family == OpFamily::kLinear) {
    const Shape *x = shape_at(s, 0), *w = shape_at(s, 1);
    if (x == nullptr || w == nullptr || w->size() != 2) return {};
    int64_t m = 1;
    for (size_t i = 0; i + 1 < x->size(); ++i) m *= (*x)[i];
    return {{"N", "out_features", (*w)[0]},
            {"K", "in_features", x->back()},
            {"M", "batch x positions", m}};
  }
  if (family == OpFamily::kMm || family == OpFamily::kAddmm || family == OpFamily::kBmm ||
      family == OpFamily::kBaddbmm || family == OpFamily::kMatmul) {
    const size_t a_index = first_operand_index(family);
    const Shape *a = shape_at(s, a_index), *b = shape_at(s, a_index + 1);
    if (a == nullptr || b == nullptr || a->size() < 2 || b->size() < 2) return {};
    int64_t m = (*a)[a->size() - 2];
    if (family == OpFamily::kMatmul && b->size() == 2) {  // a batched a against a matrix folds the batch into M
      m = 1;
      for (size_t i = 0; i + 1 < a->size(); ++i) m *= (*a)[i];
    }
    return {{"N", "", b->back()}, {"K", "", a->back()}, {"M", "", m}};
  }
  if (family == OpFamily::kConv) {
    const Shape* w = shape_at(s, 1);
    if (w == nullptr || w->size() < 3) return {};
    return {{"C_out", "output channels", (*w)[0]}, {"C_in", "input channels per group", (*w)[1]}};
  }
  if (family == OpFamily::kAttention) {
    const Shape *q = shape_at(s, 0), *v = shape_at(s, 2);
    if (q == nullptr) return {};
    std::vector<Dim> dims{{"E", "head dim", q->back()}};
    if (v != nullptr && v->back() != q->back()) dims.push_back({"Ev", "value head dim", v->back()});
    return dims;
  }
  return {};
}

int64_t round_up(int64_t v, int64_t multiple) { return (v + multiple - 1) / multiple * multiple; }

void gemm_dims_not_multiple_of_8(const RecommendationInput& in, const OpTime& t,
                                 std::vector<Finding>& out) {
  std::vector<const OpStats*> rows;
  for (const OpStats& r : in.op_stats) {
    // The forward's rows name the GEMM; a recomputed forward's repeat them.
    if (r.phase == Phase::kBackward || r.phase == Phase::kRecompute || r.phase == Phase::kOptimizer) continue;
    if (is_gemm_like(r.name) && runs_in_reduced_precision(r)) rows.push_back(&r);
  }
  // The op the model called (linear, conv2d) names the dimension best; nested rows repeat it.
  std::stable_partition(rows.begin(), rows.end(), [](const OpStats* r) { return r->top_level; });

  struct Offense {
    const OpStats* row;
    Dim dim;
  };
  std::vector<Offense> offenses;
  std::set<std::string> layers, offending_layers;
  std::set<std::tuple<std::string, std::string, int64_t>> seen;
  std::set<const OpStats*> timed;
  double offending_ns = 0;
  for (const OpStats* row : rows) {
    const std::vector<Dim> dims = aligned_dims(*row);
    if (dims.empty()) continue;
    const std::string layer = row->module.empty() ? row->name : row->module;
    layers.insert(layer);
    for (const Dim& d : dims) {
      if (d.value % kTensorCoreMultiple == 0 || d.value < kMinFlaggedDimension) continue;
      if (!seen.insert({layer, d.letter, d.value}).second) continue;
      offenses.push_back({row, d});
      offending_layers.insert(layer);
      if (row->top_level && timed.insert(row).second) offending_ns += t.of(*row);
    }
  }
  if (offenses.empty()) return;
  // M is usually the same batch size in every layer: the per-layer N and K come first.
  std::stable_partition(offenses.begin(), offenses.end(),
                        [](const Offense& o) { return std::string_view(o.dim.letter) != "M"; });

  const bool on_gpu = in.meta.device.rfind("cuda", 0) == 0;
  const std::string precision = reduced_precision_name(in);
  auto describe = [](const Offense& o) {
    std::string what = o.dim.letter;
    if (*o.dim.meaning != '\0') what += std::string(" (") + o.dim.meaning + ")";
    return what + " = " + std::to_string(o.dim.value);
  };
  Finding f;
  Recommendation& r = f.recommendation;
  r.id = "gemm_dims_not_multiple_of_8";
  r.severity = on_gpu ? Severity::kWarning : Severity::kInfo;
  r.title = "GEMM/conv sizes that are not multiples of 8 " +
            std::string(on_gpu ? "slow " : "would slow ") + precision + " Tensor Core kernels";
  std::string examples;
  for (size_t i = 0; i < offenses.size() && i < 3; ++i) {
    const Offense& o = offenses[i];
    examples += (i > 0 ? "; " : "") + (o.row->module.empty() ? o.row->name : o.row->module) + " " +
                describe(o);
  }
  if (offenses.size() > 3) examples += "; ...";
  r.detail =
      std::to_string(offending_layers.size()) + " of " + std::to_string(layers.size()) + " " +
      precision + " GEMM/conv layers have a dimension that is not a multiple of 8 (" + examples +
      "). " + precision +
      " Tensor Core kernels read operands in rows of 16 bytes (8 elements): with a ragged "
      "N or K (channels, for a convolution), cuBLAS (since 11) and cuDNN still use Tensor "
      "Cores, but with padding or smaller tiles, so these ops run slower; M (batch x positions) is "
      "the reduction dimension of the weight-gradient GEMM in backward. Round these sizes "
      "up to a multiple of 8 (" +
      std::to_string(offenses.front().dim.value) + " -> " +
      std::to_string(round_up(offenses.front().dim.value, kTensorCoreMultiple)) +
      "), or of 64 for the largest tiles; pad a class count or vocabulary and ignore the "
      "extra outputs; pick a batch size and sequence length (attention GEMMs take it as M, N "
      "or K) that are multiples of 8.";
  if (!on_gpu) {
    r.detail +=
        " This run was on the CPU, where alignment costs little; on a GPU these ops "
        "would run on slower Tensor Core kernels.";
  }
  for (const Offense& o : offenses) {
    if (r.evidence.size() == kMaxEvidence) break;
    r.evidence.push_back(op_label(*o.row) + " " + operand_shapes(*o.row) + ": " + describe(o) +
                         ", next multiple of 8 is " +
                         std::to_string(round_up(o.dim.value, kTensorCoreMultiple)));
  }
  f.impact = t.share(offending_ns);
  out.push_back(std::move(f));
}

std::string tensor_core_reason(const OpStats& row) {
  if (!row.tensor_core_note.empty()) return row.tensor_core_note;
  return assess(row.name, row.input_dtypes, row.input_shapes).reason;
}

void eligible_not_on_tensor_cores(const RecommendationInput& in, const OpTime& t,
                                  std::vector<Finding>& out) {
  std::vector<const OpStats*> missed;
  double gpu_total = 0;
  for (const OpStats& r : in.op_stats) {
    if (r.top_level) gpu_total += static_cast<double>(r.gpu_time_ns);
    if (r.tensor_core_eligible && r.kernels > 0 && r.tensor_core_kernels == 0) missed.push_back(&r);
  }
  if (missed.empty()) return;
  std::stable_sort(missed.begin(), missed.end(), [](const OpStats* a, const OpStats* b) {
    return a->gpu_time_ns > b->gpu_time_ns;
  });
  // Nested rows of one layer's op share its kernels: each (module, phase) counts once, at its
  // largest.
  std::map<std::pair<std::string, Phase>, double> by_layer;
  std::map<std::string, int> reasons;
  int64_t kernels = 0;
  for (const OpStats* r : missed) {
    double& ns = by_layer[{r->module.empty() ? r->name : r->module, r->phase}];
    ns = std::max(ns, static_cast<double>(r->gpu_time_ns));
    kernels += r->kernels;
    if (const std::string reason = tensor_core_reason(*r); !reason.empty()) ++reasons[reason];
  }
  double missed_ns = 0;
  for (const auto& [layer, ns] : by_layer) missed_ns += ns;
  const double share = gpu_total > 0 ? missed_ns / gpu_total : 0;

  Finding f;
  Recommendation& r = f.recommendation;
  r.id = "eligible_not_on_tensor_cores";
  r.severity = Severity::kWarning;
  r.title = "Ops that could use Tensor Cores ran on CUDA cores";
  r.detail = std::to_string(missed.size()) + " " + reduced_precision_name(in) +
             " GEMM/conv/attention op rows launched " + count(static_cast<double>(kernels)) +
             " kernels, none on Tensor Cores: " + percent(share) + " of GPU op time (" +
             duration(missed_ns / t.steps) + " per step).";
  if (!reasons.empty()) {
    const auto top =
        std::max_element(reasons.begin(), reasons.end(),
                         [](const auto& a, const auto& b) { return a.second < b.second; });
    r.detail += " The most common reason: " + top->first + ".";
  }
  r.detail += " Fix the reason given for each op (inputs in " + reduced_precision_name(in) +
              " rather than fp32, or TF32 allowed for fp32; a problem too small to fill a tile); "
              "where none is given, the library picked a CUDA-core kernel "
              "for this shape, or resources/tensor_core_kernels.txt does not know the kernel's "
              "name: check the kernel view.";
  for (const OpStats* row : missed) {
    if (r.evidence.size() == kMaxEvidence) break;
    const std::string reason = tensor_core_reason(*row);
    r.evidence.push_back(
        op_label(*row) + " (" + std::string(to_string(row->phase)) + ") " + operand_shapes(*row) +
        ": " + std::to_string(row->kernels) + " kernels, " +
        percent(gpu_total > 0 ? static_cast<double>(row->gpu_time_ns) / gpu_total : 0) +
        " of GPU time; " + (reason.empty() ? "no reason known from the shapes" : reason));
  }
  f.impact = share;
  out.push_back(std::move(f));
}

void high_cast_tax(const RecommendationInput& in, const OpTime& t, std::vector<Finding>& out) {
  double cast_ns = 0, casts = 0, cast_bytes = 0;
  std::vector<const OpStats*> payers;
  for (const OpStats& r : in.op_stats) {
    if (!r.top_level) continue;
    cast_ns += t.cast_of(r);
    casts += static_cast<double>(r.cast_calls);
    cast_bytes += static_cast<double>(r.cast_bytes);
    if (t.cast_of(r) > 0) payers.push_back(&r);
  }
  const double share = t.share(cast_ns);
  if (share <= kCastTaxShare) return;
  std::stable_sort(payers.begin(), payers.end(), [&](const OpStats* a, const OpStats* b) {
    return t.cast_of(*a) > t.cast_of(*b);
  });
  const std::string precision = reduced_precision_name(in);
  Finding f;
  Recommendation& r = f.recommendation;
  r.id = "high_cast_tax";
  r.severity = Severity::kWarning;
  r.title = "Autocast's casts take " + percent(share) + " of op time";
  r.detail = "The casts autocast inserts cost " + percent(share) + " of " +
             (t.gpu ? "GPU" : "CPU") + " op time: " + duration(cast_ns / t.steps) + " per step, " +
             count(casts / t.steps) + " casts writing " + text::bytes_text(cast_bytes / t.steps) +
             " per step. Autocast casts an fp32 weight to " + precision +
             " every time an op uses it; it caches the cast only inside one autocast region and "
             "only for leaf weights that require grad, so a weight used in several regions (one "
             "per micro-batch, or a region per layer), a frozen weight, or a non-leaf weight is "
             "cast again on every call. Keep the whole forward pass in one region, cast inputs "
             "once (in the data loader) rather than in every op, and avoid fp32 ops between "
             "lowered ops: each one costs a cast up and a cast back down.";
  for (const OpStats* row : payers) {
    if (r.evidence.size() == kMaxEvidence) break;
    r.evidence.push_back(op_label(*row) + " (" + std::string(to_string(row->phase)) +
                         "): " + count(static_cast<double>(row->cast_calls) / t.steps) +
                         " casts, " + text::bytes_text(static_cast<double>(row->cast_bytes) / t.steps) + ", " +
                         duration(t.cast_of(*row) / t.steps) + " per step (" +
                         percent(t.share(t.cast_of(*row))) + " of op time)");
  }
  f.impact = share;
  out.push_back(std::move(f));
}

// The top-level rows of one category, the most time first, and their time.
struct CategoryRows {
  double ns = 0;
  std::vector<const OpStats*> rows;
};

CategoryRows rows_of(const RecommendationInput& in, const OpTime& t, OpCategory category) {
  CategoryRows c;
  for (const OpStats& r : in.op_stats) {
    if (!r.top_level || r.category != category) continue;
    c.ns += t.of(r);
    c.rows.push_back(&r);
  }
  std::stable_sort(c.rows.begin(), c.rows.end(),
                   [&](const OpStats* a, const OpStats* b) { return t.of(*a) > t.of(*b); });
  return c;
}

void kept_fp32_share(const RecommendationInput& in, const OpTime& t, std::vector<Finding>& out) {
  const auto [kept_ns, kept] = rows_of(in, t, OpCategory::kKeptFp32);
  const double share = t.share(kept_ns);
  if (share <= kKeptFp32Share) return;
  std::string names;
  for (size_t i = 0; i < kept.size() && i < 3; ++i) {
    names += (i > 0 ? ", " : "") + std::string(op_base_name(kept[i]->name));
  }
  Finding f;
  Recommendation& r = f.recommendation;
  r.id = "kept_fp32_share";
  r.severity = Severity::kInfo;
  r.title = "Ops autocast keeps in fp32 take " + percent(share) + " of op time";
  r.detail = "Ops on autocast's fp32 list take " + percent(share) + " of op time (" +
             duration(kept_ns / t.steps) + " per step), led by " + names +
             ". Autocast runs these (softmax, log_softmax, layer_norm and other norms, losses, "
             "exp/log/pow, sums) in fp32 for accuracy, so this is usually intended. If one op "
             "dominates, look for a fused form (cross_entropy on the logits instead of "
             "log_softmax + nll_loss, fused attention instead of an explicit softmax) or for a "
             "large tensor being upcast only to be lowered again.";
  for (const OpStats* row : kept) {
    if (r.evidence.size() == kMaxEvidence) break;
    r.evidence.push_back(op_label(*row) + " (" + std::string(to_string(row->phase)) +
                         "): " + duration(t.of(*row) / t.steps) + " per step, " +
                         percent(t.share(t.of(*row))) + " of op time");
  }
  f.impact = share;
  out.push_back(std::move(f));
}

void autocast_off_share(const RecommendationInput& in, const OpTime& t, std::vector<Finding>& out) {
  const auto [off_ns, off] = rows_of(in, t, OpCategory::kAutocastOff);
  const double share = t.share(off_ns);
  if (share <= kAutocastOffShare) return;
  std::set<std::string> modules;
  for (const OpStats* row : off) modules.insert(row->module.empty() ? "(no module)" : row->module);
  std::string where;
  for (const std::string& m : modules) {
    if (where.size() > 80) {
      where += ", ...";
      break;
    }
    where += (where.empty() ? "" : ", ") + m;
  }
  Finding f;
  Recommendation& r = f.recommendation;
  r.id = "autocast_off_share";
  r.severity = Severity::kInfo;
  r.title = "Ops where the code turned autocast off take " + percent(share) + " of op time";
  r.detail = "The code turns autocast off inside its autocast region (torch.autocast(enabled=False), "
             "custom_fwd(cast_inputs=...)) in " + where + "; the ops autocast would have decided there take " +
             percent(share) + " of op time (" + duration(off_ns / t.steps) +
             " per step) and run in the precision the code gives them, fp32 as a rule. That is AMP's "
             "advice for a numerically sensitive part; if only one op there needs fp32, narrow the region "
             "to it, and autocast runs the rest (its matrix multiplies above all) in " +
             (in.meta.precision.empty() ? std::string("reduced precision") : in.meta.precision) + ".";
  for (const OpStats* row : off) {
    if (r.evidence.size() == kMaxEvidence) break;
    std::string dtypes;
    for (const DtypeName& d : row->output_dtypes)
      if (!d.empty()) dtypes += (dtypes.empty() ? "" : ",") + d;
    r.evidence.push_back(op_label(*row) + " (" + std::string(to_string(row->phase)) + ", " + dtypes +
                         "): " + duration(t.of(*row) / t.steps) + " per step, " + percent(t.share(t.of(*row))) +
                         " of op time");
  }
  f.impact = share;
  out.push_back(std::move(f));
}

void no_autocast_effect(const RecommendationInput& in, std::vector<Finding>& out) {
  if ((in.meta.precision != "fp16" && in.meta.precision != "bf16") || in.op_stats.empty()) return;
  std::vector<const OpStats*> gemms;
  for (const OpStats& r : in.op_stats) {
    if (r.category == OpCategory::kDemoted) return;
    for (const auto* dtypes : {&r.input_dtypes, &r.output_dtypes}) {
      for (const DtypeName& d : *dtypes) {
        if (is_reduced_float(d)) return;  // the model runs in reduced precision by itself
      }
    }
    if (r.top_level && is_gemm_like(r.name)) gemms.push_back(&r);
  }
  std::stable_sort(gemms.begin(), gemms.end(), [](const OpStats* a, const OpStats* b) {
    return a->cpu_time_ns > b->cpu_time_ns;
  });
  Finding f;
  Recommendation& r = f.recommendation;
  r.id = "no_autocast_effect";
  r.severity = Severity::kWarning;
  r.title = "The run asked for " + in.meta.precision + " but autocast lowered no op";
  r.detail = "The session's precision is " + in.meta.precision + ", yet none of the " +
             std::to_string(in.op_stats.size()) + " op rows ran in " + in.meta.precision +
             ": every GEMM ran in fp32, so this run measures fp32 with extra overhead. Autocast "
             "is per device type (a CUDA autocast region does nothing to CPU tensors, and the "
             "other way round), applies only to ops run inside the region, and lowers only ops "
             "on its lower-precision list. Check that the forward pass runs inside an autocast "
             "region for the device the tensors live on (" +
             in.meta.device + ").";
  for (const OpStats* row : gemms) {
    if (r.evidence.size() == kMaxEvidence) break;
    std::string dtypes;
    for (const DtypeName& d : row->input_dtypes) {
      if (!d.empty()) dtypes += (dtypes.empty() ? "" : ", ") + d;
    }
    r.evidence.push_back(op_label(*row) + ": inputs " + dtypes);
  }
  f.impact = 1.0;
  out.push_back(std::move(f));
}

// A loss scaler in a run whose gradients have fp32's exponent range (bf16 or fp32): scaling
// exists because fp16's range ends at 65504 and 2^-24, and bf16's and fp32's end near 3.4e38
// and 1.2e-38 (subnormals further). The scaler's ops then cost time and, where it reads its
// inf check back (GradScaler.step's .item(), unless the optimizer is fused), a synchronisation
// per step; the only thing it still does is skip steps whose gradients hold inf/NaN, which
// under bf16 means the values diverged, and the skip hides that.
void loss_scaler_without_fp16(const RecommendationInput& in, const OpTime& t, std::vector<Finding>& out) {
  const std::string precision = in.compute_precision();
  const bool scaler = in.meta.scaler_enabled || (in.script && in.script->scaler);
  if (!scaler || (precision != "bf16" && precision != "fp32")) return;
  double scaler_cpu_ns = 0, scaler_gpu_ns = 0, scaler_calls = 0, reads = 0, all_cpu_ns = 0;
  std::map<std::string, std::pair<double, double>> by_op;  // op -> (calls, host ns), its signatures together
  for (const OpStats& r : in.op_stats) {
    if (!r.top_level) continue;
    all_cpu_ns += static_cast<double>(r.cpu_time_ns);
    if (r.module != engine::kLossScalerModule) continue;
    scaler_cpu_ns += static_cast<double>(r.cpu_time_ns);
    scaler_gpu_ns += static_cast<double>(r.gpu_time_ns);
    scaler_calls += static_cast<double>(r.calls);
    // .item() copies the scaler's found-inf flag to the host: the CPU waits for the GPU there.
    if (op_base_name(r.name) == "item" || op_base_name(r.name) == "_local_scalar_dense")
      reads += static_cast<double>(r.calls);
    by_op[r.name].first += static_cast<double>(r.calls);
    by_op[r.name].second += static_cast<double>(r.cpu_time_ns);
  }
  std::vector<std::pair<std::string, std::pair<double, double>>> ops(by_op.begin(), by_op.end());
  std::stable_sort(ops.begin(), ops.end(),
                   [](const auto& a, const auto& b) { return a.second.second > b.second.second; });
  const bool cuda = in.meta.device.rfind("cuda", 0) == 0;
  int64_t skipped = 0;
  for (const StepRecord& s : in.steps) skipped += s.skipped ? 1 : 0;

  Finding f;
  Recommendation& r = f.recommendation;
  r.id = "loss_scaler_without_fp16";
  r.severity = Severity::kInfo;
  r.title = "A loss scaler is on, but " + precision + " gradients need no scaling";
  r.detail = "The gradients are computed in " + precision + ", which has fp32's exponent range (largest " +
             number(precision == "bf16" ? float_format(FloatFormat::bf16).max : std::numeric_limits<float>::max()) +
             "): loss scaling exists for fp16, whose range ends at 65504 and 6.0e-8, and here it only multiplies "
             "the loss and divides the gradients back.";
  if (!ops.empty()) {
    r.detail += " Its own ops took " + duration(scaler_cpu_ns / t.steps) + " of host time per step (" +
                count(scaler_calls / t.steps) + " ops, " + percent(all_cpu_ns > 0 ? scaler_cpu_ns / all_cpu_ns : 0) +
                " of op time)";
    if (t.gpu) r.detail += " and " + duration(scaler_gpu_ns / t.steps) + " of GPU time";
    r.detail += ".";
  }
  if (cuda && reads > 0) {
    r.detail += " On CUDA its step reads the inf check back with .item() (" + count(reads / t.steps) +
                " per step): the host waits for the GPU there, every step, and launches nothing meanwhile (a "
                "fused optimizer, fused=True, takes the check without it).";
  }
  r.detail += " What it still does is skip steps whose gradients hold inf or NaN" +
              (skipped > 0 ? " (" + std::to_string(skipped) + " of " + std::to_string(in.steps.size()) + " here)"
                           : std::string()) +
              "; in " + precision + " such a step means the values diverged, not that a scale was too high, and the "
              "skip hides it. " +
              (in.script ? "Drop the " + (in.script->scaler_class.empty() ? "GradScaler" : in.script->scaler_class) +
                               ", or construct it with enabled=False where the same script also trains in fp16."
                         : std::string("Leave out --scaler: the built-in loop scales only fp16 by default."));
  if (!in.steps.empty()) {
    double low = in.steps.front().loss_scale, high = low;
    for (const StepRecord& s : in.steps) low = std::min(low, s.loss_scale), high = std::max(high, s.loss_scale);
    r.evidence.push_back("loss scale " + text::loss_scale_text(low) +
                         (high > low ? " to " + text::loss_scale_text(high) : std::string()) + " over " +
                         std::to_string(in.steps.size()) + " steps, " + std::to_string(skipped) + " skipped");
  }
  for (const auto& [op, calls_and_ns] : ops) {
    if (r.evidence.size() == kMaxEvidence) break;
    r.evidence.push_back(std::string(engine::kLossScalerModule) + " " + op + ": " +
                         count(calls_and_ns.first / t.steps) + " per step, " +
                         duration(calls_and_ns.second / t.steps) + " of host time");
  }
  f.impact = all_cpu_ns > 0 ? scaler_cpu_ns / all_cpu_ns : 0;
  out.push_back(std::move(f));
}

}  // namespace

void add_op_table_findings(const RecommendationInput& input, std::vector<Finding>& out) {
  const OpTime t = op_time(input);
  no_autocast_effect(input, out);
  gemm_dims_not_multiple_of_8(input, t, out);
  eligible_not_on_tensor_cores(input, t, out);
  high_cast_tax(input, t, out);
  kept_fp32_share(input, t, out);
  autocast_off_share(input, t, out);
  loss_scaler_without_fp16(input, t, out);
}

}  // namespace ampscope::profiler::report_rules
