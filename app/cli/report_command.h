#pragma once
// `ampscope report FILE -o report.html`: a self-contained HTML report of a session or
// a precision comparison.
#include <CLI/CLI.hpp>
#include <string>

namespace ampscope::cli {

class ReportCommand {
 public:
  explicit ReportCommand(CLI::App& parent);
  bool selected() const { return command_->parsed(); }
  int run();

 private:
  CLI::App* command_;
  std::string input_;
  std::string out_;
  bool force_ = false;
};

}  // namespace ampscope::cli
