#pragma once
#include <CLI/CLI.hpp>

#include "app/cli/run_session.h"
#include "app/cli/train_options.h"
#include "profiler/capture/profiler.h"

namespace ampscope::cli {

// `ampscope profile`: `train` plus the profiler, writing a session file.
class ProfileCommand {
 public:
  explicit ProfileCommand(CLI::App& parent);
  bool selected() const { return command_->parsed(); }
  int run();

 private:
  CLI::App* command_;
  TrainOptions options_;
  SessionOutput output_;
  profiler::ProfilerOptions profiler_options_;  // the flags of capture_option_specs.h set its `capture`
  std::string out_ = "run.ampscope";
  bool no_gpu_trace_ = false;
};

}  // namespace ampscope::cli
