#pragma once
// Prints a run's events: a one-line progress bar redrawn in place on a
// terminal, plain lines otherwise (logs, CI, pipes).
#include <cstdint>
#include <cstdio>

#include "engine/events.h"

namespace ampscope::cli {

class ProgressPrinter {
 public:
  // log_every: plain-line interval in steps (0 = about 20 lines per run).
  ProgressPrinter(std::FILE* out, int64_t total_steps, int64_t log_every, bool interactive);
  void on_event(const engine::Event& event);
  void finish();  // ends the progress line

 private:
  void print_step(const engine::StepEvent& e);

  std::FILE* out_;
  int64_t total_steps_;
  int64_t log_every_;
  bool interactive_;
  bool line_open_ = false;
  double smoothed_step_ms_ = 0.0;
  int64_t skipped_ = 0;
};

}  // namespace ampscope::cli
