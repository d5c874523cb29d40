#pragma once
// SessionIO over the profiler's store: opens .ampscope files (also ones written
// headless by `ampscope profile` on a GPU server) and saves the live run's.
#include <mutex>
#include <string>

#include "profiler/store/session_view.h"
#include "ui/models/session_io.h"

namespace ampscope::ui {

class StoreSessionIO final : public SessionIO {
 public:
  LoadedFile load(const std::string& path) override;
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

// What the window reads of a session: the top 500 kernels, the gradient samples
// of the last 64 sampled steps for the heatmap over time, no per-step summaries.
inline constexpr profiler::SessionViewOptions kGuiViewOptions{500, 0, 64};

}  // namespace ampscope::ui
