#pragma once
// Owns the engine::Trainer of the current run and turns its events into Qt
// signals on the GUI thread.
//
// Threads: the training thread only pushes into the trainer's bounded event
// queue (never blocks on us). One QTimer on the GUI thread (~30 Hz) polls the
// queue through an engine::RunFollower (the CLI's way too: no drained event is
// lost at the run's end), appends to the RunSeries, polls the profile source, and emits at most
// one stepsAppended and one profileUpdated per tick; the plots repaint from
// those, so their repaint rate is bounded by the tick rate however fast the run
// produces steps.
#include <QObject>
#include <QString>
#include <QTimer>
#include <functional>
#include <memory>
#include <vector>

#include "engine/config.h"
#include "engine/events.h"
#include "engine/run_follower.h"
#include "profiler/recording_health.h"
#include "profiler/analysis/profile_snapshot.h"
#include "ui/models/run_series.h"

namespace ampscope::engine {
class Trainer;
}

namespace ampscope::ui {

// What the status bar and the window title show about the run in the views.
struct RunInfo {
  QString device;  // "cpu", "cuda:0"
  QString model;
  QString data;
  QString precision;  // "fp32" | "fp16" | "bf16"
  qint64 parameter_count = 0;
  qint64 total_steps = 0;
  qint64 batch_size = 0;
  bool scaler_enabled = false;
  QString source;  // "live" or the session file
  // A recorded session's step time with capture told apart (report_detail::step_timing_text);
  // "" for a live run.
  QString step_timing;
  // Where range samples raised a recorded session's memory peak, the peak the other steps
  // reached (report_detail::memory_peak_text); "" otherwise and for a live run.
  QString memory_peak;
  // LR schedulers that advanced after skipped optimizer steps (scheduler_drift_text), one
  // per line; "" when none did.
  QString scheduler_drift;

  // The run's description as a session records it (a saved file's meta), and a live
  // run's from its run-start event through the same fields.
  static RunInfo describing(const profiler::SessionMeta& meta);
  static RunInfo describing(const engine::RunStartedEvent& run);
};

class TrainingController : public QObject {
  Q_OBJECT
 public:
  using ProfileSource = std::function<profiler::ProfileSnapshotPtr()>;
  using TrainerSetup = std::function<void(engine::Trainer&)>;
  using HealthSource = std::function<profiler::RecordingHealth()>;
  static constexpr int kTickIntervalMs = 33;

  explicit TrainingController(QObject* parent = nullptr);
  ~TrainingController() override;  // stops the run and joins the training thread

  // Starts a new run; false (and runFailed) when the settings are invalid or a run is active.
  bool start(const engine::TrainConfig& config);
  void pause();
  void resume();
  void stop();  // the run ends after the step in progress
  // For closing the window: stop, wait for the training thread, drain what it recorded.
  void shutdown();

  engine::RunState state() const { return state_; }
  bool isActive() const;  // running or paused
  bool pausePending() const { return pause_pending_; }
  const RunSeries& series() const { return series_; }
  const RunInfo& runInfo() const { return info_; }
  profiler::ProfileSnapshotPtr latestProfile() const { return profile_; }
  uint64_t droppedEvents() const;

  // The profiler's live snapshot, polled on every tick while a run is active and
  // once more after it ends; a snapshot is handed on when its step changed.
  void setProfileSource(ProfileSource source) { profile_source_ = std::move(source); }
  // What the recording lost (the profiler's Profiler::health), polled with the
  // profile; the controller adds the events its own queue dropped.
  void setHealthSource(HealthSource source) { health_source_ = std::move(source); }
  // One line saying what the current run's recording lost; empty when nothing.
  const QString& recordingProblem() const { return recording_problem_; }
  // Called with each new Trainer before start(): attach observers (the profiler) here.
  void setTrainerSetup(TrainerSetup setup) { trainer_setup_ = std::move(setup); }

  // Shows a recorded session: replaces the series and the profile, no trainer.
  void showRecorded(const RunInfo& info, const std::vector<profiler::StepRecord>& steps,
                    profiler::ProfileSnapshotPtr profile,
                    const std::vector<profiler::OptimizerStepRecord>& optimizer_steps = {},
                    const profiler::RecordingHealth& health = {});
  // Drains an external queue as if a run produced it (replays, tests).
  void watchQueue(std::shared_ptr<engine::EventQueue> queue);
  // Handles one drained event; public so replays can feed events directly.
  void handleEvent(const engine::Event& event);

 signals:
  void runStarted(const ampscope::ui::RunInfo& info);
  void seriesReset();
  // New points were appended at indexes [first_new, series().size()).
  void stepsAppended(int first_new);
  void stateChanged(ampscope::engine::RunState state, const QString& message);
  void runFailed(const QString& message);
  void profileUpdated(ampscope::profiler::ProfileSnapshotPtr snapshot);
  // recordingProblem() changed (it is empty again when a new run starts).
  void recordingProblemChanged(const QString& problem);

 private:
  void tick();
  void pollProfile(bool force);
  void pollHealth();
  void setState(engine::RunState state, const QString& message = {});
  void finishRun(engine::RunState state, const QString& message);

  std::unique_ptr<engine::Trainer> trainer_;
  std::shared_ptr<engine::EventQueue> queue_;
  std::unique_ptr<engine::RunFollower> follower_;  // over trainer_ (or none) and queue_
  QTimer tick_timer_;
  RunSeries series_;
  RunInfo info_;
  engine::RunState state_ = engine::RunState::kIdle;
  bool pause_pending_ = false;
  ProfileSource profile_source_;
  TrainerSetup trainer_setup_;
  HealthSource health_source_;
  QString recording_problem_;
  profiler::ProfileSnapshotPtr profile_;
  int64_t profile_step_ = -1;
  int pending_first_new_ = -1;  // first index appended during this tick, -1 if none
};

QString runStateLabel(engine::RunState state);

}  // namespace ampscope::ui

Q_DECLARE_METATYPE(ampscope::engine::RunState)
Q_DECLARE_METATYPE(ampscope::profiler::ProfileSnapshotPtr)
Q_DECLARE_METATYPE(ampscope::ui::RunInfo)
