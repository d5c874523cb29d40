#include "app/cli/run_session.h"

#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <optional>

#include "app/cli/metrics_writer.h"
#include "app/cli/progress_printer.h"
#include "engine/run_follower.h"
#include "engine/trainer.h"

namespace ampscope::cli {
namespace {

std::atomic<bool> g_interrupted{false};
extern "C" void on_interrupt(int) { g_interrupted.store(true); }

}  // namespace

void add_output_flags(CLI::App& command, SessionOutput& output) {
  command.add_option("--metrics", output.metrics_path, "Write one JSON object per step to FILE (JSON Lines)")
      ->group("Output");
  command.add_flag("--quiet,-q", output.quiet, "Print only the summary and errors")->group("Output");
  command.add_option("--log-every", output.log_every, "Plain-line output interval in steps (default: ~20 lines)")
      ->group("Output");
}

int run_session(const engine::TrainConfig& config, const std::vector<engine::TrainingObserver*>& observers,
                const SessionOutput& output) {
  std::optional<MetricsWriter> metrics;
  if (!output.metrics_path.empty()) metrics.emplace(output.metrics_path);

  engine::Trainer trainer(config);
  auto queue = trainer.subscribe(16384);
  for (auto* observer : observers) trainer.add_observer(observer);
  ProgressPrinter printer(stdout, config.steps, output.log_every, isatty(STDOUT_FILENO) != 0);
  std::signal(SIGINT, on_interrupt);
  std::signal(SIGTERM, on_interrupt);
  trainer.start();

  double first_loss = 0.0, last_loss = 0.0;
  int64_t skipped = 0, steps_seen = 0;
  const engine::StateEvent final_state = engine::follow_run(
      trainer, *queue,
      [&](const engine::Event& event) {
        if (const auto* step = std::get_if<engine::StepEvent>(&event)) {
          if (metrics) metrics->write(*step);
          if (steps_seen++ == 0) first_loss = step->loss;
          last_loss = step->loss;
          skipped += step->skipped ? 1 : 0;
        }
        if (!output.quiet) printer.on_event(event);
      },
      [] { return g_interrupted.load(); }, std::chrono::milliseconds(100));
  trainer.wait();
  printer.finish();
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);

  if (queue->dropped() > 0)
    fmt::print(stderr, "ampscope: warning: {} events were dropped (the output could not keep up)\n", queue->dropped());
  if (final_state.state == engine::RunState::kFailed) {
    fmt::print(stderr, "ampscope: error: {}\n", final_state.message);
    return 1;
  }
  fmt::print("{} after {} of {} steps: loss {:.4f} -> {:.4f}, {} skipped step{}\n",
             final_state.state == engine::RunState::kStopped ? "stopped" : "finished", final_state.step,
             config.steps, first_loss, last_loss, skipped, skipped == 1 ? "" : "s");
  return 0;
}

}  // namespace ampscope::cli
