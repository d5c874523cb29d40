#include "app/cli/run_command.h"

#include "app/cli/child_process.h"
#include "app/cli/rank_summary.h"
#include "app/cli/script_comparison.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/errors.h"
#include "profiler/store/rank_comparison.h"
#include "profiler/store/sqlite_util.h"

namespace ampscope::cli {
namespace {

bool is_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string python_to_run() {
  if (const char* p = std::getenv("AMPSCOPE_PYTHON"); p != nullptr && *p != '\0') return p;
  if (const char* venv = std::getenv("VIRTUAL_ENV"); venv != nullptr && *venv != '\0') {
    const std::string python = std::string(venv) + "/bin/python";
    if (is_file(python)) return python;
  }
#if defined(AMPSCOPE_BUILD_PYTHON_EXECUTABLE)
  if (is_file(AMPSCOPE_BUILD_PYTHON_EXECUTABLE)) return AMPSCOPE_BUILD_PYTHON_EXECUTABLE;
#endif
  return "python3";
}

// "python", "python3", "/opt/venv/bin/python3.12": an interpreter written before the script.
bool names_a_python(const std::string& word) {
  const std::string name = word.substr(word.rfind('/') + 1);
  return name.starts_with("python") &&
         name.find_first_not_of("0123456789.", std::string_view("python").size()) == std::string::npos;
}

// The package built with this program, unless the Python has its own installed.
void set_package_path() {
#if defined(AMPSCOPE_PYTHON_PACKAGE_DIR)
  if (is_file(std::string(AMPSCOPE_PYTHON_PACKAGE_DIR) + "/ampscope/__init__.py")) {
    const char* old = std::getenv("PYTHONPATH");
    const std::string path = std::string(AMPSCOPE_PYTHON_PACKAGE_DIR) + (old && *old ? std::string(":") + old : "");
    ::setenv("PYTHONPATH", path.c_str(), 1);
  }
#endif
}

}  // namespace

RunCommand::RunCommand(CLI::App& parent) {
  command_ = parent.add_subcommand(
      "run", "Run a Python training script under capture (autocast per op, loss scale per optimizer, gradients)");
  command_->prefix_command();  // SCRIPT and everything after it belong to the script
  command_->add_option("--out,-o", out_, "The session file (FILE.rank<R>.ampscope per rank under torchrun)")
      ->capture_default_str();
  command_->add_flag("--force", force_, "Overwrite --out if it exists");
  for (const auto& field : sampling_.fields())
    command_->add_option(field.option->flag, *field.value, field.option->help)->capture_default_str();
  command_->add_flag("--no-gpu-trace", no_gpu_trace_, "Do not trace CUDA kernels through CUPTI");
  command_->add_flag("-m", module_, "SCRIPT is a module, run as python -m SCRIPT runs it (a package's train module)");
  command_->add_option("--precision", precision_,
                       "Run the script's autocast regions in this precision instead of the one they ask for: "
                       "fp32 and tf32 (CUDA) turn them off, fp16 and bf16 set their dtype (script: as written)")
      ->check(CLI::IsMember({"script", "fp32", "tf32", "fp16", "bf16"}))
      ->capture_default_str();
  command_->add_option("--max-steps", max_steps_,
                       "Stop the script as step N+1 would begin, exit status 0 (0 = no limit)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  command_->add_option("--nproc-per-node", nproc_per_node_,
                       "Run N ranks of the script on this machine, as torchrun --standalone --nproc-per-node N "
                       "does (each writes FILE.rank<R>.ampscope; with --compare each run is N ranks, a step the job's: "
                       "the slowest rank's time, all ranks' samples); 0 = one process, without torchrun")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  command_->add_option("--compare", compare_,
                       "Compare precisions of the script (fp32,tf32,fp16,bf16: comma-separated): runs it --repeats "
                       "times per precision, interleaved, each stopped after --max-steps (default 30), then once "
                       "per precision profiled; --out is the comparison file")
      ->group("Comparison");
  command_->add_option("--repeats", repeats_, "With --compare: timed runs per precision")
      ->capture_default_str()->group("Comparison");
  command_->add_option("--warmup", warmup_, "With --compare: leading steps of each run left out of the timing")
      ->capture_default_str()->group("Comparison");
  command_->add_option("--profile-steps", profile_steps_,
                       "With --compare: steps recorded after warm-up by the profiled run of each precision (0 = none)")
      ->capture_default_str()->group("Comparison");
  command_->footer(
      "A Python written before the script runs it: ampscope run .venv/bin/python train.py.\n"
      "Also: python -m ampscope run ... in an environment where ampscope is installed.");
}

int RunCommand::drop_separator_before_script(int argc, char** argv) const {
  if (argc < 3 || std::string_view(argv[1]) != "run") return argc;
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") {
      std::copy(argv + i + 1, argv + argc + 1, argv + i);  // argv[argc] (null) moves too
      return argc - 1;
    }
    if (!arg.starts_with('-')) return argc;  // the script
    if (arg.find('=') != std::string::npos) continue;
    const CLI::Option* option = command_->get_option_no_throw(arg);
    if (option != nullptr && option->get_items_expected_min() > 0) ++i;  // its value
  }
  return argc;
}

