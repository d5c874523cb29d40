#pragma once
#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "profiler/capture_settings.h"

namespace ampscope::cli {

// `ampscope run [--out FILE] [profile flags] [-m] SCRIPT [ARGS...]`: a Python training
// script (with -m, a module), unmodified, under capture. Execs `python -m ampscope run ...`
// (the Python package in python/ampscope does the work) with the Python that has the
// module: $AMPSCOPE_PYTHON, else the active virtual environment's, else the one this build
// was configured with, else python3; the exit code is the script's. Written as a command
// line is (`ampscope run python train.py`, `ampscope run -- .venv/bin/python -m pkg.train`),
// the Python named before the script is the one that runs it.
class RunCommand {
 public:
  explicit RunCommand(CLI::App& parent);
  bool selected() const { return command_->parsed(); }
  int run();
  // `ampscope run [flags] -- SCRIPT`: the "--" before the script dropped from argv (CLI11
  // takes what follows it for arguments nobody expected); returns the new argc. One after
  // the script is the script's.
  int drop_separator_before_script(int argc, char** argv) const;

 private:
  // `--nproc-per-node N`: torchrun (`torchrun`: its command line) waited for, then the ranks
  // that wrote a session side by side; torchrun's exit status (130 after Ctrl-C).
  int run_ranks(const std::vector<std::string>& torchrun) const;

  CLI::App* command_;
  std::string out_ = "run.ampscope";
  bool force_ = false;
  // The sampling options' flags (CaptureSettings::fields()), passed on to Python as given.
  profiler::CaptureSettings sampling_;
  bool no_gpu_trace_ = false;
  bool module_ = false;
  std::string precision_ = "script";  // --precision: the script's AMP regions in this one
  int64_t max_steps_ = 0;
  // --nproc-per-node N: the script's N ranks under torchrun on this machine (0: one process).
  int64_t nproc_per_node_ = 0;
  // --compare LIST: a precision comparison of the script (script_comparison.h).
  std::string compare_;
  int64_t repeats_ = 3, warmup_ = 5, profile_steps_ = 3;
};

}  // namespace ampscope::cli
