#include "app/cli/train_command.h"

#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <optional>

#include "app/cli/metrics_writer.h"
#include "app/cli/progress_printer.h"
#include "engine/trainer.h"

namespace ampscope::cli {
namespace {

std::atomic<bool> g_interrupted{false};
extern "C" void on_interrupt(int) { g_interrupted.store(true); }

}  // namespace

TrainCommand::TrainCommand(CLI::App& parent) {
  command_ = parent.add_subcommand("train", "Train a model in fp32, fp16 (autocast + loss scaler) or bf16");
  // --config belongs to the main app (CLI11 reads config files there); fallthrough
  // lets `ampscope train --config FILE` reach it.
  command_->fallthrough();
  command_->footer(
      "Flags can also come from a TOML file: ampscope train --config FILE, with the flags' long "
      "names as keys in a [train] section (e.g. precision = \"bf16\"). The command line wins.");
  options_.add_to(*command_);
  command_->add_option("--metrics", metrics_path_, "Write one JSON object per step to FILE (JSON Lines)")
      ->group("Output");
  command_->add_flag("--quiet,-q", quiet_, "Print only the summary and errors")->group("Output");
  command_->add_option("--log-every", log_every_, "Plain-line output interval in steps (default: ~20 lines)")
      ->group("Output");
}

int TrainCommand::run() {
  const engine::TrainConfig config = options_.finish(*command_);
  std::optional<MetricsWriter> metrics;
  if (!metrics_path_.empty()) metrics.emplace(metrics_path_);

  engine::Trainer trainer(config);
  auto queue = trainer.subscribe(16384);
  ProgressPrinter printer(stdout, config.steps, log_every_, isatty(STDOUT_FILENO) != 0);
  std::signal(SIGINT, on_interrupt);
  std::signal(SIGTERM, on_interrupt);
  trainer.start();

  std::vector<engine::Event> events;
  std::optional<engine::StateEvent> final_state;
  double first_loss = 0.0, last_loss = 0.0;
  int64_t skipped = 0, steps_seen = 0;
  bool stop_sent = false;
  while (!final_state) {
    queue->wait_for(std::chrono::milliseconds(100));
    if (g_interrupted.load() && !stop_sent) {
      trainer.request_stop();
      stop_sent = true;
    }
    events.clear();
    queue->drain(events);
    for (const auto& event : events) {
      if (const auto* step = std::get_if<engine::StepEvent>(&event)) {
        if (metrics) metrics->write(*step);
        if (steps_seen++ == 0) first_loss = step->loss;
        last_loss = step->loss;
        skipped += step->skipped ? 1 : 0;
      }
      if (const auto* state = std::get_if<engine::StateEvent>(&event); state && engine::is_terminal(state->state))
        final_state = *state;
      if (!quiet_) printer.on_event(event);
    }
    // The terminal event can only be missing if the queue dropped it.
    if (!final_state && engine::is_terminal(trainer.state()) && queue->drain(events) == 0) {
      trainer.wait();
      final_state = engine::StateEvent{trainer.state(), trainer.completed_steps(), trainer.error_message()};
    }
  }
  trainer.wait();
  printer.finish();
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);

  if (queue->dropped() > 0)
    fmt::print(stderr, "ampscope: warning: {} events were dropped (the output could not keep up)\n", queue->dropped());
  if (final_state->state == engine::RunState::kFailed) {
    fmt::print(stderr, "ampscope: error: {}\n", final_state->message);
    return 1;
  }
  fmt::print("{} after {} of {} steps: loss {:.4f} -> {:.4f}, {} skipped step{}\n",
             final_state->state == engine::RunState::kStopped ? "stopped" : "finished", final_state->step,
             config.steps, first_loss, last_loss, skipped, skipped == 1 ? "" : "s");
  return 0;
}

}  // namespace ampscope::cli
