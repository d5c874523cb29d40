#include "ui/widgets/training_controller.h"

#include <exception>

#include "engine/trainer.h"
#include "profiler/capture/step_record.h"

namespace ampscope::ui {

using engine::RunState;

namespace {

QString qs(std::string_view s) {
  return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size()));
}

}  // namespace

QString runStateLabel(RunState state) {
  switch (state) {
    case RunState::kIdle:
      return QStringLiteral("Idle");
    case RunState::kRunning:
      return QStringLiteral("Running");
    case RunState::kPaused:
      return QStringLiteral("Paused");
    case RunState::kFinished:
      return QStringLiteral("Finished");
    case RunState::kStopped:
      return QStringLiteral("Stopped");
    case RunState::kFailed:
      return QStringLiteral("Failed");
  }
  return {};
}

RunInfo RunInfo::describing(const profiler::SessionMeta& meta) {
  RunInfo info;
  info.device = QString::fromStdString(meta.device);
  info.model = QString::fromStdString(meta.model);
  info.data = QString::fromStdString(meta.data);
  info.precision = QString::fromStdString(meta.precision);
  info.parameter_count = meta.parameter_count;
  info.scaler_enabled = meta.scaler_enabled;
  return info;
}

RunInfo RunInfo::describing(const engine::RunStartedEvent& run) {
  // The fields make_session_meta writes from the same event, without its hardware
  // queries: the GUI thread dispatches no ATen op while a run's op observer (a global
  // RecordFunction callback) could record it as the run's.
  profiler::SessionMeta meta;
  meta.device = run.device;
  meta.model = run.model;
  meta.data = run.data;
  meta.precision = std::string(engine::to_string(run.config.precision));
  meta.parameter_count = run.parameter_count;
  meta.scaler_enabled = run.scaler_enabled;
  return describing(meta);
}

TrainingController::TrainingController(QObject* parent) : QObject(parent) {
  qRegisterMetaType<RunState>();
  qRegisterMetaType<profiler::ProfileSnapshotPtr>();
  qRegisterMetaType<RunInfo>();
  tick_timer_.setInterval(kTickIntervalMs);
  tick_timer_.setTimerType(Qt::CoarseTimer);
  connect(&tick_timer_, &QTimer::timeout, this, &TrainingController::tick);
}

TrainingController::~TrainingController() { shutdown(); }

bool TrainingController::isActive() const {
  return state_ == RunState::kRunning || state_ == RunState::kPaused;
}

uint64_t TrainingController::droppedEvents() const { return queue_ ? queue_->dropped() : 0; }

bool TrainingController::start(const engine::TrainConfig& config) {
  if (isActive()) return false;
  if (trainer_) {
    trainer_->wait();
    trainer_.reset();
  }
  series_.clear();
  profile_.reset();
  profile_step_ = -1;
  emit seriesReset();
  emit profileUpdated(nullptr);
  if (!recording_problem_.isEmpty()) {
    recording_problem_.clear();
    emit recordingProblemChanged(recording_problem_);
  }
  try {
    engine::validate(config);
    auto trainer = std::make_unique<engine::Trainer>(config);
    // Large enough for several seconds of fast steps between two ticks.
    queue_ = trainer->subscribe(16384);
    follower_ = std::make_unique<engine::RunFollower>(trainer.get(), *queue_);
    if (trainer_setup_) trainer_setup_(*trainer);
    info_ = RunInfo{};
    info_.precision = qs(engine::to_string(config.precision));
    info_.model = qs(engine::to_string(config.model.kind));
    info_.data = qs(engine::to_string(config.data.kind));
    info_.device = qs(engine::to_string(config.device));
    info_.total_steps = config.steps;
    info_.batch_size = config.batch_size * config.accumulation_steps;
    info_.scaler_enabled = config.scaler_enabled();
    info_.source = QStringLiteral("live");
    trainer->start();
    trainer_ = std::move(trainer);
  } catch (const std::exception& e) {
    follower_.reset();
    queue_.reset();
    finishRun(RunState::kFailed, QString::fromUtf8(e.what()));
    return false;
  }
  pause_pending_ = false;
  setState(RunState::kRunning);
  tick_timer_.start();
  return true;
}

void TrainingController::pause() {
  if (!trainer_ || state_ != RunState::kRunning) return;
  pause_pending_ = true;
  trainer_->pause();
  emit stateChanged(state_, {});  // lets the buttons show the pending pause
}

void TrainingController::resume() {
  if (!trainer_ || !isActive()) return;
  pause_pending_ = false;
  trainer_->resume();
}

void TrainingController::stop() {
  if (trainer_ && isActive()) trainer_->request_stop();
}

