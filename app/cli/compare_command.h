#pragma once
// `ampscope compare`: the same training in several precisions, timed and profiled.
#include <CLI/CLI.hpp>

#include <string>

#include "app/cli/train_options.h"
#include "profiler/compare/comparison_runner.h"

namespace ampscope::cli {

class CompareCommand {
 public:
  explicit CompareCommand(CLI::App& parent);
  bool selected() const { return command_->parsed(); }
  int run();

 private:
  CLI::App* command_;
  TrainOptions options_;
  profiler::ComparisonOptions comparison_;
  std::string variants_;  // "" = every precision the device supports
  bool quiet_ = false;
};

}  // namespace ampscope::cli
