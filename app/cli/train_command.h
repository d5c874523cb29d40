#pragma once
#include <CLI/CLI.hpp>

#include <memory>
#include <string>

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
  std::string metrics_path_;
  bool quiet_ = false;
  int64_t log_every_ = 0;
};

}  // namespace ampscope::cli
