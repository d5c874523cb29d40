#include "app/cli/script_comparison.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>

#include "app/cli/child_process.h"
#include "app/cli/comparison_table.h"
#include "app/cli/output_path.h"
#include "engine/errors.h"
#include "profiler/analysis/comparison.h"
#include "profiler/compare/comparison_runner.h"
#include "profiler/process_identity.h"
#include "profiler/session_meta_keys.h"
#include "profiler/store/comparison_store.h"
#include "profiler/store/session_reader.h"
#include "profiler/store/sqlite_util.h"

namespace ampscope::cli {
namespace {

namespace fs = std::filesystem;
using profiler::Comparison;
using profiler::VariantRun;

constexpr const char* kRunsDirPrefix = "ampscope-compare-";
// How long a dead comparison's runs directory is left untouched: a comparison of another pid
// namespace sharing the temporary directory (a container) looks dead from here, but writes there.
constexpr auto kStaleRunsDirAge = std::chrono::minutes(10);

// A comparison killed (SIGKILL, a closed terminal) cannot remove its runs' directory,
// ampscope-compare-<pid>-XXXXXX: the next comparison on the machine removes those whose
// comparison no longer runs and that nothing wrote to for kStaleRunsDirAge.
void remove_stale_runs_dirs(const fs::path& temporary) {
  std::error_code ec;
  const auto now = fs::file_time_type::clock::now();
  for (fs::directory_iterator it(temporary, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!name.starts_with(kRunsDirPrefix) || !it->is_directory(ec)) continue;
    const std::string rest = name.substr(std::string_view(kRunsDirPrefix).size());
    const size_t dash = rest.find('-');
    if (dash == std::string::npos) continue;  // not one of ours: older builds' names had no pid
    int64_t pid = 0;
    const auto [end_of_pid, error] = std::from_chars(rest.data(), rest.data() + dash, pid);
    if (error != std::errc() || end_of_pid != rest.data() + dash || pid <= 0) continue;
    std::error_code time_error;
    const auto written = fs::last_write_time(it->path(), time_error);
    if (time_error || profiler::process_runs(pid) || now - written < kStaleRunsDirAge) continue;
    std::error_code ignored;
    fs::remove_all(it->path(), ignored);
  }
}

std::string last_line_of(const fs::path& path) {
  std::ifstream in(path);
  std::string line, last;
  while (std::getline(in, line))
    if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
  return last;
}

// One finished child run, read back; `error` says why it is not one.
struct ChildRun {
  std::optional<profiler::SessionReader> session;
  std::string error;
};

ChildRun read_child(const fs::path& session_path, const fs::path& log_path, int exit_code, int64_t least_steps) {
  ChildRun run;
  try {
    run.session.emplace(profiler::SessionReader::open(session_path.string()));
  } catch (const profiler::StoreError&) {
    const std::string line = last_line_of(log_path);
    run.error = line.empty() ? fmt::format("the run exited with status {} and wrote no session", exit_code) : line;
    return run;
  }
  const auto state = run.session->meta_value(profiler::meta_key::kFinalState).value_or("");
  if (exit_code != 0 || state != "finished") {
    const std::string message = run.session->meta_value(profiler::meta_key::kFinalMessage).value_or("");
    run.error = !message.empty() ? message : last_line_of(log_path);
    if (run.error.empty()) run.error = fmt::format("the run exited with status {}", exit_code);
  } else if (static_cast<int64_t>(run.session->steps().size()) < least_steps) {
    run.error = fmt::format("the script ended after {} steps; the comparison needs {} (lower --warmup or "
                            "--profile-steps)", run.session->steps().size(), least_steps);
  }
  if (!run.error.empty()) run.session.reset();
  return run;
}

// Samples per step of a run: the batch its models were called with (samples/s x step time).
int64_t samples_per_step(const std::vector<profiler::StepRecord>& steps) {
  for (const auto& s : steps)
    if (std::isfinite(s.samples_per_second) && s.step_time_ms > 0)
      return std::llround(s.samples_per_second * s.step_time_ms / 1000.0);
  return 0;
}

}  // namespace

int run_script_comparison(const ScriptComparisonPlan& plan) {
  Comparison result;
  std::vector<std::string> variants;
  const int64_t steps = plan.max_steps > 0 ? plan.max_steps : profiler::kDefaultComparedSteps;
  try {
    variants = profiler::parse_variants(plan.variants, "--compare");
    if (plan.repeats < 1) throw engine::ConfigError("--repeats must be >= 1");
    if (plan.warmup_steps < 0 || plan.profile_steps < 0)
      throw engine::ConfigError("--warmup and --profile-steps must be >= 0");
    if (plan.warmup_steps >= steps)
      throw engine::ConfigError(fmt::format("--warmup ({}) must be less than --max-steps ({}): no step would be timed",
                                            plan.warmup_steps, steps));
    check_output_file("--out", plan.out_path, plan.overwrite, {}, /*session=*/true);
  } catch (const engine::ConfigError& e) {
    fmt::print(stderr, "ampscope: error: {}\n", e.what());
    return 2;
  }
  const int64_t runs = static_cast<int64_t>(variants.size()) * (plan.repeats + (plan.profile_steps > 0 ? 1 : 0));
  fmt::print("ampscope: {} runs of the script: {} per precision ({} timed{}), each stopped after {} steps{}\n", runs,
             runs / static_cast<int64_t>(variants.size()), plan.repeats,
             plan.profile_steps > 0 ? ", 1 profiled" : "", steps, plan.max_steps <= 0 ? " (--max-steps)" : "");

  result.warmup_steps = plan.warmup_steps;
  result.planned_repeats = plan.repeats;
  for (const auto& name : variants) {
    VariantRun v;
    v.variant = name;
    const engine::TrainConfig as_run = profiler::variant_config({}, name);  // the built-in comparison's mapping
    v.precision = std::string(engine::to_string(as_run.precision));
    v.tf32 = as_run.allow_tf32;
    result.variants.push_back(std::move(v));
  }

  std::error_code ec;
  const fs::path temporary = fs::temp_directory_path(ec);
  remove_stale_runs_dirs(temporary);
  std::string dir_template = (temporary / fmt::format("{}{}-XXXXXX", kRunsDirPrefix, ::getpid())).string();
  if (::mkdtemp(dir_template.data()) == nullptr) {
    fmt::print(stderr, "ampscope: error: cannot create a directory for the runs: {}\n", std::strerror(errno));
    return 1;
  }
  const fs::path runs_dir = dir_template;
  struct RemoveDir {
    fs::path dir;
    ~RemoveDir() {
      std::error_code ignored;
      fs::remove_all(dir, ignored);
    }
  } remove_runs{runs_dir};

  InterruptGuard interrupt_guard;  // the terminal's Ctrl-C stops the run in progress; the comparison after it
  std::unique_ptr<profiler::ComparisonWriter> writer;
  auto child_args = [&](const std::string& variant, const fs::path& session, int64_t max_steps,
                        const std::vector<std::string>& capture) {
    std::vector<std::string> args = {plan.python, "-m", "ampscope", "run", "--out", session.string(), "--force",
                                     "--precision", variant, "--max-steps", std::to_string(max_steps),
                                     "--grad-every", "0", "--readiness-every", "0"};
    args.insert(args.end(), capture.begin(), capture.end());
    args.insert(args.end(), plan.script.begin(), plan.script.end());
    return args;
  };
  // The failed run's whole output is kept beside --out (the runs' directory goes): the line
  // quoted is its last, the traceback above it is in the log.
  auto fail_variant = [&](VariantRun& v, const std::string& error, const fs::path& log) {
    v.error = error;
    if (writer) writer->set_error(v.variant, error);
    const std::string kept = plan.out_path + "." + v.variant + ".log";
    std::error_code copy_error;
    fs::copy_file(log, kept, fs::copy_options::overwrite_existing, copy_error);
    fmt::print("{}: failed: {}\n", v.variant, error);
    if (!copy_error) fmt::print("  its output: {}\n", kept);
  };
  bool stopped = false;

  try {
    // Timing runs: no op recorded (the window starts after the last step), no GPU trace.
    const std::vector<std::string> timing = {"--window-start", std::to_string(steps + 1), "--no-gpu-trace"};
    for (int64_t repeat = 0; repeat < plan.repeats && !stopped; ++repeat) {
      for (auto& v : result.variants) {
        if (!v.error.empty()) continue;
        const fs::path session = runs_dir / fmt::format("{}.{}.ampscope", v.variant, repeat);
        const fs::path log = runs_dir / fmt::format("{}.{}.log", v.variant, repeat);
        const int code = run_child(child_args(v.variant, session, steps, timing), log);
        if (InterruptGuard::interrupted() || code == 130 || code == 128 + SIGINT) {
          stopped = true;
          break;
        }
        ChildRun run = read_child(session, log, code, plan.warmup_steps + 1);
        if (!run.session) {
          fail_variant(v, run.error, log);
          continue;
        }
        std::vector<profiler::StepRecord> records = run.session->steps();
        if (!writer) {
          // The first run that finished describes the comparison: script, model, device.
          result.meta = run.session->meta();
          result.meta.precision = "";
          result.meta.gpu_tracing = "";
          result.effective_batch = samples_per_step(records);
          writer = profiler::ComparisonWriter::create(plan.out_path, result, plan.overwrite);
          for (const auto& described : result.variants) writer->add_variant(described);
          // What the script is (its path, arguments, optimizers, the precision its regions ask
          // for), so the comparison shows the script, not the built-in run's settings.
          for (const char* key : profiler::meta_key::kComparedScriptKeys)
            if (const auto value = run.session->meta_value(key)) writer->set_meta(key, *value);
          // Its own, not the timed run's (which traces nothing): its profiled runs' kernel tracing.
          writer->set_meta(profiler::meta_key::kTraceGpu, plan.trace_gpu ? "1" : "0");
        }
        if (run.session->meta_value(profiler::meta_key::kScalerEnabled).value_or("") == "true") {
          v.scaler = true;  // the script's GradScaler, kept under every precision
          writer->set_scaler(v.variant, true);
        }
        writer->add_repeat(v.variant, repeat, records);
        fmt::print("{} #{}: median {:.3f} ms/step, final loss {:.4f}\n", v.variant, repeat + 1,
                   profiler::median_step_ms(records, plan.warmup_steps), records.back().loss);
        std::fflush(stdout);
        v.repeats.push_back(std::move(records));
      }
    }
    // One profiled run per precision: the P steps after warm-up recorded, for the op table.
    const int64_t profiled = std::min(plan.profile_steps, steps - plan.warmup_steps);
    for (auto& v : result.variants) {
      if (stopped || profiled == 0 || !writer) break;
      if (!v.error.empty()) continue;
      const fs::path session = runs_dir / fmt::format("{}.profiled.ampscope", v.variant);
      const fs::path log = runs_dir / fmt::format("{}.profiled.log", v.variant);
      std::vector<std::string> capture = {"--window-start", std::to_string(plan.warmup_steps + 1), "--window-steps",
                                          std::to_string(profiled)};
      if (!plan.trace_gpu) capture.emplace_back("--no-gpu-trace");
      const int code = run_child(child_args(v.variant, session, plan.warmup_steps + profiled, capture), log);
      if (InterruptGuard::interrupted() || code == 130 || code == 128 + SIGINT) {
        stopped = true;
        break;
      }
      ChildRun run = read_child(session, log, code, plan.warmup_steps + profiled);
      if (!run.session) {
        fail_variant(v, "profiled run: " + run.error, log);
        continue;
      }
      v.op_stats = run.session->op_stats();
      v.profiled_steps = profiled;
      writer->set_profile(v.variant, v.op_stats, v.profiled_steps);
      if (result.meta.gpu_tracing.empty()) {
        result.meta.gpu_tracing = run.session->meta().gpu_tracing;
        writer->set_meta(profiler::meta_key::kGpuTracing, result.meta.gpu_tracing);
      }
      fmt::print("{}: op table from {} profiled steps\n", v.variant, v.profiled_steps);
    }
    if (writer) writer->set_meta(profiler::meta_key::kFinalState, stopped ? "stopped" : "finished");
  } catch (const engine::ConfigError& e) {
    fmt::print(stderr, "ampscope: error: {}\n", e.what());
    return 2;
  } catch (const profiler::StoreError& e) {
    fmt::print(stderr, "ampscope: error: {}\n", e.what());
    return 1;
  }
  if (!writer) {
    fmt::print(stderr, "ampscope: error: no precision finished a run{}\n", stopped ? " (interrupted)" : "");
    return stopped ? 130 : 1;
  }
  print_comparison(stdout, result);
  fmt::print("\nwrote {} ({}): ampscope report, ampscope-ui and summary read it\n", plan.out_path,
             stopped ? "interrupted; the runs that finished" : "finished");
  return stopped ? 130 : 0;
}

}  // namespace ampscope::cli
