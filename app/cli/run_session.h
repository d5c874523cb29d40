#pragma once
// Runs a training session in the engine's thread and reports it on the
// terminal: shared by `train` and `profile`.
#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "engine/config.h"
#include "engine/training_observer.h"

namespace ampscope::cli {

struct SessionOutput {
  std::string metrics_path;  // JSON Lines, one object per step; "" = none
  bool quiet = false;
  int64_t log_every = 0;
};

// Adds --metrics, --quiet and --log-every to a command.
void add_output_flags(CLI::App& command, SessionOutput& output);

// Returns the process exit code: 0 finished or stopped by Ctrl-C/SIGTERM, 1 failed.
int run_session(const engine::TrainConfig& config, const std::vector<engine::TrainingObserver*>& observers,
                const SessionOutput& output);

}  // namespace ampscope::cli
