#include "app/cli/run_session.h"

#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <map>
#include <optional>

#include "app/cli/metrics_writer.h"
#include "app/cli/output_path.h"
#include "app/cli/progress_printer.h"
#include "engine/run_follower.h"
#include "engine/device.h"
#include "engine/errors.h"
#include "engine/trainer.h"
#include "profiler/capture/step_record.h"
#include "profiler/export/tensorboard/tensorboard_export.h"
#include "profiler/memory_kind.h"
#include "profiler/store/sqlite_util.h"

namespace ampscope::cli {
namespace {

std::atomic<bool> g_interrupted{false};
extern "C" void on_interrupt(int) { g_interrupted.store(true); }

}  // namespace

void add_output_flags(CLI::App& command, SessionOutput& output) {
  command.add_option("--metrics", output.metrics_path, "Write one JSON object per step to FILE (JSON Lines)")
      ->group("Output");
  command.add_option("--tensorboard", output.tensorboard_dir,
                     "Log scalars (and, with the profiler, gradient histograms) to a TensorBoard event file in DIR")
      ->group("Output");
  command.add_flag("--force", output.force, "Overwrite the output files (--out, --metrics) if they exist")
      ->group("Output");
  command.add_flag("--quiet,-q", output.quiet, "Print only the summary and errors")->group("Output");
  command.add_option("--log-every", output.log_every, "Plain-line output interval in steps (default: ~20 lines)")
      ->group("Output");
}

std::vector<std::string> input_files(const engine::TrainConfig& config) {
  return {config.data.path, config.data.labels_path, config.model.torchscript_path};
}

void check_session_outputs(const SessionOutput& output, const engine::TrainConfig& config,
                           const std::string& session_path) {
  if (!output.metrics_path.empty()) {
    if (output.metrics_path == session_path)
      throw engine::ConfigError(fmt::format("--metrics '{}' is the session file; choose another --metrics",
                                            output.metrics_path));
    std::vector<std::string> inputs = input_files(config);
    inputs.push_back(session_path);
    check_output_file("--metrics", output.metrics_path, output.force, inputs);
  }
  if (!output.tensorboard_dir.empty()) check_output_directory("--tensorboard", output.tensorboard_dir);
}

int run_session(const engine::TrainConfig& config, const std::vector<engine::TrainingObserver*>& observers,
                const SessionOutput& output, const GradientSource& gradients) {
  std::optional<MetricsWriter> metrics;
  if (!output.metrics_path.empty()) metrics.emplace(output.metrics_path);
  std::optional<profiler::tensorboard::TensorBoardLogger> tensorboard;
  if (!output.tensorboard_dir.empty()) {
    try {
      tensorboard.emplace(output.tensorboard_dir, std::string(engine::to_string(config.precision)),
                          profiler::memory_kind(engine::resolve_device(config.device).str()));
    } catch (const profiler::StoreError& e) {
      throw engine::ConfigError(fmt::format("--tensorboard: {}", e.what()));
    }
  }
  // Gradient samples reach the profiler's snapshot after their step: every sampled
  // step still in its history and not yet written goes out, oldest first.
  const auto log_gradients = [&] {
    if (!tensorboard || !gradients) return;
    const profiler::ProfileSnapshotPtr snapshot = gradients();
    if (!snapshot) return;
    std::map<int64_t, std::vector<profiler::GradientSample>> by_step;
    for (const auto& g : snapshot->gradient_history) by_step[g.step].push_back(g);
    if (by_step.empty() && !snapshot->latest_gradients.empty()) by_step[snapshot->latest_gradients.front().step] = snapshot->latest_gradients;
    for (const auto& [step, samples] : by_step) tensorboard->on_gradients(samples);
  };

  engine::Trainer trainer(config);
  auto queue = trainer.subscribe(16384);
  for (auto* observer : observers) trainer.add_observer(observer);
  ProgressPrinter printer(stdout, config.steps, output.log_every, isatty(STDOUT_FILENO) != 0);
  std::signal(SIGINT, on_interrupt);
  std::signal(SIGTERM, on_interrupt);
  trainer.start();

  double first_loss = 0.0, last_loss = 0.0;
  int64_t skipped = 0, steps_seen = 0;
  // A failed write of --metrics or --tensorboard (a full disk, a size limit) stops the
  // run: its session is closed as after Ctrl-C, and the command exits 1 naming the file.
  std::string write_error;
  const engine::StateEvent final_state = engine::follow_run(
      trainer, *queue,
      [&](const engine::Event& event) {
        if (const auto* step = std::get_if<engine::StepEvent>(&event)) {
          if (write_error.empty()) {
            try {
              if (metrics) metrics->write(*step);
              if (tensorboard) {
                tensorboard->on_step(profiler::to_step_record(*step));
                log_gradients();
              }
            } catch (const profiler::StoreError& e) {
              write_error = e.what();
            }
          }
          if (steps_seen++ == 0) first_loss = step->loss;
          last_loss = step->loss;
          skipped += step->skipped ? 1 : 0;
        }
        if (!output.quiet) printer.on_event(event);
      },
      [&write_error] { return g_interrupted.load() || !write_error.empty(); }, std::chrono::milliseconds(100));
  trainer.wait();
  if (tensorboard && write_error.empty()) {
    try {
      log_gradients();
      tensorboard->flush();
    } catch (const profiler::StoreError& e) {
      write_error = e.what();
    }
  }
  printer.finish();
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);

  if (queue->dropped() > 0)
    fmt::print(stderr, "ampscope: warning: {} events were dropped (the output could not keep up)\n", queue->dropped());
  if (final_state.state == engine::RunState::kFailed) {
    fmt::print(stderr, "ampscope: error: {}\n", final_state.message);
    return 1;
  }
  if (!write_error.empty()) {
    fmt::print(stderr, "ampscope: error: {} (the run stopped after step {})\n", write_error, final_state.step);
    return 1;
  }
  fmt::print("{} after {} of {} steps: loss {:.4f} -> {:.4f}, {} skipped step{}\n",
             final_state.state == engine::RunState::kStopped ? "stopped" : "finished", final_state.step,
             config.steps, first_loss, last_loss, skipped, skipped == 1 ? "" : "s");
  return 0;
}

}  // namespace ampscope::cli
