#pragma once
// Runs a training session in the engine's thread and reports it on the
// terminal: shared by `train` and `profile`.
#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/config.h"
#include "engine/training_observer.h"
#include "profiler/analysis/profile_snapshot.h"

namespace ampscope::cli {

struct SessionOutput {
  std::string metrics_path;  // JSON Lines, one object per step; "" = none
  std::string tensorboard_dir;  // TensorBoard event file directory; "" = none
  bool force = false;  // --force: overwrite existing output files (the session, --metrics)
  bool quiet = false;
  int64_t log_every = 0;
};

// Adds --metrics, --tensorboard, --force, --quiet and --log-every to a command.
void add_output_flags(CLI::App& command, SessionOutput& output);

// The files a run reads (data, labels, TorchScript model): never an output.
std::vector<std::string> input_files(const engine::TrainConfig& config);

// Checks --metrics and --tensorboard by the one output rule (output_path.h), before any
// work; `session_path`: the session the run records, "" for none.
void check_session_outputs(const SessionOutput& output, const engine::TrainConfig& config,
                           const std::string& session_path = "");

// Where --tensorboard finds gradient samples during a run (the profiler's
// snapshot); null when nothing samples them (`train`).
using GradientSource = std::function<profiler::ProfileSnapshotPtr()>;

// Returns the process exit code: 0 finished or stopped by Ctrl-C/SIGTERM, 1 failed.
int run_session(const engine::TrainConfig& config, const std::vector<engine::TrainingObserver*>& observers,
                const SessionOutput& output, const GradientSource& gradients = {});

}  // namespace ampscope::cli
