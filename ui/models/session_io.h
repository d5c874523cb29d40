#pragma once
// The seam between the UI and session files (.ampscope). The profiler's store
// (profiler/store, SessionReader/SessionWriter) implements it; the UI only
// knows this interface, so it builds and runs before the store exists.
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "profiler/analysis/comparison.h"
#include "profiler/analysis/memory_peak.h"
#include "profiler/analysis/scheduler_drift.h"
#include "profiler/analysis/step_timing.h"
#include "profiler/records.h"
#include "profiler/recording_health.h"
#include "profiler/report/findings.h"
#include "profiler/script_facts.h"
#include "profiler/store/session_view.h"
#include "profiler/analysis/profile_snapshot.h"

namespace ampscope::ui {

struct LoadedSession {
  profiler::SessionMeta meta;
  std::map<std::string, std::string> meta_values;  // every key (the capture settings it was recorded with, ...)
  std::vector<profiler::StepRecord> steps;
  profiler::StepTiming step_timing;  // profiled steps' times apart from the others (issue #27)
  profiler::MemoryPeak memory_peak;  // the steps' memory high-water mark, range samples' rise apart
  std::vector<profiler::OptimizerStepRecord> optimizer_steps;  // steps of several optimizers only
  // Every range-sampled step's gradient norm: a script that does not clip has no other.
  std::vector<profiler::SampledGradientNorm> sampled_gradient_norms;
  std::vector<profiler::SchedulerSummary> schedulers;           // a Python loop's LR schedulers
  profiler::ProfileSnapshotPtr profile;  // null when the session recorded no profile
  profiler::RecordingHealth health;      // what the recording lost (a killed run, dropped records)
  int64_t writer_pid = 0;                // the process that recorded it, and its host ("" unknown)
  std::string writer_host;
  std::string final_state;                // "finished", "stopped", "failed"; "" while not closed
  std::optional<profiler::ScriptFacts> script;  // a session captured from a Python script
  profiler::CompileEvents compile;  // a Python script's torch.compile'd code: graphs, kernel times, breaks
  profiler::SessionFindings findings;  // the report's verdict and recommendations of it
};

// A file the user opened: a training session or a comparison, read once.
struct LoadedFile {
  std::optional<LoadedSession> session;  // exactly one of the two is set
  std::optional<profiler::Comparison> comparison;
};

class SessionIO {
 public:
  virtual ~SessionIO() = default;
  // Throws std::exception with a one-line, user-readable message on failure.
  // May run on any thread (the window loads off the GUI thread).
  virtual LoadedFile load(const std::string& path) = 0;
  // Writes the session recorded by the current (or last) run to `path`.
  virtual void saveCurrent(const std::string& path) = 0;
  // The session file behind what the window shows: the one opened last, or the
  // one the current (or last) run records into; "" when there is none yet.
  virtual std::string shownSessionPath() const = 0;
};

inline constexpr char kSessionSuffix[] = "ampscope";

}  // namespace ampscope::ui