int RunCommand::run_ranks(const std::vector<std::string>& torchrun) const {
  int code = 0;
  {
    InterruptGuard interrupt_guard;  // Ctrl-C reaches torchrun too, which passes it on to its ranks
    try {
      code = run_child(torchrun);
    } catch (const engine::ConfigError& e) {
      fmt::print(stderr, "ampscope: error: {}\n", e.what());
      return 1;
    }
    // torchrun reports a Ctrl-C it passed on as a failure of its own (SignalException, status 1).
    if (InterruptGuard::interrupted() && code == 1) code = 130;
  }
  std::vector<std::string> ranks;
  for (int64_t rank = 0; rank < nproc_per_node_; ++rank) {
    std::string path = profiler::rank_session_path(out_, rank);
    if (::access(path.c_str(), F_OK) == 0) ranks.push_back(std::move(path));
  }
  if (ranks.size() < 2) return code;  // one process names no file of its own; a failed start wrote none
  try {
    fmt::print("\n");
    print_rank_summary(ranks);  // as `ampscope summary FILE.rank*.ampscope` shows them
  } catch (const profiler::StoreError& e) {
    fmt::print(stderr, "ampscope: the ranks' sessions cannot be compared: {}\n", e.what());
  }
  return code;
}

int RunCommand::run() {
  std::vector<std::string> rest = command_->remaining();
  std::string python = python_to_run();
  if (!rest.empty() && names_a_python(rest.front())) {
    python = rest.front();
    rest.erase(rest.begin());
    if (!rest.empty() && rest.front() == "-m") {
      module_ = true;
      rest.erase(rest.begin());
    }
  }
  if (rest.empty()) {
    fmt::print(stderr, "ampscope: error: run needs the Python script to run (ampscope run [flags] SCRIPT [ARGS...])\n");
    return 2;
  }
  set_package_path();
  if (!compare_.empty()) {
    // The comparison sets each run's capture and precision itself: a flag for one run would
    // be silently ignored, and the comparison taken for what it asked.
    std::string ignored = command_->count("--precision") > 0 ? "--precision" : "";
    for (const auto& field : sampling_.fields())
      if (command_->count(field.option->flag) > 0) ignored = field.option->flag;
    if (!ignored.empty()) {
      fmt::print(stderr, "ampscope: error: run --compare sets {} itself (each run its own precision; no op recorded "
                 "in the timed runs, the steps after --warmup in the profiled one): drop it\n", ignored);
      return 2;
    }
    ScriptComparisonPlan plan;
    plan.python = python;
    if (module_) plan.script.emplace_back("-m");
    plan.script.insert(plan.script.end(), rest.begin(), rest.end());
    plan.variants = compare_;
    plan.repeats = repeats_;
    plan.warmup_steps = warmup_;
    plan.max_steps = max_steps_;
    plan.profile_steps = profile_steps_;
    plan.out_path = out_ == "run.ampscope" ? "comparison.ampscope" : out_;
    plan.overwrite = force_;
    plan.trace_gpu = !no_gpu_trace_;
    plan.nproc_per_node = nproc_per_node_;
    return run_script_comparison(plan);
  }
  std::vector<std::string> args = {python};
  // torchrun's own module, from the same Python: nothing needs to be on PATH. Its ranks
  // inherit PYTHONPATH (the package) and run `ampscope run` each.
  if (nproc_per_node_ > 0)
    args.insert(args.end(), {"-m", "torch.distributed.run", "--standalone", "--nproc-per-node",
                             std::to_string(nproc_per_node_)});
  args.insert(args.end(), {"-m", "ampscope", "run", "--out", out_});
  for (const auto& field : sampling_.fields()) {
    args.emplace_back(field.option->flag);
    args.push_back(std::to_string(*field.value));
  }
  if (force_) args.emplace_back("--force");
  if (no_gpu_trace_) args.emplace_back("--no-gpu-trace");
  args.insert(args.end(), {"--precision", precision_, "--max-steps", std::to_string(max_steps_)});
  if (module_) args.emplace_back("-m");
  args.insert(args.end(), rest.begin(), rest.end());
  std::fflush(stdout);
  std::fflush(stderr);
  if (nproc_per_node_ > 0) return run_ranks(args);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  ::execvp(argv[0], argv.data());
  fmt::print(stderr, "ampscope: error: cannot run Python '{}': {} (set AMPSCOPE_PYTHON to a Python with torch and ampscope)\n",
             python, std::strerror(errno));
  return 1;
}

}  // namespace ampscope::cli
