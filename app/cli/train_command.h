#pragma once
#include <CLI/CLI.hpp>

#include <memory>
#include <string>

#include "app/cli/run_session.h"
#include "app/cli/train_options.h"

namespace ampscope::cli {

// `ampscope train`: runs a training session in the engine's thread and reports
// it as a progress bar (terminal) or plain lines, optionally to a JSONL file.
class TrainCommand {
 public:
  explicit TrainCommand(CLI::App& parent);
  bool selected() const { return command_->parsed(); }
  int run();  // process exit code

 private:
  CLI::App* command_;
  TrainOptions options_;
  SessionOutput output_;
};

}  // namespace ampscope::cli
