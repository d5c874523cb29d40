#pragma once
// Attaches a profiler to every run the window's TrainingController starts and
// records it into an autosaved session in `sessions_dir` ("Save session as"
// copies it); the controller's live op table, kernels, gradients and recording
// health come from that profiler. The composition ampscope-ui runs, in the
// library so it is tested.
//
// Threads: the trainer setup runs on the GUI thread before the training thread
// starts; snapshot() and health() are the profiler's thread-safe reads.
#include <QString>
#include <memory>
#include <string>

namespace ampscope::profiler {
class Profiler;
}

namespace ampscope::ui {

class RunPanel;
class StoreSessionIO;
class TrainingController;

class LiveProfiling {
 public:
  LiveProfiling(TrainingController& controller, RunPanel& run_panel, StoreSessionIO& io, QString sessions_dir);
  // The run must end (and call the profiler's on_run_end) before the profiler goes.
  ~LiveProfiling();
  LiveProfiling(const LiveProfiling&) = delete;
  LiveProfiling& operator=(const LiveProfiling&) = delete;

  // The session the current (or last) run records into; "" before the first run.
  std::string currentSessionPath() const { return current_path_; }

 private:
  std::string nextSessionPath() const;

  TrainingController& controller_;
  RunPanel& run_panel_;  // read on the GUI thread when a run starts
  StoreSessionIO& io_;
  QString sessions_dir_;
  std::string current_path_;
  std::unique_ptr<profiler::Profiler> profiler_;
};

// Where ampscope-ui autosaves its runs' sessions: the user's cache directory.
QString defaultSessionsDirectory();

}  // namespace ampscope::ui
