#pragma once
// SessionIO over the profiler's store: opens .ampscope files (also ones written
// headless by `ampscope profile` on a GPU server) and saves the live run's.
#include <mutex>
#include <string>

#include "ui/models/session_io.h"

namespace ampscope::ui {

class StoreSessionIO final : public SessionIO {
 public:
  LoadedSession load(const std::string& path) override;
  // Copies the session the current (or last) run is recording.
  void saveCurrent(const std::string& path) override;
  // The file the live profiler records into; set by the app for each run.
  void setCurrentSessionPath(std::string path);
  std::string shownSessionPath() const override;

 private:
  mutable std::mutex mutex_;  // guards current_ and shown_
  std::string current_;
  std::string shown_;
};

// A snapshot of a stored session, as the live views take it. Keeps the last
// `history_steps` gradient samples for the heatmap over time.
profiler::ProfileSnapshotPtr snapshot_from_session(const std::string& path, size_t top_kernels = 500,
                                                   size_t history_steps = 64);

}  // namespace ampscope::ui
