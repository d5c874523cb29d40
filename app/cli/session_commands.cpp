#include "app/cli/session_commands.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <tuple>

#include "app/cli/comparison_table.h"
#include "app/cli/message_excerpt.h"
#include "app/cli/output_path.h"
#include "app/cli/rank_summary.h"
#include "app/cli/readiness_table.h"
#include "engine/errors.h"
#include "profiler/analysis/activation_coverage.h"
#include "profiler/analysis/compiled_kernels_text.h"
#include "profiler/memory_kind.h"
#include "profiler/recording_health.h"
#include "profiler/report/file_export.h"
#include "profiler/report/findings.h"
#include "profiler/report/report_format.h"
#include "profiler/script_facts.h"
#include "profiler/session_meta_keys.h"
#include "profiler/store/comparison_store.h"
#include "profiler/store/session_reader.h"
#include "profiler/analysis/loss_scale_window.h"
#include "profiler/store/session_view.h"

namespace ampscope::cli {
namespace {

std::string strip_extension(const std::string& path) {
  const auto dot = path.rfind('.');
  const auto slash = path.rfind('/');
  return dot == std::string::npos || (slash != std::string::npos && dot < slash) ? path : path.substr(0, dot);
}

// The CSV tables' prefix: --out as given, less a ".csv" a user types out of habit (run.csv:
// run.ops.csv, not run.csv.ops.csv); in a directory, the session's name; next to the session.
std::string csv_prefix(const std::string& out, const std::string& session) {
  if (out.empty()) return strip_extension(session);
  if (out.back() == '/' || std::filesystem::is_directory(out))
    return (std::filesystem::path(out) / std::filesystem::path(strip_extension(session)).filename()).string();
  if (out.ends_with(".csv")) return out.substr(0, out.size() - 4);
  return out;
}

std::string ms(int64_t ns) { return fmt::format("{:.3f}", static_cast<double>(ns) / 1e6); }

// A module path past this many columns keeps its tail, the most specific part
// ("…h.11.attn.c_attn"), so that one deep path does not widen every row.
constexpr size_t kModuleColumnMax = 40;

std::string module_cell(const std::string& module) {
  if (module.empty()) return "-";
  if (profiler::text::display_width(module) <= kModuleColumnMax) return module;
  return "\u2026" + module.substr(module.size() - (kModuleColumnMax - 1));  // paths are ASCII
}

// Pads to `width` terminal columns (fmt's own width counts bytes on some fmt versions).
std::string padded(const std::string& s, size_t width) {
  const size_t w = profiler::text::display_width(s);
  return w >= width ? s : s + std::string(width - w, ' ');
}

// Op rows of one category, columns as wide as what they hold: names and dtypes are
// never cut (a reader must be able to search for what they see). The input shapes tell
// apart rows that read alike otherwise: a Linear's two backward matrix multiplies.
// `times`: CPU ms, and GPU ms where `gpu` (no column of zeros where nothing was traced).
void print_op_rows(const std::vector<const profiler::OpStats*>& list, size_t top, const char* indent, bool times,
                   bool gpu = false) {
  const size_t shown = std::min(list.size(), top);
  size_t name_width = 2, module_width = 6, phase_width = 9, dtype_width = 15, shapes_width = 12;
  std::vector<std::string> dtypes(shown), shapes(shown);
  for (size_t i = 0; i < shown; ++i) {
    dtypes[i] = profiler::text::dtype_flow_text(list[i]->input_dtypes, list[i]->output_dtypes);
    shapes[i] = profiler::text::shapes_text(list[i]->input_shapes);
    name_width = std::max(name_width, profiler::text::display_width(list[i]->name));
    module_width = std::max(module_width, profiler::text::display_width(module_cell(list[i]->module)));
    phase_width = std::max(phase_width, profiler::to_string(list[i]->phase).size());  // forward_no_grad
    dtype_width = std::max(dtype_width, profiler::text::display_width(dtypes[i]));
    shapes_width = std::max(shapes_width, profiler::text::display_width(shapes[i]));
  }
  const auto line = [&](std::string text) {
    while (!text.empty() && text.back() == ' ') text.pop_back();
    fmt::print("{}\n", text);
  };
  line(fmt::format("{}{} {} {} {} {:>7}{}  {}", indent, padded("op", name_width), padded("module", module_width),
                   padded("phase", phase_width), padded("in \u2192 out dtypes", dtype_width), "calls",
                   times ? fmt::format(" {:>10}{}", "CPU ms", gpu ? fmt::format(" {:>10}", "GPU ms") : "") : "",
                   "input shapes"));
  for (size_t i = 0; i < shown; ++i) {
    const auto& r = *list[i];
    line(fmt::format("{}{} {} {} {} {:>7}{}  {}{}", indent, padded(r.name, name_width),
                     padded(module_cell(r.module), module_width),
                     padded(std::string(profiler::to_string(r.phase)), phase_width),
                     padded(dtypes[i], dtype_width), r.calls,
                     times ? fmt::format(" {:>10}{}", ms(r.cpu_time_ns),
                                         gpu ? fmt::format(" {:>10}", ms(r.gpu_time_ns)) : "")
                           : "",
                     padded(shapes[i], shapes_width),
                     r.tensor_core_note.empty() ? "" : "  [" + r.tensor_core_note + "]"));
  }
}

}  // namespace

ExportCommand::ExportCommand(CLI::App& parent) {
  command_ = parent.add_subcommand(
      "export", "Export a session: Chrome/Perfetto trace, CSV tables, a JSON summary or TensorBoard events (a "
                "precision comparison: its JSON summary or CSV tables)");
  command_->add_option("session", session_, "The .ampscope session file")->required();
  command_->add_option("--format,-f", format_, "chrome | csv | json | tensorboard")
      ->check(CLI::IsMember({"chrome", "csv", "json", "tensorboard"}))->capture_default_str();
  command_->add_option("--out,-o", out_,
                       "Output file (csv: a prefix for <prefix>.ops.csv, .kernels.csv, .steps.csv, .gradients.csv, "
                       "a comparison's .variants.csv, .ops.csv, .steps.csv, or a directory; "
                       "tensorboard: a log directory); default: next to the session");
  command_->add_flag("--force", force_, "Overwrite the output files if they exist");
  command_->add_option("--first-step", first_step_, "chrome: the first step to include (0 = all)");
  command_->add_option("--last-step", last_step_, "chrome: the last step to include (0 = all)");
}

void warn_if_incomplete(const std::string& session, const profiler::RecordingHealth& health) {
  if (const std::string lost = profiler::describe(health); !lost.empty())
    fmt::print(stderr, "ampscope: warning: '{}': {}\n", session, lost);
  if (const std::string going = profiler::in_progress(health); !going.empty())
    fmt::print(stderr, "ampscope: note: '{}': {}\n", session, going);
}

int ExportCommand::run() {
  if (first_step_ > 0 && last_step_ > 0 && first_step_ > last_step_)
    throw engine::ConfigError(fmt::format("--first-step {} is after --last-step {}; swap them", first_step_, last_step_));
  const profiler::ExportFormat format = *profiler::export_format_named(format_);  // CLI11 checked the name
  const std::string base = format_ == "csv" ? csv_prefix(out_, session_) : strip_extension(session_);
  const std::string target = format == profiler::ExportFormat::kCsv ? base
                             : !out_.empty()                         ? out_
                             : format == profiler::ExportFormat::kChromeTrace ? base + ".trace.json"
                             : format == profiler::ExportFormat::kJson        ? base + ".summary.json"
                                                                               : base + ".tensorboard";
  // Checked before the session is opened: see profiler::is_live_session.
  const std::string out_flag = out_.empty() ? "the output next to the session" : "--out";
  const bool comparison = profiler::is_comparison_file(session_);
  if (const std::string why = comparison ? profiler::comparison_export_refusal(session_, format) : "";
      !why.empty())
    throw engine::ConfigError(why + " (ampscope report)");
  for (const std::string& path : profiler::export_outputs(format, comparison, target)) {
    if (format == profiler::ExportFormat::kTensorBoard) check_output_directory(out_flag, path);
    else check_output_file(out_flag, path, force_, {session_});
  }
  if (!comparison)
    warn_if_incomplete(session_,
                       profiler::recording_health_from_meta(profiler::SessionReader::open(session_).meta_values()));
  fmt::print("{}\n", profiler::export_recorded_file(session_, format, target, {first_step_, last_step_}));
  return 0;
}

namespace {

// The loss scale each step's backward used, as runs of equal scale: "65536 (1-3) 32768 (4) ...".
void print_scale_history(const std::vector<profiler::StepRecord>& steps) {
  std::vector<std::tuple<double, int64_t, int64_t>> runs;
  for (const auto& s : steps) {
    if (!runs.empty() && std::get<0>(runs.back()) == s.loss_scale) std::get<2>(runs.back()) = s.step;
    else runs.emplace_back(s.loss_scale, s.step, s.step);
  }
  if (runs.size() < 2) return;
  constexpr size_t kShown = 12;
  std::string text;
  for (size_t i = 0; i < runs.size() && i < kShown; ++i) {
    const auto& [scale, first, last] = runs[i];
    const std::string shown = profiler::text::loss_scale_text(scale);
    text += first == last ? fmt::format(" {} ({})", shown, first) : fmt::format(" {} ({}-{})", shown, first, last);
  }
  if (runs.size() > kShown) text += fmt::format(" ... {} changes in all", runs.size() - 1);
  fmt::print("  loss scale by step{}\n", text);
}

// Sessions of Python training loops: GradScaler's decision per optimizer.
void print_optimizer_steps(const std::vector<profiler::OptimizerStepRecord>& rows, bool scaler) {
  if (rows.empty()) return;
  struct PerOptimizer {
    std::string name;
    int64_t steps = 0, stepped = 0, skipped = 0, unscale_calls = 0;
    std::vector<int64_t> skipped_steps;
  };
  std::map<int32_t, PerOptimizer> by_optimizer;
  std::map<int64_t, std::pair<int, int>> per_step;  // step -> (skipped, not skipped)
  for (const auto& r : rows) {
    PerOptimizer& o = by_optimizer[r.optimizer];
    o.name = r.name;
    ++o.steps;
    o.stepped += r.stepped;
    o.unscale_calls += r.unscale_calls;
    if (r.skipped) {
      ++o.skipped;
      o.skipped_steps.push_back(r.step);
    }
    (r.skipped ? per_step[r.step].first : per_step[r.step].second) += 1;
  }
  fmt::print("\nOptimizers ({})\n",
             scaler ? "GradScaler's decision per optimizer" : "no GradScaler: every step() call stepped");
  for (const auto& [index, o] : by_optimizer) {
    std::string skipped_list;
    for (size_t i = 0; i < o.skipped_steps.size() && i < 10; ++i)
      skipped_list += (i ? "," : "") + std::to_string(o.skipped_steps[i]);
    if (o.skipped_steps.size() > 10) skipped_list += ",...";
    fmt::print("  {} {:<12} steps {:>6}   stepped {:>6}   skipped {:>4}{}   unscale_ calls {}\n", index, o.name,
               o.steps, o.stepped, o.skipped, skipped_list.empty() ? "" : " (steps " + skipped_list + ")",
               o.unscale_calls);
  }
  int64_t split = 0;
  for (const auto& [step, counts] : per_step) split += counts.first > 0 && counts.second > 0;
  if (by_optimizer.size() > 1)
    fmt::print("  steps where one optimizer skipped and another stepped: {}\n", split);
}

// LR schedulers of a Python loop: each against the optimizer steps GradScaler skipped,
// with the fix when one advanced after them.
void print_schedulers(const std::vector<profiler::SchedulerSummary>& schedulers) {
  if (schedulers.empty()) return;
  fmt::print("\nLR schedulers (lr_scheduler.step() calls)\n");
  bool drifts = false;
  for (const auto& s : schedulers) {
    fmt::print("  {}{}\n", s.drifts() ? "WARNING " : "", profiler::scheduler_text(s));
    drifts |= s.drifts();
  }
  if (drifts) fmt::print("  fix: {}\n", profiler::kSchedulerFix);
}

// Time inside the compiled graphs: per graph call, its kernels (inductor's fused
// ones with the graph ops each computes, extern GEMMs and convolutions as the ATen
// ops they are) by time, and the share of the graphs' time they cover.
void print_compiled_kernels(const profiler::SessionView& session, size_t top) {
  const auto& rows = session.compile.kernels;
  if (rows.empty()) return;
  const profiler::CompiledTimeShare share = profiler::compiled_time_share(rows);
  fmt::print("  time inside compiled graphs: {} ms CPU{} on profiled steps; {}\n", ms(share.graph_ns),
             share.gpu_graph_ns > 0 ? fmt::format(" and {} ms GPU", ms(share.gpu_graph_ns)) : "",
             profiler::compiled_share_text(share));
  // On a GPU the kernels are ranked, and shown, by their GPU time (CPU time beside it).
  const bool gpu = share.gpu_graph_ns > 0;
  for (size_t i = 0; i < rows.size();) {
    const auto& whole = rows[i];
    std::vector<const profiler::CompiledKernelRow*> calls;
    for (++i; i < rows.size() && rows[i].kind != profiler::kCompiledGraphCall; ++i) calls.push_back(&rows[i]);
    fmt::print("    graph {} ({}): {} ms in {} calls{}\n", whole.graph, profiler::to_string(whole.phase),
               ms(whole.cpu_time_ns), whole.calls,
               gpu ? fmt::format("; GPU {} ms in {} kernels", ms(whole.gpu_time_ns), whole.kernels) : "");
    const auto time = [&](const profiler::CompiledKernelRow* r) { return gpu ? r->gpu_time_ns : r->cpu_time_ns; };
    std::stable_sort(calls.begin(), calls.end(), [&](auto* a, auto* b) { return time(a) > time(b); });
    for (size_t k = 0; k < calls.size() && k < top; ++k) {
      const auto& r = *calls[k];
      const std::string ops = r.kind == profiler::kCompiledOtherCall ? "" : profiler::fused_ops_text(r);
      const std::string gpu_time = !gpu              ? ""
                                   : r.kernels == 0 ? fmt::format(" CPU {:>12}    ", "-")
                                                    : fmt::format(" CPU {:>12} GPU", ms(r.gpu_time_ns) + " ms");
      const std::string tensor_cores =
          r.tensor_core_kernels > 0 ? fmt::format(" (Tensor Cores {}/{})", r.tensor_core_kernels, r.kernels) : "";
      fmt::print("      {:>9} ms{} {:>5}x  {:<6} {}{}\n", ms(r.cpu_time_ns), gpu_time, r.calls, r.kind,
                 profiler::compiled_call_text(r), tensor_cores);
      if (!ops.empty()) fmt::print("{:{}}{}\n", "", gpu ? 47 : 26, ops);
    }
    if (calls.size() > top) fmt::print("      ... {} more\n", calls.size() - top);
  }
}

// torch.compile'd code: the ops of its graphs (op table rows marked compiled), which
// have calls but no time of their own, then the time of inductor's kernels, then
// dynamo's graph breaks and recompilations.
void print_compiled(const profiler::SessionView& session, size_t top) {
  const profiler::CompileEvents& compile = session.compile;
  std::map<profiler::OpCategory, std::vector<const profiler::OpStats*>> by_category;
  for (const auto& r : session.op_stats)
    if (r.compiled) by_category[r.category].push_back(&r);
  if (!compile.any() && by_category.empty()) return;
  if (compile.graphs == 0 && by_category.empty())
    fmt::print("\nCompiled (torch.compile): {}\n", profiler::graphs_read_text(compile.graphs));
  else
    fmt::print("\nCompiled (torch.compile): {}; ops of their forward and backward graphs as autocast traced them, "
               "calls on profiled steps ({});\n  autocast's casts are graph ops of their own, so a demoted op's "
               "inputs show the dtype they were cast to\n",
               profiler::graphs_read_text(compile.graphs),
               compile.kernels.empty() ? "no per-op time: the compiled code fuses them"
                                       : "no per-op time: the compiled code fuses them; time per kernel below");
  for (auto& [category, list] : by_category) {
    std::stable_sort(list.begin(), list.end(), [](auto* a, auto* b) { return a->calls > b->calls; });
    fmt::print("  compiled {} ({} signature{})\n", profiler::to_string(category), list.size(),
               list.size() == 1 ? "" : "s");
    print_op_rows(list, top, "    ", /*times=*/false);
  }
  print_compiled_kernels(session, top);
  fmt::print("  graph breaks: {}\n", compile.graph_breaks.empty() ? "none" : "");
  for (const auto& b : compile.graph_breaks) fmt::print("    {} ({}x): {}\n", b.where, b.count, b.reason);
  fmt::print("  recompilations: {}\n", compile.recompilations.empty() ? "none" : "");
  for (const auto& r : compile.recompilations) fmt::print("    {}: {}\n", r.frame, r.reason);
  if (const std::string eager = profiler::ran_eagerly_text(compile.ran_eagerly); !eager.empty())
    fmt::print("  {}\n", profiler::report_detail::capitalized(eager));
}

// The parameters a cast to fp16 loses most of (records.h's one ranking), those with anything
// outside fp16's normal range only: the totals above do not say where to look.
// FSDP's and tensor parallel's range samples are the rank's shards of the gradients.
bool sharded_session(const profiler::SessionView& session) {
  const auto facts = profiler::script_facts(session.meta_values);
  return facts && facts->sharded_parameters > 0;
}

void print_nearest_fp16_edge(const std::vector<profiler::GradientSample>& gradients) {
  constexpr size_t kShown = 5;
  std::vector<const profiler::GradientSample*> shown;
  for (const profiler::GradientSample* g : profiler::nearest_fp16_edge_first(gradients, kShown))
    if (g->fp16_underflow_fraction + g->fp16_subnormal_fraction + g->fp16_overflow_fraction +
            g->nonfinite_fraction > 0)
      shown.push_back(g);
  if (shown.empty()) {
    fmt::print("  every parameter's gradient is inside fp16's normal range at this scale\n");
    return;
  }
  fmt::print("  {} {:>11} {:>11} {:>11} {:>11}\n", padded("parameters, nearest fp16's edge first", 42), "to zero",
             "subnormal", "overflow", "inf/NaN");
  for (const profiler::GradientSample* g : shown)
    fmt::print("    {} {:>10.3f}% {:>10.3f}% {:>10.3f}% {:>10.3f}%\n", padded(g->parameter, 40),
               100 * g->fp16_underflow_fraction, 100 * g->fp16_subnormal_fraction, 100 * g->fp16_overflow_fraction,
               100 * g->nonfinite_fraction);
}

}  // namespace

SummaryCommand::SummaryCommand(CLI::App& parent) {
  command_ = parent.add_subcommand("summary", "Print a session's op table by autocast category, kernels and loss scale");
  command_->add_option("session", sessions_,
                       "The .ampscope session file; several (one per rank under torchrun) are compared by rank")
      ->required();
  // Not CLI::NonNegativeNumber: its message spells out the largest double (300 digits).
  const CLI::Validator not_negative(
      [](std::string& value) -> std::string {
        return !value.empty() && value.front() == '-' ? "must be 0 or more, got " + message_excerpt(value) : "";
      },
      "", "not negative");
  command_->add_option("--top", top_, "Ops shown per category")->check(not_negative)->capture_default_str();
}

int SummaryCommand::run() {
  if (sessions_.size() > 1) return print_rank_summary(sessions_);
  profiler::SessionViewOptions options;
  options.top_kernels = top_;
  options.gradient_summaries = 0;
  profiler::RecordedFile file = profiler::open_recorded_file(sessions_.front(), options);
  if (file.comparison) {
    print_comparison(stdout, *file.comparison, top_);
    return 0;
  }
  const profiler::SessionView& session = *file.session;
  const auto& meta = session.meta;
  if (const auto facts = profiler::script_facts(session.meta_values)) {
    // A Python script's session: its own facts, not a built-in run's model and data.
    fmt::print("{}\n", sessions_.front());
    for (const auto& [label, value] : profiler::fact_rows(*facts)) fmt::print("  {:<13} {}\n", label, value);
    fmt::print("  GPU trace     {}\n", meta.gpu_tracing);
  } else {
    fmt::print("{}\n  model     {}\n  data      {}\n  device    {}   precision {}{}\n  GPU trace {}\n",
               sessions_.front(), meta.model, meta.data, meta.device, meta.precision,
               meta.scaler_enabled ? " + loss scaler" : "", meta.gpu_tracing);
  }
  if (!meta.cpu_isa.empty()) {
    auto path = [](const std::string& p) {
      return p == profiler::kCpuMatmulOneDnn ? "oneDNN" : p == profiler::kCpuMatmulFallback ? "ATen fallback" : "?";
    };
    fmt::print("  CPU       vector ISA {}; bf16 matmul: {}, fp16 matmul: {}\n", meta.cpu_isa,
               path(meta.cpu_bf16_matmul), path(meta.cpu_fp16_matmul));
  }

  const auto& steps = session.steps;
  if (!steps.empty()) {
    int64_t skipped = 0;
    double min_scale = steps.front().loss_scale, max_scale = min_scale;
    for (const auto& s : steps) {
      skipped += s.skipped;
      min_scale = std::min(min_scale, s.loss_scale);
      max_scale = std::max(max_scale, s.loss_scale);
    }
    if (meta.scaler_enabled)
      fmt::print("  steps     {}   loss {:.4f} -> {:.4f}   skipped {}   loss scale {} .. {} (last {})\n", steps.size(),
                 steps.front().loss, steps.back().loss, skipped, profiler::text::loss_scale_text(min_scale),
                 profiler::text::loss_scale_text(max_scale), profiler::text::loss_scale_text(steps.back().loss_scale));
    else  // no scaler: a scale of 1 read as one, and nothing skips
      fmt::print("  steps     {}   loss {:.4f} -> {:.4f}   no loss scaling\n", steps.size(), steps.front().loss,
                 steps.back().loss);
    fmt::print("  step time {}\n", profiler::report_detail::step_timing_text(session.step_timing));
    if (session.memory_peak.peak_bytes > 0)
      fmt::print("  {} {}\n", profiler::peak_memory_name(profiler::memory_kind(meta.device)),
                 profiler::report_detail::memory_peak_text(session.memory_peak));
    if (!session.range_sampling.empty()) fmt::print("  range samples {}\n", session.range_sampling);
    if (session.range_sample_phases) fmt::print("            {}\n", session.range_sample_phases->describe());
    if (const auto last_eval = std::find_if(steps.rbegin(), steps.rend(), profiler::has_eval_loss);
        last_eval != steps.rend())
      fmt::print("  eval      loss {:.4f} after step {} ({} validations)\n", last_eval->eval_loss, last_eval->step,
                 std::count_if(steps.begin(), steps.end(), profiler::has_eval_loss));
    print_scale_history(steps);
  }
  print_optimizer_steps(session.optimizer_steps, meta.scaler_enabled);
  print_schedulers(session.schedulers);
  // What the recording lost (dropped batches, a failed write, a killed run): never silent.
  if (const std::string lost = profiler::describe(session.health); !lost.empty()) fmt::print("  lost      {}\n", lost);
  if (const std::string going = profiler::in_progress(session.health); !going.empty())
    fmt::print("  recording {}\n", going);

  const auto& rows = session.op_stats;
  const auto& totals = session.category_totals;
  int64_t all_cpu = 0;
  bool gpu = session.gpu_traced();
  for (const auto& t : totals) {
    all_cpu += t.cpu_time_ns;
    gpu = gpu || t.gpu_time_ns > 0;
  }
  fmt::print("\nTime by what autocast did (top-level ops over {} profiled steps; CPU ms, share, {}cast tax CPU ms{})\n",
             session.profiled_steps, gpu ? "GPU ms, " : "", gpu ? "" : "; no GPU time traced");
  if (session.op_stats_rebuilt)
    fmt::print("  (the run ended before its op table was saved: rebuilt from the recorded ops, without Tensor Core notes)\n");
  for (const auto& t : totals) {
    fmt::print("  {:<14} {:>8} calls {:>11} {:>6.1f}%{} {:>10}\n", profiler::to_string(t.category), t.calls,
               ms(t.cpu_time_ns), all_cpu > 0 ? 100.0 * t.cpu_time_ns / all_cpu : 0.0,
               gpu ? fmt::format(" {:>11}", ms(t.gpu_time_ns)) : "", ms(t.cast_cpu_time_ns));
  }
  if (session.warmup_left_out)
    fmt::print("  ({})\n", profiler::warmup_left_out_text(*session.warmup_left_out, totals, session.profiled_steps));
  if (const profiler::CompileTime compiling = profiler::compile_time(rows); compiling.calls > 0)
    fmt::print("  torch.compile compiled {} time{} inside profiled steps: {} ms CPU{}, in no category above\n",
               compiling.calls, compiling.calls == 1 ? "" : "s", ms(compiling.cpu_time_ns),
               compiling.gpu_time_ns > 0 ? fmt::format(" ({} ms GPU: tuning)", ms(compiling.gpu_time_ns)) : "");
  if (const int64_t compiled_ns = profiler::compiled_time_ns(totals, gpu); compiled_ns > 0)
    fmt::print("  (torch.compile'd regions: {} ms {} of their kernels counted by what each computes, a fused kernel\n"
               "   under its ops' autocast decision, not the casts fused into it; the rest of a region stays unchanged)\n",
               ms(compiled_ns), gpu ? "GPU" : "CPU");

  // As the table above: over the profiled steps, so a phase's calls and time read together.
  if (const auto phases = profiler::phase_totals(rows); !phases.empty()) {
    int64_t phases_cpu = 0;
    for (const auto& p : phases) phases_cpu += p.cpu_time_ns;
    fmt::print("\nTime by phase (top-level ops over {} profiled steps; CPU ms, share{})\n", session.profiled_steps,
               gpu ? ", GPU ms" : "");
    for (const auto& p : phases) {
      if (p.timed_elsewhere()) {
        fmt::print("  {:<16} {:>8} calls   (compiled graphs' nodes: timed in their graph's call)\n",
                   profiler::to_string(p.phase), p.calls);
        continue;
      }
      fmt::print("  {:<16} {:>8} calls {:>11} {:>6.1f}%{}\n", profiler::to_string(p.phase), p.calls, ms(p.cpu_time_ns),
                 phases_cpu > 0 ? 100.0 * static_cast<double>(p.cpu_time_ns) / static_cast<double>(phases_cpu) : 0.0,
                 gpu ? fmt::format(" {:>11}", ms(p.gpu_time_ns)) : "");
    }
    for (const auto& p : phases)
      if (const std::string_view meaning = profiler::phase_meaning(p.phase); !meaning.empty())
        fmt::print("  ({}: {})\n", profiler::to_string(p.phase), meaning);
  }

  std::map<profiler::OpCategory, std::vector<const profiler::OpStats*>> by_category;
  for (const auto& r : rows)
    if (r.top_level && !r.compiled && r.name != profiler::kTorchCompileOp) by_category[r.category].push_back(&r);
  for (auto& [category, list] : by_category) {
    std::sort(list.begin(), list.end(), [](auto* a, auto* b) { return a->cpu_time_ns + a->gpu_time_ns > b->cpu_time_ns + b->gpu_time_ns; });
    fmt::print("\n{} ({} signature{})\n", profiler::to_string(category), list.size(),
               list.size() == 1 ? "" : "s");
    print_op_rows(list, top_, "  ", /*times=*/true, gpu);
  }

  print_compiled(session, top_);

  const auto& kernels = session.top_kernels;
  if (!kernels.empty()) {
    fmt::print("\nTop kernels (GPU ms, calls, Tensor Cores)\n");
    for (const auto& k : kernels)
      fmt::print("  {:>10} {:>7} {:<3} {}\n", ms(k.total_ns), k.calls, k.tensor_core ? "TC" : "",
                 k.name.size() > 160 ? k.name.substr(0, 159) + "\u2026" : k.name);
    const profiler::GpuAttribution& gpu = session.gpu_attribution;
    fmt::print("  GPU time with no op: {} ms of {} ms traced ({:.1f}%){}\n", ms(gpu.unattributed_ns),
               ms(gpu.traced_ns), 100.0 * gpu.unattributed_share(),
               gpu.unattributed_ns > 0 ? ": launched outside any recorded op" : "");
    if (session.warmup_left_out)
      if (const std::string left_out = profiler::warmup_kernels_text(*session.warmup_left_out, gpu,
                                                                     session.profiled_steps);
          !left_out.empty())
        fmt::print("  ({})\n", left_out);
    if (const auto own = profiler::meta_key::count(session.meta_values, profiler::meta_key::kProfilerOwnKernels);
        own && *own > 0) {
      const int64_t own_ns = profiler::meta_key::count(session.meta_values, profiler::meta_key::kProfilerOwnGpuNs).value_or(0);
      fmt::print("  the profiler's own GPU work (range statistics, not in the tables above): {} kernels, {} ms{}\n", *own,
                 ms(own_ns), session.own_kernels.empty() ? "" : "; the costliest:");
      for (const auto& k : session.own_kernels)
        fmt::print("    {:>10} {:>7}     {}\n", ms(k.gpu_ns), k.calls,
                   k.name.size() > 150 ? k.name.substr(0, 149) + "\u2026" : k.name);
    }
  }

  const auto& gradients = session.latest_gradients;
  if (const std::string none = profiler::no_gradient_sample_text(session); !none.empty())
    fmt::print("\n{}\n", none);
  if (!gradients.empty()) {
    // Without a loss scaler there is no scale to name: "loss scale 1" read as a scaler's.
    if (session.meta.scaler_enabled)
      fmt::print("\nGradients at step {} (unscaled g; shares of g * loss scale {} cast to each format)\n",
                 gradients.front().step, profiler::text::loss_scale_text(gradients.front().loss_scale));
    else
      fmt::print("\nGradients at step {} (no loss scaling: shares of g cast to each format)\n",
                 gradients.front().step);
    fmt::print("  {:<9} {:>11} {:>11} {:>11}\n", "format", "to zero", "subnormal", "overflow");
    bool fp8_loses = false;
    for (const auto& f : profiler::kFloatFormats) {
      const auto r = profiler::total_range_shares(gradients, f.format);
      if (std::isnan(r.underflow)) continue;  // a session recorded before these were measured
      fmt::print("  {:<9} {:>10.3f}% {:>10.3f}% {:>10.3f}%\n", f.name, 100 * r.underflow, 100 * r.subnormal,
                 100 * r.overflow);
      const bool fp8 = f.format == profiler::FloatFormat::fp8_e4m3fn || f.format == profiler::FloatFormat::fp8_e5m2;
      fp8_loses |= fp8 && (r.underflow > 0 || r.overflow > 0);
    }
    // The fp8 rows answer "what would a plain cast at this scale lose", which no fp8 recipe
    // does: beside a readiness table that says "ready", an unexplained 69% reads as a contradiction.
    if (fp8_loses)
      fmt::print("  fp8 rows: a plain cast of g * loss scale; fp8 recipes scale each tensor into fp8's range first "
                 "(precision readiness{})\n",
                 session.readiness.empty() ? ": --readiness-every" : " below");
    const profiler::GradientStepSummary total = profiler::summarize_gradients(gradients);
    fmt::print("  before any cast: {:.3f}% exactly zero, {:.3f}% inf/NaN{}\n", 100 * total.zero_fraction,
               100 * total.nonfinite_fraction, total.all_zero() ? ": the step had nothing to apply" : "");
    if (!total.all_zero()) print_nearest_fp16_edge(gradients);
    // In an fp16 run the backward flushed the small ones already: the window would read low.
    if (session.meta.precision != "fp16" && total.fp16_window)
      fmt::print("  {}\n", profiler::loss_scale_window_text(*total.fp16_window));
    // A script that does not clip has no norm per step: the samples' is the one there is.
    const bool steps_have_norm = std::any_of(session.steps.begin(), session.steps.end(),
                                             [](const profiler::StepRecord& s) { return std::isfinite(s.grad_norm); });
    if (const std::string norms = profiler::sampled_gradient_norm_text(session.sampled_gradient_norms);
        !steps_have_norm && !norms.empty())
      fmt::print("  gradient norm (L2 of the unscaled gradients{}): {}\n",
                 sharded_session(session) ? ", this rank's shards" : "", norms);
  }

  if (session.activation_sampled_steps > 0) {
    if (const auto& first = session.first_fp16_overflow) {
      fmt::print("\nActivations: the first module whose output overflowed fp16 is {} at step {} ({} output, "
                 "{:.3f}% inf/NaN, max finite |x| {:g})\n",
                 first->module, first->step, first->dtype, 100 * first->nonfinite_fraction, first->max_abs);
    } else {
      fmt::print("\nActivations: no module output overflowed fp16 at the {} sampled steps\n",
                 session.activation_sampled_steps);
    }
    const std::string unmeasured =
        profiler::unmeasured_activations_text(profiler::modules_unmeasured_in_compiled_graphs(session));
    if (!unmeasured.empty()) fmt::print("  {}\n", profiler::report_detail::capitalized(unmeasured));
  }
  print_readiness(stdout, session.readiness);
  // Beside the forward origin: where a non-finite gradient started in backward.
  if (const std::string backward = profiler::backward_inf_text(session.backward_inf); !backward.empty())
    fmt::print("{}Backward: {}\n", session.activation_sampled_steps > 0 ? "" : "\n", backward);
  // The report's verdict and what to change, last: where a terminal leaves the reader.
  fmt::print("\n{}", profiler::findings_text(profiler::session_findings(session)));
  return 0;
}

}  // namespace ampscope::cli
