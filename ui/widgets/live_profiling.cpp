// LibTorch before Qt: Qt's `slots`/`signals` macros break LibTorch's headers.
#include "engine/trainer.h"
#include "profiler/capture/profiler.h"

#include "ui/widgets/live_profiling.h"

#include <QDateTime>
#include <QDir>
#include <QStandardPaths>

#include "ui/models/store_session_io.h"
#include "ui/widgets/run_panel.h"
#include "ui/widgets/training_controller.h"

namespace ampscope::ui {

QString defaultSessionsDirectory() {
  return QStandardPaths::writableLocation(QStandardPaths::CacheLocation) + QStringLiteral("/sessions");
}

LiveProfiling::LiveProfiling(TrainingController& controller, RunPanel& run_panel, StoreSessionIO& io,
                             QString sessions_dir)
    : controller_(controller), run_panel_(run_panel), io_(io), sessions_dir_(std::move(sessions_dir)) {
  // The controller ends the previous run (and its trainer) before setting up the next,
  // so the previous profiler has seen on_run_end when it is replaced here.
  controller_.setTrainerSetup([this](engine::Trainer& trainer) {
    profiler_.reset();
    profiler::ProfilerOptions options;
    options.session_path = nextSessionPath();
    // The run panel's Profiling group (defaults: capture_option_specs.h).
    options.capture = run_panel_.captureSettings();
    profiler_ = std::make_unique<profiler::Profiler>(options);
    current_path_ = options.session_path;
    io_.setCurrentSessionPath(options.session_path);
    trainer.add_observer(profiler_.get());
  });
  controller_.setProfileSource(
      [this]() -> profiler::ProfileSnapshotPtr { return profiler_ ? profiler_->snapshot() : nullptr; });
  controller_.setHealthSource([this] { return profiler_ ? profiler_->health() : profiler::RecordingHealth{}; });
}

LiveProfiling::~LiveProfiling() {
  controller_.shutdown();
  // No source may outlive the profiler it reads.
  controller_.setTrainerSetup({});
  controller_.setProfileSource({});
  controller_.setHealthSource({});
}

std::string LiveProfiling::nextSessionPath() const {
  QDir().mkpath(sessions_dir_);
  return (sessions_dir_ + QStringLiteral("/run-%1.ampscope")
                              .arg(QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss-zzz"))))
      .toStdString();
}

}  // namespace ampscope::ui
