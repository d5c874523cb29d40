#pragma once
#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "profiler/capture_settings.h"

namespace ampscope::cli {

// `ampscope run [--out FILE] [profile flags] SCRIPT [ARGS...]`: a Python training
// script, unmodified, under capture. Execs `python -m ampscope run ...` (the Python
// package in python/ampscope does the work) with the Python that has the module:
// $AMPSCOPE_PYTHON, else the active virtual environment's, else the one this build
// was configured with, else python3; the exit code is the script's.
class RunCommand {
 public:
  explicit RunCommand(CLI::App& parent);
  bool selected() const { return command_->parsed(); }
  int run();

 private:
  CLI::App* command_;
  std::string out_ = "run.ampscope";
  bool force_ = false;
  // The sampling options' flags (CaptureSettings::fields()), passed on to Python as given.
  profiler::CaptureSettings sampling_;
  bool no_gpu_trace_ = false;
};

}  // namespace ampscope::cli
