#pragma once
// Commands that read a session file: `export` and `summary`.
#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace ampscope::cli {

class ExportCommand {
 public:
  explicit ExportCommand(CLI::App& parent);
  bool selected() const { return command_->parsed(); }
  int run();

 private:
  CLI::App* command_;
  std::string session_;
  std::string format_ = "chrome";
  std::string out_;
  int64_t first_step_ = 0, last_step_ = 0;
};

class SummaryCommand {
 public:
  explicit SummaryCommand(CLI::App& parent);
  bool selected() const { return command_->parsed(); }
  int run();

 private:
  CLI::App* command_;
  std::vector<std::string> sessions_;  // several: one per rank (torchrun), compared side by side
  size_t top_ = 8;
};

}  // namespace ampscope::cli