void TrainingController::shutdown() {
  if (!trainer_) return;
  trainer_->request_stop();
  trainer_->wait();
  tick();  // the run's last events, including its final state
}

void TrainingController::showRecorded(const RunInfo& info,
                                      const std::vector<profiler::StepRecord>& steps,
                                      profiler::ProfileSnapshotPtr profile,
                                      const std::vector<profiler::OptimizerStepRecord>& optimizer_steps,
                                      const profiler::RecordingHealth& health) {
  if (isActive()) return;
  series_.clear();
  emit seriesReset();
  info_ = info;
  emit runStarted(info_);
  for (const auto& s : steps) series_.append(s);
  series_.appendOptimizerSteps(optimizer_steps);
  if (!steps.empty()) emit stepsAppended(0);
  profile_ = std::move(profile);
  profile_step_ = profile_ ? profile_->step : -1;
  emit profileUpdated(profile_);
  // What the recording lost (a killed run, dropped records), as a live run says it.
  if (const QString problem = QString::fromStdString(profiler::describe(health)); problem != recording_problem_) {
    recording_problem_ = problem;
    emit recordingProblemChanged(recording_problem_);
  }
  setState(RunState::kFinished);
}

void TrainingController::watchQueue(std::shared_ptr<engine::EventQueue> queue) {
  if (isActive()) return;
  if (trainer_) {
    trainer_->wait();
    trainer_.reset();
  }
  queue_ = std::move(queue);
  follower_ = std::make_unique<engine::RunFollower>(nullptr, *queue_);
  tick_timer_.start();
}

void TrainingController::handleEvent(const engine::Event& event) {
  if (const auto* step = std::get_if<engine::StepEvent>(&event)) {
    if (pending_first_new_ < 0) pending_first_new_ = series_.size();
    series_.append(profiler::to_step_record(*step));
    series_.appendOptimizerSteps(profiler::to_optimizer_step_records(*step));
  } else if (const auto* state = std::get_if<engine::StateEvent>(&event)) {
    if (engine::is_terminal(state->state)) {
      finishRun(state->state, QString::fromStdString(state->message));
    } else {
      if (state->state == RunState::kPaused || state->state == RunState::kRunning)
        pause_pending_ = false;
      setState(state->state);
    }
  } else if (const auto* started = std::get_if<engine::RunStartedEvent>(&event)) {
    RunInfo described = RunInfo::describing(*started);
    described.source = info_.source;
    info_ = std::move(described);
    info_.total_steps = started->config.steps;
    info_.batch_size = started->config.batch_size * started->config.accumulation_steps;
    emit runStarted(info_);
  }
}

void TrainingController::tick() {
  if (!follower_) return;
  // Step events are batched into one stepsAppended; a state event flushes the
  // batch first so listeners see the steps before the state that followed them.
  follower_->poll([this](const engine::Event& event) {
    if (std::holds_alternative<engine::StateEvent>(event) && pending_first_new_ >= 0) {
      emit stepsAppended(std::exchange(pending_first_new_, -1));
    }
    handleEvent(event);
  });
  if (pending_first_new_ >= 0) emit stepsAppended(std::exchange(pending_first_new_, -1));
  if (isActive()) {
    pollProfile(false);
    pollHealth();
  }
}

void TrainingController::pollHealth() {
  profiler::RecordingHealth health = health_source_ ? health_source_() : profiler::RecordingHealth{};
  health.dropped_events = droppedEvents();
  const QString problem = QString::fromStdString(profiler::describe(health));
  if (problem == recording_problem_) return;
  recording_problem_ = problem;
  emit recordingProblemChanged(recording_problem_);
}

void TrainingController::pollProfile(bool force) {
  if (!profile_source_) return;
  profiler::ProfileSnapshotPtr snapshot = profile_source_();
  if (!snapshot) return;
  if (!force && snapshot->step == profile_step_) return;
  if (snapshot == profile_) return;
  profile_ = std::move(snapshot);
  profile_step_ = profile_->step;
  emit profileUpdated(profile_);
}

void TrainingController::setState(RunState state, const QString& message) {
  if (state == state_ && message.isEmpty()) return;
  state_ = state;
  emit stateChanged(state_, message);
}

void TrainingController::finishRun(RunState state, const QString& message) {
  if (trainer_) trainer_->wait();
  pause_pending_ = false;
  pollProfile(true);  // whatever the profiler recorded up to the end
  if (trainer_) pollHealth();  // and what it lost, the session writer's last words included
  if (!trainer_ || trainer_->state() == state) tick_timer_.stop();
  setState(state, message);
  if (state == RunState::kFailed) emit runFailed(message);
}

}  // namespace ampscope::ui
