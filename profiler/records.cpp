#include "profiler/records.h"

#include <algorithm>

#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <ostream>
#include <string>
#include <utility>

namespace ampscope::profiler {
namespace {

constexpr std::array<std::pair<Phase, std::string_view>, 6> kPhases{{{Phase::kForward, "forward"},
                                                                     {Phase::kForwardNoGrad, "forward_no_grad"},
                                                                     {Phase::kBackward, "backward"},
                                                                     {Phase::kRecompute, "recompute"},
                                                                     {Phase::kOptimizer, "optimizer"},
                                                                     {Phase::kOther, "other"}}};
constexpr std::array<std::pair<OpCategory, std::string_view>, 9> kCategories{
    {{OpCategory::kDemoted, "demoted"},
     {OpCategory::kKeptFp32, "kept_fp32"},
     {OpCategory::kPromoted, "promoted"},
     {OpCategory::kUnchanged, "unchanged"},
     {OpCategory::kExplicitCast, "explicit_cast"},
     {OpCategory::kAutocastCast, "autocast_cast"},
     {OpCategory::kPromotionCast, "promotion_cast"},
     {OpCategory::kAutocastOff, "autocast_off"},
     {OpCategory::kShardingCast, "fsdp_cast"}}};
static_assert(kCategories.size() == kOpCategoryCount);
constexpr std::array<std::pair<ActivityKind, std::string_view>, 3> kKinds{
    {{ActivityKind::kKernel, "kernel"}, {ActivityKind::kMemcpy, "memcpy"}, {ActivityKind::kMemset, "memset"}}};
constexpr std::array<std::pair<GradientSide, std::string_view>, 3> kGradientSides{
    {{GradientSide::kInput, "input"}, {GradientSide::kOutput, "output"}, {GradientSide::kParameter, "parameter"}}};

template <typename Table, typename Enum>
std::string_view name_of(const Table& table, Enum value) {
  for (const auto& [v, name] : table)
    if (v == value) return name;
  return "unknown";
}

template <typename Enum, typename Table>
std::optional<Enum> parse(const Table& table, std::string_view text) {
  for (const auto& [v, name] : table)
    if (name == text) return v;
  return std::nullopt;
}

}  // namespace

std::string_view to_string(Phase p) { return name_of(kPhases, p); }
std::string_view to_string(OpCategory c) { return name_of(kCategories, c); }
std::string_view phase_meaning(Phase p) {
  switch (p) {
    case Phase::kForwardNoGrad:
      return "A forward pass without autograd (torch.no_grad, inference_mode): validation, inference or a "
             "frozen model. No backward follows; its calls are not the training forward's.";
    case Phase::kRecompute:
      return "Forward code run again inside the backward: by activation checkpointing (torch.utils.checkpoint, "
             "gradient_checkpointing_enable()), or in torch.compile'd code, where AOTAutograd's partitioner "
             "recomputes cheap ops rather than save their outputs. The compute paid for the activations not kept. "
             "Its ops repeat the forward's.";
    case Phase::kOther:
      return "In no phase: the script's own work outside the model's calls, the backward and the optimizer "
             "that autograd records nothing for (a batch moved to the device, metrics, .item(), a loss under "
             "no_grad), and a torch.compile'd function's first call, whose phase is known once it has run.";
    default:
      return "";
  }
}
std::string_view to_string(ActivityKind k) { return name_of(kKinds, k); }
std::string_view to_string(GradientSide s) { return name_of(kGradientSides, s); }
std::ostream& operator<<(std::ostream& os, Phase p) { return os << to_string(p); }
std::ostream& operator<<(std::ostream& os, OpCategory c) { return os << to_string(c); }
std::optional<Phase> parse_phase(std::string_view s) { return parse<Phase>(kPhases, s); }
std::optional<OpCategory> parse_category(std::string_view s) { return parse<OpCategory>(kCategories, s); }
std::optional<ActivityKind> parse_activity_kind(std::string_view s) { return parse<ActivityKind>(kKinds, s); }
std::optional<GradientSide> parse_gradient_side(std::string_view s) { return parse<GradientSide>(kGradientSides, s); }

FormatRangeShares range_shares(const GradientSample& s, FloatFormat f) {
  switch (f) {
    case FloatFormat::fp16: return {s.fp16_underflow_fraction, s.fp16_subnormal_fraction, s.fp16_overflow_fraction};
    case FloatFormat::bf16: return s.bf16;
    case FloatFormat::fp8_e4m3fn: return s.fp8_e4m3;
    case FloatFormat::fp8_e5m2: return s.fp8_e5m2;
  }
  return {};
}

void set_range_shares(GradientSample& s, FloatFormat f, const FormatRangeShares& shares) {
  switch (f) {
    case FloatFormat::fp16:
      s.fp16_underflow_fraction = shares.underflow;
      s.fp16_subnormal_fraction = shares.subnormal;
      s.fp16_overflow_fraction = shares.overflow;
      return;
    case FloatFormat::bf16: s.bf16 = shares; return;
    case FloatFormat::fp8_e4m3fn: s.fp8_e4m3 = shares; return;
    case FloatFormat::fp8_e5m2: s.fp8_e5m2 = shares; return;
  }
}

FormatRangeShares total_range_shares(const std::vector<GradientSample>& samples, FloatFormat f) {
  FormatRangeShares sum;
  double numel = 0;
  for (const GradientSample& s : samples) {
    const FormatRangeShares r = range_shares(s, f);
    const auto n = static_cast<double>(s.numel);
    sum.underflow += r.underflow * n;  // NaN (not measured) propagates
    sum.subnormal += r.subnormal * n;
    sum.overflow += r.overflow * n;
    numel += n;
  }
  if (numel == 0) return sum;
  return {sum.underflow / numel, sum.subnormal / numel, sum.overflow / numel};
}

void GradientNormSum::add(double norm, double nonfinite_fraction) {
  any_ = true;
  nonfinite_ = nonfinite_ || nonfinite_fraction > 0.0 || !std::isfinite(norm);
  squares_ += norm * norm;
}

double GradientNormSum::total() const {
  if (!any_) return std::numeric_limits<double>::quiet_NaN();
  return nonfinite_ ? std::numeric_limits<double>::infinity() : std::sqrt(squares_);
}

double total_gradient_norm(const std::vector<GradientSample>& samples) {
  GradientNormSum sum;
  for (const GradientSample& s : samples) sum.add(s.norm, s.nonfinite_fraction);
  return sum.total();
}

std::vector<const GradientSample*> nearest_fp16_edge_first(const std::vector<GradientSample>& samples,
                                                           size_t limit) {
  std::vector<const GradientSample*> order;
  order.reserve(samples.size());
  for (const GradientSample& s : samples) order.push_back(&s);
  const auto lost = [](const GradientSample* s) {
    return s->fp16_underflow_fraction + s->fp16_overflow_fraction + s->nonfinite_fraction;
  };
  std::stable_sort(order.begin(), order.end(), [&](const GradientSample* a, const GradientSample* b) {
    if (lost(a) != lost(b)) return lost(a) > lost(b);
    return a->fp16_subnormal_fraction > b->fp16_subnormal_fraction;
  });
  if (order.size() > limit) order.resize(limit);
  return order;
}

bool overflows_fp16(const ActivationSample& a) { return a.nonfinite_fraction > 0 || a.fp16.overflow > 0; }

const ActivationSample* first_fp16_overflow(const std::vector<ActivationSample>& step_samples) {
  const ActivationSample* first = nullptr;
  for (const ActivationSample& a : step_samples)
    if (overflows_fp16(a) && (first == nullptr || a.order < first->order)) first = &a;
  return first;
}

FormatRangeShares range_shares(const ActivationSample& a, FloatFormat f) {
  switch (f) {
    case FloatFormat::fp16: return a.fp16;
    case FloatFormat::bf16: return a.bf16;
    case FloatFormat::fp8_e4m3fn: return a.fp8_e4m3;
    case FloatFormat::fp8_e5m2: return a.fp8_e5m2;
  }
  return {};
}

bool is_compiled_region_op(std::string_view name) {
  return name.starts_with("Torch-Compiled Region") || name == "CompiledFunction" ||
         name == "CompiledFunctionBackward" || name.starts_with(kCompiledGraphOpPrefix);
}

CompileTime compile_time(const std::vector<OpStats>& rows) {
  CompileTime t;
  for (const OpStats& row : rows)
    if (row.name == kTorchCompileOp) {
      t.calls += row.calls;
      t.cpu_time_ns += row.cpu_time_ns;
      t.gpu_time_ns += row.gpu_time_ns;
    }
  return t;
}

namespace {

// A top-level row's time into a ledger's cell; a compiled region's is also the cell's
// movable region time (a compile inside it, its kernels' time, may leave it).
template <class Cell>
void add_row_time(Cell& cell, const OpStats& row, bool marked) {
  cell.cpu += row.cpu_time_ns;
  cell.gpu += row.gpu_time_ns;
  if (marked && is_compiled_region_op(row.name)) {
    cell.region_cpu += row.cpu_time_ns;
    cell.region_gpu += row.gpu_time_ns;
  }
}

// Takes `amount` of time out of compiled regions' rows (a compile inside a region is no
// work of the region's): from the holders' still movable region time, largest first,
// never more than a holder has. The category ledger and the phase totals both move time
// this way.
template <class Holder>
void take_from_regions(int64_t amount, const std::vector<Holder*>& holders, int64_t Holder::*time,
                       int64_t Holder::*region) {
  while (amount > 0) {
    Holder* largest = nullptr;
    for (Holder* h : holders)
      if (largest == nullptr || h->*region > largest->*region) largest = h;
    if (largest == nullptr) break;
    const int64_t taken = std::min(amount, largest->*region);
    if (taken <= 0) break;
    largest->*time -= taken;
    largest->*region -= taken;
    amount -= taken;
  }
}

// The one ledger behind category_totals() and time_by_category_and_dtype(): top-level
// time per (category, output dtype), with the compiled regions' moves done once.
struct TimeCell {
  int64_t cpu = 0, gpu = 0;
  int64_t compiled_cpu = 0, compiled_gpu = 0;  // of cpu/gpu: moved in from compiled kernels
  int64_t region_cpu = 0, region_gpu = 0;      // of cpu/gpu: compiled regions' rows, still movable
};
struct TimeLedger {
  std::map<std::pair<size_t, std::string>, TimeCell> cells;  // (category index, output dtype)
  std::array<int64_t, kOpCategoryCount> calls{}, cast_cpu{}, cast_gpu{};
};

TimeLedger time_ledger(const std::vector<OpStats>& rows, const std::vector<CompiledComputeTime>& compiled) {
  // Sessions recorded before rows were marked top-level have no mark at all: sum every row
  // then (nested ops count twice, the best such a file allows).
  const bool marked = std::any_of(rows.begin(), rows.end(), [](const OpStats& r) { return r.top_level; });
  TimeLedger ledger;
  int64_t nested_compile_cpu = 0, nested_compile_gpu = 0;  // inside a region's row
  for (const OpStats& row : rows) {
    if (row.name == kTorchCompileOp) {
      if (marked && !row.top_level) {
        nested_compile_cpu += row.cpu_time_ns;
        nested_compile_gpu += row.gpu_time_ns;
      }
      continue;
    }
    if (marked && !row.top_level) continue;
    const auto c = static_cast<size_t>(row.category);
    if (c >= kOpCategoryCount) continue;
    ledger.calls[c] += row.calls;
    ledger.cast_cpu[c] += row.cast_cpu_time_ns;
    ledger.cast_gpu[c] += row.cast_gpu_time_ns;
    TimeCell& cell = ledger.cells[{c, row.output_dtypes.empty() ? std::string() : row.output_dtypes.front()}];
    add_row_time(cell, row, marked);
  }
  std::vector<TimeCell*> holders;
  for (auto& [key, cell] : ledger.cells) holders.push_back(&cell);
  auto take = [&](int64_t amount, int64_t TimeCell::*time, int64_t TimeCell::*region) {
    take_from_regions(amount, holders, time, region);
  };
  // A compile inside a region first: it is in no category.
  take(nested_compile_cpu, &TimeCell::cpu, &TimeCell::region_cpu);
  take(nested_compile_gpu, &TimeCell::gpu, &TimeCell::region_gpu);
  // Then the kernels' time moves to what they computed. Never more than the regions
  // still hold (a file whose kernel rows outgrew its op table): each kernel's share is
  // then scaled down alike.
  auto move = [&](int64_t CompiledComputeTime::*kernel_time, int64_t TimeCell::*time,
                  int64_t TimeCell::*compiled_time, int64_t TimeCell::*region) {
    int64_t wanted = 0, held = 0;
    for (const CompiledComputeTime& k : compiled) wanted += std::max<int64_t>(k.*kernel_time, 0);
    for (const auto& [key, cell] : ledger.cells) held += cell.*region;
    const int64_t moved = std::min(wanted, held);
    if (moved <= 0) return;
    const double scale = static_cast<double>(moved) / static_cast<double>(wanted);
    int64_t given = 0;  // what the kernels' cells got, rounded down: the regions give exactly that
    for (const CompiledComputeTime& k : compiled) {
      const auto c = static_cast<size_t>(k.category);
      if (c >= kOpCategoryCount) continue;
      const auto share = static_cast<int64_t>(static_cast<double>(std::max<int64_t>(k.*kernel_time, 0)) * scale);
      TimeCell& cell = ledger.cells[{c, k.output_dtype}];
      cell.*time += share;
      cell.*compiled_time += share;
      given += share;
    }
    take(given, time, region);
  };
  move(&CompiledComputeTime::cpu_time_ns, &TimeCell::cpu, &TimeCell::compiled_cpu, &TimeCell::region_cpu);
  move(&CompiledComputeTime::gpu_time_ns, &TimeCell::gpu, &TimeCell::compiled_gpu, &TimeCell::region_gpu);
  return ledger;
}

}  // namespace

std::vector<CategoryTotals> category_totals(const std::vector<OpStats>& rows,
                                            const std::vector<CompiledComputeTime>& compiled) {
  const TimeLedger ledger = time_ledger(rows, compiled);
  std::array<CategoryTotals, kOpCategoryCount> by_category{};
  for (const auto& [key, cell] : ledger.cells) {
    CategoryTotals& t = by_category[key.first];
    t.cpu_time_ns += cell.cpu;
    t.gpu_time_ns += cell.gpu;
    t.compiled_cpu_time_ns += cell.compiled_cpu;
    t.compiled_gpu_time_ns += cell.compiled_gpu;
  }
  std::vector<CategoryTotals> totals;
  for (const auto& [category, name] : kCategories) {
    const auto c = static_cast<size_t>(category);
    CategoryTotals t = by_category[c];
    t.category = category;
    t.calls = ledger.calls[c];
    t.cast_cpu_time_ns = ledger.cast_cpu[c];
    t.cast_gpu_time_ns = ledger.cast_gpu[c];
    if (t.calls > 0 || t.cpu_time_ns > 0 || t.gpu_time_ns > 0) totals.push_back(t);
  }
  return totals;
}

std::vector<CategoryDtypeTime> time_by_category_and_dtype(const std::vector<OpStats>& rows,
                                                          const std::vector<CompiledComputeTime>& compiled) {
  std::vector<CategoryDtypeTime> out;
  for (const auto& [key, cell] : time_ledger(rows, compiled).cells)
    if (cell.cpu > 0 || cell.gpu > 0)
      out.push_back({static_cast<OpCategory>(key.first), key.second, cell.cpu, cell.gpu});
  return out;
}

namespace {

struct PhaseCell {
  int64_t calls = 0, compiled_calls = 0, cpu = 0, gpu = 0;
  int64_t region_cpu = 0, region_gpu = 0;                  // of cpu/gpu: top-level compiled regions', movable
  int64_t nested_compile_cpu = 0, nested_compile_gpu = 0;  // compiles inside a region, in this phase
};

// A compile leaves the region that held it. A region is mostly of its compile's phase, but
// one entered outside any phase (a compiled function called at the top level) may hold a
// compile whose phase was opened inside it (a compiled optimizer step's): what the
// compile's own phase's regions do not hold is taken from the other phases' regions.
void take_compiles_from_regions(std::vector<PhaseCell*>& cells, int64_t PhaseCell::*nested, int64_t PhaseCell::*time,
                                int64_t PhaseCell::*region) {
  int64_t left = 0;
  for (PhaseCell* c : cells) {
    const int64_t own = std::min(c->*nested, c->*region);
    c->*time -= own;
    c->*region -= own;
    left += c->*nested - own;
  }
  take_from_regions(left, cells, time, region);
}

}  // namespace

std::vector<PhaseTotals> phase_totals(const std::vector<OpStats>& rows) {
  const bool marked = std::any_of(rows.begin(), rows.end(), [](const OpStats& r) { return r.top_level; });
  std::array<PhaseCell, kPhases.size()> by_phase{};
  for (const OpStats& row : rows) {
    const auto p = static_cast<size_t>(row.phase);
    if (p >= by_phase.size()) continue;
    PhaseCell& cell = by_phase[p];
    if (row.name == kTorchCompileOp) {
      if (marked && !row.top_level) {  // inside a region's row
        cell.nested_compile_cpu += row.cpu_time_ns;
        cell.nested_compile_gpu += row.gpu_time_ns;
      }
      continue;
    }
    if (marked && !row.top_level) continue;
    cell.calls += row.calls;
    if (row.compiled) cell.compiled_calls += row.calls;
    add_row_time(cell, row, marked);
  }
  std::vector<PhaseCell*> cells;
  for (PhaseCell& c : by_phase) cells.push_back(&c);
  take_compiles_from_regions(cells, &PhaseCell::nested_compile_cpu, &PhaseCell::cpu, &PhaseCell::region_cpu);
  take_compiles_from_regions(cells, &PhaseCell::nested_compile_gpu, &PhaseCell::gpu, &PhaseCell::region_gpu);
  std::vector<PhaseTotals> totals;
  for (const auto& [phase, name] : kPhases) {
    const PhaseCell& c = by_phase[static_cast<size_t>(phase)];
    if (c.calls == 0) continue;
    totals.push_back({phase, c.calls, std::max<int64_t>(c.cpu, 0), std::max<int64_t>(c.gpu, 0), c.compiled_calls});
  }
  return totals;
}

int64_t compiled_time_ns(const std::vector<CategoryTotals>& totals, bool gpu) {
  int64_t sum = 0;
  for (const CategoryTotals& t : totals) sum += gpu ? t.compiled_gpu_time_ns : t.compiled_cpu_time_ns;
  return sum;
}

}  // namespace ampscope::profiler
