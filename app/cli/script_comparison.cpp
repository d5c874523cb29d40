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
#include "profiler/store/rank_comparison.h"
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

// The rank torchrun names as the root cause in its failure summary ("Root Cause (first observed
// failure):" ... "rank      : 1 (local_rank: 1)"): the first to fail, the others' errors (a peer's
// closed connection) following from it. nullopt where the log has none.
std::optional<int64_t> root_cause_rank(const fs::path& log_path) {
  std::ifstream in(log_path);
  bool in_root_cause = false;
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("Root Cause (first observed failure)")) in_root_cause = true;
    const size_t at = line.find_first_not_of(' ');
    if (!in_root_cause || at == std::string::npos || !line.substr(at).starts_with("rank ")) continue;
    const size_t colon = line.find(':', at);
    const size_t digits = colon == std::string::npos ? colon : line.find_first_not_of(' ', colon + 1);
    int64_t rank = -1;
    if (digits != std::string::npos) std::from_chars(line.data() + digits, line.data() + line.size(), rank);
    return rank >= 0 ? std::optional<int64_t>(rank) : std::nullopt;
  }
  return std::nullopt;
}

// One finished child run, read back; `error` says why it is not one.
struct ChildRun {
  std::optional<profiler::SessionReader> session;
  std::string error;
  std::string final_state;  // the session's, "" when it has none (or no session)
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
  run.final_state = state;
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

// One run of the script, as the comparison takes it: under torchrun (nproc >= 2) its ranks'
// steps as the job's (profiler::job_steps), with rank 0's session for what describes the script
// and its op table; `error` says why it is not one.
struct JobRun {
  std::optional<profiler::SessionReader> first;
  std::vector<profiler::StepRecord> steps;
  std::string error;
};

JobRun read_job(const fs::path& session_path, const fs::path& log_path, int exit_code, int64_t least_steps,
                int64_t nproc) {
  JobRun job;
  if (nproc < 2) {  // one process names no file of its own
    ChildRun run = read_child(session_path, log_path, exit_code, least_steps);
    job.error = std::move(run.error);
    if (run.session) job.steps = run.session->steps();
    job.first = std::move(run.session);
    return job;
  }
  // Each rank judged by its own session: the rank that failed first says why in its own words
  // (torchrun stopped the others, or their collectives failed with it).
  std::vector<std::vector<profiler::StepRecord>> ranks;
  std::string root_cause, failed, other;
  const std::optional<int64_t> first_failed = exit_code != 0 ? root_cause_rank(log_path) : std::nullopt;
  for (int64_t rank = 0; rank < nproc; ++rank) {
    ChildRun run = read_child(profiler::rank_session_path(session_path.string(), rank), log_path, 0, least_steps);
    if (!run.session) {
      std::string& why = rank == first_failed ? root_cause : run.final_state == "failed" ? failed : other;
      if (why.empty()) why = fmt::format("rank {}: {}", rank, run.error);
      continue;
    }
    ranks.push_back(run.session->steps());
    if (rank == 0) job.first = std::move(run.session);
  }
  if (!root_cause.empty() || !failed.empty() || !other.empty()) {
    job.error = !root_cause.empty() ? root_cause : !failed.empty() ? failed : other;
    job.first.reset();
    return job;
  }
  if (exit_code != 0) {
    const std::string line = last_line_of(log_path);
    job.error = line.empty() ? fmt::format("torchrun exited with status {}", exit_code) : line;
    job.first.reset();
    return job;
  }
  job.steps = profiler::job_steps(ranks);
  if (static_cast<int64_t>(job.steps.size()) < least_steps) {
    job.error = fmt::format("the ranks recorded {} steps in common; the comparison needs {}", job.steps.size(),
                            least_steps);
    job.first.reset();
  }
  return job;
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
  fmt::print("ampscope: {} runs of the script: {} per precision ({} timed{}), each stopped after {} steps{}{}\n", runs,
             runs / static_cast<int64_t>(variants.size()), plan.repeats,
             plan.profile_steps > 0 ? ", 1 profiled" : "", steps, plan.max_steps <= 0 ? " (--max-steps)" : "",
             plan.nproc_per_node > 0 ? fmt::format(", {} ranks each under torchrun", plan.nproc_per_node) : "");

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
    std::vector<std::string> args = {plan.python};
    // torchrun's own module, from the same Python, as `ampscope run --nproc-per-node` runs it.
    if (plan.nproc_per_node > 0)
      args.insert(args.end(), {"-m", "torch.distributed.run", "--standalone", "--nproc-per-node",
                               std::to_string(plan.nproc_per_node)});
    args.insert(args.end(), {"-m", "ampscope", "run", "--out", session.string(), "--force", "--precision", variant,
                             "--max-steps", std::to_string(max_steps), "--grad-every", "0", "--readiness-every", "0"});
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
        JobRun run = read_job(session, log, code, plan.warmup_steps + 1, plan.nproc_per_node);
        if (!run.first) {
          fail_variant(v, run.error, log);
          continue;
        }
        std::vector<profiler::StepRecord> records = std::move(run.steps);
        if (!writer) {
          // The first run that finished describes the comparison: script, model, device.
          result.meta = run.first->meta();
          result.meta.precision = "";
          result.meta.gpu_tracing = "";
          result.effective_batch = samples_per_step(records);
          writer = profiler::ComparisonWriter::create(plan.out_path, result, plan.overwrite);
          for (const auto& described : result.variants) writer->add_variant(described);
          // What the script is (its path, arguments, optimizers, the precision its regions ask
          // for), so the comparison shows the script, not the built-in run's settings.
          for (const char* key : profiler::meta_key::kComparedScriptKeys)
            if (const auto value = run.first->meta_value(key)) writer->set_meta(key, *value);
          // Its own, not the timed run's (which traces nothing): its profiled runs' kernel tracing.
          writer->set_meta(profiler::meta_key::kTraceGpu, plan.trace_gpu ? "1" : "0");
        }
        if (run.first->meta_value(profiler::meta_key::kScalerEnabled).value_or("") == "true") {
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
      JobRun run = read_job(session, log, code, plan.warmup_steps + profiled, plan.nproc_per_node);
      if (!run.first) {
        fail_variant(v, "profiled run: " + run.error, log);
        continue;
      }
      v.op_stats = run.first->op_stats();  // rank 0's under torchrun
      v.profiled_steps = profiled;
      writer->set_profile(v.variant, v.op_stats, v.profiled_steps);
      if (result.meta.gpu_tracing.empty()) {
        result.meta.gpu_tracing = run.first->meta().gpu_tracing;
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
