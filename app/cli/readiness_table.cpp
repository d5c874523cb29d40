#include "app/cli/readiness_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string>
#include <vector>

namespace ampscope::cli {
namespace {

constexpr std::array<profiler::QuantTarget, profiler::kQuantTargetCount> kTargets{
    profiler::QuantTarget::fp8, profiler::QuantTarget::mxfp8, profiler::QuantTarget::nvfp4};

// "ready 31.5 dB", "keep 26% flushed (input)": the verdict, what decided it, and,
// where it is not ready, which tensor.
std::string cell(const profiler::LayerReadiness& layer, profiler::QuantTarget target) {
  const profiler::ReadinessReason why = profiler::target_reason(layer, target);
  if (!why.metrics) return "-";
  std::string text = fmt::format("{} {}", profiler::readiness_key(why.verdict), profiler::describe_metric(why.metric, why.value));
  if (why.verdict != profiler::Readiness::ready) text += fmt::format(" ({})", profiler::tensor_role_name(why.tensor));
  return text;
}

}  // namespace

void print_readiness(std::FILE* out, const profiler::ReadinessTotals& totals) {
  if (totals.empty()) return;
  const std::vector<profiler::LayerReadiness> layers = totals.layers();
  // Every cell first, for the column widths.
  std::vector<std::array<std::string, 1 + profiler::kQuantTargetCount>> rows;
  std::array<size_t, 1 + profiler::kQuantTargetCount> width{5, 3, 5, 5};
  for (const auto& l : layers) {
    auto& row = rows.emplace_back();
    // A long module path keeps its end, which tells the layers apart.
    row[0] = l.layer.size() > 48 ? ".." + l.layer.substr(l.layer.size() - 46) : l.layer;
    for (size_t t = 0; t < kTargets.size(); ++t) row[t + 1] = cell(l, kTargets[t]);
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  fmt::print(out, "\nPrecision readiness per layer ({} sampled step{}; the worst metric over the layer's tensors)\n",
             totals.sampled_steps(), totals.sampled_steps() == 1 ? "" : "s");
  const auto print_row = [&](const auto& cells) {
    fmt::print(out, "  {:<{}}  {:<{}}  {:<{}}  {}\n", cells[0], width[0], cells[1], width[1], cells[2], width[2], cells[3]);
  };
  print_row(std::array<std::string, 4>{"layer", "FP8", "MXFP8", "NVFP4"});
  for (const auto& row : rows) print_row(row);
  fmt::print(out, "  ready / borderline / keep (in bf16). FP8: the best of fp8 e4m3 and e5m2, tensorwise and rowwise\n"
                  "  (torchao's recipes); MXFP8: e4m3 in 32-blocks; NVFP4: e2m1 in 16-blocks.\n");
  fmt::print(out, "  measured: {}\n", profiler::describe_measured_tensors(totals.roles()));
  fmt::print(out, "  thresholds, per element format:\n");
  for (profiler::QuantElement e : profiler::kQuantElements)
    fmt::print(out, "    {}\n", profiler::describe_thresholds(e));
}

}  // namespace ampscope::cli
