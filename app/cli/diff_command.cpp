#include "app/cli/diff_command.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>


#include "profiler/analysis/eager_vs_compiled.h"
#include "app/cli/output_path.h"
#include "profiler/report/html_diff.h"
#include "profiler/store/session_diff.h"

namespace ampscope::cli {
namespace {

nlohmann::json side_json(const profiler::PrecisionSide& s) {
  if (!s.present) return nullptr;
  return {{"operand_dtypes", s.operand_dtypes},
          {"output_dtypes", s.output_dtypes},
          {"calls", s.calls},
          {"autocast", profiler::to_string(s.decision)}};
}

std::string ms(double v) { return v > 0 ? fmt::format("{:.3f} ms", v) : "-"; }

std::string ratio(double eager, double compiled) {
  return eager > 0 && compiled > 0 ? fmt::format("{:.2f}x", eager / compiled) : "";
}

void print_text(const profiler::EagerVsCompiled& d, const std::string& eager, const std::string& compiled) {
  fmt::print("eager     {}\ncompiled  {}\n", eager, compiled);
  if (!d.compiled_run_has_graphs)
    fmt::print("note: the second session holds no op read from a compiled graph (was it run under torch.compile, "
               "through `ampscope run`?)\n");
  fmt::print("\nstep time  eager {}  compiled {}", ms(d.eager_step_ms), ms(d.compiled_step_ms));
  if (const auto s = d.speedup()) fmt::print("  ({:.2f}x)", *s);
  fmt::print("\n\nPer step, by phase (median over the recorded steps of the time inside outermost recorded ops; "
             "CPU, and GPU where traced):\n");
  fmt::print("  {:<10} {:>14} {:>14} {:>8}   {:>14} {:>14}\n", "phase", "eager CPU", "compiled CPU", "", "eager GPU",
             "compiled GPU");
  for (const auto& p : d.phases)
    fmt::print("  {:<10} {:>14} {:>14} {:>8}   {:>14} {:>14}\n", profiler::to_string(p.phase), ms(p.eager_cpu_ms),
               ms(p.compiled_cpu_ms), ratio(p.eager_cpu_ms, p.compiled_cpu_ms), ms(p.eager_gpu_ms),
               ms(p.compiled_gpu_ms));
  if (!d.regions.empty()) {
    fmt::print("\nCompiled regions (CPU time of the median call; the first recorded call apart, which compiled when "
               "it was the run's first):\n");
    for (const auto& r : d.regions)
      fmt::print("  {:<34} {:<9} {:>6} calls  median {:>12}  first {:>12}\n", r.name, profiler::to_string(r.phase),
                 r.calls, ms(r.median_ms), ms(r.first_call_ms));
  }
  fmt::print("\nPrecision per module (operand dtypes -> output dtypes; autocast's decision): {} same, {} differ, "
             "{} eager only, {} compiled only\n",
             d.same, d.differs, d.eager_only, d.compiled_only);
  fmt::print("  {:<28} {:<9} {:<12} {:<34} {:<34} {}\n", "module", "phase", "kind", "eager", "compiled", "");
  for (const auto& m : d.modules)
    fmt::print("  {:<28} {:<9} {:<12} {:<34} {:<34} {}\n", m.module.empty() ? "(no module)" : m.module,
               profiler::to_string(m.phase), m.kind, profiler::precision_side_text(m.eager),
               profiler::precision_side_text(m.compiled), profiler::to_string(m.agreement));
}

nlohmann::json to_json(const profiler::EagerVsCompiled& d, const std::string& eager, const std::string& compiled) {
  nlohmann::json j;
  j["eager"] = eager;
  j["compiled"] = compiled;
  j["compiled_run_has_graphs"] = d.compiled_run_has_graphs;
  j["eager_step_ms"] = d.eager_step_ms;
  j["compiled_step_ms"] = d.compiled_step_ms;
  j["speedup"] = d.speedup() ? nlohmann::json(*d.speedup()) : nlohmann::json(nullptr);
  j["agreement"] = {{"same", d.same}, {"differs", d.differs}, {"eager_only", d.eager_only},
                    {"compiled_only", d.compiled_only}};
  for (const auto& p : d.phases)
    j["phases"].push_back({{"phase", profiler::to_string(p.phase)},
                           {"eager_cpu_ms", p.eager_cpu_ms},
                           {"compiled_cpu_ms", p.compiled_cpu_ms},
                           {"eager_gpu_ms", p.eager_gpu_ms},
                           {"compiled_gpu_ms", p.compiled_gpu_ms}});
  for (const auto& r : d.regions)
    j["regions"].push_back({{"name", r.name},
                            {"phase", profiler::to_string(r.phase)},
                            {"calls", r.calls},
                            {"median_cpu_ms", r.median_ms},
                            {"first_call_cpu_ms", r.first_call_ms}});
  for (const auto& m : d.modules)
    j["modules"].push_back({{"module", m.module},
                            {"phase", profiler::to_string(m.phase)},
                            {"kind", m.kind},
                            {"eager", side_json(m.eager)},
                            {"compiled", side_json(m.compiled)},
                            {"agreement", profiler::to_string(m.agreement)}});
  return j;
}

}  // namespace

DiffCommand::DiffCommand(CLI::App& parent) {
  command_ = parent.add_subcommand(
      "diff",
      "Set an eager and a torch.compile'd run of the same model side by side: per module, the dtypes autocast ran "
      "its GEMMs, convolutions and attention in; step, phase and compiled-region time");
  command_->add_option("eager", eager_, "The eager run's .ampscope session")->required();
  command_->add_option("compiled", compiled_, "The compiled run's .ampscope session")->required();
  command_->add_flag("--json", json_, "Print JSON instead of text");
  command_->add_option("--html", html_, "Also write the comparison as a self-contained HTML page to this file");
  command_->add_flag("--force", force_, "Overwrite the --html file if it exists");
}

int DiffCommand::run() {
  // Refused before the work, as `report` does: a typo costs nothing and overwrites nothing.
  if (!html_.empty()) check_output_file("--html", html_, force_, {eager_, compiled_});
  const profiler::EagerVsCompiled d = profiler::diff_sessions(eager_, compiled_);
  if (!html_.empty()) profiler::write_diff_html(d, eager_, compiled_, html_);
  if (json_) fmt::print("{}\n", to_json(d, eager_, compiled_).dump(2));
  else print_text(d, eager_, compiled_);
  return 0;
}

}  // namespace ampscope::cli
