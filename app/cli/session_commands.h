#pragma once
// Commands that read a session file: `export` and `summary`.
#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace ampscope::profiler {
struct RecordingHealth;
}

namespace ampscope::cli {

// Reports and exports of a session that lost anything (never closed: killed or still
// recording; dropped batches; a failed write) say so on stderr, as `summary` does.
void warn_if_incomplete(const std::string& session, const profiler::RecordingHealth& health);

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
  bool force_ = false;
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
