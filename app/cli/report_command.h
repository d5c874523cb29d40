#pragma once
// `ampscope report FILE -o report.html`: a self-contained HTML report of a session or
// a precision comparison; of several rank files (FILE.rank<R>.ampscope), the ranks
// of one distributed run side by side.
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace ampscope::cli {

class ReportCommand {
 public:
  explicit ReportCommand(CLI::App& parent);
  bool selected() const { return command_->parsed(); }
  int run();

 private:
  CLI::App* command_;
  std::vector<std::string> inputs_;
  std::string out_;
  bool force_ = false;
};

}  // namespace ampscope::cli
