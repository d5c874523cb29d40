#include "app/cli/compare_command.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <csignal>

#include "app/cli/comparison_table.h"
#include "app/cli/output_path.h"
#include "app/cli/run_session.h"
#include "engine/device.h"
#include "engine/errors.h"

namespace ampscope::cli {
namespace {

std::atomic<profiler::ComparisonRunner*> g_runner{nullptr};
extern "C" void on_compare_interrupt(int) {
  // request_stop only stores an atomic flag: async-signal-safe.
  if (auto* runner = g_runner.load()) runner->request_stop();
}

// Settings of the backward pass, the optimizer, loss scaling or validation: an inference
// comparison has none of them, and silently ignoring one would mislabel the result.
constexpr const char* kTrainingOnlyFlags[] = {
    "--scaler",        "--no-scaler",   "--init-scale",     "--growth-factor",  "--backoff-factor",
    "--growth-interval", "--optimizer", "--fused",          "--lr",             "--momentum",
    "--weight-decay",  "--schedule",    "--warmup-steps",   "--min-lr-ratio",   "--clip-grad-norm",
    "--accumulate",    "--eval-every",  "--eval-batches",   "--max-consecutive-skips", "--profile-steps"};

}  // namespace

CompareCommand::CompareCommand(CLI::App& parent) {
  command_ = parent.add_subcommand(
      "compare",
      "Train the same model in several precisions (fp32, tf32, fp16, bf16), repeated, and compare "
      "step time, memory, loss and each op's time");
  command_->fallthrough();
  options_.add_to(*command_);
  auto& c = comparison_;
  c.out_path = "comparison.ampscope";
  command_->add_option("--precisions", variants_,
                       "Comma-separated: fp32, tf32 (CUDA), fp16 (with GradScaler), bf16 "
                       "(default: fp32,tf32,fp16,bf16 on CUDA, fp32,bf16 on the CPU)")
      ->group("Comparison");
  command_->add_option("--repeats", c.repeats, "Runs per precision, interleaved across precisions")
      ->capture_default_str()->group("Comparison");
  command_->add_option("--warmup", c.warmup_steps, "Leading steps of each run left out of the timing")
      ->capture_default_str()->group("Comparison");
  command_->add_option("--profile-steps", c.profile_steps,
                       "Steps of one extra profiled run per precision, for the per-op table (0 = none)")
      ->capture_default_str()->group("Comparison");
  command_->add_option("--out,-o", c.out_path, "The comparison file to write (.ampscope)")
      ->capture_default_str()->group("Comparison");
  command_->add_flag("--force", c.overwrite, "Overwrite --out if it exists")->group("Comparison");
  command_->add_flag("--inference", c.inference,
                     "Compare inference instead of training: per precision, --steps timed batches of the "
                     "model in eval mode under InferenceMode and the precision's autocast (the first --warmup "
                     "left out); latency per batch, samples/s and speedup vs fp32")
      ->group("Comparison");
  command_->add_flag("--quiet,-q", quiet_, "Print only the result tables and errors")->group("Output");
}

int CompareCommand::run() {
  if (command_->count("--precision") > 0)
    throw engine::ConfigError("compare takes --precisions (a list, e.g. fp32,bf16), not --precision");
  auto& c = comparison_;
  if (c.inference)
    for (const char* flag : kTrainingOnlyFlags)
      if (command_->count(flag) > 0)
        throw engine::ConfigError(fmt::format(
            "{} is a training flag; --inference times the forward pass only (leave {} out)", flag, flag));
  c.base = options_.finish(*command_);
  if (variants_.empty())
    variants_ = engine::resolve_device(c.base.device).is_cuda() ? "fp32,tf32,fp16,bf16" : "fp32,bf16";
  c.variants = profiler::parse_variants(variants_);
  if (!c.out_path.empty()) check_output_file("--out", c.out_path, c.overwrite, input_files(c.base), /*session=*/true);
  struct stat existing {};
  profiler::validate(c);

  profiler::ComparisonRunner runner(c);
  g_runner.store(&runner);
  std::signal(SIGINT, on_compare_interrupt);
  std::signal(SIGTERM, on_compare_interrupt);
  const bool tty = isatty(STDOUT_FILENO) != 0;
  bool line_open = false;
  const profiler::Comparison result = runner.run([&](const profiler::ComparisonProgress& p) {
    if (quiet_) return;
    if (!p.finished_message.empty()) {
      fmt::print("{}[{}/{}] {}\n", line_open ? "\r\033[K" : "", p.run_index + 1, p.run_count, p.finished_message);
      line_open = false;
    } else if (tty) {
      fmt::print("\r\033[K[{}/{}] {} {} step {}/{} loss {:.4f}", p.run_index + 1, p.run_count, p.variant,
                 p.repeat < 0 ? std::string("profiled") : fmt::format("#{}", p.repeat + 1), p.step, p.steps, p.loss);
      std::fflush(stdout);
      line_open = true;
    }
  });
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  g_runner.store(nullptr);
  if (line_open) fmt::print("\n");

  fmt::print("\n");
  print_comparison(stdout, result);
  if (!c.out_path.empty() && ::stat(c.out_path.c_str(), &existing) == 0)
    fmt::print("\ncomparison {} (ampscope report {} -o report.html)\n", c.out_path, c.out_path);
  if (runner.stopped()) {
    fmt::print("stopped: the comparison holds the runs that had finished\n");
    return 0;
  }
  bool any_failed = false;
  for (const auto& v : result.variants) {
    if (v.error.empty()) continue;
    any_failed = true;
    fmt::print(stderr, "ampscope: error: {}: {}\n", v.variant, v.error);
  }
  return any_failed ? 1 : 0;
}

}  // namespace ampscope::cli
